#!/usr/bin/env python3
"""Summarise the last `cargo bench --bench load_corpus` run from target/criterion.

Criterion prints [low estimate high] where the middle value is the slope (linear
sampling) or mean (flat sampling) estimate. This script also prints the median
time per iteration from estimates.json and the skills/second it implies.

Usage (from the repository root, after the bench ran):
    python3 benches/reference/summarize_criterion.py [--skills 36] [--target target]
"""

import argparse
import json
from pathlib import Path

BENCHES = [
    ("parse_validate_in_memory", "spec"),
    ("parse_validate_in_memory", "lenient"),
    ("load_skill_dirs", "spec"),
    ("validate_like_reference", "spec"),
    ("discover_corpus", "lenient"),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skills", type=int, default=36)
    ap.add_argument("--target", default="target")
    args = ap.parse_args()
    root = Path(args.target) / "criterion"
    print(f"{'bench':40} {'printed(us)':>12} {'thrpt(sk/s)':>12} {'median(us)':>11} {'median sk/s':>12}")
    for group, name in BENCHES:
        path = root / group / name / "new" / "estimates.json"
        if not path.is_file():
            print(f"{group}/{name}: no estimates at {path}")
            continue
        est = json.loads(path.read_text())
        printed = (est.get("slope") or est["mean"])["point_estimate"]  # ns
        median = est["median"]["point_estimate"]  # ns
        print(
            f"{group + '/' + name:40} {printed / 1e3:12.1f} {args.skills / (printed / 1e9):12.0f}"
            f" {median / 1e3:11.1f} {args.skills / (median / 1e9):12.0f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
