//! Standard base64 decoding (RFC 4648 section 4), for git-host file contents and npm
//! `integrity` strings. Written here because no base64 crate is a workspace dependency.
//!
//! ASCII whitespace is skipped (git hosts wrap their base64 at 60 columns); padding is
//! optional but, when present, must end the input; any other character is refused.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Encodes `bytes` with padding.
pub(crate) fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
        }
        for _ in chunk.len()..3 {
            out.push('=');
        }
    }
    out
}

/// Decodes `text`, or `None` when it is not base64.
pub(crate) fn decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let mut buffer = 0u32;
    let mut bits = 0u32;
    let mut padding = 0usize;
    for byte in text.bytes() {
        if byte.is_ascii_whitespace() {
            continue;
        }
        if byte == b'=' {
            padding += 1;
            continue;
        }
        if padding > 0 {
            return None;
        }
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        buffer = (buffer << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(((buffer >> bits) & 0xff) as u8);
        }
    }
    // Leftover bits must be fewer than a byte and zero; at most two `=`.
    if padding > 2 || bits >= 6 || buffer & ((1 << bits) - 1) != 0 {
        return None;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::{decode, encode};

    #[test]
    fn rfc4648_vectors() {
        let cases = [
            ("", ""),
            ("Zg==", "f"),
            ("Zm8=", "fo"),
            ("Zm9v", "foo"),
            ("Zm9vYg==", "foob"),
            ("Zm9vYmE=", "fooba"),
            ("Zm9vYmFy", "foobar"),
            ("Zm9v\nYmFy\n", "foobar"),
            ("Zm9vYg", "foob"),
        ];
        for (input, output) in cases {
            assert_eq!(decode(input).as_deref(), Some(output.as_bytes()), "{input}");
        }
    }

    #[test]
    fn encode_round_trips() {
        for input in ["", "f", "fo", "foo", "foob", "fooba", "foobar"] {
            assert_eq!(
                decode(&encode(input.as_bytes())).as_deref(),
                Some(input.as_bytes())
            );
        }
        assert_eq!(encode(b"foob"), "Zm9vYg==");
    }

    #[test]
    fn garbage_is_refused() {
        for input in ["Zm9v!", "Zg==Zg", "Zh==", "Z", "Zg==="] {
            assert_eq!(decode(input), None, "{input}");
        }
    }
}
