#!/bin/sh
# report-html.sh: the HTML report of a large run: how long `vramtrace
# report --html` takes (the leak analysis, the aggregation and the
# writing) and how much memory, how large the page is, and how long Chromium
# takes to draw it.
#
# usage: sh bench/report-html.sh [MILLIONS [DB [LOADS]]]
#   (default 10 million allocations in a temporary database, made by
#   bench/leaks; an existing DB is reused; LOADS page loads, default 5)
#
# Run from the build directory after `make bench check`.  Prints one line
# per figure; the draw time is the median of the loads (the page's own
# data-draw-ms: from navigation to the end of its script).
set -eu
n=${1:-10}
db=${2:-}
loads=${3:-5}
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /tmp/vramtrace-bench-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$db" ]; then
	db=$tmp/run.db
fi
if [ ! -e "$db" ]; then
	./bench/leaks "$n" "$db" 100 >/dev/null
fi
/usr/bin/time -f '%e %U %S %M' -o "$tmp/time" \
    ./vramtrace report "$db" --html "$tmp/page.html" 2>"$tmp/err"
read -r wall user sys rss <"$tmp/time"
echo "allocations        $(./vramtrace sql "$db" 'select count(*) from allocations' --format csv | tail -n 1)"
echo "report --html      ${wall} s wall, ${user} s user, ${sys} s system"
echo "peak memory        $((rss / 1024)) MiB"
echo "page               $(wc -c <"$tmp/page.html") bytes"
if ! command -v chromium >/dev/null 2>&1; then
	echo "draw               n/a (no chromium)"
	exit 0
fi
i=0
while [ "$i" -lt "$loads" ]; do
	python3 "$top/tests/browser.py" "$tmp/page.html" >>"$tmp/loads.json"
	i=$((i + 1))
done
python3 - "$tmp/loads.json" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
for k, what in (("draw_ms", "draw (navigation to drawn)"),
                ("script_ms", "script (parse data, draw)")):
    v = sorted(r[k] for r in runs)
    print("%-18s %.0f ms median of %d (%.0f to %.0f)" % (
        what.split(" ")[0], statistics.median(v), len(v), v[0], v[-1]),
        what[what.index(" "):])
PY
