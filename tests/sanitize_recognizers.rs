//! Per-recognizer positives and near-misses, through the facade.

use skills::security::{Detector, FindingKind};

/// The (type, text) of every value found.
fn found(text: &str) -> Vec<(String, String)> {
    Detector::new()
        .detect(text)
        .values()
        .map(|f| (f.data_type.to_string(), text[f.range()].to_owned()))
        .collect()
}

fn only(text: &str, ty: &str, value: &str) {
    assert_eq!(
        found(text),
        vec![(ty.to_owned(), value.to_owned())],
        "in {text:?}"
    );
}

fn nothing(text: &str) {
    assert_eq!(found(text), Vec::<(String, String)>::new(), "in {text:?}");
}

#[test]
fn email() {
    only(
        "Reply-to: ana.lima+news@mail-3.example.org\n",
        "EMAIL",
        "ana.lima+news@mail-3.example.org",
    );
    only("<zoë.brontë@exemple.fr>", "EMAIL", "zoë.brontë@exemple.fr");
    nothing("Thanks @sarahblackwell for the review");
    nothing("DATABASE_URL=postgres://app@db.internal:5432/app");
    nothing("user@localhost is not an address");
}

#[test]
fn phone() {
    only("Callback: (415) 555-0142.", "PHONE", "(415) 555-0142");
    only("cell 917.904.3190.", "PHONE", "917.904.3190");
    only("Tel.: +1-669-258-4415 ok", "PHONE", "+1-669-258-4415");
    only("Tel: +44 7420 780928 ", "PHONE", "+44 7420 780928");
    only("电话：+33 1 88 19 68 63 🚀", "PHONE", "+33 1 88 19 68 63");
    // Order numbers shaped like phones.
    nothing("Order #646-804-5439 was shipped");
    nothing("GET /api/v2/orders/303-886-4374 HTTP/1.1");
    nothing("Your order #919-328-2417 has shipped.");
    nothing("Ticket ref 303-555-0188 attached.");
    nothing("code 123-456-7890");
}

#[test]
fn ssn() {
    only("SSN on file: 224-30-8280\n", "SSN", "224-30-8280");
    only("SSN: 001 55 3315\n", "SSN", "001 55 3315");
    // SSN-shaped IDs and invalid numbers.
    nothing("Part number 439-84-6499 is back-ordered.");
    nothing("Teilenummer 439-84-6499");
    nothing("SSN: 666-12-3456");
    nothing("SSN: 900-12-3456");
    nothing("SSN: 123-00-4567");
    nothing("SSN: 123-45-0000");
    nothing("room 521 99 1103");
}

#[test]
fn credit_card() {
    only(
        "Card on file 5342-3511-6155-9409, exp 09/26.",
        "CREDIT_CARD",
        "5342-3511-6155-9409",
    );
    only("card=378868633037225\n", "CREDIT_CARD", "378868633037225");
    only(
        "Card 3769 978213 53219.",
        "CREDIT_CARD",
        "3769 978213 53219",
    );
    // 16-digit numbers failing Luhn.
    nothing("Tracking reference 5289 8240 4251 4975 (not a card).");
    nothing("Refund reference 4027-4387-1793-7150 issued.");
    nothing("assert not luhn('4430 0406 3886 9848')");
}

#[test]
fn iban() {
    only(
        "IBAN: IT60 X054 2811 1010 0000 0123 456 Amount",
        "IBAN",
        "IT60 X054 2811 1010 0000 0123 456",
    );
    only(
        "wire to GB82WEST12345698765432 by Friday",
        "IBAN",
        "GB82WEST12345698765432",
    );
    nothing("wire to GB82WEST12345698765433 by Friday");
    nothing("code XX82WEST12345698765432");
}

#[test]
fn ip_address() {
    only(
        "peer 172.191.37.15 connected",
        "IP_ADDRESS",
        "172.191.37.15",
    );
    only(
        "src=1391:fc28:2760:1a66:1265:ad66:af26:e128 session",
        "IP_ADDRESS",
        "1391:fc28:2760:1a66:1265:ad66:af26:e128",
    );
    only(
        "via fe80::1ff:fe23:4567:890a.",
        "IP_ADDRESS",
        "fe80::1ff:fe23:4567:890a",
    );
    // Version strings shaped like IPs, out-of-range octets, hashes and UUIDs.
    nothing("version 5.13.2.232 rolled out");
    nothing("Upgrade firmware to 2.6.8.130 before the rollout.");
    nothing("assert parse_version('4.8.7.268')");
    nothing("addr 256.10.10.10");
    nothing("at 16:28:56.166Z");
    nothing("build 171ac826a6fce48478dcb74f21345d2cce8038a3 done");
    nothing("session=53964b50-af03-4971-b22f-244f58d669cb");
}

#[test]
fn date_of_birth() {
    only(
        "Patient was born on 08/17/1988 per intake.",
        "DATE_OF_BIRTH",
        "08/17/1988",
    );
    only(
        "identity with DOB May 09, 1983.",
        "DATE_OF_BIRTH",
        "May 09, 1983",
    );
    only("\"dob\": \"1989-08-08\"", "DATE_OF_BIRTH", "1989-08-08");
    only("Geburtsdatum: 30.12.1947 ·", "DATE_OF_BIRTH", "30.12.1947");
    // Dates that are not birth dates.
    nothing("Called on 21 Jan 2025 about a charge.");
    nothing("Visit date: March 23, 2025");
    // The visit date on the next line is not a birth date.
    only(
        "DOB: 1976-01-12    MRN: 1\nVisit date: 2025-01-02",
        "DATE_OF_BIRTH",
        "1976-01-12",
    );
    nothing("2024-05-21T16:28:56.166Z DEBUG");
    nothing("Next appointment 07/17/2023.");
}

#[test]
fn money() {
    only("a disputed charge of 44,87 €. Card", "MONEY", "44,87 €");
    only("amount=EUR 438.713,61 card", "MONEY", "EUR 438.713,61");
    only("balance is $19,104.68; the", "MONEY", "$19,104.68");
    only("Revenue: $4.2M this year", "MONEY", "$4.2M");
    only("raised $3 million", "MONEY", "$3 million");
    only("costs 1,446,981.78 USD for", "MONEY", "1,446,981.78 USD");
    // Numbers without currency.
    nothing("processed 639,720 records in 62.90s");
    nothing("covers 1,248 units");
    nothing("echo $HOME");
}

#[test]
fn secrets() {
    for (text, value) in [
        (
            "aws_access_key_id=\"AKIAOJ3MRDZSY265UITA\",",
            "AKIAOJ3MRDZSY265UITA",
        ),
        ("key: AKIAOJ3MRDZSY265UITA\n", "AKIAOJ3MRDZSY265UITA"),
        (
            "GITHUB_TOKEN=ghp_8DbayZAz92gwx8t1eB82PtoSfPPZy4Eb89rU\n",
            "ghp_8DbayZAz92gwx8t1eB82PtoSfPPZy4Eb89rU",
        ),
        (
            "export GITLAB=glpat-xR3bN8kQ2mV7pL1sT9wZ\n",
            "glpat-xR3bN8kQ2mV7pL1sT9wZ",
        ),
        (
            "slack xoxb-18344049639-1919541987635-YeP0tGZtBQIumAzqNGDQWJl4\n",
            "xoxb-18344049639-1919541987635-YeP0tGZtBQIumAzqNGDQWJl4",
        ),
        (
            "hook https://hooks.slack.com/services/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\n",
            "https://hooks.slack.com/services/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",
        ),
        (
            "require('stripe')('sk_live_evbLJoLoaeTOdoe5c3veGprQ');",
            "sk_live_evbLJoLoaeTOdoe5c3veGprQ",
        ),
        (
            "maps AIzaVDXBh0bHjUggsMjEVdRYpjlEXaitXs8CclZ\n",
            "AIzaVDXBh0bHjUggsMjEVdRYpjlEXaitXs8CclZ",
        ),
        (
            "openai 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\n",
            "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",
        ),
        (
            "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.aX2fBIGhgpL5s5BBV-_1CyCk\n",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.aX2fBIGhgpL5s5BBV-_1CyCk",
        ),
        ("DB_PASSWORD=4m5pkheWOiqh4\n", "4m5pkheWOiqh4"),
        ("dbPassword = \"Xq7#pL2v!Rz9\"", "Xq7#pL2v!Rz9"),
    ] {
        only(text, "SECRET", value);
    }
    let pem = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIO+abc/def=\n-----END EC PRIVATE KEY-----";
    only(&format!("cat <<EOF\n{pem}\nEOF"), "SECRET", pem);
    // Placeholders, references, low entropy, hashes and UUIDs.
    nothing("password = \"xxxxxxxxxxxx\"");
    nothing("DB_PASSWORD=${DB_PASSWORD}");
    nothing("password: aaaaaaaaaaaaaaaa");
    nothing("the password is long and secret");
    nothing("commit = 'fd633dbdde131ca3766e4d58e72e310275dff6c1'");
    nothing("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----");
}

#[test]
fn keyword_classes_are_context_not_values() {
    let d = Detector::new();
    let f = d.detect("Diagnosis: Major depressive disorder.\nOur revenue grew. Proprietary.");
    assert_eq!(f.values().count(), 0);
    let kinds: Vec<String> = f.contexts().map(|c| c.data_type.to_string()).collect();
    assert_eq!(kinds, ["HEALTH", "FINANCIAL", "MARKED"]);
    assert!(f.all().iter().all(|x| x.kind == FindingKind::Context));
}
