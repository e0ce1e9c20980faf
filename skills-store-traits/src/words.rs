//! `word_enum!`: the record enums stored as one lowercase word (plan and learning statuses),
//! shared so every such enum parses, prints and refuses unknown words the same way.

/// An enum stored as one lowercase word, with `as_str`, `Display` and a `FromStr` that
/// refuses other words as [`Violation::UnknownValue`](crate::error::Violation::UnknownValue)
/// of `$field`.
macro_rules! word_enum {
    ($(#[$meta:meta])* $name:ident, $field:literal, $expected:literal,
     { $($(#[$vmeta:meta])* $variant:ident => $word:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash,
            ::serde::Serialize, ::serde::Deserialize,
        )]
        #[serde(rename_all = "lowercase")]
        pub enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// The stored word.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $word),+
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::error::Error;

            fn from_str(word: &str) -> $crate::error::Result<Self> {
                match word {
                    $($word => Ok($name::$variant),)+
                    _ => Err($crate::error::Error::invalid(
                        $field,
                        $crate::error::Violation::UnknownValue { expected: $expected },
                    )),
                }
            }
        }
    };
}
