#!/bin/sh
# run.sh [SECONDS]: build every libFuzzer target in fuzz/ with clang
# (AddressSanitizer, UndefinedBehaviorSanitizer) and run each for SECONDS
# (default 60): fuzz-pickle seeded with the test pickles and the bundled
# snapshots, fuzz-event with spool files made from tests/data/spool.
# Exits non-zero on any finding.  Needs a configured and built tree
# (config.h, tests/mkspool) and clang with libFuzzer.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-60}
work=$(mktemp -d /tmp/vramtrace-fuzz-XXXXXX)
trap 'rm -rf "$work"' EXIT
cc="clang -std=c11 -g -O1 -DHAVE_CONFIG_H -fsanitize=fuzzer,address,undefined
	-fno-sanitize-recover=all -I$top -I$top/src -I$top/lib -I$top/pickle"
$cc "$top/fuzz/fuzz-pickle.c" "$top"/pickle/pickle*.c \
	-o "$work/fuzz-pickle" || exit 1
$cc "$top/fuzz/fuzz-event.c" "$top/lib/event.c" "$top/lib/lib.c" \
	-o "$work/fuzz-event" || exit 1
mkdir -p "$work/pickle/seeds" "$work/pickle/corpus" "$work/event/seeds" \
	"$work/event/corpus"
cp "$top"/tests/data/pickle/good/* "$work/pickle/seeds/"
for f in "$top"/examples/*.pickle; do
	head -c 65536 "$f" >"$work/pickle/seeds/$(basename "$f")"
done
for f in "$top"/tests/data/spool/*.txt; do
	"$top/tests/mkspool" "$f" "$work/event/seeds/$(basename "$f" .txt).vtr"
done
status=0
for t in pickle event; do
	(cd "$work/$t" && "$work/fuzz-$t" -max_total_time="$secs" \
	    -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
	    -print_final_stats=1 corpus seeds >"$work/$t.log" 2>&1)
	rc=$?
	echo "fuzz-$t: exit $rc, $(grep -E 'number_of_executed_units' \
	    "$work/$t.log" | tr -s ' ')"
	if [ $rc -ne 0 ]; then
		tail -n 40 "$work/$t.log"
		status=1
	fi
done
exit $status
