#!/usr/bin/env bash
# report.html in a real browser (issue 6): headless Chromium (Debian's `chromium`, installed by
# scripts/install-deps.sh) loads the page of a small run (one backend failing: a mutant standing in)
# from disk with the network off, and the dumped DOM must show every section rendered by the
# page's own script (<body data-rendered="ok">, data-sections listing all seven) and no script
# error (no data-errors). A copy with a broken script must show the error, so the check is not
# vacuous. A screenshot is left in $CONVCHECK_SCREENSHOT when that is set.
# Without chromium the test says why and exits 77, which CTest reports as skipped.
#   test_report_html.sh /path/to/convcheck
set -u
CC=${1:?usage: test_report_html.sh CONVCHECK}
BROWSER=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then BROWSER=$(command -v "$b"); break; fi
done
if [ -z "$BROWSER" ]; then
  echo "SKIPPED: no headless browser: chromium is not installed (bash scripts/install-deps.sh installs it)"
  exit 77
fi
. "$(dirname "$0")/../lib.sh"  # $T, ok, bad

cat >"$T/suite.txt" <<'EOF'
conv2d:input=1x5x5x2,filter=2x2x2x2,padding=SAME
conv2d_backprop_input:input=1x6x6x3,filter=3x3x3x2,stride=2x2,padding=SAME,dtype=f16
conv2d_backprop_filter:input=0x4x4x2,filter=2x2x2x2
depthwise_conv2d_backprop_filter:input=1x6x6x2,filter=3x3x2x2,format=NCHW,dtype=bf16
conv2d_transpose:input=1x6x6x2,filter=3x3x2x2,stride=2x2,padding=1:0:1:0,dtype=i32
EOF
"$CC" run --suite "$T/suite.txt" --backends reference,optimized=mutant:same_pad_before \
  --out "$T/run" >"$T/run.out" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && [ -s "$T/run/report.html" ]; then ok; else
  bad "run: exit $rc (want 1: the mutant fails), report.html missing?"
  tail -5 "$T/run.out"
fi

# Headless Chromium: no sandbox as root, its own profile, no network, no GPU.
browse() {  # browse MODE FILE [ARG]: MODE dump-dom or screenshot
  local mode=$1 page=$2
  shift 2
  timeout 90 "$BROWSER" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --user-data-dir="$T/profile" --no-first-run --disable-extensions \
    --proxy-server='127.0.0.1:9' --proxy-bypass-list='<-loopback>' \
    --window-size=1400,2400 --hide-scrollbars --"$mode" "$@" "file://$page" 2>>"$T/browser.err"
}
browse dump-dom "$T/run/report.html" >"$T/dom.html"
body=$(grep -o '<body[^>]*>' "$T/dom.html" | head -1)
want="summary,verdicts,bound-usage,failures,coverage,performance,environment"
if [[ "$body" == *'data-rendered="ok"'* ]] && [[ "$body" == *"data-sections=\"$want\""* ]] &&
  [[ "$body" != *data-errors* ]]; then ok; else
  bad "report.html did not render cleanly: $body"
  tail -5 "$T/browser.err" | sed 's/^/    /'
fi
svgs=$(grep -o '<svg class="histogram"' "$T/dom.html" | wc -l)
[ "$svgs" -eq 2 ] && ok || bad "want one bound-usage histogram per backend (2), found $svgs"
grep -q 'stood in for by mutant:same_pad_before' "$T/dom.html" && ok || bad "the stand-in is not named"
grep -q "convcheck check 'conv2d:input=1x5x5x2" "$T/dom.html" && ok ||
  bad "the failures section has no repro line"
grep -q 'No benchmark in this run' "$T/dom.html" && ok || bad "performance section says nothing of peaks"
if grep -Eq '(src|href)="https?:' "$T/run/report.html"; then
  bad "report.html refers to the network"
else ok; fi

# The check sees script errors: a copy with a failing script must not render "ok".
sed 's|<main>|<main><script>no_such_function_in_convcheck();</script>|' "$T/run/report.html" >"$T/broken.html"
browse dump-dom "$T/broken.html" >"$T/broken-dom.html"
body=$(grep -o '<body[^>]*>' "$T/broken-dom.html" | head -1)
if [[ "$body" == *data-errors=*no_such_function_in_convcheck* ]] && [[ "$body" != *data-rendered* ]]; then
  ok
else bad "a script error went unnoticed: $body"; fi

shot=${CONVCHECK_SCREENSHOT:-$T/report.png}
browse screenshot "$T/run/report.html" "--screenshot=$shot" >/dev/null
if [ -s "$shot" ] && [ "$(head -c 8 "$shot" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ]; then
  ok
else bad "no PNG screenshot"; fi

echo "report.html in $(basename "$BROWSER"): $pass passed, $fail failed"
[ "$fail" -eq 0 ]
