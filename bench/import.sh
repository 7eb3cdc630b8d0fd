#!/bin/sh
# import.sh [SIZE]: how fast `vramtrace import` reads snapshots, and how much
# memory it takes: fixture_large.pickle (12 MB) and a generated snapshot of
# SIZE (default 1G) with the same structure (bench/gen-snapshot.py).
# Prints seconds, MB/s and peak RSS for each.  Run from a built tree.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
size=${1:-1G}
shared=${SHARED_DATA:-$top/../shared/data}
work=$(mktemp -d /tmp/vramtrace-bench-import-XXXXXX)
trap 'rm -rf "$work"' EXIT
python3 "$top/bench/gen-snapshot.py" -s "$size" "$work/big.pickle" >/dev/null
printf '%-24s %10s %9s %8s %12s %10s\n' file MB seconds MB/s "peak RSS MB" "RSS/file"
for f in "$shared/snapshots/fixture_large.pickle" "$work/big.pickle"; do
	[ -f "$f" ] || continue
	rm -f "$work/out.db"
	/usr/bin/time -f '%e %M' -o "$work/time" \
		"$top/vramtrace" import "$f" -o "$work/out.db" >/dev/null
	bytes=$(stat -c %s "$f")
	read -r secs kb <"$work/time"
	awk -v n="$(basename "$f")" -v b="$bytes" -v s="$secs" -v k="$kb" \
	    'BEGIN { printf "%-24s %10.1f %9.2f %8.1f %12.1f %10.2f\n", n,
	    b / 1e6, s, b / 1e6 / (s > 0 ? s : 0.01), k / 1024, k * 1024 / b }'
done
