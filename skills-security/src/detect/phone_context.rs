//! What the words around a phone-shaped number say: a label introducing it as a phone
//! (`Tel.`, `Mobile:`, `Desk`, `Fax`, `Office`, `Telefon`, `電話`...), a label naming
//! another identifier (`Order ref`, `Tracking number`, `Invoice`, `SKU`...), or a street
//! name after it (`221 4567 Baker Road` is an address). Labels are read by
//! [`label`](super::label), nearest cue word first.

use super::label::{Cue, WordsOnce, nearest_cue};
use super::text::{at, before};

/// Words that make a number a phone, whatever else the label says.
const PHONE_WORDS: [&[u8]; 36] = [
    b"phone",
    b"phones",
    b"telephone",
    b"tel",
    b"tele",
    b"telefon",
    b"telefone",
    b"telefono",
    "teléfono".as_bytes(),
    "tél".as_bytes(),
    b"cell",
    b"cellphone",
    b"mobile",
    b"mob",
    b"mobil",
    "móvil".as_bytes(),
    b"movil",
    b"handy",
    b"portable",
    b"fax",
    b"call",
    b"called",
    b"callback",
    b"caller",
    b"ph",
    b"text",
    b"sms",
    b"whatsapp",
    b"dial",
    b"reach",
    b"hotline",
    b"landline",
    b"celular",
    b"cellulare",
    "電話".as_bytes(),
    "携帯".as_bytes(),
];

static PHONE: WordsOnce = WordsOnce::new(&[&PHONE_WORDS]);
static NATIONAL: WordsOnce = WordsOnce::new(&[&PHONE_WORDS, &NATIONAL_EXTRA]);
static NOT: WordsOnce = WordsOnce::new(&[&NOT_PHONE]);
static SIGN_OFF: WordsOnce = WordsOnce::new(&[&SIGN_OFFS]);

/// The words beyond [`PHONE_WORDS`] that may introduce a national number (one written
/// without `+` and country code, `0221/453508`): such a number needs one of either list as
/// the nearest cue of its label. They are: the kinds of
/// number a contact card lists (`Desk`, `Office`, `Direct`, `Work`, `Home`, `Main`,
/// `Pager`...), `M:`/`T:`, and their equivalents in the languages the recognizers read
/// (`Durchwahl`, `Büro`, `bureau`, `fijo`, `oficina`, `ufficio`, `escritório`, `kantoor`,
/// `mobiel`, `電話番号`, `内線`, `手机`, `座机`, `휴대전화`...). Cues for national numbers
/// only.
const NATIONAL_EXTRA: [&[u8]; 53] = [
    b"m",
    b"t",
    b"f",
    b"tlf",
    b"tfno",
    b"telefoon",
    b"natel",
    b"line",
    b"contact",
    b"desk",
    b"office",
    b"direct",
    b"switchboard",
    b"reception",
    b"helpline",
    b"work",
    b"home",
    b"main",
    b"business",
    b"pager",
    b"voicemail",
    b"durchwahl",
    b"zentrale",
    "büro".as_bytes(),
    b"mobiltelefon",
    b"telefonnummer",
    b"rufnummer",
    b"fixe",
    b"bureau",
    b"fijo",
    b"oficina",
    b"ufficio",
    b"fisso",
    "escritório".as_bytes(),
    b"fixo",
    "telemóvel".as_bytes(),
    b"kantoor",
    b"mobiel",
    b"gsm",
    "電話番号".as_bytes(),
    "携帯電話".as_bytes(),
    "内線".as_bytes(),
    "代表".as_bytes(),
    "手机".as_bytes(),
    "手机号".as_bytes(),
    "电话".as_bytes(),
    "联系电话".as_bytes(),
    "座机".as_bytes(),
    "전화".as_bytes(),
    "전화번호".as_bytes(),
    "휴대전화".as_bytes(),
    "휴대폰".as_bytes(),
    "연락처".as_bytes(),
];

/// Words naming identifiers that look like phone numbers.
const NOT_PHONE: [&[u8]; 55] = [
    b"error",
    b"order",
    b"orders",
    b"invoice",
    b"inv",
    b"tracking",
    b"shipment",
    b"parcel",
    b"package",
    b"waybill",
    b"ref",
    b"reference",
    b"part",
    b"sku",
    b"serial",
    b"ticket",
    b"case",
    b"confirmation",
    b"conf",
    b"po",
    b"id",
    b"build",
    b"version",
    b"item",
    b"product",
    b"model",
    b"lot",
    b"batch",
    b"transaction",
    b"txn",
    b"receipt",
    b"booking",
    b"reservation",
    b"claim",
    b"account",
    b"acct",
    b"rma",
    b"teilenummer",
    b"artikelnummer",
    b"bestellnummer",
    b"auftragsnummer",
    b"rechnungsnummer",
    b"seriennummer",
    b"sendungsnummer",
    b"bestellung",
    b"rechnung",
    b"auftrag",
    b"commande",
    b"facture",
    b"suivi",
    b"pedido",
    b"factura",
    b"referencia",
    "référence".as_bytes(),
    b"seguimiento",
];

/// True when the context before `start` says the number is something else.
pub(crate) fn not_a_phone(h: &[u8], start: usize) -> bool {
    if matches!(before(h, start), Some(b'/' | b'_')) {
        return true;
    }
    match nearest_cue(h, start, PHONE.get(), NOT.get()) {
        Some(Cue::Own) => false,
        Some(Cue::Other) => true,
        None => {
            let mut i = start;
            while i > 0 && h[i - 1] == b' ' {
                i -= 1;
            }
            before(h, i) == Some(b'#')
        }
    }
}

/// True when the nearest cue of the label before `start` introduces a phone number.
pub(crate) fn phone_label(h: &[u8], start: usize) -> bool {
    if matches!(before(h, start), Some(b'/' | b'_' | b'#')) {
        return false;
    }
    nearest_cue(h, start, NATIONAL.get(), NOT.get()) == Some(Cue::Own)
}

/// Street words: a number followed by a name and one of these is a street number (`221
/// 4567 Baker Road`), never a phone. Compared ASCII case-insensitively, whole words.
const STREET_WORDS: [&[u8]; 36] = [
    b"road",
    b"rd",
    b"street",
    b"st",
    b"avenue",
    b"ave",
    b"av",
    b"lane",
    b"ln",
    b"drive",
    b"dr",
    b"way",
    b"boulevard",
    b"blvd",
    b"court",
    b"ct",
    b"place",
    b"pl",
    b"terrace",
    b"close",
    b"crescent",
    b"highway",
    b"hwy",
    b"parkway",
    b"pkwy",
    b"square",
    b"sq",
    b"trail",
    b"circle",
    b"strasse",
    "straße".as_bytes(),
    b"str",
    b"weg",
    b"gasse",
    b"allee",
    b"straat",
];

/// True when a street name follows the number ending at `end`: a capitalised word, then up
/// to two more words, the last a street word (`Baker Road`, `Old Mill Lane`). It only ever
/// removes a phone, never makes one.
pub(crate) fn street_after(h: &[u8], end: usize) -> bool {
    let mut i = end;
    for _ in 0..3 {
        if at(h, i) != Some(b' ') {
            return false;
        }
        i += 1;
        let s = i;
        while matches!(at(h, i), Some(b) if b.is_ascii_alphabetic()) {
            i += 1;
        }
        let word = &h[s..i];
        if word.is_empty() || !matches!(at(h, i), None | Some(b' ' | b',' | b'.' | b'\n' | b'\r')) {
            return false;
        }
        if s > end + 1 && STREET_WORDS.iter().any(|w| word.eq_ignore_ascii_case(w)) {
            return true;
        }
        // The street's own name starts with a capital.
        if s == end + 1 && !word[0].is_ascii_uppercase() {
            return false;
        }
    }
    false
}

/// Sign-offs that open a signature block, compared as lowercase whole words.
const SIGN_OFFS: [&[u8]; 14] = [
    b"regards",
    b"sincerely",
    b"cheers",
    b"thanks",
    b"best",
    b"freundlichen",
    b"cordialement",
    b"saludos",
    b"atentamente",
    b"saluti",
    b"groet",
    b"cumprimentos",
    "よろしくお願いします".as_bytes(),
    "此致".as_bytes(),
];

/// How far around a bare number a contact block is looked for, in bytes each way.
const BLOCK: usize = 240;

/// True when the number from `s` to `end` is a line of its own: nothing but spaces or tabs
/// between it and the line breaks (or the text's ends) around it.
pub(crate) fn alone_on_line(h: &[u8], s: usize, end: usize) -> bool {
    let mut i = s;
    while i > 0 && matches!(h[i - 1], b' ' | b'\t') {
        i -= 1;
    }
    let mut j = end;
    while matches!(at(h, j), Some(b' ' | b'\t' | b'\r')) {
        j += 1;
    }
    matches!(before(h, i), None | Some(b'\n')) && matches!(at(h, j), None | Some(b'\n'))
}

/// How many lines above and below a bare number a contact block is looked for in.
const BLOCK_LINES: usize = 4;

/// True when the line holding `s..end` sits in a contact block: a paragraph (no blank line
/// between) holding, within four lines, an e-mail address, a line starting with a phone
/// label, or a sign-off line (`Best regards,`). A number alone on a line anywhere else (a
/// count, a code in a log) stays unread.
pub(crate) fn contact_block(h: &[u8], s: usize, end: usize) -> bool {
    let from = lines_before(h, paragraph_start(h, s.saturating_sub(BLOCK), s), s);
    let to = lines_after(h, end, paragraph_end(h, end, (end + BLOCK).min(h.len())));
    let block = &h[from..to];
    memchr::memchr(b'@', block).is_some()
        || block
            .split(|&b| b == b'\n')
            .any(|line| starts_with_cue(line) || is_sign_off(line))
}

/// The start of the line [`BLOCK_LINES`] lines above `s`, no further back than `floor`.
fn lines_before(h: &[u8], floor: usize, s: usize) -> usize {
    let mut i = s;
    let mut lines = 0;
    while i > floor {
        if h[i - 1] == b'\n' {
            lines += 1;
            if lines > BLOCK_LINES {
                return i;
            }
        }
        i -= 1;
    }
    floor
}

/// The end of the line [`BLOCK_LINES`] lines below `end`, no further than `ceiling`.
fn lines_after(h: &[u8], end: usize, ceiling: usize) -> usize {
    let mut i = end;
    let mut lines = 0;
    while i < ceiling {
        if h[i] == b'\n' {
            lines += 1;
            if lines > BLOCK_LINES {
                return i;
            }
        }
        i += 1;
    }
    ceiling
}

/// The first word of `line` (its leading spaces skipped), ASCII-lowercased into `buf`.
fn first_word<'b>(line: &[u8], buf: &'b mut [u8; 24]) -> &'b [u8] {
    let start = line.iter().position(|&b| b != b' ').unwrap_or(line.len());
    let word = line[start..]
        .iter()
        .take_while(|&&b| b.is_ascii_alphabetic() || b >= 0x80)
        .take(buf.len());
    let mut n = 0;
    for (o, &b) in buf.iter_mut().zip(word) {
        *o = b.to_ascii_lowercase();
        n += 1;
    }
    &buf[..n]
}

/// True when `line` starts with a phone label (`Tel:`, `Fax`, `電話`).
fn starts_with_cue(line: &[u8]) -> bool {
    let mut buf = [0u8; 24];
    NATIONAL.get().contains(first_word(line, &mut buf))
}

/// True when `line` is a short sign-off (`Best regards,`, `Mit freundlichen Grüßen`).
fn is_sign_off(line: &[u8]) -> bool {
    line.len() <= 40
        && line
            .split(|b| !(b.is_ascii_alphabetic() || *b >= 0x80))
            .take(4)
            .any(|w| {
                let mut buf = [0u8; 24];
                let n = w.len().min(buf.len());
                for (o, &b) in buf.iter_mut().zip(&w[..n]) {
                    *o = b.to_ascii_lowercase();
                }
                SIGN_OFF.get().contains(&buf[..n])
            })
}

/// Where the paragraph holding `to` starts, looking back no further than `from`: after the
/// last blank line.
fn paragraph_start(h: &[u8], from: usize, to: usize) -> usize {
    let mut i = to;
    while i > from + 1 {
        if h[i - 1] == b'\n' && h[i - 2] == b'\n' {
            return i;
        }
        i -= 1;
    }
    from
}

/// Where the paragraph holding `from` ends, looking no further than `to`: at the first
/// blank line.
fn paragraph_end(h: &[u8], from: usize, to: usize) -> usize {
    let mut i = from;
    while i + 1 < to {
        if h[i] == b'\n' && h[i + 1] == b'\n' {
            return i;
        }
        i += 1;
    }
    to
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_number(s: &str, number: &str) -> (usize, usize) {
        let start = s.find(number).unwrap_or(0);
        (start, start + number.len())
    }

    #[test]
    fn labels_of_contact_cards() {
        for label in [
            "Desk: ",
            "Office ",
            "Fax - ",
            "Direct line: ",
            "Büro: ",
            "内線：",
        ] {
            let s = format!("{label}030 901820");
            let (start, _) = at_number(&s, "030");
            assert!(phone_label(s.as_bytes(), start), "{s:?}");
        }
        let s = "Office order no. 030 901820";
        assert!(!phone_label(s.as_bytes(), at_number(s, "030").0));
    }

    #[test]
    fn street_names_after_a_number() {
        for (s, number) in [
            ("221 4567 Baker Road", "221 4567"),
            ("12 3456 Old Mill Lane,", "12 3456"),
            ("742 1234 Evergreen Terrace", "742 1234"),
        ] {
            let (_, end) = at_number(s, number);
            assert!(street_after(s.as_bytes(), end), "{s:?}");
        }
        for s in [
            "221 4567 baker road",
            "221 4567 Baker",
            "221 4567 for the Road",
        ] {
            let (_, end) = at_number(s, "221 4567");
            assert!(!street_after(s.as_bytes(), end), "{s:?}");
        }
    }

    #[test]
    fn bare_numbers_in_contact_blocks() {
        let s = "Best regards,\nAnna Weber\nWeber GmbH\n030 901820\n";
        let (start, end) = at_number(s, "030 901820");
        assert!(alone_on_line(s.as_bytes(), start, end));
        assert!(contact_block(s.as_bytes(), start, end));
        let s = "Rows processed:\n030 901820\n";
        let (start, end) = at_number(s, "030 901820");
        assert!(alone_on_line(s.as_bytes(), start, end));
        assert!(!contact_block(s.as_bytes(), start, end));
        // A blank line ends the block: the sign-off above it is another paragraph's.
        let s = "Best regards,\n\nRows:\n030 901820\n";
        let (start, end) = at_number(s, "030 901820");
        assert!(!contact_block(s.as_bytes(), start, end));
        let s = "total 030 901820\n";
        let (start, end) = at_number(s, "030 901820");
        assert!(!alone_on_line(s.as_bytes(), start, end));
    }
}
