#!/usr/bin/env python3
"""Writes northwind-2.4-spec.pdf, the PDF the quickstart's pdf-tools step reads.

A one-page PDF 1.4 with a FlateDecode content stream and the standard Helvetica font,
byte-for-byte reproducible (no dates, no ids). Run it again only to change the text:
python3 examples/quickstart/make_spec_pdf.py
"""

import os
import zlib

LINES = [
    "Northwind Analytics 2.4 - Product Specification",
    "1. Single sign-on with SAML 2.0 and OpenID Connect for every workspace.",
    "2. CSV export streams reports of any size (the 50,000-row limit is gone).",
    "3. Audit exports are signed; the signing key rotates every 90 days.",
    "Release date: 2026-12-01. Contact: product team (no personal data here).",
]


def escape(text):
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def content():
    ops = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td"]
    for index, line in enumerate(LINES):
        if index:
            ops.append("T*")
        ops.append(f"({escape(line)}) Tj")
    ops.append("ET")
    return zlib.compress("\n".join(ops).encode("latin-1"), 9)


def build():
    stream = content()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream)
        + stream
        + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "northwind-2.4-spec.pdf"), "wb") as f:
        f.write(build())
