//! Where results go: human text or JSON on standard output, notes on standard error, and
//! progress bars only when a person is watching.

use std::io::{IsTerminal, Write};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

/// How a command prints.
#[derive(Debug, Clone, Copy)]
pub struct Output {
    /// JSON instead of text.
    pub json: bool,
    /// Nothing but errors.
    pub quiet: bool,
}

impl Output {
    /// Human text on standard output (nothing under `--json` or `--quiet`). A closed
    /// standard output (`| head`) is not an error: the rest is dropped.
    pub fn text(&self, text: &str) {
        if !self.json && !self.quiet {
            write_out(text);
        }
    }

    /// One JSON document (or JSON line) on standard output, under `--json` (even with
    /// `--quiet`: a pipeline asked for it). Struct fields keep their declared order and
    /// maps are sorted, so the bytes are stable.
    pub fn json(&self, value: &impl Serialize) {
        if self.json {
            match serde_json::to_string(value) {
                Ok(line) => write_out(&format!("{line}\n")),
                Err(e) => self.note(&format!("cannot encode the result as JSON: {e}")),
            }
        }
    }

    /// A note for a person on standard error (nothing under `--quiet`).
    pub fn note(&self, text: &str) {
        if !self.quiet {
            let _ = writeln!(std::io::stderr().lock(), "{text}");
        }
    }

    /// A progress bar over `len` items on standard error, drawn only when standard error
    /// is a terminal and neither `--json` nor `--quiet` was given, and only for more than
    /// one item.
    pub fn progress(&self, len: u64, what: &'static str) -> ProgressBar {
        let shown = len > 1 && !self.json && !self.quiet && std::io::stderr().is_terminal();
        if !shown {
            return ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
        }
        let bar = ProgressBar::new(len);
        if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} {elapsed}") {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(what);
        bar
    }
}

/// Writes to standard output, ignoring a closed pipe.
pub fn write_out(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}
