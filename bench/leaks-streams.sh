#!/bin/sh
# leaks-streams.sh: how vramtrace leaks, report --html and export scale with
# the number of streams (a run of one allocation per stream per step, three
# steps, each stream created by a STREAM_CREATE).  Before the stream
# lookups were hashed and sorted leaks was quadratic: 200,000 streams took
# 163 s; the devices' memory summed per stream kept 100,000 at 4.1 s, and
# report --html and export found each series' or allocation's stream by a
# scan of them all, until they too went through a hash.
#
# usage: bench/leaks-streams.sh [STREAMS...]   (default 16000 32000 64000;
# a run has at most 65535 series, QUERY_EVENTS_MAX_SERIES)
# Run from the build directory (it uses ./vramtrace and tests/mkspool).
set -e
V=${VRAMTRACE:-./vramtrace}
M=${MKSPOOL:-./tests/mkspool}
T=$(mktemp -d /tmp/bench-leaks-streams-XXXXXX)
trap 'rm -rf "$T"' EXIT
[ $# -gt 0 ] || set -- 16000 32000 64000
printf '%10s %12s %12s %16s %10s\n' streams "leaks s" "max RSS KB" \
    "report --html s" "export s"
for n in "$@"; do
	python3 - "$n" >"$T/s.txt" <<'PY'
import sys
n = int(sys.argv[1])
w = sys.stdout.write
w("process-start 1 pid=1\n")
t = 2
for step in range(3):
    for i in range(n):
        if step == 0:
            w("stream-create %d stream=%d device=0 flags=1\n" % (t, i + 1))
            t += 1
        w("alloc %d address=%d bytes=512 stream=%d\n"
          % (t, 4096 * (step * n + i + 1), i + 1))
        t += 1
    w("step-end %d\n" % t)
    t += 1
PY
	"$M" "$T/s.txt" "$T/s.vtr"
	rm -f "$T/s.db"
	"$V" replay "$T/s.vtr" -o "$T/s.db" >/dev/null
	/usr/bin/time -f '%e %M' -o "$T/time" "$V" leaks "$T/s.db" >/dev/null
	read -r secs rss <"$T/time"
	/usr/bin/time -f '%e' -o "$T/time" "$V" report "$T/s.db" \
	    --html "$T/r.html" >/dev/null
	read -r html <"$T/time"
	/usr/bin/time -f '%e' -o "$T/time" "$V" export "$T/s.db" \
	    --perfetto "$T/e.json" >/dev/null
	read -r export <"$T/time"
	printf '%10s %12s %12s %16s %10s\n' "$n" "$secs" "$rss" "$html" \
	    "$export"
done
