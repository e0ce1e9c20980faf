#!/usr/bin/env python3
"""Print the text of a PDF, one page per block (pages separated by form feeds).

Uses pypdf when it is installed. Without it, a small reader from the standard library
handles simple text PDFs (uncompressed or FlateDecode content streams, the text-showing
operators, one block per content stream); anything else prints nothing for that page.
"""

import argparse
import re
import sys
import zlib

STREAM = re.compile(rb"\d+\s+\d+\s+obj\s*(<<.*?>>)\s*stream\r?\n", re.S)
ESCAPES = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"b": b"\b", b"f": b"\f"}


def parse_pages(spec, count):
    if not spec:
        return range(count)
    start, _, end = spec.partition("-")
    first = max(int(start) - 1, 0)
    last = min(int(end or start), count)
    return range(first, last)


def literal(data, i):
    """The literal string starting after the '(' at i-1; returns (bytes, next index)."""
    out, depth = bytearray(), 1
    while i < len(data):
        c = data[i : i + 1]
        if c == b"\\":
            nxt = data[i + 1 : i + 2]
            if nxt in ESCAPES:
                out += ESCAPES[nxt]
                i += 2
            elif nxt.isdigit():
                digits = re.match(rb"[0-7]{1,3}", data[i + 1 : i + 4]).group(0)
                out.append(int(digits, 8) & 0xFF)
                i += 1 + len(digits)
            else:
                out += nxt
                i += 2
            continue
        if c == b"(":
            depth += 1
        elif c == b")":
            depth -= 1
            if depth == 0:
                return bytes(out), i + 1
        out += c
        i += 1
    return bytes(out), i


def show_text(content):
    """The text a content stream shows: Tj, TJ, ' and \" operands; new lines on T*, Td, TD."""
    lines, line, operands = [], [], []
    token = re.compile(rb"\(|<[0-9A-Fa-f\s]*>|\[|\]|/[^\s/\[\]()<>]+|[-+.\d]+|[A-Za-z'\"*]+")
    i = 0
    while i < len(content):
        m = token.search(content, i)
        if not m:
            break
        t, i = m.group(0), m.end()
        if t == b"(":
            text, i = literal(content, i)
            operands.append(text)
        elif t.startswith(b"<"):
            operands.append(bytes.fromhex(re.sub(rb"\s", b"", t[1:-1]).decode()))
        elif t in (b"[", b"]") or t.startswith(b"/") or re.match(rb"[-+.\d]", t):
            if re.match(rb"[-+.\d]", t):
                operands.append(float(t) if t not in (b"-", b"+", b".") else 0.0)
        else:
            strings = [o for o in operands if isinstance(o, bytes)]
            if t in (b"T*", b"'", b'"') or (t in (b"Td", b"TD") and len(operands) >= 2 and operands[-1]):
                lines.append(b"".join(line))
                line = []
            if t in (b"Tj", b"TJ", b"'", b'"'):
                line.extend(strings)
            operands = []
    lines.append(b"".join(line))
    return "\n".join(l.decode("latin-1") for l in lines if l)


def minimal_pages(data):
    pages = []
    for m in STREAM.finditer(data):
        header, start = m.group(1), m.end()
        length = re.search(rb"/Length\s+(\d+)(?!\s+\d+\s+R)", header)
        end = start + int(length.group(1)) if length else data.find(b"endstream", start)
        raw = data[start:end]
        if b"/FlateDecode" in header:
            try:
                raw = zlib.decompress(raw)
            except zlib.error:
                continue
        elif b"/Filter" in header:
            continue
        if b"BT" in raw:
            pages.append(show_text(raw))
    return pages


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("pdf")
    parser.add_argument("--pages", help="a page or range such as 2-5 (1-based)")
    args = parser.parse_args()
    try:
        from pypdf import PdfReader
    except ImportError:
        PdfReader = None
    if PdfReader is not None:
        reader = PdfReader(args.pdf)
        pages = [reader.pages[i].extract_text() or "" for i in parse_pages(args.pages, len(reader.pages))]
    else:
        with open(args.pdf, "rb") as f:
            data = f.read()
        if not data.startswith(b"%PDF-"):
            print(f"{args.pdf} is not a PDF", file=sys.stderr)
            return 2
        every = minimal_pages(data)
        pages = [every[i] for i in parse_pages(args.pages, len(every))]
    for text in pages:
        print(text)
        print("\f")
    return 0


if __name__ == "__main__":
    sys.exit(main())
