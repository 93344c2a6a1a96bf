#!/usr/bin/env python3
"""Prints each skipped CTest test with its reason, from ctest's --output-junit file.

ctest's own summary names a skipped test ("***Skipped") but not why, and its LastTest.log records
an exit-77 skip as "Test Passed."; the JUnit file has both the status and the test's output. The
reason is the first output line that says "skipped:" (test_isa.sh's "SKIPPED: ...",
test_python.sh's "Skipped: ..."), else the first that says "unavailable" (the GPU and cuDNN suites'
warnings: "gpu unavailable: no usable CUDA driver (...)"), else the first that says "skip"
(Boost.Test's "5 test cases out of 7 skipped", where a suite printed no reason), else the last.
    python3 scripts/ctest-skips.py build/ctest-junit.xml
Exit status 0 whatever it finds; 2 when the file cannot be read (a missing file: nothing ran).
"""
import re
import sys
import xml.etree.ElementTree as ET

# Boost.Test's colours, as ctest writes them into the XML.
COLOUR = re.compile(r"\[NON-XML-CHAR-0x1B\]\[[0-9;]*m|\x1b\[[0-9;]*m")


def reason_of(lines: list) -> str:
    for key in ("skipped:", "unavailable", "skip"):
        hit = next((l for l in lines if key in l.lower()), None)
        if hit is not None:
            return hit
    return lines[-1] if lines else "(no output)"


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
        lines = [COLOUR.sub("", l).strip() for l in out]
        skipped.append((case.get("name", "?"), reason_of([l for l in lines if l])))
    if skipped:
        print(f"ctest-skips: {len(skipped)} skipped, with their reasons:")
        for name, reason in skipped:
            print(f"  {name}: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
