//! Frontmatter-shaped YAML built from the fuzzer's bytes, into the same checks as `skill_md`.
//!
//! Raw byte mutation rarely gets past `---` framing plus valid YAML plus the field rules, so
//! this target spends the fuzzer's entropy on choices instead: keys from the frontmatter
//! vocabulary (standard, extension, client and unknown keys, duplicates), values in every YAML
//! style (plain with `: ` and ` #`, single/double quoted with escapes, literal and folded block
//! scalars with chomping indicators, flow and block collections, anchors and aliases, tags,
//! YAML 1.1 look-alikes), CRLF or CR line endings, a BOM, and assorted bodies. The generated
//! file then goes through `skills_core_fuzz::check_skill_md`.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use skills_core_fuzz::check_skill_md;

/// Keys beyond the ones the library knows: merge keys, odd and quoted spellings, empty.
const ODD_KEYS: &[&str] = &[
    "author",
    "x-custom",
    "<<",
    "? complex",
    "\"quoted key\"",
    "'single'",
    "1",
    "~",
    "",
];

/// Every key the library knows (standard, extension, client), then the odd ones.
fn keys() -> &'static [&'static str] {
    static KEYS: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        skills_core::STANDARD_KEYS
            .iter()
            .chain(skills_core::EXTENSION_KEYS)
            .chain(skills_core::CLIENT_KEYS)
            .chain(ODD_KEYS)
            .copied()
            .collect()
    })
}

const WORDS: &[&str] = &[
    "pdf-tools",
    "x",
    "my-skill",
    "PDF-Tools",
    "-bad-",
    "a--b",
    "Extract text from PDFs.",
    "Use when: the user asks",
    "value # comment",
    "MIT",
    "Apache-2.0",
    "Bash(git log:*) Read",
    "Requires Python 3.11",
    "yes",
    "no",
    "on",
    "Off",
    "null",
    "~",
    "true",
    "FALSE",
    "1.0",
    "1.0.0",
    "0755",
    "0x1F",
    "0o17",
    "1e3",
    ".inf",
    "-.Inf",
    ".nan",
    "2024-01-01",
    "12:30:00",
    "=",
    "<<",
    "---",
    "...",
    "- item",
    "[not, flow]",
    "{not: flow}",
    "@at",
    "`tick`",
    "%percent",
    "!bang",
    "&anchor",
    "*alias",
    "|pipe",
    ">folded",
    "a: b: c",
    "trailing space ",
    "trailing colon:",
    "tab\there",
    "caf\u{e9}",
    "cafe\u{301}",
    "\u{feff}bom",
    "\u{85}nel",
    "\u{2028}ls",
    "\u{1f600}",
    "\u{0}",
    "\u{7f}",
    "",
];

struct Gen<'a, 'b> {
    u: &'b mut Unstructured<'a>,
    eol: &'static str,
    anchors: Vec<String>,
}

impl Gen<'_, '_> {
    fn word(&mut self) -> Result<String> {
        if self.u.ratio(1, 6)? {
            let s: String = self.u.arbitrary()?;
            Ok(s.chars().take(40).collect())
        } else {
            Ok((*self.u.choose(WORDS)?).to_owned())
        }
    }

    fn pad(&self, indent: usize) -> String {
        " ".repeat(indent)
    }

    fn props(&mut self) -> Result<String> {
        let mut out = String::new();
        if self.u.ratio(1, 8)? {
            let name = format!("a{}", self.u.int_in_range(0..=3u8)?);
            out.push_str(&format!("&{name} "));
            self.anchors.push(name);
        }
        if self.u.ratio(1, 12)? {
            out.push_str(
                self.u
                    .choose(&["!!str ", "!!int ", "!!map ", "!!seq ", "!custom ", "! "])?,
            );
        }
        Ok(out)
    }

    fn double_quoted(&mut self) -> Result<String> {
        let w = self.word()?;
        let mut out = String::from("\"");
        for c in w.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                _ => out.push(c),
            }
        }
        if self.u.ratio(1, 4)? {
            out.push_str(self.u.choose(&[
                "\\t",
                "\\x41",
                "\\u00e9",
                "\\U0001F600",
                "\\0",
                "\\N",
                "\\_",
                "\\L",
                "\\e",
                "\\ ",
                "\\/",
            ])?);
        }
        out.push('"');
        Ok(out)
    }

    /// A scalar on one line (flow context safe when `flow`).
    fn inline_scalar(&mut self, flow: bool) -> Result<String> {
        let w = self.word()?;
        Ok(match self.u.int_in_range(0..=3u8)? {
            0 if !flow => w,
            0 | 1 => format!("'{}'", w.replace('\'', "''")),
            2 => self.double_quoted()?,
            _ => w.replace([',', '[', ']', '{', '}'], ""),
        })
    }

    fn flow(&mut self, depth: u8) -> Result<String> {
        let n = self.u.int_in_range(0..=4u8)?;
        let mapping = self.u.arbitrary::<bool>()?;
        let mut items = Vec::new();
        for _ in 0..n {
            let item = if depth < 3 && self.u.ratio(1, 5)? {
                self.flow(depth + 1)?
            } else if !self.anchors.is_empty() && self.u.ratio(1, 6)? {
                format!("*{}", self.u.choose(&self.anchors)?.clone())
            } else {
                self.inline_scalar(true)?
            };
            if mapping {
                let key = self.inline_scalar(true)?;
                items.push(format!("{key}: {item}"));
            } else {
                items.push(item);
            }
        }
        let sep = if self.u.ratio(1, 6)? { ",\n  " } else { ", " };
        let trailing = if self.u.ratio(1, 6)? { "," } else { "" };
        let (open, close) = if mapping { ("{", "}") } else { ("[", "]") };
        Ok(format!("{open}{}{trailing}{close}", items.join(sep)))
    }

    fn block_scalar(&mut self, indent: usize) -> Result<String> {
        let style = self
            .u
            .choose(&["|", ">", "|-", ">-", "|+", ">+", "|2", ">1-", "|+2"])?;
        let mut out = format!("{style}{}", self.eol);
        let lines = self.u.int_in_range(0..=4u8)?;
        for _ in 0..lines {
            if self.u.ratio(1, 5)? {
                out.push_str(self.eol);
                continue;
            }
            let extra = if self.u.ratio(1, 5)? { "  " } else { "" };
            let w = self.word()?.replace(['\n', '\r'], " ");
            out.push_str(&format!("{}{extra}{w}{}", self.pad(indent), self.eol));
        }
        Ok(out)
    }

    /// The text after `key:` (or `-`), ending with a line break.
    fn value(&mut self, indent: usize, depth: u8) -> Result<String> {
        let eol = self.eol;
        let props = self.props()?;
        let choice = self.u.int_in_range(0..=11u8)?;
        Ok(match choice {
            0 => format!(" {props}{}{eol}", self.word()?.replace(['\n', '\r'], " ")),
            1 | 2 => format!(" {props}{}{eol}", self.inline_scalar(false)?),
            3 => format!(" {props}{}", self.block_scalar(indent)?),
            4 => format!(" {props}{}{eol}", self.flow(depth)?),
            5 if depth < 4 => {
                let mut out = format!(" {props}{eol}");
                let n = self.u.int_in_range(0..=4u8)?;
                let dash_indent = if self.u.ratio(1, 3)? {
                    indent.saturating_sub(2)
                } else {
                    indent
                };
                for _ in 0..n {
                    out.push_str(&format!("{}-", self.pad(dash_indent)));
                    out.push_str(&self.value(dash_indent + 2, depth + 1)?);
                }
                out
            }
            6 if depth < 4 => {
                let mut out = format!(" {props}{eol}");
                let n = self.u.int_in_range(0..=4u8)?;
                for _ in 0..n {
                    let key = if self.u.ratio(1, 2)? {
                        self.inline_scalar(true)?
                    } else {
                        (*self.u.choose(keys())?).to_owned()
                    };
                    out.push_str(&format!("{}{key}:", self.pad(indent)));
                    out.push_str(&self.value(indent + 2, depth + 1)?);
                }
                out
            }
            7 if !self.anchors.is_empty() => {
                format!(" *{}{eol}", self.u.choose(&self.anchors)?.clone())
            }
            8 => format!(
                "{eol}{}{}{eol}",
                self.pad(indent),
                self.inline_scalar(false)?
            ),
            9 => format!(
                " {}{eol}",
                self.u.choose(&[
                    "", "~", "null", "true", "no", "1", "-1.5", "0o7", "[]", "{}", "''", "\"\""
                ])?
            ),
            10 => format!(" {props}{} # comment{eol}", self.inline_scalar(false)?),
            _ => format!(" {props}{}{eol}", self.word()?),
        })
    }
}

fn build(u: &mut Unstructured<'_>) -> Result<(Option<&'static str>, Vec<u8>)> {
    let directory = *u.choose(&[None, Some("x"), Some("pdf-tools"), Some("my-skill")])?;
    let eol = *u.choose(&["\n", "\n", "\n", "\r\n", "\r"])?;
    let mut g = Gen {
        u,
        eol,
        anchors: Vec::new(),
    };
    let mut out = String::new();
    if g.u.ratio(1, 10)? {
        out.push('\u{feff}');
    }
    out.push_str(g.u.choose(&["---", "---", "--- ", "---\t"])?);
    out.push_str(eol);
    if g.u.ratio(1, 10)? {
        out.push_str(&format!("# leading comment{eol}"));
    }
    let n = g.u.int_in_range(0..=10u8)?;
    for _ in 0..n {
        let key = if g.u.ratio(1, 10)? {
            g.inline_scalar(true)?
        } else {
            (*g.u.choose(keys())?).to_owned()
        };
        out.push_str(&key);
        out.push(':');
        let value = g.value(2, 1)?;
        out.push_str(&value);
    }
    out.push_str(g.u.choose(&["---", "---", "--- ", "---\t"])?);
    if g.u.ratio(7, 8)? {
        out.push_str(eol);
    }
    let body = match g.u.int_in_range(0..=4u8)? {
        0 => String::new(),
        1 => format!("# Title{eol}{eol}Body text.{eol}"),
        2 => format!("---{eol}not a fence for us{eol}---{eol}"),
        3 => g.u.arbitrary::<String>()?,
        _ => g.word()?,
    };
    out.push_str(&body);
    let mut bytes = out.into_bytes();
    // Whatever is left of the input is appended raw, so byte-level mutation still reaches
    // the body and the YAML reader's error paths.
    let rest = g.u.len();
    bytes.extend_from_slice(g.u.bytes(rest)?);
    Ok((directory, bytes))
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    if let Ok((directory, bytes)) = build(&mut u) {
        check_skill_md(&bytes, directory);
    }
});
