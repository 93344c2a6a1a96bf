#!/usr/bin/env python3
"""The CUDA build holds code for every GPU architecture it claims (issue 13); no device needed.

Reads the fatbinary of BINARY with cuobjdump (--list-elf: SASS per translation unit and
architecture; --list-ptx: PTX) and checks:
  1. every .cu translation unit holds exactly the configured CMAKE_CUDA_ARCHITECTURES: SASS for
     each N-real (or plain N), PTX for each N-virtual (or plain N), nothing else;
  2. with the default list (CONVCHECK_CUDA_ARCHS_DEFAULT), every row of the README's table of GPU
     architectures is in it as the row says ("SASS" or "SASS + PTX"), for each architecture this
     toolkit can build (`nvcc --list-gpu-code`); a row's PTX is checked where the row is the
     toolkit's newest architecture (a newer toolkit adds its own newest).

    test_fatbin.py CUOBJDUMP NVCC BINARY ARCHS DEFAULT README
ARCHS is CMake's list (semicolons); DEFAULT is ON or OFF. CUOBJDUMP may be "...-NOTFOUND": then
the test is skipped (exit 77) with the reason, except under CI (CI=true), where it fails.
"""
import os
import re
import subprocess
import sys


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def main():
    if len(sys.argv) != 7:
        print(__doc__)
        return 2
    cuobjdump, nvcc, binary, archs, default, readme = sys.argv[1:]
    if cuobjdump.endswith("NOTFOUND") or not os.access(cuobjdump, os.X_OK):
        why = "cuobjdump not found (scripts/install-deps.sh fetches it)"
        if os.environ.get("CI") == "true":
            print("FAIL: " + why)
            return 1
        print("SKIPPED: " + why)
        return 77

    want_sass, want_ptx = set(), set()
    for a in archs.split(";"):
        m = re.fullmatch(r"(\d+)(-real|-virtual)?", a)
        if not m:
            print("SKIPPED: CMAKE_CUDA_ARCHITECTURES entry %r is a keyword this test cannot "
                  "expand; list the architectures by number to have the build checked" % a)
            return 77
        if m.group(2) in (None, "-real"):
            want_sass.add(int(m.group(1)))
        if m.group(2) in (None, "-virtual"):
            want_ptx.add(int(m.group(1)))

    sass, ptx = {}, {}  # translation unit -> architectures
    for line in run([cuobjdump, "--list-elf", binary]).splitlines():
        m = re.search(r"ELF file\s+\d+:\s+(\S+)\.sm_(\d+)[af]?\.cubin", line)
        if m:
            sass.setdefault(m.group(1), set()).add(int(m.group(2)))
    for line in run([cuobjdump, "--list-ptx", binary]).splitlines():
        m = re.search(r"PTX file\s+\d+:\s+(\S+)\.sm_(\d+)[af]?\.ptx", line)
        if m:
            ptx.setdefault(m.group(1), set()).add(int(m.group(2)))

    passed, failed = 0, 0

    def expect(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print("FAIL: " + what)

    units = sorted(set(sass) | set(ptx))
    fmt = lambda s: " ".join("sm_%d" % a for a in sorted(s)) or "none"
    print("%s: %d translation units with device code; configured SASS %s, PTX %s" %
          (binary, len(units), fmt(want_sass), fmt(want_ptx)))
    expect(len(units) > 0, "no device code found in %s" % binary)
    for u in units:
        expect(sass.get(u, set()) == want_sass,
               "%s: SASS for %s, want %s" % (u, fmt(sass.get(u, set())), fmt(want_sass)))
        expect(ptx.get(u, set()) == want_ptx,
               "%s: PTX for %s, want %s" % (u, fmt(ptx.get(u, set())), fmt(want_ptx)))

    if default == "ON":
        toolkit = sorted(int(a) for a in re.findall(r"sm_(\d+)", run([nvcc, "--list-gpu-code"])))
        rows = []
        for line in open(readme, encoding="utf-8"):
            m = re.match(r"^\|\s*sm_(\d+)\s*\|.*\|\s*(SASS|SASS \+ PTX)\s*\|\s*$", line)
            if m:
                rows.append((int(m.group(1)), m.group(2)))
        expect(len(rows) >= 5, "README: no table of GPU architectures found (rows '| sm_NN | "
               "GPUs | SASS |')")
        for arch, kind in rows:
            if arch not in toolkit:
                print("  README row sm_%d: not built by this toolkit (it has %s)" %
                      (arch, fmt(toolkit)))
                continue
            expect(all(arch in sass.get(u, set()) for u in units),
                   "README lists sm_%d (%s) but the build has no sm_%d SASS" % (arch, kind, arch))
            if "PTX" in kind and arch == toolkit[-1]:
                expect(all(arch in ptx.get(u, set()) for u in units),
                       "README lists sm_%d PTX but the build has none" % arch)
        print("README: %d architectures listed, checked against the build" % len(rows))

    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
