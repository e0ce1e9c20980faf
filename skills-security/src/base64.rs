//! Lenient base64 for inspecting text: what `base64 -d` would make of a run, standard or
//! URL-safe alphabet, without padding. Used to look inside values (a `Basic` credential, an
//! encoded blob in a skill), never to verify anything.

/// The 6-bit value of a base64 character of either alphabet.
fn value(byte: u8) -> Option<u32> {
    Some(u32::from(match byte {
        b'A'..=b'Z' => byte - b'A',
        b'a'..=b'z' => byte - b'a' + 26,
        b'0'..=b'9' => byte - b'0' + 52,
        b'+' | b'-' => 62,
        b'/' | b'_' => 63,
        _ => return None,
    }))
}

/// Decodes `body` (padding already removed), or `None` when a character is not base64 or
/// the length cannot be base64 (one character past a whole group).
pub(crate) fn decode_lenient(body: &[u8]) -> Option<Vec<u8>> {
    if body.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    for chunk in body.chunks(4) {
        let mut acc = 0u32;
        for (k, &b) in chunk.iter().enumerate() {
            acc |= value(b)? << (18 - 6 * k);
        }
        let [_, b0, b1, b2] = acc.to_be_bytes();
        out.push(b0);
        if chunk.len() > 2 {
            out.push(b1);
        }
        if chunk.len() > 3 {
            out.push(b2);
        }
    }
    Some(out)
}

/// `text` without its trailing `=` or `==`.
pub(crate) fn strip_padding(text: &[u8]) -> &[u8] {
    text.strip_suffix(b"==")
        .or_else(|| text.strip_suffix(b"="))
        .unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_alphabets_decode_without_padding() {
        assert_eq!(decode_lenient(b"Zm9vYg").as_deref(), Some(&b"foob"[..]));
        assert_eq!(decode_lenient(b"Zm9vYmFy").as_deref(), Some(&b"foobar"[..]));
        assert_eq!(
            decode_lenient(b"-_8").as_deref(),
            decode_lenient(b"+/8").as_deref()
        );
        assert_eq!(
            decode_lenient(strip_padding(b"Zg==")).as_deref(),
            Some(&b"f"[..])
        );
        assert_eq!(decode_lenient(b"Zm9vY"), None);
        assert_eq!(decode_lenient(b"Zm9!"), None);
    }
}
