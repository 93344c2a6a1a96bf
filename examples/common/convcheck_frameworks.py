"""Shared driver of the worked examples (examples/tensorflow, examples/pytorch): validate a
framework's convolution kernels with the `convcheck` Python package, in process (README "From
Python"; no subprocess per case).

For every problem of the chosen suites and two fills it
  1. takes the operands the op reads from the oracle (`convcheck.operands`): the `int` fill is the
     oracle's `exact` fill (small integers sized so that every partial sum is exact in f32, so a
     correct f32 kernel is exact), `real` is N(0,1) rounded into the dtype;
  2. asks the framework adapter (`compute(problem, operands)`) for the result, in the problem's
     dtype and format; an exception is a refusal, recorded with its message;
  3. judges the result with `convcheck.judge` (what `convcheck verify` does) under the contracts
     the adapter names;
  4. compares refusals with convcheck's TF-admission report (`convcheck.tf_admission`).
and writes results.jsonl, summary.json and summary.md.

A framework adapter is a module-level object with
    name: str
    contracts(problem) -> "f32" | "f32,f16" | ...          (verify's --contract list)
    admission_expected(problem) -> str or None               (what convcheck's admission means here)
    compute(problem, operands: dict role -> np.ndarray) -> np.ndarray   (raises to refuse)
    version: str
bf16 operands and results are their uint16 bit patterns (as in convcheck's .npy files).
"""

import argparse
import collections
import json
import os
import re
import sys
import time

import numpy as np

try:
    import convcheck
except ImportError:  # pragma: no cover - said once, with the fix
    sys.exit("convcheck_frameworks: the convcheck package is not installed in this Python "
             "(from the repository root: pip install .)")

# The driver's fill names (kept in results.jsonl) -> the oracle's fills.
FILLS = {"int": "exact", "real": "real"}


class Problem:
    """The fields the adapters use, read from a convcheck.Problem (the one descriptor parser)."""

    def __init__(self, descriptor):
        cp = descriptor if isinstance(descriptor, convcheck.Problem) else convcheck.Problem(descriptor)
        cp.validate()
        self.checked = cp
        self.descriptor = str(cp)
        self.op = cp.op
        self.n, self.h, self.w, self.c = cp.input
        self.kh, self.kw, self.fin, self.fout = cp.filter
        self.sh, self.sw = cp.stride
        self.dh, self.dw = cp.dilation
        pad = cp.padding
        self.padding = pad if pad in ("VALID", "SAME") else tuple(int(x) for x in pad.split(":"))
        self.format = cp.format
        self.dtype = cp.dtype
        self.reads = tuple(cp.reads)

    @property
    def depthwise(self):
        return self.op.startswith("depthwise")

    @property
    def explicit(self):
        return isinstance(self.padding, tuple)

    def input_sizes(self):
        """The forward input's shape in the format's order (TF's input_sizes / output_shape)."""
        if self.format == "NCHW":
            return [self.n, self.c, self.h, self.w]
        return [self.n, self.h, self.w, self.c]

    def filter_sizes(self):
        return [self.kh, self.kw, self.fin, self.fout]

    def groups(self):
        return self.c if self.depthwise else self.c // self.fin


def bits(a, dtype):
    """bf16 arrays as their uint16 bits (what the adapters take and give)."""
    a = np.asarray(a)
    return a.view(np.uint16) if dtype == "bf16" and a.dtype != np.uint16 else a


def read_suite(path, every=1, limit=None):
    """The suite's lines as (problem, tag) (convcheck.suite plans one case per fill of a line)."""
    entries, seen = [], set()
    for case in convcheck.suite(path):
        if case.line not in seen:
            seen.add(case.line)
            entries.append((case.problem, case.tag))
    entries = entries[::every]
    return entries[:limit] if limit else entries


def first_line(text, limit=300):
    text = str(text).strip().splitlines()
    line = text[0] if text else ""
    for candidate in text:  # TF puts the useful part after "{{function_node ...}}"
        if "Error" in candidate or "only supports" in candidate or "not" in candidate:
            line = candidate
            break
    line = re.sub(r"\{\{[^}]*\}\}\s*", "", line)
    return line[:limit]


def validate(adapter, argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suites", default="suites")
    ap.add_argument("--conformance-every", type=int, default=3,
                    help="take every K-th problem of suites/conformance.txt (0: none)")
    ap.add_argument("--limit", type=int, default=None, help="at most this many problems per suite")
    ap.add_argument("--out", required=True)
    ap.add_argument("--fills", default="int,real")
    ap.add_argument("--problem", action="append", default=[],
                    help="only this descriptor (repeatable): reruns one finding")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)

    problems = [("tf_tests", d, t) for d, t in
                read_suite(os.path.join(args.suites, "tf_tests.txt"), 1, args.limit)]
    conf = os.path.join(args.suites, "conformance.txt")
    if args.conformance_every > 0 and os.path.exists(conf):
        problems += [("conformance", d, t) for d, t in
                     read_suite(conf, args.conformance_every, args.limit)]
    if args.problem:
        problems = [("cli", d, "") for d in args.problem]
    fills = args.fills.split(",")
    unknown = [f for f in fills if f not in FILLS]
    if unknown:
        ap.error("--fills: unknown " + ", ".join(unknown) + " (expected int, real)")
    print(f"{adapter.name} {adapter.version}: {len(problems)} problems x {len(fills)} fills",
          flush=True)

    records = []
    t0 = time.time()
    out_jsonl = open(os.path.join(args.out, "results.jsonl"), "w")
    for index, (suite, descriptor, tag) in enumerate(problems):
        try:
            p = Problem(descriptor)
        except ValueError as e:
            print(f"skip {descriptor}: {e}")
            continue
        descriptor = str(descriptor)
        admission = convcheck.tf_admission(p.checked)
        contracts = adapter.contracts(p)
        for fill in fills:
            rec = {"suite": suite, "problem": descriptor, "tag": tag, "fill": fill,
                   "op": p.op, "dtype": p.dtype, "format": p.format, "admission": admission}
            ops = convcheck.operands(p.checked, FILLS[fill], 1000 + index,
                                     contract=contracts.split(",")[0])
            try:
                result = adapter.compute(p, {r: bits(a, p.dtype) for r, a in ops.items()})
                rec["framework"] = "ran"
                if hasattr(adapter, "expressed"):  # how the framework expressed the problem
                    rec["expressed"] = adapter.expressed.get(descriptor)
            except Exception as e:  # the framework refused (or crashed in Python)
                rec["framework"] = "refused"
                rec["error"] = f"{type(e).__name__}: {first_line(e)}"
                records.append(rec)
                out_jsonl.write(json.dumps(rec) + "\n")
                continue
            try:
                verdicts = convcheck.judge(p.checked, ops, bits(result, p.dtype), contract=contracts)
                verdicts = verdicts if isinstance(verdicts, list) else [verdicts]
                rec["verify"] = [{"contract": v.backend.split(":", 1)[1], "verdict": v.verdict,
                                  "check": v.check, "bound_usage": v.bound_usage,
                                  "mismatches": v.mismatches, "reason": v.reason}
                                 for v in verdicts]
            except ValueError as e:  # a result that does not fit the problem (shape, dtype)
                rec["verify_error"] = str(e)
            records.append(rec)
            out_jsonl.write(json.dumps(rec) + "\n")
        if (index + 1) % 50 == 0:
            print(f"  {index + 1}/{len(problems)} problems, {time.time() - t0:.0f} s", flush=True)
    out_jsonl.close()
    summary = summarize(adapter, records, time.time() - t0)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    md = markdown(adapter, summary)
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write(md)
    print(md)
    return 0


def summarize(adapter, records, seconds):
    s = {"framework": adapter.name, "version": adapter.version, "seconds": round(seconds, 1),
         "cases": len(records)}
    # Refusals against convcheck's admission report.
    agree = collections.Counter()
    disagreements = []
    for r in records:
        adm = r.get("admission", {}).get("cpu", {})
        expected = adapter.admission_expected(Problem(r["problem"]), adm)
        key = f"{r['framework']} / convcheck says {expected}"
        agree[key] += 1
        if expected is None:  # no admission report for this framework
            continue
        consistent = (r["framework"] == "refused") == (expected == "refused")
        if not consistent:
            disagreements.append({"problem": r["problem"], "fill": r["fill"],
                                  "framework": r["framework"], "error": r.get("error", ""),
                                  "admission": adm})
        elif r["framework"] == "refused" and adm.get("message"):
            r["message_matches"] = adm["message"][:40] in r.get("error", "")
    s["admission"] = dict(agree)
    s["admission_disagreements"] = disagreements
    s["refusal_messages_matching"] = sum(1 for r in records if r.get("message_matches"))
    s["refusals"] = sum(1 for r in records if r["framework"] == "refused")
    reasons = collections.Counter(f"{r['op']} {r['dtype']} {r['format']}: {r['error'][:160]}"
                                  for r in records if r["framework"] == "refused")
    s["refusal_reasons"] = dict(reasons.most_common())
    # Verdicts by op and dtype (first contract), bound usage, failures.
    table = collections.defaultdict(lambda: collections.Counter())
    usage = collections.defaultdict(float)
    failures = []
    per_contract = collections.defaultdict(collections.Counter)
    for r in records:
        if "verify" not in r:
            continue
        first = r["verify"][0]
        key = f"{r['op']} {r['dtype']}"
        table[key][first["verdict"]] += 1
        if first["verdict"] == "pass":
            bu = first["bound_usage"]
            usage[key] = max(usage[key], bu if isinstance(bu, (int, float)) else float("inf"))
        for v in r["verify"]:
            per_contract[f"{r['dtype']} under {v['contract']}"][v["verdict"]] += 1
        if first["verdict"] == "fail":
            failures.append({"problem": r["problem"], "fill": r["fill"], "tag": r["tag"],
                             "contract": first["contract"], "reason": first["reason"],
                             "admission": r["admission"]["cpu"]})
    s["verdicts"] = {k: dict(v) for k, v in sorted(table.items())}
    s["max_bound_usage_of_passes"] = dict(sorted(usage.items()))
    s["verdicts_per_contract"] = {k: dict(v) for k, v in sorted(per_contract.items())}
    s["failures"] = failures
    s["verify_errors"] = [{"problem": r["problem"], "fill": r["fill"], "error": r["verify_error"]}
                          for r in records if "verify_error" in r]
    expressed = collections.defaultdict(collections.Counter)
    for r in records:
        if "expressed" in r and "verify" in r:
            expressed[r["expressed"]][r["verify"][0]["verdict"]] += 1
    if expressed:
        s["verdicts_by_expression"] = {k: dict(v) for k, v in sorted(expressed.items())}
    return s


def markdown(adapter, s):
    out = [f"## {s['framework']} {s['version']}", "",
           f"{s['cases']} cases in {s['seconds']} s; {s['refusals']} refused by "
           f"{s['framework']}.", "", "Refusals against convcheck's TF-admission report "
           "(CPU):", "", "| outcome | cases |", "|---|---|"]
    out += [f"| {k} | {v} |" for k, v in sorted(s["admission"].items())]
    out += ["", f"Disagreements: {len(s['admission_disagreements'])}"]
    for d in s["admission_disagreements"][:20]:
        out.append(f"- `{d['problem']}` ({d['fill']}): {s['framework']} {d['framework']}"
                   f"{': ' + d['error'] if d['error'] else ''}; convcheck: "
                   f"{d['admission'].get('kind')} {d['admission'].get('message', '')}")
    if s["refusal_reasons"]:
        out += ["", "Refusal reasons (op dtype format: first line of the error):", ""]
        out += [f"- {n} x {k}" for k, n in list(s["refusal_reasons"].items())[:20]]
    out += ["", "Verdicts of `convcheck verify` (first contract) and the largest bound usage "
            "among passes:", "", "| op dtype | verdicts | max bound usage |", "|---|---|---|"]
    for k, v in s["verdicts"].items():
        u = s["max_bound_usage_of_passes"].get(k)
        out.append(f"| {k} | {', '.join(f'{n} {c}' for c, n in sorted(v.items()))} | "
                   f"{'' if u is None else f'{u:.3g}'} |")
    out += ["", "Per contract:", "", "| dtype under contract | verdicts |", "|---|---|"]
    for k, v in s["verdicts_per_contract"].items():
        out.append(f"| {k} | {', '.join(f'{n} {c}' for c, n in sorted(v.items()))} |")
    if "verdicts_by_expression" in s:
        out += ["", "Verdicts by how the problem was expressed:", ""]
        out += [f"- {k}: {', '.join(f'{n} {c}' for c, n in sorted(v.items()))}"
                for k, v in s["verdicts_by_expression"].items()]
    out += ["", f"Failures: {len(s['failures'])}"]
    for f in s["failures"][:25]:
        out.append(f"- `{f['problem']}` ({f['fill']}, {f['contract']}; admission "
                   f"{f['admission'].get('kind')}): {f['reason'][:200]}")
    if s["verify_errors"]:
        out += ["", f"verify errors: {len(s['verify_errors'])}"]
        out += [f"- `{e['problem']}` ({e['fill']}): {e['error'][:300]}"
                for e in s["verify_errors"][:10]]
    return "\n".join(out) + "\n"
