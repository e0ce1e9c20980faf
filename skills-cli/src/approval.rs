//! Asking a person in the terminal: seed 004's three options (`yes_once`,
//! `yes_in_session`, `no`), with `no` the default.
//!
//! Threat: a script running without a person's say-so — a `y` piped into standard input
//! (by a pipeline, a model driving the shell, a file), or typed on a terminal that is
//! standard input but not this process's controlling terminal (a session without one, a
//! terminal someone else holds); a pipeline hanging on a question nobody can answer; skill
//! text in the question that fakes an answer or moves the cursor.
//!
//! Guarantee: the question is asked, and its answer read, on the controlling terminal
//! (`/dev/tty`) only, never on standard input or output; it is asked only when the process
//! has a controlling terminal and standard input is a terminal too (a pipeline's standard
//! input is the sign that nobody is there to ask). Otherwise the answer is the default,
//! `no`, at once, unless the operator passed `--approve-all-scripts`. Anything but a
//! recognised yes is no; end of input is no answer (not run). The question shows
//! `skills-security`'s neutralised request text, and the wait is bounded by `Approvals`'
//! timeout (the reader thread is detached, so a timed-out question never keeps the process
//! alive).
//!
//! Residual: whoever can type on the controlling terminal answers (that is the operator's
//! terminal; a process that can write to its input can answer for them).

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::sync::Arc;

use async_trait::async_trait;
use skills_security::{ApprovalChannel, ApprovalOption, ApprovalRequest, NonInteractive};

/// Where the controlling terminal is opened.
const CONTROLLING_TERMINAL: &str = "/dev/tty";

/// The channel for this invocation: always yes once with `approve_all`, the controlling
/// terminal when there is one and standard input is a terminal, else the safe default
/// `no`.
pub fn channel(approve_all: bool) -> Arc<dyn ApprovalChannel> {
    if approve_all {
        return Arc::new(NonInteractive(ApprovalOption::YesOnce));
    }
    match TerminalPrompt::open() {
        Some(prompt) if std::io::stdin().is_terminal() => Arc::new(prompt),
        _ => Arc::new(NonInteractive::default()),
    }
}

/// Asks on the controlling terminal and reads the answer from it.
#[derive(Debug, Clone)]
pub struct TerminalPrompt {
    tty: Arc<File>,
}

impl TerminalPrompt {
    /// The controlling terminal, or `None` when the process has none (opening `/dev/tty`
    /// fails without one) or it is not a terminal.
    pub fn open() -> Option<TerminalPrompt> {
        let tty = OpenOptions::new()
            .read(true)
            .write(true)
            .open(CONTROLLING_TERMINAL)
            .ok()?;
        tty.is_terminal()
            .then(|| TerminalPrompt { tty: Arc::new(tty) })
    }
}

/// The question as shown on the terminal.
pub fn question(request: &ApprovalRequest) -> String {
    let mut text = format!(
        "Skill `{}` ({} trust) wants to run {} script{}:\n",
        request.skill,
        request.trust,
        request.scripts.len(),
        if request.scripts.len() == 1 { "" } else { "s" }
    );
    for script in &request.scripts {
        text.push_str(&format!("  - {}\n", script.describe()));
        for finding in &script.findings {
            text.push_str(&format!("    scanner: {finding}\n"));
        }
    }
    text.push_str("Run it?  [y] yes once   [s] yes in this session   [N] no (default): ");
    text
}

/// The option an answer line means; anything unrecognised is `no`.
pub fn parse_answer(line: &str) -> ApprovalOption {
    match line.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" | "yes_once" | "1" => ApprovalOption::YesOnce,
        "s" | "session" | "yes_in_session" | "2" => ApprovalOption::YesInSession,
        _ => ApprovalOption::No,
    }
}

#[async_trait]
impl ApprovalChannel for TerminalPrompt {
    async fn ask(&self, request: &ApprovalRequest) -> Option<ApprovalOption> {
        {
            let mut tty = self.tty.as_ref();
            // A question that cannot be shown is not asked: no answer.
            tty.write_all(question(request).as_bytes()).ok()?;
            tty.flush().ok()?;
        }
        let reader = self.tty.try_clone().ok()?;
        let (tx, rx) = tokio::sync::oneshot::channel();
        // A detached thread: if the approval times out, nothing waits for it.
        std::thread::spawn(move || {
            let mut line = String::new();
            let answer = match BufReader::new(reader).read_line(&mut line) {
                Ok(0) | Err(_) => None,
                Ok(_) => Some(parse_answer(&line)),
            };
            let _ = tx.send(answer);
        });
        rx.await.ok().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_recognised_yes_is_yes() {
        assert_eq!(parse_answer("y\n"), ApprovalOption::YesOnce);
        assert_eq!(parse_answer(" S "), ApprovalOption::YesInSession);
        for no in ["", "\n", "n", "no", "yess", "maybe", "\u{1b}[2J", "Y E S"] {
            assert_eq!(parse_answer(no), ApprovalOption::No, "{no:?}");
        }
    }
}
