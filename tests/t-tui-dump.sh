#!/bin/sh
# t-tui-dump.sh: vramtrace tui --dump prints each view as text, as the
# screen draws it (the overview's pinned line among them); usage errors.
. "${srcdir:-.}/tests/lib.sh"
. "${srcdir:-.}/tests/tui-scenario.sh"
plan 31

make_leak_db "$TMP/leak.db"; ok $? "a leaking run"
make_clean_db "$TMP/clean.db"; ok $? "a clean run"

run "$VRAMTRACE" tui --dump overview "$TMP/leak.db"
[ $rc -eq 0 ] && grep -q 'Verdict *LEAK' "$TMP/out" &&
    grep -q 'GARBAGE growing: stream 13' "$TMP/out"
ok $? "overview: the verdict and the garbage stream"
grep -q 'offload.py:88 stash' "$TMP/out"; ok $? "overview: the suspect site"
! grep -q 'Pinned' "$TMP/out"; ok $? "overview: no pinned line without pinned memory"
# Pinned host memory (lib.sh's pinned_run): a line under the verdict with
# the pinned verdict leaks gives, LEAK for a stash, CLEAN for a pool.
pinned_run pleak all && pinned_run ppool 3 || exit 99
run "$VRAMTRACE" tui --dump overview "$TMP/pleak.db"
grep -A1 '^ Verdict ' "$TMP/out" | tail -n 1 |
    grep -Eq '^ Pinned +LEAK  \+64\.0 MiB per step, 100% of steps grew \(layer host, warm-up 1\)$' &&
    grep -Eq '^ Verdict +CLEAN  \+0 B per step' "$TMP/out"
ok $? "overview: the pinned line, LEAK, under the device's CLEAN"
run "$VRAMTRACE" tui --dump overview "$TMP/ppool.db"
"$VRAMTRACE" leaks "$TMP/ppool.db" --format json >"$TMP/ppool.json"
grep -Eq '^ Pinned +CLEAN  ' "$TMP/out" &&
    jq_py "$TMP/ppool.json" 'd["pinned"]["verdict"] == "CLEAN"'
ok $? "overview: a pinned pool that fills up: CLEAN, as leaks says"
# A site without a stack: what grows was allocated with none.
sed 's/ site="stash@[^"]*"//' "$TMP/leak.txt" >"$TMP/nostack.txt"
spool nostack || exit 99
run "$VRAMTRACE" tui --dump overview "$TMP/nostack.db"
grep -Eq '^ +100\.0 MiB +5 blocks +stream 13 +\(no stack\)$' "$TMP/out" &&
    ! grep -q '(null)' "$TMP/out"
ok $? "overview: a suspect without a stack says so, never (null)"
run "$VRAMTRACE" tui --dump 2 "$TMP/leak.db"
grep -Eq '^ +0 13 .*GARBAGE growing' "$TMP/out"
ok $? "streams: stream 13 flagged GARBAGE growing"
grep -E '^ +0 7 ' "$TMP/out" | grep -q GARBAGE; [ $? -ne 0 ]
ok $? "streams: stream 7 not flagged"
grep -q '▂▃▅▆▇█' "$TMP/out"; ok $? "streams: the sparkline climbs, from 0: 20, 40, ... 120 MiB"
# A flat 0 B stream and a flat 1.2 GiB one: one scale from 0 for both.
{
	echo 'process-start 1000 pid=1'
	for i in 1 2 3 4; do
		[ $i -eq 1 ] && echo 'alloc 1001 address=0x10000000 bytes=1288490189 stream=9 device=0 layer=block'
		echo "alloc ${i}100 address=0x1000 bytes=4096 stream=5 device=0 layer=block"
		echo "free ${i}200 address=0x1000 bytes=4096 stream=5 device=0 layer=block"
		echo "step-end ${i}500"
	done
} >"$TMP/flat.txt"
spool flat || exit 99
run "$VRAMTRACE" tui --dump streams "$TMP/flat.db"
grep -Eq '^ +0 9 +1\.2 GiB .* ████ ' "$TMP/out" &&
    grep -Eq '^ +0 5 +0 B .* ▁▁▁▁ ' "$TMP/out"
ok $? "streams: a flat 0 B stream is low, a flat 1.2 GiB one high"
run "$VRAMTRACE" tui --dump streams "$TMP/clean.db"
[ $rc -eq 0 ] && ! grep -q GARBAGE "$TMP/out"
ok $? "streams of a clean run: no flag"
run "$VRAMTRACE" tui --dump steps "$TMP/leak.db"
grep -Eq '^ +4 +84\.0 MiB +\+20\.0 MiB +█+' "$TMP/out"
ok $? "steps: live bytes, growth and a bar per step"
run "$VRAMTRACE" tui --dump blocks "$TMP/leak.db"
sed -n 4p "$TMP/out" | grep -q '20.0 MiB'
ok $? "blocks: the largest first"
grep -q '3.0 MiB .*model.py:7 weights' "$TMP/out"; ok $? "blocks: sites"
# A block inside its segment: listed once, in the analysed layer.
cat >"$TMP/seg.txt" <<'SPOOL'
process-start 1000 pid=1
alloc 1100 address=0x10000000 bytes=2097152 stream=7 device=0 layer=segment
alloc 1200 address=0x10000000 bytes=1048576 stream=7 device=0 layer=block site="fwd@model.py:3"
step-end 1500
SPOOL
spool seg || exit 99
run "$VRAMTRACE" tui --dump blocks "$TMP/seg.db"
grep -q 'layer block ' "$TMP/out" && [ "$(grep -c ' MiB ' "$TMP/out")" -eq 1 ] &&
    grep -Eq '^ +1\.0 MiB .* block .*model\.py:3 fwd' "$TMP/out"
ok $? "blocks: each block once, in the analysed layer, not again as its segment"
run "$VRAMTRACE" tui --dump offload "$TMP/leak.db"
grep -Eq '^ +1 +1 +20\.0 MiB +1 +20\.0 MiB' "$TMP/out"
ok $? "offload: per step"
run "$VRAMTRACE" tui --dump offload "$TMP/clean.db"
grep -q 'no offload events' "$TMP/out"; ok $? "offload: none"
run "$VRAMTRACE" tui --dump diff "$TMP/leak.db"
grep -q 'step 5 -> step 6' "$TMP/out" &&
    grep -q '+2 blocks +21.0 MiB appeared, -1 blocks -1.0 MiB went away' \
    "$TMP/out"
ok $? "diff: the last two steps"
# Segments of a snapshot: each row as its segment's blocks say, the
# garbage side stream's flagged, the device's totals as stats gives them.
export XDG_CACHE_HOME="$TMP/cache"
run "$VRAMTRACE" tui --dump segments "$srcdir/examples/garbage_stream.pickle"
cp "$TMP/out" "$TMP/segments.txt"
"$VRAMTRACE" sql "$srcdir/examples/garbage_stream.pickle" "select
    printf('0x%x', s.address), s.stream, s.total_size, s.allocated_size,
    sum(b.state <> 'inactive'), sum(case when b.state = 'inactive' then
    b.size else 0 end), max(case when b.state = 'inactive' then b.size
    else 0 end) from segments s join blocks b on b.segment_id = s.id group
    by s.id" --format csv >"$TMP/segments.csv"
"$PY" - "$TMP/segments.txt" "$TMP/segments.csv" <<'PY'
import csv, re, sys
def size(b):
    v, u = float(b), 0
    while v >= 1024 and u < 4:
        v, u = v / 1024, u + 1
    return "%d B" % b if u == 0 else "%.1f %s" % (v, ["B", "KiB", "MiB", "GiB", "TiB"][u])
want = {}
for r in list(csv.reader(open(sys.argv[2])))[1:]:
    a, stream, total, alloc, used, free, largest = r
    want[a] = (stream, size(int(total)), size(int(alloc)), size(int(free)),
               used, size(int(largest)))
seen = 0
for line in open(sys.argv[1]):
    m = re.match(r"^ 0 (\d+) +(0x[0-9a-f]+) +(\S+ \S+) +(\S+ \S+) +(\S+ \S+) +(\d+) +(\S+ \S+)( GARBAGE growing)?$", line.rstrip())
    if not m:
        continue
    seen += 1
    assert m.group(2) in want, line
    assert m.groups()[:1] + m.groups()[2:7] == want[m.group(2)], (line, want[m.group(2)])
    assert bool(m.group(8)) == (m.group(1) == "1031036896"), line
assert seen >= 50, seen
PY
ok $? "segments: a snapshot's, each as its blocks say, the side stream's GARBAGE growing"
grep -q '^ device 0: 55 segments, 1\.1 GiB reserved, 869\.5 MiB allocated$' "$TMP/segments.txt" &&
    grep -q '^   218\.5 MiB free in 30 blocks, the largest 20\.0 MiB, fragmentation 91%$' "$TMP/segments.txt"
ok $? "segments: the device's totals, as stats gives them"
# A recording: the driver allocations live at the end, with the blocks
# inside each; a freed segment is not listed; free bytes are not known.
cat >"$TMP/segs.txt" <<'SPOOL'
process-start 1000 pid=1
alloc 1100 address=0x10000000 bytes=2097152 stream=7 device=0 layer=segment
alloc 1110 address=0x10000000 bytes=524288 stream=7 device=0 layer=block
alloc 1120 address=0x10100000 bytes=262144 stream=7 device=0 layer=block
alloc 1130 address=0x20000000 bytes=4194304 stream=13 device=0 layer=segment
alloc 1140 address=0x20000000 bytes=1048576 stream=13 device=0 layer=block
alloc 1145 address=0x20100000 bytes=1048576 stream=13 device=0 layer=block
free 1146 address=0x20100000 bytes=1048576 stream=13 device=0 layer=block
alloc 1150 address=0x30000000 bytes=2097152 stream=7 device=0 layer=segment
free 1160 address=0x30000000 bytes=2097152 stream=7 device=0 layer=segment
alloc 1170 address=0x40000000 bytes=65536 stream=7 device=0 layer=block
step-end 1500
SPOOL
spool segs || exit 99
run "$VRAMTRACE" tui --dump 7 "$TMP/segs.db"
[ $rc -eq 0 ] &&
    grep -Eq '^ 0 7 +0x10000000 +2\.0 MiB +768\.0 KiB +n/a +2 +n/a *$' "$TMP/out" &&
    grep -Eq '^ 0 13 +0x20000000 +4\.0 MiB +1\.0 MiB +n/a +1 +n/a *$' "$TMP/out" &&
    ! grep -q '0x30000000' "$TMP/out" &&
    grep -q '^ device 0: 2 segments, 6\.0 MiB reserved, 1\.8 MiB allocated$' "$TMP/out"
ok $? "segments: a recording's live driver allocations, the blocks inside each"
grep -v 'layer=segment' "$TMP/segs.txt" >"$TMP/nosegs.txt"
spool nosegs || exit 99
run "$VRAMTRACE" tui --dump segments "$TMP/nosegs.db"
[ $rc -eq 0 ] && grep -q 'no segments: ' "$TMP/out"
ok $? "segments: a recording without driver allocations says so"
# A stream as long as a snapshot's cudaStream_t in decimal: the column
# widens, header and rows stay aligned.
sed 's/stream=13/stream=140737488355328/' "$TMP/segs.txt" >"$TMP/longs.txt"
spool longs || exit 99
run "$VRAMTRACE" tui --dump segments "$TMP/longs.db"
[ $rc -eq 0 ] && awk '
	/^ +D STREAM/ { end = index($0, " SIZE") + 4 }
	/ 140737488355328 / { row = $0 }
	END { exit !(end > 4 && substr(row, end - 6, 8) == "4.0 MiB ") }
' "$TMP/out"
ok $? "segments: a 15-digit stream widens its column, SIZE still under SIZE"
SNAP=${SHARED_DATA:-}/snapshots
if [ -f "$SNAP/fixture_garbage_stream.pickle" ]; then
	run "$VRAMTRACE" tui --dump streams "$SNAP/fixture_garbage_stream.pickle"
	grep -Eq '^ +0 1031036896 .*GARBAGE growing' "$TMP/out"
	ok $? "fixture_garbage_stream: the side stream is GARBAGE growing"
	run "$VRAMTRACE" tui --dump steps "$SNAP/fixture_garbage_stream.pickle"
	grep -Eq 'All streams, layer block: \+1[01][0-9]\.[0-9] MiB per step' \
	    "$TMP/out"
	ok $? "fixture_garbage_stream: the growth per step, about +110 MiB"
	run "$VRAMTRACE" tui --dump streams "$SNAP/fixture_clean.pickle"
	[ $rc -eq 0 ] && ! grep -q GARBAGE "$TMP/out"
	ok $? "fixture_clean: no stream flagged"
else
	skip 3 "no snapshot fixtures in $SNAP"
fi
run "$VRAMTRACE" tui --dump nothing "$TMP/leak.db"
expect 2 'unknown view nothing' "an unknown view, exit 2"
run "$VRAMTRACE" tui "$TMP/leak.db"
expect 2 'not a terminal' "no terminal and no --dump, exit 2"
run "$VRAMTRACE" tui --dump 1 "$TMP/missing.db"
expect 4 'missing.db' "a missing database, exit 4"
done_testing
