#!/usr/bin/env python3
"""docs/AUDIT.md against the one the last full test run wrote.

The integration suite writes its table of attacks to bin/AUDIT.md (git
ignores bin/), never to the tracked docs/AUDIT.md: a test run leaves the
tree as it found it. Two uses (Makefile):

  tests/audit.py check    (the end of `make test`) the tracked copy is
                          current: its table lists the same attacks, with
                          the same outcomes asserted and the same result on
                          every pass, as the generated one. The date, the
                          counts of warm runs (which vary from run to run:
                          a burst larger than the pool runs some cold) and
                          the sentences above the table are not compared.
                          Exits 1 with the command to run when it is not.
  tests/audit.py update   (`make audit`) copies the generated one over the
                          tracked one, if it comes from a run of all three
                          passes (cold, warm, runc).
  tests/audit.py write    (tests/passes.sh, after each pass) writes the
                          generated one from the passes' records
                          (tests/integration/audit_table.py).
"""
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "integration"))
import audit_table  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATED = os.path.join(ROOT, "bin", "AUDIT.md")
TRACKED = os.path.join(ROOT, "docs", "AUDIT.md")
HEAD = "| # | attack | outcome asserted | cold | warm | runc |"
WARM_COUNT = re.compile(r", \d+ of \d+ runs warm")


def rows(path):
    """The table's lines, the warm run counts taken out; None: no file."""
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return None
    return [WARM_COUNT.sub("", line) for line in text.splitlines() if line.startswith("|")]


def complete(table):
    return bool(table) and table[0] == HEAD and len(table) > 2


def main(argv):
    what = argv[1] if len(argv) == 2 else ""
    if what == "write":
        if not audit_table.write_table():
            print("tests/audit.py: no cold pass's record in bin/audit/: nothing to write", file=sys.stderr)
            return 1
        return 0
    generated = rows(GENERATED)
    if what not in ("check", "update"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    if not complete(generated):
        print(f"{os.path.relpath(GENERATED, ROOT)}: "
              + ("missing" if generated is None else "not from a run of all three passes")
              + ": it is written by `make integration` (cold, warm and runc passes, each over the whole "
              "of tests/integration, without -k)", file=sys.stderr)
        return 1
    if what == "update":
        shutil.copyfile(GENERATED, TRACKED)
        print(f"docs/AUDIT.md updated from bin/AUDIT.md ({len(generated) - 2} attacks): commit it")
        return 0
    tracked = rows(TRACKED) or []
    if tracked == generated:
        print(f"docs/AUDIT.md is current ({len(generated) - 2} attacks, every pass)")
        return 0
    gone = [r for r in tracked if r not in generated]
    new = [r for r in generated if r not in tracked]
    print("docs/AUDIT.md is not current: this run's table (bin/AUDIT.md) differs", file=sys.stderr)
    for sign, lines in (("-", gone), ("+", new)):
        for line in lines[:10]:
            print(f"  {sign} {line[:200]}", file=sys.stderr)
        if len(lines) > 10:
            print(f"  {sign} ... {len(lines) - 10} more", file=sys.stderr)
    if not gone and not new:
        print("  (the same rows in another order)", file=sys.stderr)
    print("run: make audit    (copies bin/AUDIT.md to docs/AUDIT.md), then commit docs/AUDIT.md",
          file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
