"""convcheck from Python: the whole oracle in process (README "From Python", issue 17).

    import convcheck
    p = convcheck.Problem("conv2d_backprop_input:input=2x5x5x3,filter=3x3x3x4,stride=2x2")
    ops = convcheck.operands(p, fill="real", seed=1)          # {'filter': ..., 'out_backprop': ...}
    dx = my_kernel(p, **ops)
    print(convcheck.judge(p, ops, dx, contract="f32"))       # as `convcheck verify`
    print(convcheck.check(my_kernel, p))                      # the full oracle on my_kernel
    convcheck.fuzz(my_kernel, ops=["conv2d_backprop_input"], cases=200).raise_if_failed()

Kernels are functions `fn(problem, **operands) -> array` (the operands are the two roles the op
reads, by name: input, filter, out_backprop, in the problem's storage layout and dtype). A kernel
that also takes `out` gets the result buffer, filled with the oracle's poison and surrounded by
guard bands, and may write into it and return None. Raising `convcheck.Unsupported("why")`
declines a problem. Every fact (descriptors, fills, contracts, bounds, relations, generators,
shrinking) lives in the C++ libraries; this file only wraps them.
"""

import json
import operator
from dataclasses import dataclass, field
from typing import List, Optional

from . import _convcheck as _cc
from ._glue import Unsupported, _from_raw, _raw_dict, _to_raw, bfloat16

__all__ = [
    "Problem",
    "Case",
    "Verdict",
    "CheckResult",
    "FuzzResult",
    "ConformanceError",
    "Unsupported",
    "suite",
    "operands",
    "compute",
    "backend_isa",
    "judge",
    "check",
    "fuzz",
    "fuzz_cases",
    "backends",
    "fills",
    "coverage_classes",
    "tf_admission",
    "bfloat16",
]

Problem = _cc.Problem

#: The fills check() runs when none are asked for: the exact fill (bitwise), N(0,1) data, and the
#: per-role scales of a real backward pass (out_backprop ~1e-3..1e-6: a gradient of a mean).
DEFAULT_FILLS = ("exact", "real", "scaled")


class ConformanceError(AssertionError):
    """A kernel broke the oracle: the message has the verdict text and the repro line."""

    def __init__(self, message, verdict=None):
        super().__init__(message)
        self.verdict = verdict


def _problem(p):
    if isinstance(p, Problem):
        return p
    if isinstance(p, Case):
        return p.problem
    if isinstance(p, str):
        return Problem(p)
    raise TypeError("expected a convcheck.Problem, a Case or a descriptor string, got " + type(p).__name__)


@dataclass(frozen=True)
class Case:
    """A problem with the fill and seed its operands are drawn from (a suite line, a fuzzed case)."""

    problem: Problem
    fill: str = "exact"
    seed: int = 1
    tag: str = ""
    #: where the case came from: "" (made by hand), "suite", "fuzz" (stream index `index` of the
    #: fuzz stream of seed `stream_seed`, which fuzz() can replay and shrink) or "replay"
    origin: str = field(default="", compare=False)
    index: int = field(default=-1, compare=False)
    stream_seed: int = field(default=0, compare=False)
    #: the suite line it came from (0: none)
    line: int = field(default=0, compare=False)

    def __post_init__(self):
        if isinstance(self.problem, str):
            object.__setattr__(self, "problem", Problem(self.problem))

    def operands(self, contract=None):
        return operands(self.problem, self.fill, self.seed, contract=contract)

    @property
    def id(self):
        """A readable test id: the descriptor, with the fill and seed when they are not the defaults."""
        s = str(self.problem)
        if self.fill != "exact" or self.seed != 1:
            s += "|" + self.fill + "|" + str(self.seed)
        return s

    def repro(self, fn_name="fn"):
        return "convcheck.check({}, convcheck.Case({!r}, fill={!r}, seed={}))".format(
            fn_name, str(self.problem), self.fill, self.seed
        )

    def __str__(self):
        return "{} seed {} fill {}".format(self.problem, self.seed, self.fill)


def _case(d, tag=""):
    return Case(d["problem"], d["fill"], int(d["seed"]), d.get("tag", tag))


def _g(x):
    """A figure for a person (None: none)."""
    return "n/a" if x is None else "{:.3g}".format(x)


# The record's figures that may be NaN or infinite, which its JSON writes as "nan", "inf", "-inf"
# (core/json.h's convention, as in every file convcheck writes).
_FIGURES = {"bound_usage", "ref", "got", "bound", "residual", "slack", "usage"}


def _figures(x, key=None):
    """x with the strings "nan", "inf", "-inf" of figure fields read as floats."""
    if isinstance(x, dict):
        return {k: _figures(v, k) for k, v in x.items()}
    if isinstance(x, list):
        return [_figures(v, key) for v in x]
    if key in _FIGURES and x in ("nan", "inf", "-inf"):
        return float(x)
    return x


@dataclass
class Offender:
    coord: tuple
    index: int
    exact: float
    got: float
    bound: float


@dataclass
class Verdict:
    """One record of the oracle: the verdict (pass, fail, unsupported, mistrusted, crashed,
    timeout), the check that decided it, a reason a person can read, the bound usage, the first
    offender, the adjoint and metamorphic relations, and the repro line."""

    verdict: str
    check: str = ""
    reason: str = ""
    contract: str = ""
    bound_usage: float = 0.0
    mismatches: int = 0
    first: Optional[Offender] = None
    adjoint: list = field(default_factory=list)
    metamorphic: list = field(default_factory=list)
    repro: str = ""
    backend: str = ""
    case: Optional[Case] = None

    @property
    def passed(self):
        return self.verdict == "pass"

    @property
    def failed(self):
        """fail, crashed and timeout fail a run; mistrusted and unsupported do not (but never pass)."""
        return self.verdict in ("fail", "crashed", "timeout")

    def __str__(self):
        s = self.verdict
        if self.check:
            s += " [" + self.check + "]"
        if self.reason:
            s += " " + self.reason
        if self.case is not None:
            s = str(self.case) + ": " + s
        if self.verdict not in ("unsupported",):
            s += "\n  bound usage {}, {} elements over their bound, contract {}".format(
                _g(self.bound_usage), self.mismatches, self.contract
            )
        if self.first is not None:
            f = self.first
            # (A hand-built offender may have no bound: nan says "no number".)
            bound = float("nan") if f.bound is None else f.bound
            s += "\n  first offender at {} (storage index {}): got {}, {}".format(
                tuple(f.coord), f.index, _cc.format_value(f.got), _cc.exact_and_bound(f.exact, bound)
            )
        if self.repro and not self.passed:
            s += "\n  repro: " + self.repro
        return s


def _verdict(record_json, case=None, repro=None):
    """A Verdict from the oracle's one JSON form of a record (oracle/oracle.h to_json)."""
    d = _figures(json.loads(record_json))
    first = d.get("first_offender")
    return Verdict(
        verdict=d["verdict"],
        check=d["check"],
        reason=d["reason"],
        contract=d["contract"],
        bound_usage=d["bound_usage"],
        mismatches=d["mismatches"],
        first=Offender(tuple(first["coord"]), first["index"], first["ref"], first["got"], first["bound"])
        if first
        else None,
        adjoint=d["adjoint"],
        metamorphic=d["metamorphic"],
        repro=repro if repro is not None else d["repro"],
        backend=d["backend"],
        case=case,
    )


def suite(name_or_path) -> List[Case]:
    """The cases of a suite (a name such as "smoke", or a file path), as `convcheck run` plans them:
    each line once per fill (exact and real unless the line names one), seeds from the line."""
    import os

    name = str(name_or_path)
    packaged = os.path.join(os.path.dirname(__file__), "suites", name + ".txt")
    if os.sep not in name and not os.path.exists(name) and os.path.exists(packaged):
        name = packaged
    return [Case(d["problem"], d["fill"], int(d["seed"]), d["tag"], origin="suite", line=int(d["line"]))
            for d in _cc.suite(name)]


def operands(problem, fill="exact", seed=1, contract=None):
    """The operands the oracle gives case (problem, fill, seed): a dict of the two roles the op
    reads, numpy arrays in the problem's storage layout and dtype (bf16: ml_dtypes.bfloat16 when
    importable, else uint16 bits). `contract` sizes an exact fill (default: the dtype's own)."""
    p = _problem(problem)
    raw = _cc.operands(p, fill, _seed(seed), contract or "")
    return {k: _from_raw(v, p.dtype) for k, v in raw.items()}


def compute(problem, operands, backend="reference"):
    """The result of a registered backend (backends(): reference, optimized, onednn, eigen,
    mutant:NAME; gpu and cudnn raise with the reason in a package built without CUDA) on the operands
    (numpy or DLPack arrays: PyTorch, JAX; device arrays are copied to the host)."""
    p = _problem(problem)
    return _from_raw(_cc.compute(p, _raw_dict(operands, p), backend), p.dtype)


def judge(problem, operands, result, contract=None):
    """Judges `result` (computed anywhere) against the exact reference, as `convcheck verify` does:
    pass, fail [compare] or mistrusted, with the bound usage and the first offender. Several
    comma-separated contracts give a list of verdicts."""
    p = _problem(problem)
    records = _cc.judge(p, _raw_dict(operands, p), _to_raw(result, p.dtype), contract or "")
    out = []
    for d in records:
        repro = "convcheck verify '{}' {} --result result.npy --contract {}".format(
            p, " ".join("--{0} {1}.npy".format(r.replace("_", "-"), r) for r in p.reads), d["contract_name"]
        )
        out.append(_verdict(d["record"], repro=repro))
    return out[0] if len(out) == 1 else out


def _seed(seed):
    try:
        s = operator.index(seed)
    except TypeError:
        s = None
    if s is None or isinstance(seed, bool) or not 0 <= s < 2**64:
        raise ValueError("seed must be an integer in [0, 2^64), got {!r}".format(seed))
    return s


def _kernel(fn):
    if not callable(fn):
        raise TypeError("the kernel must be callable as fn(problem, **operands), got " + type(fn).__name__)
    return fn


def _name_of(fn):
    return "python:" + getattr(fn, "__qualname__", getattr(fn, "__name__", type(fn).__name__))


@dataclass
class CheckResult:
    """check()'s records, one per fill. `verdict`: the first failing record's, else mistrusted or
    unsupported if any record is, else pass."""

    records: List[Verdict]

    @property
    def verdict(self):
        for order in (("fail", "crashed", "timeout"), ("mistrusted",), ("unsupported",)):
            for r in self.records:
                if r.verdict in order:
                    return r.verdict
        return "pass"

    @property
    def passed(self):
        return self.verdict == "pass"

    @property
    def worst(self):
        v = self.verdict
        return next((r for r in self.records if r.verdict == v), self.records[0])

    def __str__(self):
        return "\n".join(str(r) for r in self.records)


def check(
    fn,
    problem_or_case,
    contract=None,
    fills=None,
    seed=None,
    deterministic=True,
    runs=2,
    adjoint=True,
    metamorphic=True,
):
    """Runs the whole oracle on `fn` as an in-process backend: for each fill, guarded buffers, the
    comparison with the exact reference under `contract` (bitwise on the exact fill), the adjoint
    identities and metamorphic relations (fn is called for the derived problems it accepts),
    `runs` runs compared bit for bit when `deterministic`, and the state relation. Returns a
    CheckResult; never raises for what fn does (an exception in fn is `crashed`)."""
    if isinstance(problem_or_case, Case):
        p = problem_or_case.problem
        fills = list(fills) if fills is not None else [problem_or_case.fill]
        seed = problem_or_case.seed if seed is None else seed
    else:
        p = _problem(problem_or_case)
        fills = list(fills) if fills is not None else list(DEFAULT_FILLS)
        seed = 1 if seed is None else seed
    name = _name_of(_kernel(fn))
    if not fills:
        raise ValueError("check: no fills to run (expected some of {})".format(", ".join(_cc.fill_names())))
    records = _cc.check(fn, name, p, fills, _seed(seed), contract or "", bool(deterministic), int(runs), adjoint, metamorphic)
    out = []
    for d in records:
        case = _case(d["case"])
        repro = case.repro(getattr(fn, "__name__", "fn"))
        if contract:
            repro = repro[:-1] + ", contract={!r})".format(contract)
        out.append(_verdict(d["record"], case=case, repro=repro))
    return CheckResult(out)


@dataclass
class FuzzResult:
    """fuzz()'s summary: cases run, (case, fn) pairs declined, and the shrunk failure if any."""

    cases: int
    unsupported: int
    failure: Optional[Verdict] = None
    original: Optional[Case] = None
    minimal: Optional[Case] = None
    shrink_steps: int = 0
    cli_repro: str = ""

    @property
    def passed(self):
        return self.failure is None

    def __str__(self):
        if self.failure is None:
            return "fuzz: {} cases, no failure ({} declined)".format(self.cases, self.unsupported)
        return "fuzz: failed after {} cases; shrunk in {} steps from {}\n  to {}".format(
            self.cases, self.shrink_steps, self.original, self.failure
        )

    def raise_if_failed(self):
        if self.failure is not None:
            raise ConformanceError(str(self), self.failure)
        return self


def fuzz(fn, ops=None, dtypes=None, formats=None, cases=100, seed=1, contract=None, seconds=0,
         deterministic=True, max_shrink_steps=500, first_case=0):
    """Random cases from the same RapidCheck generators as `convcheck fuzz` (a seed names the same
    stream), each through the whole oracle; the first failure is shrunk to a minimal case. Cases
    outside ops/dtypes/formats are declined (counted as unsupported), as are those fn declines.
    `first_case`: start the stream there (cases first_case .. cases-1 run; fuzz_cases() lists them)."""
    name = _name_of(_kernel(fn))
    s = _cc.fuzz(fn, name, list(ops or []), list(dtypes or []), list(formats or []), int(cases),
                 float(seconds), _seed(seed), contract or "", bool(deterministic), int(max_shrink_steps),
                 int(first_case))
    r = FuzzResult(cases=s["cases"], unsupported=s["unsupported"])
    if s["failures"]:
        f = s["failures"][0]
        r.minimal = _case(f["minimal"])
        r.original = _case(f["original"])
        r.shrink_steps = f["shrink_steps"]
        r.cli_repro = f["repro"]
        repro = r.minimal.repro(getattr(fn, "__name__", "fn"))
        r.failure = _verdict(f["record"], case=r.minimal, repro=repro)
    return r


def fuzz_cases(n, seed=1, first=0):
    """Cases first .. first+n-1 of the stream `fuzz` draws from `seed` (unshrunk)."""
    out = []
    for i, d in enumerate(_cc.fuzz_cases(int(seed), int(first), int(n))):
        c = _case(d)
        out.append(Case(c.problem, c.fill, c.seed, origin="fuzz", index=int(first) + i, stream_seed=int(seed)))
    return out


def backends():
    """The registered backends compute() can run (a name ending in ':' is a family)."""
    return list(_cc.backend_names())


def backend_isa(name):
    """The instruction set backend `name` runs with, as bench and run.json record it (e.g.
    "avx512" for optimized, "avx2" for eigen's AVX2 module, "sse2" for its baseline build)."""
    return _cc.backend_isa(name)


def fills():
    """The oracle's fill names."""
    return list(_cc.fill_names())


def tf_admission(problem):
    """Whether TF's stock CPU and GPU kernels take the problem (core/admission.h): {"cpu": {"kind",
    "message"}, "gpu": {...}}, kind accepted, refused (with TF's message) or differs."""
    return json.loads(_cc.tf_admission(_problem(problem)))


def coverage_classes(problem):
    """The coverage classes of issue 6 a problem belongs to (reports/summary.h)."""
    return list(_cc.coverage_classes(_problem(problem)))
