//! The token vault of one execution.
//!
//! Threat: a token restored in the wrong place (another execution's value, a value the
//! recipient may not see, a token the skill made up), or a raw value escaping through logs.
//! Guarantee: the vault belongs to one execution and is dropped with it; the same value of
//! the same type always gets the same token, tokens are never reused for another value, and
//! names that already appear in the input are never issued (so a skill echoing input text
//! cannot have it "restored" into something else). Its `Debug` output shows counts only.

use std::collections::{HashMap, HashSet};
use std::fmt;

use crate::classify::{DataClass, DataType};

pub(crate) struct Entry {
    pub name: String,
    pub data_type: DataType,
    pub class: DataClass,
    pub raw: String,
}

#[derive(Default)]
pub(crate) struct TokenVault {
    by_value: HashMap<(DataType, String), usize>,
    by_name: HashMap<String, usize>,
    entries: Vec<Entry>,
    counters: HashMap<DataType, u32>,
    reserved: HashSet<String>,
    redacted: Vec<(DataType, String)>,
}

impl fmt::Debug for TokenVault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenVault")
            .field("tokens", &self.entries.len())
            .field("redacted", &self.redacted.len())
            .finish_non_exhaustive()
    }
}

impl TokenVault {
    /// The token for `raw`, issuing one if needed.
    pub fn token_for(&mut self, data_type: &DataType, class: DataClass, raw: &str) -> &str {
        let key = (data_type.clone(), raw.to_owned());
        if let Some(&i) = self.by_value.get(&key) {
            if let Some(e) = self.entries.get_mut(i) {
                e.class = e.class.max(class);
            }
            return self.entries.get(i).map_or("", |e| e.name.as_str());
        }
        let counter = self.counters.entry(data_type.clone()).or_insert(0);
        let name = loop {
            *counter += 1;
            let name = format!("[{}_{:03}]", data_type.as_str(), counter);
            if !self.reserved.contains(&name) && !self.by_name.contains_key(&name) {
                break name;
            }
        };
        let i = self.entries.len();
        self.by_name.insert(name.clone(), i);
        self.by_value.insert(key, i);
        self.entries.push(Entry {
            name,
            data_type: data_type.clone(),
            class,
            raw: raw.to_owned(),
        });
        self.entries.get(i).map_or("", |e| e.name.as_str())
    }

    /// Remembers a redacted value, only to recognise it if a skill's output holds it.
    pub fn remember_redacted(&mut self, data_type: &DataType, raw: &str) {
        self.redacted.push((data_type.clone(), raw.to_owned()));
    }

    /// Marks a token-shaped string seen in input as never to be issued.
    pub fn reserve(&mut self, name: &str) {
        self.reserved.insert(name.to_owned());
    }

    pub fn is_reserved(&self, name: &str) -> bool {
        self.reserved.contains(name)
    }

    pub fn get(&self, name: &str) -> Option<&Entry> {
        self.by_name.get(name).and_then(|&i| self.entries.get(i))
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Every hidden value (tokenized or redacted) with its type.
    pub fn hidden(&self) -> impl Iterator<Item = (&DataType, &str)> {
        self.entries
            .iter()
            .map(|e| (&e.data_type, e.raw.as_str()))
            .chain(self.redacted.iter().map(|(t, r)| (t, r.as_str())))
    }

    pub fn redacted_count(&self) -> usize {
        self.redacted.len()
    }
}

/// A token `[NAME_001]` starting at `i` (where `h[i] == b'['`): returns its end.
pub(crate) fn parse_token(h: &[u8], i: usize) -> Option<usize> {
    if h.get(i) != Some(&b'[') || !h.get(i + 1).is_some_and(u8::is_ascii_uppercase) {
        return None;
    }
    let mut j = i + 1;
    while j < h.len()
        && j - i <= 40
        && (h[j].is_ascii_uppercase() || h[j].is_ascii_digit() || h[j] == b'_')
    {
        j += 1;
    }
    if h.get(j) != Some(&b']') {
        return None;
    }
    let name = &h[i + 1..j];
    let us = name.iter().rposition(|&b| b == b'_')?;
    let digits = &name[us + 1..];
    (us > 0 && digits.len() >= 3 && digits.iter().all(u8::is_ascii_digit)).then_some(j + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_value_same_token_and_reserved_names_skipped() {
        let mut v = TokenVault::default();
        v.reserve("[EMAIL_001]");
        let a = v
            .token_for(&DataType::EMAIL, DataClass::Confidential, "a@x.io")
            .to_owned();
        let b = v
            .token_for(&DataType::EMAIL, DataClass::Confidential, "b@x.io")
            .to_owned();
        let a2 = v
            .token_for(&DataType::EMAIL, DataClass::Confidential, "a@x.io")
            .to_owned();
        assert_eq!(a, "[EMAIL_002]");
        assert_eq!(b, "[EMAIL_003]");
        assert_eq!(a, a2);
        assert!(!format!("{v:?}").contains("a@x.io"));
    }

    #[test]
    fn token_syntax() {
        assert_eq!(parse_token(b"[EMAIL_001] x", 0), Some(11));
        assert_eq!(parse_token(b"[IP_ADDRESS_1234]", 0), Some(17));
        for bad in [
            &b"[EMAIL_01]"[..],
            b"[email_001]",
            b"[_001]",
            b"[EMAIL001]",
            b"[EMAIL_001",
            b"[REDACTED: SSN]",
        ] {
            assert_eq!(
                parse_token(bad, 0),
                None,
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
