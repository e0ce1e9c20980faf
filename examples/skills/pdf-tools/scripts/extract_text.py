#!/usr/bin/env python3
"""Print the text of a PDF, one page per block (pages separated by form feeds)."""

import argparse
import sys


def parse_pages(spec, count):
    if not spec:
        return range(count)
    start, _, end = spec.partition("-")
    first = max(int(start) - 1, 0)
    last = min(int(end or start), count)
    return range(first, last)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("pdf")
    parser.add_argument("--pages", help="a page or range such as 2-5 (1-based)")
    args = parser.parse_args()
    try:
        from pypdf import PdfReader
    except ImportError:
        print("pypdf is not installed: pip install pypdf", file=sys.stderr)
        return 2
    reader = PdfReader(args.pdf)
    for index in parse_pages(args.pages, len(reader.pages)):
        print(reader.pages[index].extract_text() or "")
        print("\f")
    return 0


if __name__ == "__main__":
    sys.exit(main())
