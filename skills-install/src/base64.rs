//! Standard base64 (RFC 4648 section 4) for git-host file contents and npm `integrity`
//! strings, through the `base64` crate configured the way those sources write it.
//!
//! ASCII whitespace is skipped (git hosts wrap their base64 at 60 columns); padding is
//! optional but, when present, must end the input; non-zero trailing bits and any other
//! character are refused.

use base64::Engine as _;
use base64::alphabet::STANDARD;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};

const LENIENT_PADDING: GeneralPurpose = GeneralPurpose::new(
    &STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Encodes `bytes` with padding.
pub(crate) fn encode(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Decodes `text`, or `None` when it is not base64.
pub(crate) fn decode(text: &str) -> Option<Vec<u8>> {
    let compact: Vec<u8> = text
        .bytes()
        .filter(|byte| !byte.is_ascii_whitespace())
        .collect();
    LENIENT_PADDING.decode(compact).ok()
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
