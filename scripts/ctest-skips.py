#!/usr/bin/env python3
"""Prints each skipped CTest test with its reason, from ctest's --output-junit file.

ctest's own summary names a skipped test ("***Skipped") but not why, and its LastTest.log records
an exit-77 skip as "Test Passed."; the JUnit file has both the status and the test's output. The
reason is the first output line that says "skip" (the project's skips print one: test_isa.sh's
"SKIPPED: ...", test_python.sh's "Skipped: ...", Boost.Test's "Test is skipped because ..."), else
the output's last line.
    python3 scripts/ctest-skips.py build/ctest-junit.xml
Exit status 0 whatever it finds; 2 when the file cannot be read (a missing file: nothing ran).
"""
import sys
import xml.etree.ElementTree as ET


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: ctest-skips.py CTEST-JUNIT.xml", file=sys.stderr)
        return 2
    try:
        root = ET.parse(sys.argv[1]).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"ctest-skips: cannot read {sys.argv[1]}: {e}", file=sys.stderr)
        return 2
    skipped = []
    for case in root.iter("testcase"):
        if case.find("skipped") is None and case.get("status") not in ("notrun", "disabled"):
            continue
        out = (case.findtext("system-out") or "").splitlines()
        lines = [l.strip() for l in out if l.strip()]
        reason = next((l for l in lines if "skip" in l.lower()), lines[-1] if lines else "")
        skipped.append((case.get("name", "?"), reason or "(no output)"))
    if skipped:
        print(f"ctest-skips: {len(skipped)} skipped, with their reasons:")
        for name, reason in skipped:
            print(f"  {name}: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
