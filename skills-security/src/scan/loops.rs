//! An endless loop whose own body sends requests with no pause and no way out (issue 21,
//! fourth round).
//!
//! **Threat.** A flood hidden in an ordinary tool: `while True: s.post(url, …)` started in a
//! few hundred threads, or `for (;;) await Promise.all(…click(u)…)`, hammers a third party.
//! The unit-wide combination (`signals.rs`: a loop, a request, no exit anywhere in the unit)
//! misses it as soon as any *other* loop of the script sleeps (a polite price check beside
//! the flood). **Guarantee.** Each endless loop (`while True:`, `while (true)`, `for (;;)`,
//! `while true; do`, `loop {`) is read on its own body (Python by indentation, brace
//! languages by depth, shell to its `done`): a request in the body, directly or through one of
//! the unit's own functions one call deep, with no pause (`sleep`, `setTimeout`, a wait,
//! backoff) and no exit (`break`, `return`, `exit`, `raise`, `throw`) in the body, is
//! `dangerous.request_loop` (`High`). A poller that sleeps or stops, or a server loop that
//! accepts connections, is no finding.

use std::sync::OnceLock;

use regex::bytes::{Regex, RegexBuilder};

use super::context::Layout;
use super::report::{Category, FindingContext, ScanFinding, Severity};
use super::weigh;

/// Lines a loop body is read to at most.
const MAX_BODY: usize = 200;

struct Patterns {
    header: Regex,
    request: Regex,
    pause_or_exit: Regex,
    function: Regex,
}

fn patterns() -> Option<&'static Patterns> {
    static P: OnceLock<Option<Patterns>> = OnceLock::new();
    P.get_or_init(|| {
        let build = |p: &str| RegexBuilder::new(p).unicode(false).build().ok();
        Some(Patterns {
            header: build(
                r"^\s*(?:while\s+(?:True|1)\s*:|while\s*\(\s*(?:true|1|!0)\s*\)|for\s*\(\s*;\s*;\s*\)|loop\s*\{|while\s+(?:true|:)\s*;?\s*do\b)",
            )?,
            request: build(
                r"(?:\brequests|\bhttpx|\bsession|\bs|\bclient|\bhttp|\bhttps|\baxios|\bgot)\.(?:get|post|put|patch|delete|head|request)\(|\bfetch\(|\burlopen\(|\bcurl\s|\bwget\s|Invoke-WebRequest|\biwr\s",
            )?,
            pause_or_exit: build(
                r"\bsleep\b|\bsetTimeout\b|\bwait(?:For)?\s*\(|\bbackoff\b|\bbreak\b|\breturn\b|\bexit\b|\braise\b|\bthrow\b|\bprocess\.exit\b|\bclearInterval\b|\brate_?limit",
            )?,
            function: build(
                r"^\s*(?:async\s+)?(?:def|function)\s+([A-Za-z_$][\w$]*)\s*\(|^\s*(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s*)?(?:\([^)\n]*\)|[A-Za-z_$][\w$]*)\s*=>",
            )?,
        })
    })
    .as_ref()
}

/// `line` with its string literals blanked and its trailing comment (`#`, `//`) cut.
fn code_of(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                if c == q && prev != '\\' {
                    quote = None;
                    out.push(c);
                } else {
                    out.push(' ');
                }
            }
            None => {
                if matches!(c, '"' | '\'' | '`') {
                    quote = Some(c);
                } else if (c == '#' && (prev.is_whitespace() || out.is_empty()))
                    || (c == '/' && chars.peek() == Some(&'/') && prev != ':')
                {
                    break;
                }
                out.push(c);
            }
        }
        prev = c;
    }
    out
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The body of the block opened on `lines[k]` (indices into `lines`, the header excluded).
fn body(layout: &Layout, text: &str, lines: &[usize], k: usize) -> Vec<usize> {
    let Some(&h) = lines.get(k) else {
        return Vec::new();
    };
    let header = layout.line_text(text, h);
    let rest = lines.iter().skip(k + 1).take(MAX_BODY).copied();
    if header.trim_end().ends_with(':') {
        // Python: the following lines indented deeper than the header (blank lines kept).
        let base = indent(header);
        return rest
            .take_while(|&i| {
                let l = layout.line_text(text, i);
                l.trim().is_empty() || indent(l) > base
            })
            .collect();
    }
    if header.contains("do") && !header.contains('{') {
        // Shell: to the first `done`.
        return rest
            .take_while(|&i| !layout.line_text(text, i).trim_start().starts_with("done"))
            .collect();
    }
    // Braces: to the line where the depth returns to where it was.
    let mut depth: i64 = 0;
    let mut out = Vec::new();
    for i in std::iter::once(h).chain(rest) {
        let l = layout.line_text(text, i);
        depth += l.matches('{').count() as i64 - l.matches('}').count() as i64;
        if i != h {
            out.push(i);
        }
        if depth <= 0 && (i != h || l.contains('{')) {
            break;
        }
    }
    out
}

/// `dangerous.request_loop` for each endless loop of one code unit whose body requests with
/// no pause and no exit (at most one finding per unit).
pub(crate) fn request_loops(
    path: &str,
    text: &str,
    layout: &Layout,
    lines: &[usize],
    doc: u8,
    line_no: &dyn Fn(usize) -> u32,
) -> Option<ScanFinding> {
    let p = patterns()?;
    let headers: Vec<usize> = (0..lines.len())
        .filter(|&k| {
            lines.get(k).is_some_and(|&i| {
                // A literal gate before the expression: most lines hold none of these.
                let l = layout.line_text(text, i);
                (l.contains("while") || l.contains(";;") || l.contains("loop"))
                    && p.header.is_match(l.as_bytes())
            })
        })
        .collect();
    if headers.is_empty() {
        return None;
    }
    // The unit's own functions that request, one call deep.
    let mut requesting: Vec<String> = Vec::new();
    for (k, &i) in lines.iter().enumerate() {
        let Some(caps) = p.function.captures(layout.line_text(text, i).as_bytes()) else {
            continue;
        };
        let Some(name) = caps.get(1).or_else(|| caps.get(2)) else {
            continue;
        };
        let sends = body(layout, text, lines, k)
            .iter()
            .any(|&j| p.request.is_match(layout.line_text(text, j).as_bytes()));
        if sends && requesting.len() < 64 {
            requesting.push(String::from_utf8_lossy(name.as_bytes()).into_owned());
        }
    }
    let calls_requesting = |l: &str| {
        requesting.iter().any(|f| {
            l.match_indices(f.as_str()).any(|(at, _)| {
                let before_ok = l[..at]
                    .chars()
                    .next_back()
                    .is_none_or(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$')));
                before_ok && l[at + f.len()..].starts_with('(')
            })
        })
    };
    // Each line's answers, computed once however many loop bodies hold it.
    let mut requests_on: Vec<Option<bool>> = vec![None; layout.starts.len()];
    let mut stops_on: Vec<Option<bool>> = vec![None; layout.starts.len()];
    for k in headers {
        let inner = body(layout, text, lines, k);
        let requests = inner.iter().any(|&j| {
            *requests_on
                .get_mut(j)
                .map_or(&mut None, |c| c)
                .get_or_insert_with(|| {
                    let l = layout.line_text(text, j);
                    p.request.is_match(l.as_bytes()) || calls_requesting(l)
                })
        });
        // Only the code of a line stops a loop: `# never break` or a string saying
        // `return` does not.
        let stops = inner.iter().any(|&j| {
            *stops_on
                .get_mut(j)
                .map_or(&mut None, |c| c)
                .get_or_insert_with(|| {
                    p.pause_or_exit
                        .is_match(code_of(layout.line_text(text, j)).as_bytes())
                })
        });
        if requests && !stops {
            let i = lines.get(k).copied().unwrap_or(0);
            let steps = doc.min(3);
            return Some(
                ScanFinding::new(
                    Category::DangerousCommand,
                    weigh::lower(Severity::High, steps),
                    "dangerous.request_loop",
                    path,
                    line_no(i),
                    layout.line_text(text, i).to_owned(),
                    "an endless loop sends requests with no pause and no way out (flooding a service)"
                        .to_owned(),
                )
                .in_context(if steps > 0 {
                    FindingContext::Documentation
                } else {
                    FindingContext::Code
                }),
            );
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::context;

    fn found(code: &str) -> bool {
        let layout = context::layout(context::FileKind::Script, code);
        let lines: Vec<usize> = (0..layout.starts.len()).collect();
        let line_no = |i: usize| u32::try_from(i + 1).unwrap_or(0);
        request_loops("a", code, &layout, &lines, 0, &line_no).is_some()
    }

    #[test]
    fn a_flood_beside_a_polite_loop() {
        let py = "import requests, time\n\ndef hammer(u):\n    s = requests.Session()\n    while True:\n        try:\n            s.post(u, data={})\n        except Exception:\n            pass\n\ndef main():\n    while True:\n        print(price())\n        time.sleep(600)\n";
        assert!(found(py));
        let js = "async function click(u) {\n  await fetch(u);\n}\nfor (;;) {\n  await Promise.all(list.map((u) => click(u)));\n}\n";
        assert!(found(js));
        let sh = "while true; do\n  curl -s -X POST \"$U\"\ndone\n";
        assert!(found(sh));
    }

    /// A word in a comment or a string is no pause and no exit.
    #[test]
    fn a_comment_or_a_string_does_not_stop_a_flood() {
        let commented = "import requests\nwhile True:\n    requests.post(u)  # never break\n";
        assert!(found(commented));
        let js = "for (;;) {\n  await fetch(u); // do not sleep here\n  log('no return');\n}\n";
        assert!(found(js));
        // The code itself still stops it, a URL's `//` notwithstanding.
        let polite = "import requests, time\nwhile True:\n    requests.get('https://a.example/x')\n    time.sleep(5)  # be polite\n";
        assert!(!found(polite));
    }

    #[test]
    fn pollers_and_servers() {
        let poll = "import requests, time\nwhile True:\n    r = requests.get(u)\n    if r.ok:\n        break\n    time.sleep(5)\n";
        assert!(!found(poll));
        let server = "while True:\n    conn, _ = sock.accept()\n    handle(conn)\n";
        assert!(!found(server));
        let js = "for (;;) {\n  const r = await fetch(u);\n  await new Promise((r) => setTimeout(r, 1000));\n}\n";
        assert!(!found(js));
        let sh = "while true; do\n  curl -s \"$U/health\"\n  sleep 10\ndone\n";
        assert!(!found(sh));
    }
}
