#!/usr/bin/env python3
"""Held-out PII corpus for issue 22, in the format of corpus_public.jsonl.

Written BEFORE any rule of the detector was changed. Two splits:
  dev  : seed 7,  locales/labels from the DEV pools only
  test : seed 99, DEV pools plus pools reserved for the test split (other locales, other
         label words, other templates), so the test split measures generalisation, not fit.

Values come from Faker (phones, cards, companies, addresses, e-mails, IBANs) and from the
`phonenumbers` package (random valid numbers per region, formatted national / international
with varied separators). Labels are recorded by construction.
"""
import json
import random
import sys

import phonenumbers as pn
from faker import Faker

DEV_LOCALES = ["en_US", "en_GB", "de_DE", "fr_FR", "pt_BR", "ja_JP", "en_IN", "es_ES"]
TEST_ONLY_LOCALES = ["it_IT", "nl_NL", "en_AU", "en_NZ", "ko_KR", "zh_CN", "es_MX", "pl_PL"]

DEV_REGIONS = ["US", "GB", "DE", "FR", "BR", "JP", "IN", "ES", "CA", "CH"]
TEST_ONLY_REGIONS = ["IT", "NL", "AU", "NZ", "KR", "CN", "MX", "BE", "AT", "IE", "SG", "ZA"]

# label -> used in which split
DEV_LABELS = ["Phone", "Tel", "Mobile", "Fax", "Desk", "Office", "Cell", "Telefon", "Handy",
              "Tél.", "Portable", "Teléfono", "Móvil", "Telefone", "Celular", "電話", "携帯"]
TEST_ONLY_LABELS = ["Direct", "Main", "Work", "Home", "Phone (work)", "Telefono", "Cellulare",
                    "Telefoon", "Mobiel", "手机", "전화", "Tel. mobile", "Switchboard", "Helpline",
                    "Direct line", "Ph"]

STREET_TYPES = ["Road", "Street", "Avenue", "Lane", "Drive", "Way", "Boulevard", "Rd", "St", "Ave"]
CODES = ["USD", "EUR", "GBP", "INR", "JPY", "CHF", "AUD", "CAD", "SEK", "CNY"]
SYMBOLS = ["$", "€", "£", "¥", "₹"]


class Doc:
    def __init__(self, doc_type):
        self.doc_type = doc_type
        self.parts = []
        self.spans = []
        self.decoys = []
        self.len = 0
        self.blen = 0

    def add(self, s, typ=None, decoy=None):
        start, bstart = self.len, self.blen
        self.parts.append(s)
        self.len += len(s)
        self.blen += len(s.encode("utf-8"))
        rec = {"start": start, "end": self.len, "byte_start": bstart, "byte_end": self.blen,
               "value": s}
        if typ:
            self.spans.append(dict(rec, type=typ))
        if decoy:
            self.decoys.append(dict(rec, type=decoy))
        return self

    def json(self, doc_id):
        return {"id": doc_id, "doc_type": self.doc_type, "text": "".join(self.parts),
                "spans": self.spans, "decoys": self.decoys}


class Gen:
    def __init__(self, seed, split):
        self.r = random.Random(seed)
        self.split = split
        locales = DEV_LOCALES + (TEST_ONLY_LOCALES if split == "test" else [])
        self.fakers = {}
        for loc in locales:
            f = Faker(loc)
            f.seed_instance(self.r.randrange(1 << 30))
            self.fakers[loc] = f
        self.locales = locales
        self.regions = DEV_REGIONS + (TEST_ONLY_REGIONS if split == "test" else [])
        self.labels = DEV_LABELS + (TEST_ONLY_LABELS if split == "test" else [])
        self.en = self.fakers["en_US"]

    def faker(self):
        return self.fakers[self.r.choice(self.locales)]

    # ---- values -------------------------------------------------------------------
    def valid_number(self, region):
        types = [pn.PhoneNumberType.MOBILE, pn.PhoneNumberType.FIXED_LINE]
        ex = pn.example_number_for_type(region, self.r.choice(types))
        if ex is None:
            ex = pn.example_number(region)
        digits = str(ex.national_number)
        for _ in range(50):
            k = min(len(digits) - 2, 6)
            cand = digits[:-k] + "".join(self.r.choice("0123456789") for _ in range(k))
            num = pn.parse("+" + str(ex.country_code) + cand, None)
            if pn.is_valid_number(num):
                return num
        return ex

    def phone(self, national_only=False):
        """A phone as people write it: Faker's locale formats or a valid number formatted
        nationally or internationally with varied separators."""
        r = self.r
        if r.random() < 0.45:
            for _ in range(20):
                s = self.faker().phone_number()
                if "x" not in s and "ext" not in s.lower() and (not national_only or not s.startswith("+")):
                    return s
        num = self.valid_number(r.choice(self.regions))
        if national_only or r.random() < 0.6:
            s = pn.format_number(num, pn.PhoneNumberFormat.NATIONAL)
        else:
            s = pn.format_number(num, pn.PhoneNumberFormat.INTERNATIONAL)
        roll = r.random()
        if roll < 0.15:
            s = s.replace(" ", "-")
        elif roll < 0.25:
            s = s.replace(" ", ".").replace("-", ".")
        elif roll < 0.32 and not s.startswith("+"):
            s = s.replace(" ", "").replace("-", "")
        return s

    def card(self):
        r = self.r
        kind = r.choice(["maestro", "jcb15", "jcb16", "mastercard", "visa13", "visa16", "visa19",
                         "amex", "discover", "diners", "mastercard", "visa16"])
        num = self.en.credit_card_number(card_type=kind)
        roll = r.random()
        if roll < 0.4:
            return num, kind
        if kind == "amex" and len(num) == 15:
            return f"{num[:4]} {num[4:10]} {num[10:]}", kind
        sep = r.choice([" ", "-"])
        return sep.join(num[i:i + 4] for i in range(0, len(num), 4)), kind

    def money(self):
        r = self.r
        amt = r.choice([f"{r.randint(1, 999)}.{r.randint(0, 99):02d}",
                        f"{r.randint(1, 99)},{r.randint(0, 999):03d}.{r.randint(0, 99):02d}",
                        f"{r.randint(1, 9999)}"])
        roll = r.random()
        if roll < 0.4:
            return r.choice(SYMBOLS) + amt
        if roll < 0.8:
            return r.choice(CODES) + " " + amt
        return amt + " " + r.choice(CODES)

    def company_with_code(self):
        """A company name whose last word glues a currency code to digits (a decoy)."""
        r = self.r
        words = [w.upper() for w in self.en.words(r.randint(1, 2))]
        code = r.choice(CODES) + str(r.randint(1, 99))
        return " ".join(words), code

    def street(self):
        r = self.r
        name = self.en.last_name()
        n = r.choice([f"{r.randint(100, 999)} {r.randint(1000, 9999)}", str(r.randint(1, 9999)),
                      f"{r.randint(10, 99)}-{r.randint(10, 99)}"])
        return n, f" {name} {r.choice(STREET_TYPES)}"

    # ---- documents ----------------------------------------------------------------
    def contact_block(self, escaped):
        r = self.r
        f = self.faker()
        nl = "\\n" if escaped else "\n"
        d = Doc("contact_block_escaped" if escaped else "contact_block")
        if escaped:
            d.add('{"notes": "')
        d.add(f.name() + nl)
        d.add(f"{self.en.job()}, {f.company()}{nl}")
        for _ in range(r.randint(1, 3)):
            label = r.choice(self.labels)
            sep = r.choice([": ", ": ", " ", " - ", ":\t" if not escaped else ": "])
            d.add(label + sep)
            d.add(self.phone(national_only=r.random() < 0.7), "PHONE")
            d.add(nl)
        if r.random() < 0.7:
            d.add("Email: ")
            d.add(f.email(), "EMAIL")
            d.add(nl)
        if r.random() < 0.6:
            n, rest = self.street()
            d.add(n, decoy="STREET_NUMBER")
            d.add(rest + nl)
        if escaped:
            d.add('"}')
        return d

    def signature(self):
        """Numbers with no label in a contact block (bare lines)."""
        r = self.r
        f = self.faker()
        d = Doc("signature")
        d.add(f"Best regards,\n{f.name()}\n{f.company()}\n")
        d.add(self.phone(national_only=True), "PHONE")
        d.add("\n")
        if r.random() < 0.5:
            d.add(f.email(), "EMAIL")
            d.add("\n")
        return d

    def prose_phone(self):
        r = self.r
        d = Doc("prose_phone")
        lead = r.choice(["Please call me back on ", "You can reach the front desk at ",
                         "Her mobile is ", "Fax the signed form to ", "Ring the office on "])
        d.add(lead)
        d.add(self.phone(), "PHONE")
        d.add(r.choice([" before Friday.", ", thanks.", " any time after 9.", ". "]))
        return d

    def payment(self):
        r = self.r
        d = Doc("payment")
        num, kind = self.card()
        d.add(r.choice(["Card on file: ", "Paid with card ", "card_number=", "CC: ",
                        "Please charge ", "Kartennummer: "]))
        d.add(num, "CREDIT_CARD")
        d.add(r.choice([f", exp {r.randint(1, 12):02d}/{r.randint(25, 31)}.", "\n", " today."]))
        if r.random() < 0.5:
            d.add(" Amount: ")
            d.add(self.money(), "MONEY")
            d.add(".")
        return d

    def decoys(self):
        r = self.r
        d = Doc("decoys")
        words, code = self.company_with_code()
        d.add("Supplier: ")
        d.add(words + " ")
        d.add(code, decoy="CODE_IN_NAME")
        d.add(r.choice([" LTD", " LLC", "", " PVT"]) + "\n")
        n, rest = self.street()
        d.add("Ship to " if r.random() < 0.5 else "Address: ")
        d.add(n, decoy="STREET_NUMBER")
        d.add(rest + "\n")
        d.add(r.choice(["Released ", "Version ", "build ", "firmware "]))
        d.add(f"{r.randint(1, 20)}.{r.randint(0, 30)}.{r.randint(0, 300)}", decoy="VERSION")
        d.add(" on ")
        d.add(self.en.date(), decoy="DATE")
        d.add(".\n")
        d.add(r.choice(["Invoice ", "Order no. ", "Ticket #", "PO "]))
        d.add(str(r.randint(10 ** 7, 10 ** 10)), decoy="ORDER_NO")
        d.add(" total ")
        d.add(self.money(), "MONEY")
        d.add(".\n")
        return d

    def mixed(self, escaped):
        r = self.r
        f = self.faker()
        nl = "\\n" if escaped else "\n"
        d = Doc("mixed_escaped" if escaped else "mixed")
        if escaped:
            d.add('"body": "')
        d.add(f"Customer {f.name()} called.{nl}")
        d.add("Contact: ")
        d.add(self.phone(), "PHONE")
        d.add(nl)
        if r.random() < 0.5:
            d.add("IBAN ")
            d.add(self.en.iban(), "IBAN")
            d.add(nl)
        if r.random() < 0.5:
            d.add("from ")
            d.add(self.en.ipv4_public(), "IP_ADDRESS")
            d.add(nl)
        if r.random() < 0.3:
            d.add("SSN: ")
            d.add(self.en.ssn(), "SSN")
            d.add(nl)
        if r.random() < 0.5:
            d.add("Card ")
            num, _ = self.card()
            d.add(num, "CREDIT_CARD")
            d.add(nl)
        if escaped:
            d.add('"')
        return d

    def document(self):
        r = self.r
        kind = r.choices(
            ["contact", "contact_esc", "signature", "prose", "payment", "decoys", "mixed",
             "mixed_esc"], [4, 3, 1, 2, 3, 2, 2, 2])[0]
        return {
            "contact": lambda: self.contact_block(False),
            "contact_esc": lambda: self.contact_block(True),
            "signature": self.signature,
            "prose": self.prose_phone,
            "payment": self.payment,
            "decoys": self.decoys,
            "mixed": lambda: self.mixed(False),
            "mixed_esc": lambda: self.mixed(True),
        }[kind]()


def main():
    split = sys.argv[1]
    n = int(sys.argv[2])
    seed = {"dev": 7, "test": 99}[split]
    g = Gen(seed, split)
    for i in range(n):
        print(json.dumps(g.document().json(f"{split}-{i:06d}"), ensure_ascii=False))


if __name__ == "__main__":
    main()
