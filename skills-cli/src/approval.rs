//! Asking a person in the terminal: seed 004's three options (`yes_once`,
//! `yes_in_session`, `no`), with `no` the default.
//!
//! Threat: a script running without a person's say-so; a pipeline hanging on a question
//! nobody can answer; skill text in the question that fakes an answer or moves the cursor.
//! Guarantee: the terminal prompt is used only when standard input is a terminal; otherwise
//! the answer is the default, `no`, at once, unless the operator passed
//! `--approve-all-scripts`. Anything but a recognised yes is no; end of input is no answer
//! (not run). The question shows `skills-security`'s neutralised request text, and the
//! wait is bounded by `Approvals`' timeout (the reader thread is detached, so a timed-out
//! question never keeps the process alive).

use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

use async_trait::async_trait;
use skills_security::{ApprovalChannel, ApprovalOption, ApprovalRequest, NonInteractive};

/// The channel for this invocation: always yes once with `approve_all`, the terminal
/// when standard input is one, else the safe default `no`.
pub fn channel(approve_all: bool) -> Arc<dyn ApprovalChannel> {
    if approve_all {
        Arc::new(NonInteractive(ApprovalOption::YesOnce))
    } else if std::io::stdin().is_terminal() {
        Arc::new(TerminalPrompt)
    } else {
        Arc::new(NonInteractive::default())
    }
}

/// Reads an answer from the terminal.
#[derive(Debug, Clone, Copy)]
pub struct TerminalPrompt;

/// The question as shown on standard error.
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
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(question(request).as_bytes());
            let _ = err.flush();
        }
        let (tx, rx) = tokio::sync::oneshot::channel();
        // A detached thread: if the approval times out, nothing waits for it.
        std::thread::spawn(move || {
            let mut line = String::new();
            let answer = match std::io::stdin().lock().read_line(&mut line) {
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
