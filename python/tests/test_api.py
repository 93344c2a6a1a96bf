"""The package's API round trips, and judge() agreeing with `convcheck verify` on the same files."""

import os
import subprocess
import threading

import numpy as np
import pytest

import convcheck

BPI = "conv2d_backprop_input:input=2x5x5x3,filter=3x3x3x4,stride=2x2"


def test_problem_parse_str_fields():
    p = convcheck.Problem(BPI)
    assert str(p) == ("conv2d_backprop_input:input=2x5x5x3,filter=3x3x3x4,stride=2x2,dilation=1x1,"
                      "padding=VALID,format=NHWC,dtype=f32")
    assert convcheck.Problem(str(p)) == p and convcheck.Problem.parse(str(p)) == p
    assert hash(convcheck.Problem(str(p))) == hash(p)
    assert (p.op, p.input, p.filter, p.stride, p.dilation, p.padding, p.format, p.dtype) == (
        "conv2d_backprop_input", [2, 5, 5, 3], [3, 3, 3, 4], [2, 2], [1, 1], "VALID", "NHWC", "f32")
    # (5 - 3) // 2 + 1 = 2 output rows and columns, K = 4 channels.
    assert p.logical_shape("out_backprop") == [2, 2, 2, 4]
    assert p.reads == ["filter", "out_backprop"] and p.result_role == "input"
    q = convcheck.Problem("conv2d:input=1x4x5x2,filter=2x2x2x3,format=NCHW,padding=1:0:2:1")
    assert q.logical_shape("input") == [1, 4, 5, 2] and q.storage_shape("input") == [1, 2, 4, 5]
    assert q.padding == "1:0:2:1"


@pytest.mark.parametrize("bad, words", [
    ("conv2d_backprop", "no ':' found"),
    ("conv2d:input=1x2x3x1,filter=2x2x1x1,pad=SAME", "unknown key 'pad'"),
    ("conv2d:input=1x2x3x1,filter=4x1x1x1", "Computed output size would be negative"),
])
def test_bad_descriptors_are_value_errors_with_the_message(bad, words):
    with pytest.raises(ValueError, match=words):
        convcheck.Problem(bad).validate()


def test_bad_role_and_fill_and_contract():
    p = convcheck.Problem(BPI)
    with pytest.raises(ValueError, match="unknown role"):
        p.logical_shape("output")
    with pytest.raises(ValueError, match="unknown fill 'gauss'"):
        convcheck.operands(p, "gauss")
    ops = convcheck.operands(p)
    with pytest.raises(ValueError, match="--contract f33"):
        convcheck.judge(p, ops, convcheck.compute(p, ops), contract="f33")


def test_bad_calls_are_exceptions_with_the_reason():
    p = convcheck.Problem(BPI)
    ops = convcheck.operands(p)
    with pytest.raises(TypeError, match="must be a dict"):
        convcheck.compute(p, [ops["filter"]])
    with pytest.raises(TypeError, match="expected an array, got None"):
        convcheck.judge(p, ops, None)
    with pytest.raises(TypeError, match="must be callable"):
        convcheck.check(42, p)
    with pytest.raises(ValueError, match="no fills"):
        convcheck.check(lambda problem, **o: None, p, fills=[])
    with pytest.raises(ValueError, match="seed must be an integer"):
        convcheck.operands(p, "exact", -1)
    with pytest.raises(ValueError, match="unknown op 'conv3d'"):
        convcheck.fuzz(lambda problem, **o: None, ops=["conv3d"], cases=1)
    with pytest.raises(ValueError, match="memory limit"):
        convcheck.operands("conv2d:input=100000x1000x1000x100,filter=1x1x100x1")
    assert convcheck.operands(p, "exact", np.int64(3))["filter"].shape == (3, 3, 3, 4)


def test_suite_cases():
    cases = convcheck.suite("smoke")
    assert len(cases) > 50
    assert {c.fill for c in cases} >= {"exact", "real"}
    assert all(isinstance(c.problem, convcheck.Problem) for c in cases)
    with pytest.raises(ValueError, match="smoke"):  # an unknown name lists the known ones
        convcheck.suite("no_such_suite")


def test_operands_shapes_dtypes_and_reproducibility():
    p = convcheck.Problem(BPI)
    ops = convcheck.operands(p, "real", 7)
    assert sorted(ops) == ["filter", "out_backprop"]
    assert ops["filter"].shape == (3, 3, 3, 4) and ops["filter"].dtype == np.float32
    again = convcheck.Case(p, "real", 7).operands()
    assert all(np.array_equal(ops[k], again[k]) for k in ops)
    other = convcheck.operands(p, "real", 8)
    assert not np.array_equal(ops["filter"], other["filter"])
    h = convcheck.operands(BPI.replace("stride=2x2", "dtype=bf16"), "real", 1)
    if convcheck.bfloat16 is not None:
        assert h["filter"].dtype == convcheck.bfloat16
    else:
        assert h["filter"].dtype == np.uint16


def test_compute_backends_agree_and_judge_passes():
    p = convcheck.Problem(BPI)
    ops = convcheck.operands(p, "real", 3)
    ref = convcheck.compute(p, ops)
    opt = convcheck.compute(p, ops, backend="optimized")
    assert ref.shape == (2, 5, 5, 3)
    assert convcheck.judge(p, ops, ref).verdict == "pass"
    assert convcheck.judge(p, ops, opt).verdict == "pass"
    v = convcheck.judge(p, ops, convcheck.compute(p, ops, backend="mutant:flip_filter"))
    assert v.verdict == "fail" and v.check == "compare" and v.first is not None
    assert "convcheck verify" in v.repro
    with pytest.raises(ValueError, match="unknown backend|expected one of|known"):
        convcheck.compute(p, ops, backend="nope")


def test_eigen_loads_its_isa_module_from_the_package():
    # The package carries eigen's ISA modules beside its extension (python/CMakeLists.txt), and an
    # installed package looks for them there (never in a build tree); on a CPU that runs AVX2 it
    # loads one. CONVCHECK_EXPECT_EIGEN_MODULES (tests/python/test_python.sh: CI's package is built
    # with the AVX2 module alone) names the modules the package must hold: then none is a failure.
    here = os.path.dirname(convcheck.__file__)
    modules = sorted(f for f in os.listdir(here) if f.startswith("convcheck-eigen-"))
    expect = [m for m in os.environ.get("CONVCHECK_EXPECT_EIGEN_MODULES", "").split(",") if m]
    for m in expect:
        assert "convcheck-eigen-%s.so" % m in modules, (m, modules)
    flags = set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    isa = convcheck.backend_isa("eigen")
    if not modules:
        pytest.skip("this package was built without eigen ISA modules (CONVCHECK_EIGEN_MODULES)")
    runs = {"avx2"} if {"avx2", "fma", "f16c"} <= flags else set()
    if runs and "avx512f" in flags:
        runs.add("avx512")
    if not any("convcheck-eigen-%s.so" % i in modules for i in runs):
        assert "avx" not in isa, isa
        pytest.skip("no module here that this CPU runs: eigen runs its baseline build (%s)" % isa)
    assert isa in runs and "convcheck-eigen-%s.so" % isa in modules, (isa, modules)


def test_compute_runs_the_comparators_and_names_unavailable_backends():
    # Every backend the command line registers but plugins: the comparators in process (each
    # judged under its own contract's tolerance by f32's bound here: a sum of 27 terms), and a
    # backend this build lacks refused with the reason, never a silent result.
    p = convcheck.Problem(BPI)
    ops = convcheck.operands(p, "real", 5)
    names = convcheck.backends()
    for name in ("reference", "optimized", "onednn", "eigen", "gpu", "cudnn"):
        assert name in names, name
    assert convcheck.judge(p, ops, convcheck.compute(p, ops, backend="eigen")).verdict == "pass"
    for name in ("onednn", "gpu", "cudnn"):
        try:
            result = convcheck.compute(p, ops, backend=name)
        except ValueError as e:
            assert "unavailable" in str(e) or "cannot implement" in str(e), str(e)
        else:
            assert convcheck.judge(p, ops, result).verdict == "pass", name


def test_judge_several_contracts_and_mistrusted():
    p = convcheck.Problem(BPI)
    ops = convcheck.operands(p, "exact", 1)
    vs = convcheck.judge(p, ops, convcheck.compute(p, ops), contract="f32,exact")
    assert [v.verdict for v in vs] == ["pass", "pass"]
    zeros = {k: np.zeros_like(v) for k, v in ops.items()}
    z = convcheck.judge(p, zeros, np.zeros((2, 5, 5, 3), np.float32))
    assert z.verdict == "mistrusted" and z.check == "degenerate"


def test_non_finite_exact_values_keep_their_kind_and_name_what_passes():
    # special fills give NaN and infinite results: an offender there keeps its exact value (not
    # None), and the messages name what passes instead of a meaningless bound.
    p = convcheck.Problem(BPI)
    ops = convcheck.operands(p, "special", 1)
    exact = convcheck.compute(p, ops)
    for kind, test in (("nan", np.isnan), ("inf", np.isinf)):
        got = exact.copy()
        at = tuple(np.argwhere(test(got))[0])
        got[at] = 1.0
        v = convcheck.judge(p, ops, got)
        assert v.verdict == "fail" and v.first is not None, str(v)
        assert isinstance(v.first.exact, float) and test(v.first.exact), v.first
        assert v.first.exact == exact[at] or kind == "nan", (v.first, exact[at])
        says = "(any NaN passes)" if kind == "nan" else "(only {!r} passes)".format(float(exact[at]))
        assert says in str(v) and says in v.reason, str(v)
        assert "None" not in str(v) and "bound nan" not in str(v) and "-nan" not in str(v), str(v)


def test_wrong_operand_shapes_and_dtypes_are_value_errors():
    p = convcheck.Problem(BPI)
    ops = convcheck.operands(p)
    with pytest.raises(ValueError, match="missing 'out_backprop'"):
        convcheck.compute(p, {"filter": ops["filter"]})
    with pytest.raises(ValueError, match="float64, expected f32"):
        convcheck.compute(p, {"filter": ops["filter"].astype(np.float64), "out_backprop": ops["out_backprop"]})
    with pytest.raises(ValueError, match="out_backprop"):
        convcheck.compute(p, {"filter": ops["filter"], "out_backprop": np.zeros((2, 3, 3, 4), np.float32)})
    with pytest.raises(ValueError, match="result: array has shape"):
        convcheck.judge(p, ops, np.zeros((2, 5, 5, 4), np.float32))


def test_non_contiguous_and_fortran_inputs_are_read_by_value():
    p = convcheck.Problem(BPI)
    ops = convcheck.operands(p, "real", 2)
    want = convcheck.compute(p, ops)
    f = np.asfortranarray(ops["filter"])
    strided = np.zeros((2, 2, 2, 8), np.float32)[..., ::2]
    strided[...] = ops["out_backprop"]
    got = convcheck.compute(p, {"filter": f, "out_backprop": strided})
    assert np.array_equal(got, want)


def test_gil_is_released_while_cpp_computes():
    p = convcheck.Problem("conv2d_backprop_filter:input=8x64x64x16,filter=5x5x16x16")
    ops = convcheck.operands(p, "real", 1)
    count = [0]
    done = threading.Event()

    def spin():
        while not done.is_set():
            count[0] += 1

    t = threading.Thread(target=spin)
    t.start()
    try:
        before = count[0]
        convcheck.compute(p, ops)
        during = count[0] - before
    finally:
        done.set()
        t.join()
    assert during > 1000, "the other thread barely ran: is the GIL held during compute?"


CONVCHECK_BIN = os.environ.get("CONVCHECK_BIN")


@pytest.mark.skipif(not CONVCHECK_BIN, reason="CONVCHECK_BIN (the convcheck command) not set: run through CTest")
@pytest.mark.parametrize("variant", ["c_le", "fortran", "big_endian"])
def test_judge_agrees_with_verify(tmp_path, variant):
    import json

    p = convcheck.Problem("conv2d_backprop_filter:input=2x6x5x3,filter=3x2x3x4,stride=2x1,padding=SAME")
    ops = convcheck.operands(p, "real", 5)
    result = convcheck.compute(p, ops)
    for label, res in (("good", result), ("bad", result + np.float32(1e-4))):
        files = {}
        for name, arr in list(ops.items()) + [("result", res)]:
            a = np.asfortranarray(arr) if variant == "fortran" else arr
            if variant == "big_endian":
                a = a.astype(a.dtype.newbyteorder(">"))
            files[name] = str(tmp_path / "{}_{}.npy".format(label, name))
            np.save(files[name], a)
        out = subprocess.run(
            [CONVCHECK_BIN, "verify", str(p), "--input", files["input"], "--out-backprop", files["out_backprop"],
             "--result", files["result"], "--contract", "f32", "--json"],
            capture_output=True, text=True, timeout=120)
        assert out.returncode in (0, 1), out.stderr
        cli = json.loads(out.stdout)["backends"][0]
        py = convcheck.judge(p, ops, res, contract="f32")
        assert (py.verdict, py.check, py.mismatches) == (cli["verdict"], cli["check"], cli["mismatches"])
        assert py.bound_usage == pytest.approx(cli["bound_usage"], rel=1e-12)
        assert py.verdict == ("pass" if label == "good" else "fail")


def test_offender_line_says_its_values_as_the_cli_does():
    # got, exact and bound in the oracle's one format (17 digits, as `convcheck check` prints
    # them), so that a got and an exact that differ do not print alike or differ only in format;
    # a hand-built offender without a bound still prints.
    o = convcheck.Offender((0, 0, 0, 0), 0, 0.1, 0.2, None)
    s = str(convcheck.Verdict("fail", first=o))
    assert "got 0.20000000000000001, exact 0.10000000000000001, bound nan" in s, s
