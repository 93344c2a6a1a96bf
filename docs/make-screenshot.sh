#!/usr/bin/env bash
# Regenerates the README's quick-start figures from a real failing run: the console output of
#   convcheck run --suite smoke --backends reference,optimized=mutant:drop_last_row
# (docs/quickstart-run.txt; a mutant stands in for a kernel that drops its last output row) and
# report.html with its first failure open (docs/report-failure.png, headless Chromium).
#   bash docs/make-screenshot.sh [path/to/convcheck]     (default build/convcheck)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
CC=$(realpath "${1:-$here/../build/convcheck}")
BROWSER=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$BROWSER" ] || { echo "make-screenshot.sh: no chromium (scripts/install-deps.sh installs it)" >&2; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# Exit 1 is the point: the mutant fails. Anything else is a broken build or run.
rc=0
(cd "$T" && "$CC" run --suite smoke --backends reference,optimized=mutant:drop_last_row \
  --out "$T/smoke" >console.txt 2>&1) || rc=$?
[ "$rc" -eq 1 ] || { echo "make-screenshot.sh: run exited $rc, want 1" >&2; cat "$T/console.txt" >&2; exit 1; }
# Paths as the README's command prints them (--out /tmp/smoke, the suite relative to the checkout);
# the timings are this run's.
sed "s|$T/|/tmp/|g; s|$(realpath "$here/..")/||g" "$T/console.txt" >"$here/quickstart-run.txt"

timeout 120 "$BROWSER" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
  --user-data-dir="$T/profile" --no-first-run --disable-extensions \
  --proxy-server='127.0.0.1:9' --proxy-bypass-list='<-loopback>' \
  --window-size=1400,2560 --hide-scrollbars --screenshot="$here/report-failure.png" \
  "file://$T/smoke/report.html#expand=0" 2>/dev/null >/dev/null
[ -s "$here/report-failure.png" ] || { echo "make-screenshot.sh: no screenshot" >&2; exit 1; }
echo "wrote $here/quickstart-run.txt and $here/report-failure.png"
