"""convcheck's pytest plugin (registered with the pytest11 entry point; README "From Python").

    import convcheck, convcheck.pytest as ccp

    @ccp.cases(suite="smoke", ops=["conv2d_backprop_input"], dtypes=["f32"])
    def test_my_kernel(case):
        ccp.assert_conforms(my_kernel, case, contract="f32")

- `cases(...)` parametrizes the test's `case` argument with a suite's cases (ids: the descriptor),
  after the failures this test had on earlier runs (kept in pytest's cache, replayed first until
  they pass, as Hypothesis does) and, with `--convcheck-fuzz N`, N cases of the fuzz stream of
  `--convcheck-seed S` (printed in the header, so a run can be replayed).
- `assert_conforms(fn, case)` runs the whole oracle (convcheck.check) on fn: a failure fails the
  test with the verdict text and the repro line (a fuzzed case is first shrunk, through the same
  RapidCheck shrink tree as `convcheck fuzz`, and the minimal case is what is cached and shown);
  unsupported is a skip with its reason; mistrusted (a case on which an all-zero result would also
  pass) is an error, never a pass.
- The terminal summary has a coverage line: the coverage classes (reports/summary.h) hit by cases
  that ran, and those not hit.
"""

import random

import pytest

import convcheck

_CACHE_KEY = "convcheck/failures"
_state = {"coverage": {}, "ran": 0, "config": None}


class Mistrusted(Exception):
    """A verdict the oracle cannot trust either way (reported by pytest as an error)."""


def cases(suite="smoke", ops=None, dtypes=None, formats=None, fills=None, problems=None, limit=None):
    """Parametrizes the test's `case` argument (see the module doc). `problems`: descriptors or
    Cases to use instead of a suite; `fills`: keep only cases of these fills; `limit`: at most
    this many suite cases."""
    spec = dict(suite=suite, ops=ops, dtypes=dtypes, formats=formats, fills=fills, problems=problems, limit=limit)
    return pytest.mark.convcheck_cases(spec)


def _matches(case, spec):
    p = case.problem
    return (
        (not spec.get("ops") or p.op in spec["ops"])
        and (not spec.get("dtypes") or p.dtype in spec["dtypes"])
        and (not spec.get("formats") or p.format in spec["formats"])
    )


def _selected(spec):
    if spec.get("problems") is not None:
        out = [c if isinstance(c, convcheck.Case) else convcheck.Case(c) for c in spec["problems"]]
    else:
        out = [c for c in convcheck.suite(spec["suite"]) if _matches(c, spec)]
        if spec.get("fills"):
            out = [c for c in out if c.fill in spec["fills"]]
        if spec.get("limit"):
            out = out[: spec["limit"]]
    return out


def _fuzzed(spec, n, seed):
    """The first n cases of the fuzz stream of `seed` that fit the spec's ops/dtypes/formats."""
    if n <= 0:
        return []
    out, first, batch = [], 0, max(64, 8 * n)
    while len(out) < n and first < 200 * n + 1000:
        for c in convcheck.fuzz_cases(batch, seed=seed, first=first):
            if _matches(c, spec) and len(out) < n:
                out.append(c)
        first += batch
    return out


def _test_key(nodeid):
    return nodeid.split("[", 1)[0]


def _cached(config, key):
    if getattr(config, "cache", None) is None:  # -p no:cacheprovider
        return []
    return config.cache.get(_CACHE_KEY, {}).get(key, [])


def _set_cached(config, key, items):
    if getattr(config, "cache", None) is None:  # -p no:cacheprovider
        return
    all_ = config.cache.get(_CACHE_KEY, {})
    if items:
        all_[key] = items
    else:
        all_.pop(key, None)
    config.cache.set(_CACHE_KEY, all_)


def pytest_addoption(parser):
    group = parser.getgroup("convcheck")
    group.addoption("--convcheck-fuzz", type=int, default=0, metavar="N",
                    help="add N fuzzed cases to every @convcheck.pytest.cases test")
    group.addoption("--convcheck-seed", type=int, default=None, metavar="S",
                    help="the fuzz stream's seed (default: random, printed in the header)")


def pytest_configure(config):
    config.addinivalue_line("markers", "convcheck_cases(spec): parametrize `case` with convcheck cases")
    seed = config.getoption("--convcheck-seed", None)
    if seed is None:
        seed = random.SystemRandom().randrange(1, 2**31)
    config._convcheck_seed = seed
    _state["config"] = config
    _state["coverage"] = {}
    _state["ran"] = 0


def pytest_report_header(config):
    n = config.getoption("--convcheck-fuzz", 0)
    if n:
        return "convcheck: {} fuzzed cases per test, seed {} (replay: --convcheck-fuzz {} --convcheck-seed {})".format(
            n, config._convcheck_seed, n, config._convcheck_seed
        )
    return None


def pytest_generate_tests(metafunc):
    marker = metafunc.definition.get_closest_marker("convcheck_cases")
    if marker is None or "case" not in metafunc.fixturenames:
        return
    spec = marker.args[0] if marker.args else {}
    config = metafunc.config
    key = _test_key(metafunc.definition.nodeid)
    replay = []
    for d in _cached(config, key):
        try:
            replay.append(convcheck.Case(d["problem"], d["fill"], int(d["seed"]), origin="replay"))
        except ValueError:
            pass  # a descriptor this build no longer takes: dropped
    chosen = _selected(spec)
    fuzzed = _fuzzed(spec, config.getoption("--convcheck-fuzz", 0), config._convcheck_seed)
    all_cases, ids, seen = [], [], set()
    for prefix, group in (("replay:", replay), ("", chosen), ("fuzz{}:".format(config._convcheck_seed), fuzzed)):
        for c in group:
            i = prefix + c.id
            if c.origin == "fuzz":
                i = "fuzz:{}:{}".format(c.index, c.id)
            if i in seen:
                continue
            seen.add(i)
            all_cases.append(c)
            ids.append(i)
    metafunc.parametrize("case", all_cases, ids=ids)


def _record_coverage(case):
    _state["ran"] += 1
    for cls in convcheck.coverage_classes(case.problem):
        _state["coverage"][cls] = _state["coverage"].get(cls, 0) + 1


def _update_cache(case, request_node, keep):
    """Puts `case` first in this test's cached failures (keep) or drops it (not keep)."""
    config = _state["config"]
    if config is None or request_node is None:
        return
    key = _test_key(request_node.nodeid)
    items = [d for d in _cached(config, key) if d != _case_dict(case)]
    _set_cached(config, key, ([_case_dict(case)] if keep else []) + items)


def _case_dict(case):
    return {"problem": str(case.problem), "fill": case.fill, "seed": case.seed}


_current = {"node": None}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    _current["node"] = item
    try:
        yield
    finally:
        _current["node"] = None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if call.when == "call" and call.excinfo is not None and call.excinfo.errisinstance(Mistrusted):
        rep.when = "setup"  # reported as an error, never a pass nor a plain failure
        rep.outcome = "failed"


def assert_conforms(fn, case, contract=None, fills=None, **check_options):
    """Runs the whole oracle on fn for `case` (convcheck.check); fails with the verdict text and
    the repro line, skips on unsupported, errors on mistrusted. Returns the CheckResult."""
    if not isinstance(case, convcheck.Case):
        case = convcheck.Case(case)
    node = _current["node"]
    r = convcheck.check(fn, case, contract=contract, fills=fills, **check_options)
    v = r.verdict
    if v == "unsupported":
        pytest.skip("convcheck: unsupported: " + r.worst.reason)
    _record_coverage(case)
    if v == "pass":
        if case.origin == "replay":
            _update_cache(case, node, keep=False)
        return r
    if v == "mistrusted":
        raise Mistrusted("convcheck: mistrusted (the oracle cannot judge this case: an all-zero "
                         "result would also pass)\n" + str(r.worst))
    failing = r.worst.case or case
    text = str(r.worst)
    if case.origin == "fuzz":
        # Shrink through the fuzz stream's own shrink tree (properties/fuzz.cpp).
        f = convcheck.fuzz(fn, cases=case.index + 1, first_case=case.index, seed=case.stream_seed,
                           contract=contract)
        if f.failure is not None:
            failing = f.minimal
            text = "shrunk in {} steps from {}\nto the minimal case:\n{}".format(f.shrink_steps, case, f.failure)
    _update_cache(failing, node, keep=True)
    raise convcheck.ConformanceError("convcheck: " + text, r.worst)


def pytest_terminal_summary(terminalreporter):
    if not _state["ran"]:
        return
    hit = _state["coverage"]
    names = [n for n, _ in convcheck._cc.coverage_class_names()]
    shown = ", ".join("{} {}".format(n, hit[n]) for n in names if n in hit)
    missed = [n for n in names if n not in hit]
    terminalreporter.write_line(
        "convcheck coverage: {} cases ran; classes hit: {}; not hit: {}".format(
            _state["ran"], shown or "none", ", ".join(missed) or "none"
        )
    )


__all__ = ["cases", "assert_conforms", "Mistrusted"]
