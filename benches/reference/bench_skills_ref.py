#!/usr/bin/env python3
"""Time the Python reference validator (skills-ref==0.1.1) over the real-skills corpus.

The workload matches the Rust bench `validate_like_reference/spec` in
benches/load_corpus.rs: for each of the 36 skill directories under
../shared/corpus/real-skills/<collection>/<skill>/, read SKILL.md, parse the
frontmatter and validate it (skills_ref.validator.validate(dir), in-process).

Also times the CLI (`agentskills validate <dir>`, one subprocess per skill)
once, for context: there, interpreter start-up dominates.

Usage (from the repository root):
    python3 -m venv /tmp/refv
    /tmp/refv/bin/pip install skills-ref==0.1.1
    /tmp/refv/bin/python benches/reference/bench_skills_ref.py [--rounds N] [--warmup N] [--no-cli]
"""

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

from skills_ref.validator import validate

REPO_ROOT = Path(__file__).resolve().parents[2]
CORPUS = REPO_ROOT.parent / "shared" / "corpus" / "real-skills"


def skill_dirs(root: Path) -> list[Path]:
    """Every <root>/<collection>/<skill>/ holding a SKILL.md, sorted (as the Rust bench)."""
    dirs = [
        skill
        for collection in root.iterdir()
        if collection.is_dir()
        for skill in collection.iterdir()
        if (skill / "SKILL.md").is_file()
    ]
    return sorted(dirs)


def one_round(dirs: list[Path]) -> list[list[str]]:
    return [validate(d) for d in dirs]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--no-cli", action="store_true", help="skip the CLI timing")
    args = ap.parse_args()

    dirs = skill_dirs(CORPUS)
    n = len(dirs)
    print(f"python {platform.python_version()} ({sys.executable})")
    print(f"skills-ref {metadata.version('skills-ref')}")
    print(f"corpus {CORPUS}: {n} skills")

    # Verdicts.
    results = one_round(dirs)
    invalid = [(d, errs) for d, errs in zip(dirs, results) if errs]
    print(f"verdicts: {n - len(invalid)} valid, {len(invalid)} invalid")
    for d, errs in invalid:
        print(f"  invalid {d.relative_to(CORPUS)}: {errs}")

    # In-process timing.
    for _ in range(args.warmup):
        one_round(dirs)
    times = []
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        one_round(dirs)
        times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    print(
        f"in-process validate(): {args.rounds} rounds after {args.warmup} warm-up; "
        f"median {med * 1e3:.3f} ms/round "
        f"(min {min(times) * 1e3:.3f}, max {max(times) * 1e3:.3f}); "
        f"{n / med:.1f} skills/s; {med / n * 1e6:.1f} us/skill"
    )

    # CLI timing, once: one `agentskills validate <dir>` subprocess per skill.
    if not args.no_cli:
        cli = shutil.which("agentskills", path=os.path.dirname(sys.executable)) or shutil.which(
            "agentskills"
        )
        if cli is None:
            print("CLI: agentskills not found, skipped")
        else:
            codes = []
            t0 = time.perf_counter()
            for d in dirs:
                p = subprocess.run(
                    [cli, "validate", str(d)],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                codes.append(p.returncode)
            total = time.perf_counter() - t0
            ok = sum(1 for c in codes if c == 0)
            print(
                f"CLI `agentskills validate <dir>` x{n} (one pass): total {total:.3f} s; "
                f"{total / n * 1e3:.1f} ms/skill; {n / total:.1f} skills/s; "
                f"{ok} exit 0, {n - ok} non-zero"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
