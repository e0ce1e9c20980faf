#![no_main]
//! Observation's parsers on arbitrary bytes (what a detonated script passes to `sendto` or
//! `connect`): no panic; a DNS name is at most 257 characters (cut after neutralisation) and
//! holds no control character; a socket address's family is named.

use libfuzzer_sys::fuzz_target;
use skills_security::sandbox::{parse_dns_query, parse_sockaddr};

fuzz_target!(|data: &[u8]| {
    if let Some(name) = parse_dns_query(data) {
        assert!(!name.chars().any(|c| c.is_control()), "{name:?}");
        assert!(name.chars().count() <= 257, "{name:?}");
    }
    if let Some((family, _address, _port)) = parse_sockaddr(data) {
        assert!(!family.is_empty());
    }
});
