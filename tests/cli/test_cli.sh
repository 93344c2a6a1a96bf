#!/usr/bin/env bash
# The command line as a user meets it: exit codes and messages for good and bad input (design §8).
# Every malformed descriptor, .npy file and flag must give exit code 2 and a message naming the
# fault, never a crash (this script also runs under the ASan+UBSan build).
#   test_cli.sh /path/to/convcheck
set -u
CC=${1:?usage: test_cli.sh CONVCHECK}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0

# expect CODE NEEDLE -- ARGS...: runs convcheck ARGS, wants exit CODE and NEEDLE in stdout+stderr.
expect() {
  local code=$1 needle=$2
  shift 3
  local out rc
  out=$("$CC" "$@" 2>&1)
  rc=$?
  if [ "$rc" -eq "$code" ] && [[ "$out" == *"$needle"* ]]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: convcheck $*"
    echo "  want exit $code with '$needle'; got exit $rc:"
    echo "$out" | sed 's/^/    /' | head -5
  fi
}

BI='conv2d_backprop_input:input=1x2x3x1,filter=2x2x1x1'
"$CC" operands "$BI" --fill ramp --dir "$T" >/dev/null || { echo "FAIL: operands"; exit 1; }

# --- good input ---------------------------------------------------------------------------------
expect 0 "reference" -- list
expect 0 "wrote $T/dx.npy" -- compute "$BI" --backend reference --filter "$T/filter.npy" \
  --out-backprop "$T/out_backprop.npy" --output "$T/dx.npy"
# TF's Conv2DBackpropInput 2x2Depth1Valid (spec B §5.1): [1, 4, 4, 3, 10, 8].
values=$("$CC" inspect "$T/dx.npy" --all | tail -n +3 | tr -s ' \n' ' ')
if [ "$values" = " 1 4 4 3 10 8 " ]; then pass=$((pass + 1)); else
  fail=$((fail + 1)); echo "FAIL: dx values '$values', want 1 4 4 3 10 8"; fi

# --- malformed descriptors ----------------------------------------------------------------------
run() { expect 2 "$1" -- compute "$2" --backend reference --filter "$T/filter.npy" \
  --out-backprop "$T/out_backprop.npy" --output "$T/x.npy"; }
run "no ':' found" 'conv2d_backprop_input'
run "unknown op 'conv2d_backprop'" 'conv2d_backprop:input=1x2x3x1,filter=2x2x1x1'
run "unknown key 'pad'" 'conv2d_backprop_input:input=1x2x3x1,filter=2x2x1x1,pad=SAME'
run "key 'input' given twice" 'conv2d_backprop_input:input=1x2x3x1,input=1x2x3x1,filter=2x2x1x1'
run "missing required key 'filter'" 'conv2d_backprop_input:input=1x2x3x1'
run "Row and column strides should be larger than 0, got stride = 0x1" "$BI,stride=0x1"
run "Dilated rates should be larger than 0, got dilation = 1x-2" "$BI,dilation=1x-2"
run "All elements of explicit_paddings must be nonnegative, got padding = 0:-1:0:0" "$BI,padding=0:-1:0:0"
run "dtype i32 is not allowed" 'conv2d_backprop_filter:input=1x2x3x1,filter=2x2x1x1,dtype=i32'
run "input depth must be evenly divisible by filter depth: 3 vs 2" 'conv2d_backprop_input:input=1x2x3x3,filter=2x2x2x1'
run "Computed output size would be negative: -1 [input_size: 2, effective_filter_size: 4, stride: 1]" \
  'conv2d_backprop_input:input=1x2x3x1,filter=4x1x1x1'
run "overflows 64 bits" 'conv2d_backprop_input:input=1x2x3x99999999999999999999,filter=2x2x1x1'
run "expected VALID, SAME or T:B:L:R" "$BI,padding=FULL"
run "expected NxHxWxC" 'conv2d_backprop_input:input=2x3x1,filter=2x2x1x1'
run "expected NHWC or NCHW" "$BI,format=CHWN"

# --- malformed .npy files -----------------------------------------------------------------------
npy() {  # npy NAME HEADER-DICT DATA-BYTES: a version 1.0 file with a hand-written header
  local dict=$2 len
  len=$(( ${#dict} + 1 ))
  { printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $((len % 256)))\\x$(printf %02x $((len / 256)))";
    printf '%s\n' "$dict"; head -c "$3" /dev/zero; } >"$T/$1"
}
bad() { expect 2 "$1" -- compute "$BI" --backend reference --filter "$T/$2" \
  --out-backprop "$T/out_backprop.npy" --output "$T/x.npy"; }
bad "cannot open" missing.npy
printf 'not a numpy file at all' >"$T/text.npy"; bad "magic" text.npy
npy trunc.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 1, 1), }" 12
bad "expected 16 bytes of data" trunc.npy
npy f64.npy "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2, 1, 1), }" 32
bad "dtype f64 ('<f8'), expected f32 ('<f4')" f64.npy
npy shape.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 1, 1), }" 24
bad "has shape [2, 3, 1, 1], expected [2, 2, 1, 1] (HWIO)" shape.npy
# What np.save writes for a big-endian or a transposed (Fortran-order) array is read by value
# (issue 17): the ramp filter [[1, 2], [3, 4]] written four ways gives TF's dx every time.
npyd() {  # npyd NAME HEADER-DICT PRINTF-DATA: like npy, with the data given as printf escapes
  local dict=$2 len
  len=$(( ${#dict} + 1 ))
  { printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $((len % 256)))\\x$(printf %02x $((len / 256)))";
    printf '%s\n' "$dict"; printf "$3"; } >"$T/$1"
}
one='\x00\x00\x80\x3f' two='\x00\x00\x00\x40' three='\x00\x00\x40\x40' four='\x00\x00\x80\x40'
One='\x3f\x80\x00\x00' Two='\x40\x00\x00\x00' Three='\x40\x40\x00\x00' Four='\x40\x80\x00\x00'
npyd le_c.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 1, 1), }" "$one$two$three$four"
npyd le_f.npy "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2, 1, 1), }" "$one$three$two$four"
npyd be_c.npy "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 2, 1, 1), }" "$One$Two$Three$Four"
npyd be_f.npy "{'descr': '>f4', 'fortran_order': True, 'shape': (2, 2, 1, 1), }" "$One$Three$Two$Four"
for f in le_c le_f be_c be_f; do
  expect 0 "wrote $T/dx_$f.npy" -- compute "$BI" --backend reference --filter "$T/$f.npy" \
    --out-backprop "$T/out_backprop.npy" --output "$T/dx_$f.npy"
  values=$("$CC" inspect "$T/dx_$f.npy" --all | tail -n +3 | tr -s ' \n' ' ')
  if [ "$values" = " 1 4 4 3 10 8 " ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL: dx from $f.npy: '$values', want 1 4 4 3 10 8"; fi
  # Written back C-order little-endian, whatever was read.
  if head -c 128 "$T/dx_$f.npy" | grep -aq "'descr': '<f4', 'fortran_order': False"; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: dx_$f.npy not written '<f4' C order"; fi
done
# inspect prints every NaN as numpy does, "nan" (a NaN with its sign bit set printed "-nan"), and
# its stats skip NaNs as numpy's nansum, nanmin and nanmax (min and max of none: nan).
npyd nans.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }" \
  '\x00\x00\xc0\xff\x00\x00\xc0\x7f\x00\x00\x80\xff\x00\x00\xc0\x3f'
out=$("$CC" inspect "$T/nans.npy" --all)
values=$(echo "$out" | tail -n +3 | tr -s ' \n' ' ')
if [ "$values" = " nan nan -inf 1.5 " ] &&
  echo "$out" | grep -q "sum -inf, min -inf, max 1.5, nonzero 2, NaN 2"; then
  pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: inspect of NaNs: '$out'"; fi
npyd allnan.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }" \
  '\x00\x00\xc0\xff\x00\x00\xc0\xff'
if "$CC" inspect "$T/allnan.npy" | grep -q "sum 0, min nan, max nan, nonzero 0, NaN 2"; then
  pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: inspect of NaNs only"; fi
npy native.npy "{'descr': '=f4', 'fortran_order': False, 'shape': (2, 2, 1, 1), }" 16
bad "byte order '='" native.npy
npy dict.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 1, 1)" 16
bad "header" dict.npy
npy trail.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 1, 1), }" 20
bad "trailing" trail.npy
printf '\x93NUMPY\x01\x00\xff\x00{' >"$T/hdr.npy"; bad "truncated" hdr.npy
npy huge.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }" 0
bad "huge.npy" huge.npy
# out_backprop whose spatial size does not match: TF's message with every number.
"$CC" operands 'conv2d_backprop_input:input=1x2x4x1,filter=2x2x1x1' --dir "$T/w" >/dev/null
expect 2 "Size of out_backprop doesn't match computed: actual = 3, computed = 2 spatial_dim: 2 input: 3 filter: 2 output: 3 stride: 1 dilation: 1" \
  -- compute "$BI" --backend reference --filter "$T/filter.npy" --out-backprop "$T/w/out_backprop.npy" --output "$T/x.npy"

# --- command-line usage -------------------------------------------------------------------------
expect 2 "missing --output" -- compute "$BI" --backend reference --filter "$T/filter.npy" \
  --out-backprop "$T/out_backprop.npy"
expect 2 "reads only filter and out_backprop, but --input was given" -- compute "$BI" --backend reference \
  --input "$T/filter.npy" --filter "$T/filter.npy" --out-backprop "$T/out_backprop.npy" --output "$T/x.npy"
expect 2 "missing --out-backprop" -- compute "$BI" --backend reference --filter "$T/filter.npy" --output "$T/x.npy"
expect 2 "unknown backend 'fast'" -- compute "$BI" --backend fast --filter "$T/filter.npy" \
  --out-backprop "$T/out_backprop.npy" --output "$T/x.npy"
expect 2 "unknown command 'frobnicate'" -- frobnicate
expect 2 "unrecognised option '--bogus'" -- compute "$BI" --bogus
expect 2 "$T/nodir/x.npy" -- compute "$BI" --backend reference --filter "$T/filter.npy" \
  --out-backprop "$T/out_backprop.npy" --output "$T/nodir/x.npy"
expect 2 "usage: convcheck" --

# --- check and fuzz ------------------------------------------------------------------------------
expect 0 "reference: pass" -- check "$BI" --backends reference --fill real
expect 0 '"verdict":"pass"' -- check "$BI" --backends reference --json
expect 1 "repro: convcheck check 'conv2d_backprop_input:input=1x4x4x1,filter=2x1x1x1,stride=1x1" \
  -- check 'conv2d_backprop_input:input=1x4x4x1,filter=2x1x1x1,padding=SAME' --backends mutant:same_pad_before
expect 2 "--fill bogus: expected exact, real, cancel, special, ramp, scaled or tiny" -- check "$BI" --fill bogus
expect 2 "unknown mutant 'typo'" -- check "$BI" --backends mutant:typo
expect 2 "unknown backend 'nope'" -- fuzz --backends nope --cases 1
expect 2 "give --cases or --time, not both" -- fuzz --cases 3 --time 1
expect 2 "--cases must be positive, got 0" -- fuzz --cases 0
expect 0 "fuzz: 5 cases, 0 failing backends" -- fuzz --backends reference --cases 5 --seed 3
expect 1 "minimal (" -- fuzz --backends mutant:oob_write --cases 20 --seed 1 --out "$T/fz"
if grep -q '"check":"out_of_bounds"' "$T/fz/failures.jsonl"; then pass=$((pass + 1)); else
  fail=$((fail + 1)); echo "FAIL: fuzz --out wrote no failures.jsonl record"; fi

# --- bench ----------------------------------------------------------------------------------------
printf '# tiny\n%s --tag tiny\n' "$BI" >"$T/tiny.txt"
expect 0 '"median_ms":' -- bench --suite "$T/tiny.txt" --backends reference,reference --reps 3 --warmup 1 --json
expect 0 "geometric mean throughput reference / reference" -- bench --suite "$T/tiny.txt" \
  --backends reference,reference --reps 2 --threads 1
json=$("$CC" bench --suite "$T/tiny.txt" --backends reference --reps 1 --warmup 0 --json 2>&1)
for key in problem backend median_ms min_ms max_ms gflops pct_peak ratio; do
  if [[ "$json" == *"\"$key\":"* ]]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL: bench --json lacks \"$key\": $json"; fi
done
expect 2 "unknown suite 'nope'" -- bench --suite nope --backends reference
expect 2 "missing --backends" -- bench --suite "$T/tiny.txt"
expect 2 "--threads 0: expected a thread count from 1 to" -- bench --suite "$T/tiny.txt" --backends reference --threads 0
# Several thread counts, interleaved in one bench: a record per (count, backend), each with its
# paired ratio; the later count's records have their speedup over the first.
"$CC" bench --suite "$T/tiny.txt" --backends reference,reference --reps 3 --warmup 0 --threads 1,2 \
  --json >"$T/threads.jsonl" 2>&1
if python3 - "$T/threads.jsonl" <<'PY'; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: bench --threads 1,2 records"; cat "$T/threads.jsonl"; fi
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert [(r["threads"], r["backend"]) for r in recs] == [(1, "reference"), (1, "reference"),
                                                        (2, "reference"), (2, "reference")], recs
for r in recs:
    assert r["ran"] and r["paired_ratio"] > 0 and r["reps"] == 3, r
    if r["threads"] == 1:
        assert r["speedup"] is None and r["speedup_base_threads"] == 0, r
    else:
        assert r["speedup"] > 0 and r["speedup_base_threads"] == 1, r
    assert r["peak_gflops"] > 0, r
    # The triad at the round's footprint, measured once per thread count (both records share
    # it), and the record's byte rate as a % of it.
    assert r["footprint_bandwidth_gbs"] > 0 and r["bytes"] > 0, r
    rate = r["bytes"] / r["median_ms"] / 1e6
    assert abs(r["pct_footprint_bandwidth"] - 100 * rate / r["footprint_bandwidth_gbs"]) <= \
        1e-4 * r["pct_footprint_bandwidth"], r
for a, b in ((recs[0], recs[1]), (recs[2], recs[3])):
    assert a["footprint_bandwidth_gbs"] == b["footprint_bandwidth_gbs"], (a, b)
# The triad's size is the round's footprint: the compulsory bytes and the second backend's own
# result (BI's input_sizes 1x2x3x1, f32), which the round writes between two runs of the first.
for r in recs:
    assert r["footprint_bytes"] == r["bytes"] + 1 * 2 * 3 * 1 * 4, r
PY
# Every timed run is in the record (times_ms, round by round), and the paired ratio, the speedup
# and their intervals follow from them: the interval is the k-th smallest and k-th largest
# per-round ratio, k the largest whose coverage sum_{k <= j <= n-k} C(n, j) / 2^n is at least 95 %
# (worked out here from that sum, not from bench's running tail).
"$CC" bench --suite "$T/tiny.txt" --backends reference,reference --reps 9 --warmup 0 --threads 1,2 \
  --json >"$T/rounds.jsonl" 2>&1
if python3 - "$T/rounds.jsonl" <<'PY'; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: bench intervals from times_ms"; cat "$T/rounds.jsonl"; fi
import json, math, statistics, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert len(recs) == 4, recs
def check(value, interval, ratios):
    n = len(ratios)
    assert n == 9, ratios
    cover = lambda k: sum(math.comb(n, j) for j in range(k, n - k + 1)) / 2 ** n
    k = max([k for k in range(1, n // 2 + 1) if cover(k) >= 0.95] or [1])
    assert k == 2, k  # 9 rounds: the 2nd of each end, 96.1 %
    q = sorted(ratios)
    # the figures have 6 significant digits, times_ms all of them
    assert math.isclose(value, statistics.median(q), rel_tol=1e-5), (value, q)
    assert math.isclose(interval["lo"], q[k - 1], rel_tol=1e-5), (interval, q)
    assert math.isclose(interval["hi"], q[n - k], rel_tol=1e-5), (interval, q)
    assert math.isclose(interval["level"], cover(k), rel_tol=1e-5), (interval, cover(k))
for c in (0, 2):  # each thread count: records c (own) and c + 1 (the comparator)
    own, comp = recs[c], recs[c + 1]
    assert len(own["times_ms"]) == own["reps"] == 9, own
    for r in (own, comp):
        check(r["paired_ratio"], r["paired_ratio_interval"],
              [a / b for a, b in zip(comp["times_ms"], r["times_ms"])])
for i in (0, 1):  # the speedup of each backend from 1 to 2 threads
    one, two = recs[i], recs[i + 2]
    assert one["speedup"] is None and one["speedup_interval"] is None, one
    check(two["speedup"], two["speedup_interval"],
          [a / b for a, b in zip(one["times_ms"], two["times_ms"])])
PY
expect 0 "96.1 % interval" -- bench --suite "$T/tiny.txt" --backends reference,reference --reps 9 --warmup 0
expect 0 "over 1t" -- bench --suite "$T/tiny.txt" --backends reference,reference --reps 2 --threads 1,2
# One backend (a speedup, no ratio), and a comparator that cannot run the problem (oneDNN has no
# f64 convolution): no ratio, paired or not, and the reason on its records at both counts.
printf '%s,dtype=f64 --tag tiny64\n' "$BI" >"$T/tiny64.txt"
"$CC" bench --suite "$T/tiny.txt" --backends reference --reps 2 --warmup 0 --threads 1,2 --json \
  >"$T/one.jsonl" 2>&1
"$CC" bench --suite "$T/tiny64.txt" --backends reference,onednn --reps 2 --warmup 0 --threads 1,2 \
  --json >"$T/none.jsonl" 2>&1
"$CC" bench --suite "$T/tiny64.txt" --backends onednn,reference,reference --reps 1 --warmup 0 \
  --json >"$T/first.jsonl" 2>&1
if python3 - "$T/one.jsonl" "$T/none.jsonl" "$T/first.jsonl" <<'PY'; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: bench --threads 1,2 without a comparator"; cat "$T/one.jsonl" "$T/none.jsonl" "$T/first.jsonl"; fi
import json, sys
one = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert [r["threads"] for r in one] == [1, 2], one
assert all(r["ratio"] is None and r["paired_ratio"] is None for r in one), one
assert all(r["paired_ratio_interval"] is None for r in one), one
assert one[1]["speedup_interval"]["lo"] <= one[1]["speedup"] <= one[1]["speedup_interval"]["hi"], one
assert one[1]["speedup"] > 0 and one[1]["speedup_base_threads"] == 1, one
none = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
assert [(r["threads"], r["backend"], r["ran"]) for r in none] == [
    (1, "reference", True), (1, "onednn", False), (2, "reference", True), (2, "onednn", False)], none
assert all(r["ratio"] is None and r["paired_ratio"] is None for r in none), none
assert none[1]["reason"] and none[3]["reason"] == none[1]["reason"], none
assert none[2]["speedup"] > 0, none
# The round's footprint counts only backends that run: one backend, or one beside a comparator
# that cannot run, touches the compulsory bytes alone; a backend that cannot run has none; with
# it first, the two that run add the second one's result (1x2x3x1 in f64).
assert all(r["footprint_bytes"] == r["bytes"] > 0 for r in one), one
assert none[0]["footprint_bytes"] == none[0]["bytes"] > 0, none
assert none[1]["footprint_bytes"] is None and none[1]["footprint_bandwidth_gbs"] is None, none
first = [json.loads(l) for l in open(sys.argv[3]) if l.startswith("{")]
assert [(r["backend"], r["ran"]) for r in first] == [
    ("onednn", False), ("reference", True), ("reference", True)], first
assert first[0]["footprint_bytes"] is None, first
assert all(r["footprint_bytes"] == r["bytes"] + 1 * 2 * 3 * 1 * 8 for r in first[1:]), first
PY
expect 2 "--threads 1,x: expected a thread count or a list of them (1,2), got 'x'" -- bench --suite "$T/tiny.txt" --backends reference --threads 1,x
expect 2 "--threads 1,: expected a thread count or a list of them (1,2), got ''" -- bench --suite "$T/tiny.txt" --backends reference --threads 1,
expect 2 "--threads 2,2: 2 is listed twice" -- bench --suite "$T/tiny.txt" --backends reference --threads 2,2
expect 2 "--threads 1,0: expected a thread count from 1 to" -- bench --suite "$T/tiny.txt" --backends reference --threads 1,0

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
