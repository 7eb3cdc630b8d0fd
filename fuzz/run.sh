#!/bin/sh
# run.sh [SECONDS]: build every libFuzzer target in fuzz/ with clang
# (AddressSanitizer, UndefinedBehaviorSanitizer) and run each for SECONDS
# (default 60): fuzz-pickle seeded with the test pickles (good and
# hostile: each a past finding must stay fixed) and the bundled snapshots,
# fuzz-import (pickle bytes to a database and a leak verdict, through the
# whole core, built from the sources `make print-vtcore-sources` lists
# and the libraries `make print-vtcore-libs` does) with the valid ones,
# the invalid snapshots (tests/data/pickle/invalid) and a packed one,
# fuzz-unwrap (a compressed file or a zip archive to the pickle in it)
# with the packed snapshots and their hostile corpus (tests/data/packed),
# fuzz-event with spool files made from tests/data/spool.  Exits non-zero on any finding.  Needs
# a configured and built tree (config.h, tests/mkspool, the generated
# report page) and clang with libFuzzer.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-60}
work=$(mktemp -d /tmp/vramtrace-fuzz-XXXXXX)
trap 'rm -rf "$work"' EXIT
cc="clang -std=c11 -g -O1 -DHAVE_CONFIG_H -fsanitize=fuzzer,address,undefined
	-fno-sanitize-recover=all -I$top -I$top/src -I$top/lib -I$top/pickle"
libs=$(make -s -C "$top" print-vtcore-libs) || exit 1
core=$(make -s -C "$top" print-vtcore-sources | grep "\.c$" |
	sed "s|^|$top/|") || exit 1
$cc "$top/fuzz/fuzz-pickle.c" "$top"/pickle/pickle*.c \
	-o "$work/fuzz-pickle" || exit 1
# shellcheck disable=SC2086
$cc "$top/fuzz/fuzz-import.c" "$top/fuzz/fuzz-common.c" $core $libs \
	-lm -lpthread \
	-o "$work/fuzz-import" || exit 1
# shellcheck disable=SC2086
$cc "$top/fuzz/fuzz-unwrap.c" "$top/fuzz/fuzz-common.c" $core $libs \
	-lm -lpthread \
	-o "$work/fuzz-unwrap" || exit 1
$cc "$top/fuzz/fuzz-event.c" "$top/lib/event.c" "$top/lib/lib.c" \
	-o "$work/fuzz-event" || exit 1
for t in pickle import unwrap event; do
	mkdir -p "$work/$t/seeds" "$work/$t/corpus"
done
cp "$top"/tests/data/pickle/good/* "$top"/tests/data/pickle/bad/*.pickle \
	"$work/pickle/seeds/"
for f in "$top"/examples/*.pickle; do
	head -c 65536 "$f" >"$work/pickle/seeds/$(basename "$f")"
done
cp "$top"/tests/data/pickle/good/snapshot-* \
	"$top"/tests/data/pickle/good/shared-* "$top"/examples/*.pickle \
	"$top"/tests/data/pickle/invalid/*.pickle \
	"$top"/tests/data/packed/real.pickle.xz "$work/import/seeds/"
cp "$top"/tests/data/packed/*.pt "$top"/tests/data/packed/*.xz \
	"$top"/tests/data/packed/bad/* "$work/unwrap/seeds/"
# bomb.xz unpacks 64 MiB at every run before it is refused: as a seed it
# would take most of the fuzzer's minute (t-unwrap.sh reads it).
rm -f "$work/unwrap/seeds/EXPECT" "$work/unwrap/seeds/bomb.xz"
gzip -c "$top"/tests/data/pickle/good/snapshot-p4.pickle \
	>"$work/unwrap/seeds/snapshot.gz"
for f in "$top"/tests/data/spool/*.txt; do
	"$top/tests/mkspool" "$f" "$work/event/seeds/$(basename "$f" .txt).vtr"
done
status=0
for t in pickle import unwrap event; do
	len=65536
	[ $t = import ] && len=1048576
	(cd "$work/$t" && "$work/fuzz-$t" -max_total_time="$secs" \
	    -max_len=$len -rss_limit_mb=2048 -timeout=30 \
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
