//! The five data classes and the names of data types.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::Error;

/// How sensitive a piece of data is, from least to most (seed 000, section 1.2).
///
/// The order is meaningful: `Public < Internal < Confidential < Restricted < Regulated`, so
/// the class of a whole is the maximum of the classes of its parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DataClass {
    /// Can be shared freely (company names, public information).
    Public,
    /// Company internal (goals, strategies, notes). The class of data nothing else marks.
    Internal,
    /// Need-to-know (deal details, contacts).
    Confidential,
    /// Financial or competitive (revenue, pricing, contracts, credentials).
    Restricted,
    /// Personal and health data under legal requirements (HIPAA, GDPR).
    Regulated,
}

impl DataClass {
    /// Every class, least sensitive first.
    pub const ALL: [DataClass; 5] = [
        DataClass::Public,
        DataClass::Internal,
        DataClass::Confidential,
        DataClass::Restricted,
        DataClass::Regulated,
    ];

    /// The lowercase name used by the seed and in audit records (`"regulated"`).
    pub fn as_str(self) -> &'static str {
        match self {
            DataClass::Public => "public",
            DataClass::Internal => "internal",
            DataClass::Confidential => "confidential",
            DataClass::Restricted => "restricted",
            DataClass::Regulated => "regulated",
        }
    }

    /// The class named `name` (as [`as_str`](Self::as_str) writes it).
    pub fn parse(name: &str) -> Option<DataClass> {
        DataClass::ALL.into_iter().find(|c| c.as_str() == name)
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for DataClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The name of a kind of sensitive data (`EMAIL`, `SSN`, a host's `PERSON`).
///
/// It names tokens (`[EMAIL_001]`) and redactions (`[REDACTED: SSN]`), so it is restricted to
/// 1-32 characters of `A-Z`, `0-9` and `_` starting with a letter: a host type can never
/// smuggle brackets or spaces into the token syntax that output validation parses.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct DataType(Cow<'static, str>);

macro_rules! data_types {
    ($($(#[$doc:meta])* $name:ident,)*) => {
        impl DataType {
            $($(#[$doc])* pub const $name: DataType = DataType(Cow::Borrowed(stringify!($name)));)*
        }
    };
}

data_types! {
    /// An e-mail address.
    EMAIL,
    /// A telephone number.
    PHONE,
    /// A US social security number.
    SSN,
    /// A payment card number.
    CREDIT_CARD,
    /// An international bank account number.
    IBAN,
    /// An IPv4 or IPv6 address.
    IP_ADDRESS,
    /// A date of birth.
    DATE_OF_BIRTH,
    /// An amount of money.
    MONEY,
    /// A credential: an API key, token, private key or password.
    SECRET,
    /// Health information (a labelled diagnosis, medication, medical record...).
    HEALTH,
    /// Financial information (revenue, margins, pricing, deal terms).
    FINANCIAL,
    /// Text explicitly marked confidential or proprietary.
    MARKED,
    /// Contact details introduced as such.
    CONTACT,
    /// Data with nothing more specific to say about it.
    GENERAL,
    /// CRM deal information (the `crm_deal` source).
    DEAL_INFO,
}

impl DataType {
    /// A host-defined type name, checked (see the type's documentation).
    ///
    /// ```
    /// use skills_security::DataType;
    /// assert_eq!(DataType::new("PERSON").unwrap().as_str(), "PERSON");
    /// assert!(DataType::new("EMAIL_001]").is_err());
    /// ```
    pub fn new(name: impl Into<String>) -> Result<DataType, Error> {
        let name: String = name.into();
        if is_valid_type_name(&name) {
            Ok(DataType(Cow::Owned(name)))
        } else {
            Err(Error::InvalidDataType { name })
        }
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

pub(crate) fn is_valid_type_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 32
        && b[0].is_ascii_uppercase()
        && b.iter()
            .all(|&c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_')
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_ordered_as_the_seed() {
        let mut sorted = DataClass::ALL;
        sorted.sort();
        assert_eq!(sorted, DataClass::ALL);
        assert!(DataClass::Public < DataClass::Regulated);
    }

    #[test]
    fn type_names_cannot_break_token_syntax() {
        for bad in [
            "",
            "email",
            "A B",
            "A]",
            "[A",
            "_A",
            "1A",
            &"A".repeat(33),
            "É",
        ] {
            assert!(DataType::new(bad).is_err(), "{bad:?}");
        }
        assert!(DataType::new("PERSON_NAME2").is_ok());
    }
}
