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

// ---- Issue 5b: forms found missing on a held-out corpus ------------------------------

#[test]
fn phone_prefixes_and_spacing() {
    only("Callback number: 1-450-604-8500", "PHONE", "1-450-604-8500");
    only("dial 1.312.555.0187 now", "PHONE", "1.312.555.0187");
    only("Home phone 1 (212) 555-0144\n", "PHONE", "1 (212) 555-0144");
    only("Tel (home): +1 873-663-1558\n", "PHONE", "+1 873-663-1558");
    only("Fax: +1 (212) 555-0143.", "PHONE", "+1 (212) 555-0143");
    only("Cell: 723 548 6840\n", "PHONE", "723 548 6840");
    only("or text 646 555 0123.", "PHONE", "646 555 0123");
    only("Phone # 415-555-0134", "PHONE", "415-555-0134");
    // Spaced groups inside a longer number are not a phone.
    nothing("ref 07 415 555 0134 99");
    nothing("ID 415 555 0134 8871");
    nothing("part 123 456 7890");
}

#[test]
fn phone_shaped_identifiers_by_label() {
    for text in [
        "Order ref (legacy system): 247-403-1887\n",
        "Tracking number of the returned item: 952-563-2743\n",
        "Shipment ref for the replacement unit: 646-555-0177\n",
        "Invoice no. 212-555-0166 is overdue.",
        "Case number for this claim: 212-555-0145",
        "SKU 312 555 0146 back in stock",
        "Our PO for the Q3 restock — 415-555-0190 — ships Friday.",
        "Numéro de commande : 415-555-0191",
    ] {
        nothing(text);
    }
    // A phone word nearer than the identifier word keeps the phone.
    only("Order contact phone: 415-555-0134", "PHONE", "415-555-0134");
    only(
        "Order 12345 shipped; call 415-555-0134",
        "PHONE",
        "415-555-0134",
    );
}

#[test]
fn ssn_bare_and_labelled() {
    only("SSN# 245849631\n", "SSN", "245849631");
    only("Social Security No. 264922049\n", "SSN", "264922049");
    only("Soc. Sec. # 656577711", "SSN", "656577711");
    only("{\"ssn\": \"437935945\"}", "SSN", "437935945");
    only("[12:01] Jo: my social is 233415512", "SSN", "233415512");
    // With no label a dashed SSN is still one (privacy first).
    only("224-30-8280", "SSN", "224-30-8280");
    // Nine bare digits without an SSN label, and SSN-shaped identifiers.
    nothing("Routing number 121000358");
    nothing("points: 245849631");
    nothing("Lab panel code 296-47-6592 was reordered.");
    nothing("Ticket id 296-47-6592");
    nothing("MRN 296-47-6592");
    nothing("Specimen accession 512-84-9631 received.");
    nothing("Form ref: 412-56-7890");
    nothing("SSN# 666849631");
    only(
        "social security number 401 22 7789; claim id 401-22-7790",
        "SSN",
        "401 22 7789",
    );
}

#[test]
fn birth_cues() {
    for (text, value) in [
        ("[09:34] Margot: my bday is Jan 25, 1946 🎂", "Jan 25, 1946"),
        ("fyi my birthday is July 4th, 1990 lol", "July 4th, 1990"),
        ("b-day: 11/30/1975, add it", "11/30/1975"),
        ("Date of birth (mm/dd/yyyy): 06/16/1982\n", "06/16/1982"),
        ("DOB [dd.mm.yyyy] 07.03.1984\n", "07.03.1984"),
        ("\"dateOfBirth\": \"1975/06/15\",", "1975/06/15"),
        ("patientDob: 1970-02-28\n", "1970-02-28"),
        ("  birth_date: 1944/06/06\n", "1944/06/06"),
        ("Patient: L. Marsh, b. 14 Aug 1949;", "14 Aug 1949"),
        ("Born the 9th of May 1992 in Leeds.", "9th of May 1992"),
        ("Geboren am 13. Mai 1952 in Köln.", "13. Mai 1952"),
        ("Geb.: 3. Februar 1961\n", "3. Februar 1961"),
        ("Née le 25/01/1964\n", "25/01/1964"),
        ("né le 1er avril 1979 à Lyon", "1er avril 1979"),
        ("Date de naissance : 26 juillet 1985\n", "26 juillet 1985"),
        ("Nacido el 15/07/1983\n", "15/07/1983"),
        (
            "F. nacimiento: 13 de junio de 1978\n",
            "13 de junio de 1978",
        ),
        (
            "Fecha de nacimiento: 28 de agosto de 1977\n",
            "28 de agosto de 1977",
        ),
        ("Data di nascita: 12 maggio 1983\n", "12 maggio 1983"),
        ("nata il 12/05/1983 a Torino", "12/05/1983"),
        ("生年月日：1967年5月6日\n", "1967年5月6日"),
        ("誕生日：1988年11月3日\n", "1988年11月3日"),
        ("Date of Birth: 16-Dec-1948\n", "16-Dec-1948"),
        ("Birth date: 2nd of October 1980\n", "2nd of October 1980"),
        ("DOB: 07.03.84\n", "07.03.84"),
    ] {
        only(text, "DATE_OF_BIRTH", value);
    }
}

#[test]
fn dates_without_birth_context_are_not_births() {
    for text in [
        "Form submitted: 16-Jul-2025",
        "Policy start: 2nd of October 2024",
        "Rendez-vous le 6 janvier 2025.",
        "Termin: 4. März 2025",
        "予約日：2026年1月15日",
        "Birthday party on 2026-07-04",
        "release 12.10.84 shipped",
        "Date of Service: 18/4/2020",
    ] {
        nothing(text);
    }
}

#[test]
fn birth_dates_in_table_columns() {
    let csv = "name,dob,email\nFelicity Vasquez,1956-08-15,f@example.org\nAnselm Oduya,06/17/2000,a@example.org\n";
    let found: Vec<(String, String)> = found(csv)
        .into_iter()
        .filter(|(t, _)| t == "DATE_OF_BIRTH")
        .collect();
    assert_eq!(
        found,
        [
            ("DATE_OF_BIRTH".to_owned(), "1956-08-15".to_owned()),
            ("DATE_OF_BIRTH".to_owned(), "06/17/2000".to_owned())
        ]
    );
    let tsv = "employee\tDate of Birth\thire_date\nA. Diaz\t1981-07-19\t2018-03-01\n";
    only(tsv, "DATE_OF_BIRTH", "1981-07-19");
    // Other date columns, and rows with no header.
    nothing("order_id,created_at\n1001,2025-01-03\n1002,2025-01-04\n");
    nothing("Felicity Vasquez,1956-08-15,x\nAnselm Oduya,1983-03-12,y\n");
}

#[test]
fn money_forms() {
    for (text, value) in [
        ("Montant dû : 51 032,92 €\n", "51 032,92 €"),
        ("Deposit: 66\u{a0}775,49\u{a0}€\n", "66\u{a0}775,49\u{a0}€"),
        ("Deposit: 66\u{202f}775,49 €\n", "66\u{202f}775,49 €"),
        ("Budget: CHF 69'026.85\n", "CHF 69'026.85"),
        ("請求額：737,360円\n", "737,360円"),
        ("amount=6.5 million euros card", "6.5 million euros"),
        ("send the remaining 68125 dollars today", "68125 dollars"),
        ("Budget: A$33,774.70\n", "A$33,774.70"),
        ("Deposit: CA$7,938.44\n", "CA$7,938.44"),
        ("billed US$ 10,556 twice", "US$ 10,556"),
        ("Amount: R$ 13.213,90\n", "R$ 13.213,90"),
        ("Quote: NZ$4,250 incl. GST", "NZ$4,250"),
        ("Budget: -$89,840.91\n", "-$89,840.91"),
        ("Refund issued: -€75.00\n", "-€75.00"),
        ("run-rate 2.3 billion dollars.", "2.3 billion dollars"),
        ("Salary: 4.5K euros per month", "4.5K euros"),
    ] {
        only(text, "MONEY", value);
    }
    nothing("Headcount: 1 250 people");
    nothing("3 500 units shipped");
    nothing("The parcel weighs 12 pounds.");
    nothing("3.5 million downloads, 45K users");
    nothing("1001,2025-01-03");
}

#[test]
fn secret_forms() {
    for (text, value) in [
        (
            "DATABASE_URL=postgresql://app_user:QsyXCu8yWtIXgA@db.internal:5432/orders\n",
            "QsyXCu8yWtIXgA",
        ),
        (
            "url=jdbc:mysql://svc_app:Vq7#pL2m!xR9w@mysql.prod:3306/app\n",
            "Vq7#pL2m!xR9w",
        ),
        (
            "REDIS_URL=redis://:z8Qe4LwT2nVb@cache.internal:6379/0\n",
            "z8Qe4LwT2nVb",
        ),
        (
            "  <password>0A%I8qMPuzZa3+vL-k</password>\n",
            "0A%I8qMPuzZa3+vL-k",
        ),
        ("  <secret>Hk29_fQz!83mWp</secret>\n", "Hk29_fQz!83mWp"),
        ("<apiKey>c8Jk2LmN9pQ4rS7t</apiKey>", "c8Jk2LmN9pQ4rS7t"),
        (
            "Authorization: Basic c3ZjX2pmZ2FjOkREa35vM1NuOFBXNn5Yd1V2TFE=\n",
            "c3ZjX2pmZ2FjOkREa35vM1NuOFBXNn5Yd1V2TFE=",
        ),
        (
            "'mailgun_key' => 'key-aa6768fda8aeb44f5cb9d8cd11e019e6',",
            "key-aa6768fda8aeb44f5cb9d8cd11e019e6",
        ),
        (
            "lol the prod pw is literally bQf+vyb2!kl7rA+~PZHvTX@ZnbF 🙈",
            "bQf+vyb2!kl7rA+~PZHvTX@ZnbF",
        ),
        ("my password is hunter2-X9! ok?", "hunter2-X9!"),
        ("the wifi passcode is Gr33n-Tea!42 btw", "Gr33n-Tea!42"),
    ] {
        only(text, "SECRET", value);
    }
    // Placeholders, defaults and prose about passwords.
    nothing("AMQP_URL=amqp://guest:guest@localhost:5672/");
    nothing("postgres://user:password@localhost/db");
    nothing("postgres://${DB_USER}:${DB_PASS}@db/app");
    nothing("<password>********</password>");
    nothing("<password>${DB_PASSWORD}</password>");
    nothing("Basic plan: 5 seats");
    nothing("Authorization: Basic realm");
    nothing("key-value store: enabled");
    nothing("the password is incorrect, I tried twice");
    nothing("password reset link expired");
    nothing("the password is case-sensitive.");
}

#[test]
fn long_tokens_are_covered_whole() {
    let payload: String = "eyJzdWIiOiI4MDc5MjIwOSJ9".repeat(40);
    let jwt = format!("eyJhbGciOiJSUzI1NiJ9.{payload}.aX2fBIGhgpL5s5BBV-_1CyCkYiJncF18pXfqBVSAAxQ");
    assert!(jwt.len() > 900);
    only(&format!("token={jwt}\n"), "SECRET", &jwt);
    only(&format!("api_token: \"{jwt}\"\n"), "SECRET", &jwt);
}

#[test]
fn ip_short_forms_and_image_tags() {
    only("X-Forwarded-For: ::1\n", "IP_ADDRESS", "::1");
    only("Client IP: 127.0.0.1\n", "IP_ADDRESS", "127.0.0.1");
    only(
        "upstream:192.168.10.5 status=502",
        "IP_ADDRESS",
        "192.168.10.5",
    );
    nothing("image: registry.example.internal/worker:7.27.8.112\n");
    nothing("FROM python:3.11.4.1");
    nothing("std::vec::Vec");
}

#[test]
fn national_phones_after_a_phone_label() {
    only("M: 07116 490137\n", "PHONE", "07116 490137");
    only("Tel.: 07116 490137", "PHONE", "07116 490137");
    only("Telefon privat: 0221/453508\n", "PHONE", "0221/453508");
    only(
        "téléphone 01 05 87 16 97, courriel",
        "PHONE",
        "01 05 87 16 97",
    );
    only("telefoon 06-32497666, e-mail", "PHONE", "06-32497666");
    only("・電話番号：090-1349-8124\n", "PHONE", "090-1349-8124");
    only("- 휴대전화: 02-533-9216\n", "PHONE", "02-533-9216");
    only("手机：13653358547\n", "PHONE", "13653358547");
    only(
        "\"mobile\": \"(11) 96092-6902\"",
        "PHONE",
        "(11) 96092-6902",
    );
    only("Phone: (02) 9034 2011\n", "PHONE", "(02) 9034 2011");
    only("Phone: 0496 895 437\n", "PHONE", "0496 895 437");
    only("Natel 079 148 75 54, E-Mail", "PHONE", "079 148 75 54");
    only(
        "my direct line is 0161 225 3390; thanks",
        "PHONE",
        "0161 225 3390",
    );
    only(
        "Tel. +49 (0)40 7003575, E-Mail",
        "PHONE",
        "+49 (0)40 7003575",
    );
    only("Mobile: +91-9738918935\n", "PHONE", "+91-9738918935");
    // No phone label, another identifier's label, too few or too many digits.
    nothing("Order 07116 490137 shipped");
    nothing("Ref: 0221/453508");
    nothing("Phone order number 06-32497666");
    nothing("Phone: 12345");
    nothing("Phone: 0123456789012345678");
    nothing("Batch 13653358547 released");
    nothing("the app shows error code 827-500-9617 when I log in");
    nothing("Qty (11) 96092-6902");
}

#[test]
fn four_part_versions_are_not_addresses() {
    nothing("INFO deploy rolled out 2.16.6.119 commit f049ce3");
    nothing("\"client\": \"ios/6.21.12.237\"");
    nothing("- name: APP_VERSION\n  value: \"1.20.19.186\"\n");
    nothing("build 10.5.8.137 passed");
    nothing("Release 3.2.17.122 notes");
    // Addresses stay addresses.
    only(
        "ssh deploy@43.205.25.101 -p 2222",
        "IP_ADDRESS",
        "43.205.25.101",
    );
    only(
        "- name: UPSTREAM\n  value: \"10.5.8.137\"\n",
        "IP_ADDRESS",
        "10.5.8.137",
    );
    only("connect to 10.0.0.12 now", "IP_ADDRESS", "10.0.0.12");
    only("route 192.168.1.1/24", "IP_ADDRESS", "192.168.1.1");
}

#[test]
fn secret_placeholders_and_command_lines() {
    nothing("MAILGUN_API_KEY=sk_live_XXXXXXXXXXXXXXXX\n");
    nothing("DB_PASSWORD=CHANGE_ME_BEFORE_DEPLOY\n");
    nothing("api_key: \"REPLACE_ME\"\n");
    nothing("SMTP_PASSWORD: \"[hidden]\"\n");
    nothing("password = \"os.environ['API_KEY']\"\n");
    nothing("DB_PASSWORD=${DB_PASSWORD}\n");
    nothing("token: <your-token>\n");
    only(
        "  550  curl -u admin:1ztqk8451nG6jkOp http://search.internal:9200/_cat",
        "SECRET",
        "1ztqk8451nG6jkOp",
    );
    only(
        "curl --user 'ops:Tr0ub4dor&3x' https://a.example",
        "SECRET",
        "Tr0ub4dor&3x",
    );
    only(
        "curl -u admin:VA0BxXXJ1K5ost -s",
        "SECRET",
        "VA0BxXXJ1K5ost",
    );
    only(
        "mysql -h db -u root -p'Maple%6312LmNhsV' billing",
        "SECRET",
        "Maple%6312LmNhsV",
    );
    only(
        "mysqldump -uroot -pS3cr3tPass9 shop",
        "SECRET",
        "S3cr3tPass9",
    );
    only("mysql --password=Qw9!zX2mLp4v db", "SECRET", "Qw9!zX2mLp4v");
    only(
        "DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey=5/FoOTwCxtL90xtsAcHxpsqyKi+esj57tvrBiRk9KAVYt9ZISsPAeECyjj91mm26BMRToGvmj9Glc+sNsB9/CE==;EndpointSuffix=core.windows.net",
        "SECRET",
        "5/FoOTwCxtL90xtsAcHxpsqyKi+esj57tvrBiRk9KAVYt9ZISsPAeECyjj91mm26BMRToGvmj9Glc+sNsB9/CE==",
    );
    // Options that are not credentials.
    nothing("docker run -u 1000:1000 image");
    nothing("ssh -p 2222 host");
    nothing("mkdir -p /var/lib/app");
    nothing("mysql -P3306 -h db");
    nothing("curl -u admin:xxxxxxxx http://h");
    nothing("tar -pcf out.tar dir");
}

#[test]
fn ssn_shaped_part_numbers_in_tables() {
    let table = "| Item | Part no. | Qty | Price |\n|---|---|---:|---:|\n| Cable gland | 659-68-7013 | 29 | US$59.64 |\n";
    assert!(
        found(table).iter().all(|(t, _)| t != "SSN"),
        "{:?}",
        found(table)
    );
    let csv = "sku,qty\n617-87-4581,4\n";
    assert!(found(csv).iter().all(|(t, _)| t != "SSN"));
    // An SSN column stays one.
    let roster = "name,ssn,part\nAna,224-30-8280,x\n";
    assert!(found(roster).contains(&("SSN".to_owned(), "224-30-8280".to_owned())));
    let roster = "| Name | SSN |\n|---|---|\n| Ana | 224-30-8280 |\n";
    assert!(found(roster).contains(&("SSN".to_owned(), "224-30-8280".to_owned())));
}

#[test]
fn national_phones_shaped_like_other_numbers() {
    only("telefoon 010 930 2918, e-mail", "PHONE", "010 930 2918");
    nothing("Phone order 202-449-7963 shipped");
    nothing("firmware version 5.13.2.232 (phone app)");
    nothing("Phone MRN: 74367136");
}

// ---- Issue 22: phones and cards as people write them, escaped text --------------------

#[test]
fn phone_labels_of_contact_cards() {
    only("Desk: 030 901820\n", "PHONE", "030 901820");
    only("Fax: 0161 496 0066\n", "PHONE", "0161 496 0066");
    only("Mobile: 07700 900461\n", "PHONE", "07700 900461");
    only("Office 020 7946 0018\n", "PHONE", "020 7946 0018");
    only("Büro: 030 901820\n", "PHONE", "030 901820");
    only("bureau 04 91 23 45 67\n", "PHONE", "04 91 23 45 67");
    only("Tel:\t(02) 9374 4000\n", "PHONE", "(02) 9374 4000");
    // A label naming another identifier still wins.
    nothing("Office order no. 030 901820\n");
}

#[test]
fn phone_shapes_written_nationally() {
    only("Phone: (11) 3456-7890\n", "PHONE", "(11) 3456-7890");
    only("Desk: 22-26591234\n", "PHONE", "22-26591234");
    only("Direct: 555 0134\n", "PHONE", "555 0134");
    only("Tel: (0121)4960293\n", "PHONE", "(0121)4960293");
    only("Tel: 0049 30 901820\n", "PHONE", "0049 30 901820");
    only("Tel: +44(0)20 7946 0018\n", "PHONE", "+44(0)20 7946 0018");
    // The region metadata refuses what no region issues.
    nothing("Tel: 0000 000000\n");
    nothing("Tel: +999 1234 5678\n");
}

#[test]
fn bare_numbers_in_contact_blocks() {
    only(
        "Best regards,\nAnna Weber\nWeber GmbH\n030 901820\n",
        "PHONE",
        "030 901820",
    );
    assert_eq!(
        found("Jo Li\nAcme Ltd\n020 7946 0018\njo@acme.example\n"),
        [
            ("PHONE".to_owned(), "020 7946 0018".to_owned()),
            ("EMAIL".to_owned(), "jo@acme.example".to_owned())
        ]
    );
    // A number alone on its line outside a contact block, or in a sentence, is not read.
    nothing("Rows processed:\n030 901820\n");
    nothing("Best regards,\nthe batch 030 901820 failed\n");
}

#[test]
fn street_numbers_dates_and_versions_are_not_phones() {
    nothing("Office: 221 4567 Baker Road\n");
    nothing("Contact: 12 3456 Old Mill Lane, Leeds");
    nothing("Best regards,\nJo\n742 1234 Evergreen Terrace\n");
    nothing("Phone firmware 10.2.3 released on 2024-05-01.");
    nothing("Tel. app version 5.13.2.232");
    nothing("Mobile build 2024.05.01 shipped");
}

#[test]
fn json_escaped_text_reads_escapes_as_separators() {
    let text =
        r#"{"notes": "Jane Roe\nDesk: 030 901820\nFax: 0161 496 0066\nEmail: jane@example.com"}"#;
    assert_eq!(
        found(text),
        [
            ("PHONE".to_owned(), "030 901820".to_owned()),
            ("PHONE".to_owned(), "0161 496 0066".to_owned()),
            ("EMAIL".to_owned(), "jane@example.com".to_owned())
        ]
    );
    // A number glued to the `\n` after it, or to the one before it.
    only(r"Mobile: 07700 900461\nThanks", "PHONE", "07700 900461");
    only(r"Phone:\n07700 900461", "PHONE", "07700 900461");
    only(r"x\njane@example.com", "EMAIL", "jane@example.com");
    only(r"Tel:\t030 901820", "PHONE", "030 901820");
    only(r"SSN: 224-30-8280\u000aDOB", "SSN", "224-30-8280");
    // An escaped backslash is no escape: `\\n` is a backslash and an `n`.
    nothing(r"C:\\n07700 900461");
}

#[test]
fn offsets_into_escaped_text_are_offsets_into_the_original() {
    let text = r#"Zoë \"Z\" caf\u00e9\nMobile: 07700 900461\nmail: zoe@example.com\tIBAN GB82WEST12345698765432"#;
    let values: Vec<(String, &str)> = Detector::new()
        .detect(text)
        .values()
        .map(|f| (f.data_type.to_string(), &text[f.range()]))
        .collect();
    assert_eq!(
        values,
        [
            ("PHONE".to_owned(), "07700 900461"),
            ("EMAIL".to_owned(), "zoe@example.com"),
            ("IBAN".to_owned(), "GB82WEST12345698765432")
        ]
    );
}

#[test]
fn card_brand_edges() {
    // Maestro's 12 digits, printed in groups or after a card label.
    only("Card: 6759 4637 2207\n", "CREDIT_CARD", "6759 4637 2207");
    only("card number 501828644630", "CREDIT_CARD", "501828644630");
    // JCB's 15-digit 1800 and 2131 ranges.
    only("JCB 180025767580912 exp", "CREDIT_CARD", "180025767580912");
    only("card=213105434091245\n", "CREDIT_CARD", "213105434091245");
    // Mastercard's 2-series.
    only(
        "Mastercard 2221-7299-9915-9653",
        "CREDIT_CARD",
        "2221-7299-9915-9653",
    );
    only("pan 2720935533247229", "CREDIT_CARD", "2720935533247229");
    // Luhn-valid, but no brand's prefix or length; 12 digits with nothing saying card.
    nothing("tracking 561255882699");
    nothing("ref 2721191189278220");
    nothing("ref 7012029952992402");
}

#[test]
fn a_currency_code_inside_a_name_is_not_money() {
    nothing("Supplier: ACME TRADING INR10 LTD\n");
    nothing("Vendor: NORTHWIND USD7\n");
    only("Paid INR10 in cash.", "MONEY", "INR10");
    only("Total: USD 1,204.50", "MONEY", "USD 1,204.50");
}
