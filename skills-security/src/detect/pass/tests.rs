//! The trigger pass's tests: the search it is built on, lanes against the plain loop, the
//! currency codes read back, the warm-up, failing closed.

use super::*;

#[test]
fn the_automaton_builds() {
    let s = TriggerPass::new();
    assert!(s.is_built());
    assert!(s.probe.is_some());
    // The compact table is the point of re-encoding: well under half the DFA's size.
    let (Some(dfa), Some(c)) = (&s.dfa, &s.compact) else {
        panic!()
    };
    eprintln!(
        "trigger DFA {} bytes, compact {} bytes (columns, rows: {:?})",
        dfa.memory_usage(),
        c.memory_usage(),
        c.shape()
    );
    assert!(c.memory_usage() * 2 < dfa.memory_usage());
}

/// The pass must find exactly what the plain loop finds, whether it probes the rest
/// of a text (a sparse first stretch) or walks it (a dense one), wherever the findings
/// fall relative to lane and block boundaries.
#[test]
fn lanes_find_what_the_plain_loop_finds() {
    let s = TriggerPass::new();
    let Some(ac) = &s.dfa else { panic!() };
    let Some(probe) = &s.probe else { panic!() };
    let pieces = [
        "a@example.com ",
        "SSN 224-30-8280 ",
        "revenue: $4.2M ",
        "x ",
        "AKIAOJ3MRDZSY265UITA ",
        "word ",
        "DOB: 1961-11-20 ",
        "+44 20 7946 0667 ",
    ];
    for sparse_head in [false, true] {
        let mut text = String::new();
        if sparse_head {
            // One finding in the first stretch, then plain words past it.
            text.push_str("Mail ops@example.org for access. ");
            while text.len() < SAMPLE + 40 {
                text.push_str("the quiet river runs on ");
            }
        }
        let mut k = 0usize;
        while text.len() < 6000 {
            text.push_str(pieces[k % pieces.len()]);
            // Dense stretches and sparse ones, so some blocks are marked, some not.
            let gap = if (k / 8).is_multiple_of(2) {
                k * 7 % 13
            } else {
                90 + k * 11 % 70
            };
            for _ in 0..gap {
                text.push('y');
            }
            k += 1;
        }
        for cut in [LANES_FROM, 2500, 3001, 4097, text.len()] {
            let t = &text[..cut];
            let mut head = Carried::default();
            s.dispatch_range(ac, t, 0, SAMPLE, &mut head, &mut Vec::new());
            assert_eq!(head.dispatched <= SPARSE_TRIGGERS, sparse_head, "cut {cut}");
            if sparse_head {
                assert!(lanes::probe(probe, &t.as_bytes()[SAMPLE..], s.max_len).is_some());
            }
            let mut pass = Vec::new();
            s.run(t, &mut pass);
            let mut plain = Vec::new();
            s.dispatch_range(ac, t, 0, t.len(), &mut Carried::default(), &mut plain);
            assert_eq!(pass, plain, "cut {cut}, sparse head {sparse_head}");
            assert!(plain.len() >= 5, "cut {cut}: {}", plain.len());
        }
    }
}

/// A currency code is read back from its amount (it is no trigger of its own): every
/// form `after_code` reads forward is found from the digit or the dollar sign, and a
/// code that is part of a word, a name in capitals or lower case is not.
#[test]
fn currency_codes_are_read_back_from_the_amount() {
    let s = TriggerPass::new();
    let money = |t: &str| -> Vec<String> {
        let mut out = Vec::new();
        s.run(t, &mut out);
        out.iter()
            .filter(|f| f.data_type == DataType::MONEY)
            .map(|f| t[f.start..f.end].to_string())
            .collect()
    };
    for (text, want) in [
        ("paid USD 143.30 today", "USD 143.30"),
        ("paid EUR1,000 today", "EUR1,000"),
        ("paid USD$5 today", "USD$5"),
        ("paid USD$ 5 today", "USD$ 5"),
        ("paid CHF\u{a0}12.50 today", "CHF\u{a0}12.50"),
        ("paid GBP\u{202f}7 today", "GBP\u{202f}7"),
        ("a loss of -SEK 300", "-SEK 300"),
    ] {
        assert_eq!(money(text), [want], "{text}");
    }
    for text in [
        "paid XUSD 5 today",
        "ACME TRADING INR10 LTD",
        "the usd 5 note",
        "ref:ABC 100",
    ] {
        assert!(money(text).is_empty(), "{text}: {:?}", money(text));
    }
}

/// The warm-up text must reach every recognizer, or the first caller's document pays
/// for the ones it misses.
#[test]
fn the_warm_up_reaches_every_kind() {
    let s = TriggerPass::new();
    let mut out = Vec::new();
    s.run(WARM_UP, &mut out);
    for kind in [
        DataType::EMAIL,
        DataType::PHONE,
        DataType::SSN,
        DataType::CREDIT_CARD,
        DataType::IBAN,
        DataType::IP_ADDRESS,
        DataType::DATE_OF_BIRTH,
        DataType::MONEY,
        DataType::SECRET,
    ] {
        assert!(out.iter().any(|f| f.data_type == kind), "{kind:?}");
    }
    assert!(out.iter().any(|f| f.kind == FindingKind::Context));
}

/// The compact table must find exactly what the DFA it was built from finds: the
/// same stretch, the same trigger (the pattern differs only among the digits, which
/// the table reads as one).
#[test]
fn the_compact_table_finds_what_the_dfa_finds() {
    let s = TriggerPass::new();
    let Some(dfa) = &s.dfa else { panic!() };
    assert!(s.compact.is_some());
    let trigger = |m: Option<(usize, usize, usize)>| {
        m.map(|(pattern, p, e)| (s.triggers.get(pattern).copied(), p, e))
    };
    let mut texts = vec![
        "Tel: +44 20 7946 0667, mail a@b.co; PASSWORD=hunter2 api-key: x \
         $4.2M or 5 USD, ghp_abc https://u:p@h -p'x' diagnosis: flu \
         €12 ₹3 -----BEGIN KEY eyJhbGc Bearer t Basic dQ== é 日本 0123456789"
            .to_owned(),
        WARM_UP.to_owned(),
    ];
    // The labelled PII corpus, where `SKILLS_PII_CORPUS_DIR` names it (required under CI).
    if let Some(corpus) = skills_testenv::pii_corpus() {
        let lines = std::fs::read_to_string(&corpus).unwrap();
        texts.extend(lines.lines().filter_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).ok()?;
            Some(v.get("text")?.as_str()?.to_owned())
        }));
    }
    for text in &texts {
        let h = text.as_bytes();
        for from in 0..h.len() {
            // Every start, and windows ending short of the text as the lanes cut them.
            for to in [h.len(), h.len().min(from + 70)] {
                let want = dfa
                    .try_find(&Input::new(h).span(from..to))
                    .unwrap()
                    .map(|m| (m.pattern().as_usize(), m.start(), m.end()));
                assert_eq!(
                    trigger(s.find(dfa, h, from, to)),
                    trigger(want),
                    "{from}..{to} of {text:?}"
                );
            }
        }
    }
}

#[test]
fn fails_closed_without_an_automaton() {
    let s = TriggerPass {
        dfa: None,
        compact: None,
        probe: None,
        max_len: 1,
        triggers: Vec::new(),
    };
    let mut out = Vec::new();
    s.run("hello", &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].class, DataClass::Regulated);
    assert!(!out[0].tokenizable);
}
