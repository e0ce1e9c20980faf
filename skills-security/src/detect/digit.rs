//! What a digit starts, in the order the pass tries it: an IPv6 group, a date (of birth,
//! with its context), an SSN, a North American phone, an IPv4 address, a card, a national
//! phone, an amount; a digit inside a word may end an IBAN's country code or start an IPv6
//! group, and is otherwise skipped with its word. The first recognizer that reads a value
//! decides where the pass resumes.

use super::pass::value;
use super::table::Tables;
use super::{Finding, birth, card, date, iban, ip, money, phone, ssn, text};
use crate::classify::DataType;

/// The end of the run of letters, digits and `_` from `i`.
fn word_end(h: &[u8], i: usize) -> usize {
    text::run_end(h, i, usize::MAX, |b| text::is_alnum(b) || b == b'_')
}

/// Everything a digit can start; returns where the pass resumes.
pub(super) fn at_digit(
    text: &str,
    h: &[u8],
    p: usize,
    tables: &mut Tables,
    out: &mut Vec<Finding>,
) -> usize {
    if matches!(text::before(h, p), Some(b) if text::is_alnum(b) || b == b'_') {
        return inside_word(text, h, p, out);
    }
    let hex = text::run_end(h, p, 5, |b| b.is_ascii_hexdigit()) - p;
    if hex <= 4
        && text::at(h, p + hex) == Some(b':')
        && let Some(end) = ip::v6_at(text, p)
    {
        value(out, p, end, DataType::IP_ADDRESS);
        return end;
    }
    if let Some(d) = date::at_digit(h, p) {
        if birth::birth_context(h, d.start) || tables.birth_column(h, d.start, d.end) {
            value(out, d.start, d.end, DataType::DATE_OF_BIRTH);
            return d.skip;
        }
        // A two-digit year with no birth context is not taken for a date.
        if !d.short_year {
            return d.skip;
        }
    }
    if let Some(end) = ssn::at_digit(h, p) {
        // An SSN-shaped value under an identifier column (`Part no.`) is that identifier.
        if !tables.id_column(h, p, end) {
            value(out, p, end, DataType::SSN);
        }
        return end;
    }
    if let Some(end) = phone::nanp_at_digit(h, p) {
        value(out, p, end, DataType::PHONE);
        return end;
    }
    if let Some(end) = ip::v4_at_digit(h, p) {
        value(out, p, end, DataType::IP_ADDRESS);
        return end;
    }
    if let Some(end) = card::at_digit(h, p) {
        value(out, p, end, DataType::CREDIT_CARD);
        return end;
    }
    if let Some(end) = phone::national_at_digit(h, p) {
        value(out, p, end, DataType::PHONE);
        return end;
    }
    match money::at_digit(h, p) {
        Ok((s, end)) => {
            value(out, s, end, DataType::MONEY);
            end
        }
        Err(Some(end)) => end,
        Err(None) => word_end(h, p),
    }
}

/// A digit inside a word: the tail of an IBAN's country code, the first group of an IPv6
/// address, or just part of an identifier or hash (skipped whole).
fn inside_word(text: &str, h: &[u8], p: usize, out: &mut Vec<Finding>) -> usize {
    if p >= 2
        && h[p - 1].is_ascii_uppercase()
        && h[p - 2].is_ascii_uppercase()
        && text::open_before(h, p - 2)
        && let Some(end) = iban::at(h, p - 2)
    {
        value(out, p - 2, end, DataType::IBAN);
        return end;
    }
    let mut s = p;
    while s > 0 && h[s - 1].is_ascii_hexdigit() && p - s < 4 {
        s -= 1;
    }
    if text::open_before(h, s) {
        let hex_end = text::run_end(h, s, 5, |b| b.is_ascii_hexdigit());
        if hex_end - s <= 4
            && text::at(h, hex_end) == Some(b':')
            && let Some(end) = ip::v6_at(text, s)
        {
            value(out, s, end, DataType::IP_ADDRESS);
            return end;
        }
    }
    word_end(h, p)
}
