#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (fuzz/corpus/<target>/), deterministically.

    python3 fuzz/make_corpus.py                     # rewrites descriptor/, npy/, suite/
    python3 fuzz/make_corpus.py --results R.jsonl   # also results/, from a run's results.jsonl

The results seeds come from a real run (`convcheck run --suite S --backends
reference,mutant:flip_filter --out D` on a two-line suite, one line with --fill special), cut and
damaged here in the ways a killed run or a hand edit would.

Seeds are small and varied: valid inputs of every kind the readers take (descriptors from
suites/tf_tests.txt and by hand, .npy files of every dtype, version and header style, suite
files with comments, tags and fills) and malformed ones for every refusal the readers make. The
.npy files are written byte by byte here (numpy is not needed). libFuzzer adds what it finds
interesting in its own working corpus; fuzz-ci.sh does not write back here.
"""
import os
import shutil
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fuzz", "corpus")


def write(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# --- descriptors --------------------------------------------------------------------------------
def descriptors():
    lines = []
    with open(os.path.join(ROOT, "suites", "tf_tests.txt")) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                lines.append(line.split()[0])
    valid = lines[:: max(1, len(lines) // 24)][:24]
    valid += [
        "conv2d_backprop_input:input=2x7x7x128,filter=3x3x128x64,stride=2x2,padding=SAME",
        "conv2d:input=1x8x8x4,filter=3x3x2x6,stride=1x1,dilation=2x2,padding=1:2:0:3,format=NCHW,dtype=bf16",
        "depthwise_conv2d_backprop_filter:input=2x9x9x3,filter=3x3x3x2,stride=2x2,padding=SAME,dtype=f64",
        "conv2d_transpose:input=12x14x14x64,filter=3x3x64x128,stride=2x2,padding=SAME",
        "conv2d:input=1x5x5x1,filter=1x1x1x1,dtype=i32",
        "conv2d:input=1x5x5x1,filter=1x1x1x1,dtype=half",
        "conv2d:dtype=float64,format=NHWC,padding=VALID,dilation=1x1,stride=1x1,filter=1x1x1x1,input=1x1x1x1",
        "depthwise_conv2d_backprop_input:input=0x3x3x0,filter=1x1x0x0",
        "conv2d:input=1x5x7x1,filter=3x3x1x1,stride=1152921504606846976x1152921504606846975,padding=SAME",
    ]
    invalid = [
        "", ":", "conv2d", "conv2d:", "conv3d:input=1x1x1x1,filter=1x1x1x1",
        "conv2d:input=1x1x1x1", "conv2d:filter=1x1x1x1", "conv2d:input=1x1x1x1,,filter=1x1x1x1",
        "conv2d:input=1x1x1x1,filter=1x1x1x1,pad=SAME", "conv2d:input=1x1x1x1,input=1x1x1x1",
        "conv2d:input=1x1x1,filter=1x1x1x1", "conv2d:input=1x1x1x1,filter=1x1x1x1,stride=0x1",
        "conv2d:input=1x1x1x1,filter=1x1x1x1,padding=-1:0:0:0",
        "conv2d:input=1x99999999999999999999x1x1,filter=1x1x1x1",
        "conv2d:input=1x5x5x1,filter=3x3x1x1,dilation=4611686018427387904x1",
        "conv2d:input=1x5x5x1,filter=1x1x1x1,padding=9223372036854775807:0:0:0",
        "conv2d:input=4294967296x4294967296x2x1,filter=1x1x1x1",
        "conv2d_backprop_filter:input=1x5x5x1,filter=1x1x1x1,dtype=i32",
        "conv2d:input=1x5x5x3,filter=1x1x2x1", "depthwise_conv2d:input=1x5x5x3,filter=1x1x2x1",
        "conv2d:input=1x2x2x1,filter=3x3x1x1", "conv2d:input=1x5x5x1,filter=1x1x1x1,format=CHWN",
        "conv2d:input=1x5x5x1,filter=1x1x1x1,dtype=f8", "conv2d:input=1x5x5x1,filter=1x1x1x1,padding=FULL",
        "conv2d:input=1x5x5x1,filter=1x1x1x1,stride=+1x1", "conv2d:input=1x\x005x5x1,filter=1x1x1x1",
        "conv2d:input=1x5x5x1,filter=1x1x1x1,padding=1:2:3",
    ]
    for i, d in enumerate(valid):
        write("descriptor", "valid_%02d" % i, d)
    for i, d in enumerate(invalid):
        write("descriptor", "invalid_%02d" % i, d)


# --- .npy ---------------------------------------------------------------------------------------
def npy(descr, shape, data, version=1, dict_text=None, pad_to=64, magic=b"\x93NUMPY"):
    if dict_text is None:
        dims = ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "")
        dict_text = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    header = dict_text.encode("latin-1")
    len_bytes = 2 if version == 1 else 4
    pre = len(magic) + 2 + len_bytes
    total = pre + len(header) + 1
    pad = (-total) % pad_to if pad_to else 0
    header = header + b" " * pad + b"\n"
    ln = struct.pack("<H", len(header)) if version == 1 else struct.pack("<I", len(header))
    return magic + bytes([version, 0]) + ln + header + data


def count(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def npys():
    sizes = {"<f2": 2, "<u2": 2, "<f4": 4, "<f8": 8, "<i4": 4}
    shapes = [(), (0,), (3,), (2, 3), (1, 2, 2, 1), (2, 0, 3, 1), (1, 3, 3, 2)]
    i = 0
    for descr, sz in sizes.items():
        for shape in shapes[:: 2 if descr != "<f4" else 1]:
            n = count(shape)
            data = bytes((7 * k + 1) & 0xFF for k in range(n * sz))
            write("npy", "valid_%02d_%s" % (i, descr[1:]), npy(descr, shape, data))
            i += 1
    f4 = struct.pack("<6f", 1, -2.5, 0.0, float("inf"), float("nan"), 3e-45)
    write("npy", "valid_v2", npy("<f4", (2, 3), f4, version=2))
    write("npy", "valid_v3", npy("<f4", (2, 3), f4, version=3))
    write("npy", "valid_double_quotes",
          npy("<f4", (2, 3), f4, dict_text='{"shape": (2, 3), "fortran_order": False, "descr": "<f4"}'))
    write("npy", "valid_no_padding", npy("<f4", (2, 3), f4, pad_to=0))
    write("npy", "valid_spaces",
          npy("<f4", (2, 3), f4, dict_text="{ 'descr' : '<f4' ,\t'fortran_order':False,'shape':( 2 ,3 ,) }"))
    bad = {
        "bad_magic": b"\x93NUMPZ\x01\x00" + b"\x00" * 60,
        "empty": b"",
        "magic_only": b"\x93NUMPY",
        "version_4": npy("<f4", (2, 3), f4, version=1)[:6] + b"\x04\x00" + npy("<f4", (2, 3), f4)[8:],
        "header_len_huge": b"\x93NUMPY\x02\x00\xff\xff\xff\x7f{'descr': '<f4'}",
        "header_truncated": npy("<f4", (2, 3), f4)[:30],
        "data_truncated": npy("<f4", (2, 3), f4)[:-3],
        "trailing_bytes": npy("<f4", (2, 3), f4) + b"\x00\x01",
        "big_endian": npy(">f4", (2, 3), f4),
        "not_equal_order": npy("=f4", (2, 3), f4),
        "unsupported_descr": npy("<c8", (3,), b"\x00" * 24),
        "structured": npy("<f4", (1,), b"\x00" * 4,
                          dict_text="{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }"),
        "fortran": npy("<f4", (2, 3), f4,
                       dict_text="{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }"),
        "negative_dim": npy("<f4", (2, 3), f4,
                            dict_text="{'descr': '<f4', 'fortran_order': False, 'shape': (-2, -3), }"),
        "shape_overflow": npy("<f4", (), b"",
                              dict_text="{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4), }"),
        "shape_not_tuple": npy("<f4", (3,), b"\x00" * 12,
                               dict_text="{'descr': '<f4', 'fortran_order': False, 'shape': (3), }"),
        "duplicate_key": npy("<f4", (3,), b"\x00" * 12,
                             dict_text="{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"),
        "extra_key": npy("<f4", (3,), b"\x00" * 12,
                         dict_text="{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}"),
        "missing_shape": npy("<f4", (3,), b"\x00" * 12,
                             dict_text="{'descr': '<f4', 'fortran_order': False}"),
        "escape_in_string": npy("<f4", (3,), b"\x00" * 12,
                                dict_text="{'descr': '<f\\x34', 'fortran_order': False, 'shape': (3,), }"),
        "not_a_dict": npy("<f4", (3,), b"\x00" * 12, dict_text="['descr', '<f4']"),
        "huge_dim_digits": npy("<f4", (3,), b"\x00" * 12,
                               dict_text="{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }"),
        "zero_dim_huge_other": npy("<f4", (), b"",
                                   dict_text="{'descr': '<f4', 'fortran_order': False, 'shape': (0, 9223372036854775807), }"),
    }
    for name, data in bad.items():
        write("npy", name, data)


# --- suites -------------------------------------------------------------------------------------
def suites():
    good = [
        "# a comment\n\nconv2d:input=1x5x5x1,filter=3x3x1x1 --tag a\n",
        "conv2d_backprop_input:input=1x2x3x1,filter=2x2x1x1 --tag T1.x --fill ramp  # trailing comment\n"
        "conv2d_backprop_filter:input=1x4x4x2,filter=2x2x2x2,dtype=f64 --fill special\n",
        "depthwise_conv2d:input=1x5x5x2,filter=3x3x2x2,padding=SAME\r\nconv2d:input=1x1x1x1,filter=1x1x1x1\r\n",
        "\tconv2d_transpose:input=2x8x8x4,filter=3x3x4x2,stride=2x2,padding=SAME\t--tag\tt\n",
        "conv2d:input=1x5x5x1,filter=1x1x1x1 --fill exact --tag x\nconv2d:input=1x5x5x1,filter=1x1x1x1",
        "",
        "#\n#\n#only comments",
    ]
    with open(os.path.join(ROOT, "suites", "smoke.txt")) as f:
        smoke = f.read()
    good.append("\n".join(smoke.splitlines()[:30]) + "\n")
    bad = [
        "conv2d:input=1x5x5x1,filter=1x1x1x1 --speed 3\n",
        "conv2d:input=1x5x5x1,filter=1x1x1x1 --tag\n",
        "conv2d:input=1x5x5x1,filter=1x1x1x1 --tag a --tag b\n",
        "conv2d:input=1x5x5x1,filter=1x1x1x1 --fill exact --fill real\n",
        "# ok\nconv2d:input=1x5x5x1,filter=7x7x1x1\n",
        "conv2d:input=1x5x5x1\n",
        "not a descriptor\n",
        "conv2d:input=1x5x5x1,filter=1x1x1x1\nconv2d:input=1x5x5x1,filter=1x1x1x1,stride=0x1\n",
        "conv2d:input=1x5x5x1,filter=1x1x1x1\x00 --tag z\n",
        "conv2d:input=1x5x5x1,filter=1x1x1x1 \x1b[31m--tag\n",
    ]
    for i, s in enumerate(good):
        write("suite", "valid_%02d.txt" % i, s)
    for i, s in enumerate(bad):
        write("suite", "invalid_%02d.txt" % i, s)


# --- results.jsonl -------------------------------------------------------------------------------
def results(path):
    with open(path, "rb") as f:
        full = f.read()
    lines = full.splitlines(keepends=True)
    write("results", "full.jsonl", full)
    for i, line in enumerate(lines):
        write("results", "line_%d.jsonl" % i, line)
    write("results", "empty.jsonl", b"")
    write("results", "truncated_tail.jsonl", full[:-100])
    write("results", "no_final_newline.jsonl", full.rstrip(b"\n"))
    write("results", "malformed_middle.jsonl", lines[0] + b"{not json\n" + b"".join(lines[1:]))
    write("results", "duplicate_agreeing.jsonl", lines[0] + lines[0])
    flipped = lines[0].replace(b'"verdict":"pass"', b'"verdict":"fail"')
    write("results", "duplicate_disagreeing.jsonl", lines[0] + flipped)
    first = lines[0]
    damage = {
        "case_string": (b'"case":0', b'"case":"0"'),
        "seed_negative": (b'"seed":', b'"seed":-'),
        "seed_huge": (b'"seed":', b'"seed":99999999999999999999'),
        "verdict_unknown": (b'"verdict":"pass"', b'"verdict":"maybe"'),
        "fill_unknown": (b'"fill":"exact"', b'"fill":"sparse"'),
        "descriptor_bad": (b'"descriptor":"conv2d:', b'"descriptor":"conv9d:'),
        "escapes": (b'"tag":"a"', b'"tag":"\\u00e9\\ud83d\\ude00\\u0000\\n\\"x"'),
        "number_forms": (b'"bound_usage":0', b'"bound_usage":-1.5e-308'),
        "nan_strings": (b'"bound_usage":0', b'"bound_usage":"nan"'),
    }
    for name, (a, b) in damage.items():
        write("results", name + ".jsonl", first.replace(a, b, 1))
    write("results", "nested.jsonl", b"[" * 64 + b"]" * 64 + b"\n")
    write("results", "not_object.jsonl", b'[1, "two", null, true, {"a": {}}]\n')


if __name__ == "__main__":
    import sys
    for t in ("descriptor", "npy", "suite"):
        shutil.rmtree(os.path.join(OUT, t), ignore_errors=True)
    descriptors()
    npys()
    suites()
    if len(sys.argv) == 3 and sys.argv[1] == "--results":
        shutil.rmtree(os.path.join(OUT, "results"), ignore_errors=True)
        results(sys.argv[2])
    for t in sorted(os.listdir(OUT)):
        print("%s: %d files" % (t, len(os.listdir(os.path.join(OUT, t)))))
