//! Delimited tables (CSV, TSV, `;`- or `|`-separated, Markdown): a date that is a whole
//! field of a row is a date of birth when its column's header names one (`dob`,
//! `birth_date`, `Date of Birth`, `Geburtsdatum`...; the same birth words as a label).
//!
//! The header is the top line of the block of consecutive lines with the row's delimiter
//! and field count, and it must look like one (no field starting with a digit). The walk up
//! to it is bounded ([`MAX_LINES`], [`MAX_BYTES`]); what it finds is remembered for the rest
//! of the scan, so every later row of the same table costs only the lines since the last
//! one, and a long table is read once, not once per date; and the walks of one scan share a
//! budget of about the text's length, so no input makes them quadratic.

use super::birth::ends_in_key;

/// The most lines walked up to find a header.
const MAX_LINES: usize = 512;
/// The most bytes walked up to find a header.
const MAX_BYTES: usize = 64 * 1024;
/// The longest line read as a row or header: longer lines are not table rows, and the
/// bound keeps a date on a long line (minified JSON) cheap.
const MAX_LINE: usize = 1024;

/// Header words that mark a birth column (see [`birth`](super::birth)).
const BIRTH_COLUMNS: [&[u8]; 15] = [
    b"dob",
    b"born",
    b"birth",
    b"birthdate",
    b"birthday",
    b"bday",
    b"geburtsdatum",
    b"naissance",
    b"nacimiento",
    b"nascita",
    b"nascimento",
    b"geboortedatum",
    "生年月日".as_bytes(),
    "誕生日".as_bytes(),
    "생년월일".as_bytes(),
];

/// What the scan has learnt about the table it is in.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Tables {
    known: Option<Table>,
    /// Bytes walked looking for headers so far in this scan.
    walked: usize,
}

#[derive(Debug, Clone, Copy)]
struct Table {
    delim: u8,
    fields: usize,
    /// Bit `i`: column `i` is a birth column.
    birth: u64,
    /// Bit `i`: column `i` holds identifiers (`Part no.`, `SKU`, `Code`, `ID`...).
    ids: u64,
    /// The end of the last line known to be a row of this table.
    rows_to: usize,
}

fn line_start(h: &[u8], i: usize) -> Option<usize> {
    let from = i.saturating_sub(MAX_LINE);
    match memchr::memrchr(b'\n', h.get(from..i)?) {
        Some(p) => Some(from + p + 1),
        None if from == 0 => Some(0),
        None => None,
    }
}

fn line_end(h: &[u8], i: usize) -> Option<usize> {
    let to = (i + MAX_LINE).min(h.len());
    match memchr::memchr(b'\n', h.get(i..to)?) {
        Some(p) => Some(i + p),
        None if to == h.len() => Some(to),
        None => None,
    }
}

/// The number of `delim`-separated fields of `line` (quoted fields may hold the delimiter)
/// and the index of the field starting at `at` bytes into it.
fn fields(line: &[u8], delim: u8, at: usize) -> (usize, usize) {
    let mut count = 1;
    let mut index = 0;
    let mut quoted = false;
    for (i, &b) in line.iter().enumerate() {
        if i == at {
            index = count - 1;
        }
        if b == b'"' {
            quoted = !quoted;
        } else if b == delim && !quoted {
            count += 1;
        }
    }
    (count, index)
}

fn is_delim(b: u8) -> bool {
    matches!(b, b',' | b';' | b'\t' | b'|')
}

/// Skips spaces and one quote backwards from `i`, not below `floor`.
fn field_open(h: &[u8], mut i: usize, floor: usize) -> usize {
    while i > floor && h[i - 1] == b' ' {
        i -= 1;
    }
    if i > floor && h[i - 1] == b'"' {
        i -= 1;
    }
    i
}

/// Skips one quote and spaces forwards from `i`.
fn field_close(h: &[u8], mut i: usize) -> usize {
    if h.get(i) == Some(&b'"') {
        i += 1;
    }
    while matches!(h.get(i), Some(b' ' | b'\r')) {
        i += 1;
    }
    i
}

/// A header field without surrounding spaces and quotes.
fn unquote(f: &[u8]) -> &[u8] {
    let f = f.trim_ascii();
    let f = f.strip_prefix(b"\"").unwrap_or(f);
    let f = f.strip_suffix(b"\"").unwrap_or(f);
    f.trim_ascii()
}

/// True when the line's fields look like column names: none starting with a digit, none
/// longer than 48 bytes.
fn is_header(line: &[u8], delim: u8) -> bool {
    line.split(|&b| b == delim).all(|f| {
        let f = unquote(f);
        f.len() <= 48 && !f.first().is_some_and(u8::is_ascii_digit)
    })
}

/// Header words that mark a column of identifiers (an SSN-shaped value there is a part
/// number, not an SSN).
const ID_COLUMNS: [&[u8]; 16] = [
    b"part",
    b"sku",
    b"code",
    b"id",
    b"item",
    b"product",
    b"serial",
    b"order",
    b"ref",
    b"reference",
    b"model",
    b"article",
    b"artikel",
    b"teilenummer",
    b"artikelnummer",
    b"catalog",
];

/// Header words that keep a column an SSN column whatever else it says.
const SSN_COLUMNS: [&[u8]; 3] = [b"ssn", b"social", b"soc"];

fn is_id_header(f: &[u8]) -> bool {
    let mut id = false;
    for w in super::text::last_words(f, 3) {
        let mut buf = [0u8; 16];
        let Some(lw) = buf.get_mut(..w.len()) else {
            continue;
        };
        for (o, b) in lw.iter_mut().zip(w) {
            *o = b.to_ascii_lowercase();
        }
        let lw = &*lw;
        if SSN_COLUMNS.contains(&lw) {
            return false;
        }
        id |= ID_COLUMNS.contains(&lw);
    }
    id
}

/// The birth-column and identifier-column masks of a header line.
fn header_columns(line: &[u8], delim: u8) -> (u64, u64) {
    let mut birth = 0u64;
    let mut ids = 0u64;
    for (i, f) in line.split(|&b| b == delim).enumerate().take(64) {
        let f = unquote(f);
        if ends_in_key(f, &BIRTH_COLUMNS) {
            birth |= 1 << i;
        } else if is_id_header(f) {
            ids |= 1 << i;
        }
    }
    (birth, ids)
}

/// True when every line from the end of the known table's rows to the line starting at
/// `ls` is a row of it.
fn rows_between(h: &[u8], t: Table, ls: usize) -> bool {
    if t.rows_to >= ls {
        // Another date on the row already read.
        return t.rows_to < ls + MAX_LINE;
    }
    if ls - t.rows_to > MAX_BYTES {
        return false;
    }
    let mut i = t.rows_to + 1;
    while i < ls {
        let e = memchr::memchr(b'\n', &h[i..ls]).map_or(ls, |p| i + p);
        if fields(&h[i..e], t.delim, usize::MAX).0 != t.fields {
            return false;
        }
        i = e + 1;
    }
    true
}

impl Tables {
    /// True when the date at `start..end` is a whole field of a table row whose column
    /// header names a date of birth.
    pub(crate) fn birth_column(&mut self, h: &[u8], start: usize, end: usize) -> bool {
        self.columns(h, start, end).0
    }

    /// True when the value at `start..end` is a whole field of a table row whose column
    /// header names an identifier (`Part no.`, `SKU`, `Code`, `ID`...).
    pub(crate) fn id_column(&mut self, h: &[u8], start: usize, end: usize) -> bool {
        self.columns(h, start, end).1
    }

    /// Whether the field at `start..end` is in a birth column and in an identifier column.
    fn columns(&mut self, h: &[u8], start: usize, end: usize) -> (bool, bool) {
        // The field's own delimiters first: they rule out most dates at no cost.
        let open = field_open(h, start, start.saturating_sub(MAX_LINE));
        let close = field_close(h, end);
        let before = open.checked_sub(1).and_then(|i| h.get(i).copied());
        let delim = match (before, h.get(close).copied()) {
            (Some(d), Some(c)) if is_delim(d) && c == d => d,
            (Some(d), Some(b'\n') | None) if is_delim(d) => d,
            (None | Some(b'\n'), Some(c)) if is_delim(c) => c,
            _ => return (false, false),
        };
        let (Some(ls), Some(le)) = (line_start(h, open), line_end(h, close)) else {
            return (false, false);
        };
        let (count, index) = fields(&h[ls..le], delim, open - ls);
        if count < 2 || index >= 64 {
            return (false, false);
        }
        let (birth, ids) = match self.known {
            Some(t) if t.delim == delim && t.fields == count && rows_between(h, t, ls) => {
                (t.birth, t.ids)
            }
            _ => self.find_header(h, ls, delim, count),
        };
        if let Some(t) = &mut self.known {
            t.rows_to = le;
        }
        (birth & (1 << index) != 0, ids & (1 << index) != 0)
    }

    /// Walks up from the row starting at `ls` to the top of its block and reads the header
    /// there; remembers the table either way. Returns the birth- and identifier-column
    /// masks.
    fn find_header(&mut self, h: &[u8], ls: usize, delim: u8, count: usize) -> (u64, u64) {
        // The walks of one scan read at most about the text's length in all (text that
        // keeps switching tables, say two delimiters on every row, cannot make each date
        // walk the whole block again).
        let budget = h.len().max(2 * MAX_BYTES);
        let mut top = ls;
        let mut lines = 0;
        while top > 0 && lines < MAX_LINES && ls - top < MAX_BYTES && self.walked < budget {
            let prev_end = top - 1;
            let Some(prev) = line_start(h, prev_end) else {
                break;
            };
            if fields(&h[prev..prev_end], delim, usize::MAX).0 != count {
                break;
            }
            self.walked += top - prev;
            top = prev;
            lines += 1;
        }
        let header = line_end(h, top).map_or(&[][..], |e| &h[top..e]);
        let (birth, ids) = if top < ls && is_header(header, delim) {
            header_columns(header, delim)
        } else {
            (0, 0)
        };
        self.known = Some(Table {
            delim,
            fields: count,
            birth,
            ids,
            rows_to: ls,
        });
        (birth, ids)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn births(text: &str) -> Vec<bool> {
        let h = text.as_bytes();
        let mut t = Tables::default();
        let mut out = Vec::new();
        let mut i = 0;
        while let Some(p) = text[i..].find("19") {
            let s = i + p;
            out.push(t.birth_column(h, s, s + 10));
            i = s + 10;
        }
        out
    }

    #[test]
    fn csv_birth_columns() {
        let csv = "name,dob,email,phone\nA B,1956-08-15,a@x.io,1\nC D,1983-03-12,c@x.io,2\n";
        assert_eq!(births(csv), [true, true]);
        let tsv = "id\tvisit\tDate of Birth\n1\t1999-01-01\t1956-08-15\n";
        assert_eq!(births(tsv), [false, true]);
        let quoted = "\"name\";\"Geburtsdatum\"\n\"Käßler, B\";\"1952-05-13\"\n";
        assert_eq!(births(quoted), [true]);
        let md = "| name | birth_date |\n|---|---|\n| A | 1956-08-15 |\n";
        assert_eq!(births(md), [true]);
    }

    #[test]
    fn switching_tables_stays_linear() {
        // Every row holds dates under two delimiters, so each date switches tables.
        let mut text = String::from("a,dob;b;c\n");
        for _ in 0..2000 {
            text.push_str("x,1956-08-15;y;1957-01-02\n");
        }
        let h = text.as_bytes();
        let mut t = Tables::default();
        let mut i = 0;
        while let Some(p) = text[i..].find("19") {
            let s = i + p;
            t.birth_column(h, s, s + 10);
            i = s + 10;
        }
        assert!(t.walked <= h.len().max(2 * MAX_BYTES) + MAX_LINE);
    }

    #[test]
    fn not_birth_columns() {
        let csv = "name,created,email\nA B,1956-08-15,a@x.io\n";
        assert_eq!(births(csv), [false]);
        // No header line at the top of the block.
        let rows = "A B,1956-08-15,a@x.io\nC D,1983-03-12,c@x.io\n";
        assert_eq!(births(rows), [false, false]);
        // Not a whole field.
        let prose = "name,dob\nborn 1956-08-15 in Rome,x\n";
        assert_eq!(births(prose), [false]);
        // A different table after a blank line.
        let two = "name,dob\nA,1956-08-15\n\nname,visit\nB,1999-01-02\n";
        assert_eq!(births(two), [true, false]);
    }
}
