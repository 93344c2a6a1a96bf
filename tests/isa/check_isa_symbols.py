#!/usr/bin/env python3
"""Vector instructions live only where the dispatch guards them (issue 13).

Disassembles each binary given (objdump -d) and classifies every instruction: "avx512" (a ZMM or
opmask register, an EVEX-only register xmm16-31 / ymm16-31, masking or embedded broadcast),
"avx" (a VEX-encoded instruction: a 'v' mnemonic, a YMM register, or BMI1/BMI2), "sse4" (beyond
the x86-64 baseline without VEX: SSE3, SSSE3, SSE4.1, SSE4.2, POPCNT, LZCNT), else baseline. Each function
may use at most the ISA its table row allows; every other function, the baseline (x86-64: SSE2).

What this catches that the emulated runs might not: an inline function or template instantiated
in an ISA file (compiled with -mavx512f) and emitted as a weak symbol that the linker then picks
for baseline callers too; a -march flag leaking into baseline files; a new target-attributed
function without a guard. The emulated matrix (test_isa.sh) catches the other half: an
unconditional call into a guarded function.

    check_isa_symbols.py BINARY...
"""
import re
import subprocess
import sys

# (pattern on the demangled function name, the widest ISA the function may execute). Every
# function here is entered only after core/cpu.h says the CPU and OS run that ISA.
ALLOWED = [
    (r"convcheck::opt::isa_avx512::", "avx512"),  # optimized/kernels_avx512.cpp
    (r"convcheck::opt::avx512_tables\(", "avx512"),
    (r"convcheck::opt::isa_avx2::", "avx"),  # optimized/kernels_avx2.cpp
    (r"convcheck::opt::avx2_tables\(", "avx"),
    (r"convcheck::\(anonymous namespace\)::fma_avx512\(", "avx512"),  # bench/peak.cpp
    (r"convcheck::\(anonymous namespace\)::fma_avx2\(", "avx"),
    (r"convcheck::\(anonymous namespace\)::triad_avx512\(", "avx512"),  # bench/peak.cpp
    (r"convcheck::\(anonymous namespace\)::triad_avx2\(", "avx"),
]
RANK = {"baseline": 0, "sse4": 1, "avx": 2, "avx512": 3}

# Mnemonics above SSE2 without a 'v' prefix. Not tzcnt: GCC emits `rep bsf` for baseline code on
# purpose (it runs as bsf on CPUs without BMI1), and objdump prints that encoding as tzcnt.
BEYOND_SSE2 = set("""
addsubpd addsubps haddpd haddps hsubpd hsubps lddqu movddup movshdup movsldup fisttp
pabsb pabsd pabsw palignr phaddd phaddsw phaddw phsubd phsubsw phsubw pmaddubsw pmulhrsw pshufb
psignb psignd psignw
blendpd blendps blendvpd blendvps dppd dpps extractps insertps movntdqa mpsadbw packusdw pblendvb
pblendw pcmpeqq pextrb pextrd pextrq phminposuw pinsrb pinsrd pinsrq pmaxsb pmaxsd pmaxud pmaxuw
pminsb pminsd pminud pminuw pmovsxbd pmovsxbq pmovsxbw pmovsxdq pmovsxwd pmovsxwq pmovzxbd
pmovzxbq pmovzxbw pmovzxdq pmovzxwd pmovzxwq pmuldq pmulld ptest roundpd roundps roundsd roundss
pcmpestri pcmpestrm pcmpistri pcmpistrm pcmpgtq crc32b crc32w crc32l crc32q crc32
popcnt lzcnt
""".split())
BMI = set("andn bextr blsi blsmsk blsr bzhi mulx pdep pext rorx sarx shlx shrx".split())

AVX512_OPERAND = re.compile(r"%zmm\d|%k[0-7]\b|%[xy]mm(1[6-9]|2\d|3[01])\b|\{%k[0-7]\}|\{1to\d+\}")
AVX_OPERAND = re.compile(r"%ymm\d")
FUNC = re.compile(r"^[0-9a-f]+ <(.*)>:$")


def allowed_for(name):
    for pattern, isa in ALLOWED:
        if re.search(pattern, name):
            return isa
    return "baseline"


def classify(text):
    if AVX512_OPERAND.search(text):
        return "avx512"
    mnemonic = text.split()[0] if text.split() else ""
    if AVX_OPERAND.search(text) or (mnemonic.startswith("v") and mnemonic not in ("verr", "verw")):
        return "avx"
    if mnemonic in BMI:
        return "avx"
    if mnemonic in BEYOND_SSE2:
        return "sse4"
    return "baseline"


def check(binary):
    proc = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-C", binary],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        print("FAIL: objdump -d %s: exit %d: %s" % (binary, proc.returncode, proc.stderr.strip()))
        return False
    dis = proc.stdout
    func, worst = None, {}
    seen = {isa: 0 for isa in RANK}
    for line in dis.splitlines():
        m = FUNC.match(line)
        if m:
            func = m.group(1)
            continue
        if func is None or "\t" not in line:
            continue
        text = line.split("\t", 1)[1].strip()
        isa = classify(text)
        seen[isa] += 1
        if RANK[isa] > RANK[allowed_for(func)]:
            prev = worst.get(func)
            if prev is None or RANK[isa] > RANK[prev[0]]:
                worst[func] = (isa, text)
    for func, (isa, text) in sorted(worst.items()):
        print("FAIL: %s: %s uses %s (e.g. '%s'), allowed %s" %
              (binary, func[:160], isa, text, allowed_for(func)))
    print("%s: %d avx-512, %d avx and %d sse3-4.2 instructions, all in guarded functions%s" %
          (binary, seen["avx512"], seen["avx"], seen["sse4"], "" if not worst else " EXCEPT the above"))
    return not worst


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    results = [check(b) for b in sys.argv[1:]]
    print("%d passed, %d failed" % (sum(results), len(results) - sum(results)))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
