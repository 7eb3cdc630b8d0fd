#!/bin/sh
# t-leaks.sh: vramtrace leaks on recorded runs built with mkspool: a leak
# on a side stream, a stream destroyed with blocks live, stranded cache, a
# clean run, too few steps; exit statuses and options; and the leak views
# agree with the report.
. "${srcdir:-.}/tests/lib.sh"
plan 55

# A pool-layer run: stream 7 is the CUPTI NULL stream (flags 3) holding the
# model; side stream 13 keeps 10 MiB of every step; stream 21 is destroyed
# with 2 blocks live; stream 30 cached a 2 MiB segment in step 1 and went
# idle; an allocation made and freed before the first marker is not live.
{
	echo 'process-start 1000 pid=10'
	echo 'stream-create 1000 stream=7 device=0 flags=3 handle=0'
	echo 'stream-create 1000 stream=13 device=0 handle=0x55d0c0a1b2c0'
	echo 'stream-create 1000 stream=21 device=0'
	echo 'stream-create 1000 stream=30 device=0'
	echo 'alloc 1050 address=0x100 bytes=4096 stream=7'
	echo 'free 1060 address=0x100 bytes=4096 stream=7'
	echo 'alloc 1100 address=0x1000 bytes=104857600 stream=7 site="model@train.py:10"'
	echo 'alloc 1200 address=0x9000 bytes=3000 stream=21 site="tmp@side.py:5"'
	echo 'alloc 1210 address=0x9100 bytes=5000 stream=21 site="tmp@side.py:5"'
	echo 'alloc 1300 address=0xa000 bytes=2097152 stream=30 layer=segment'
	echo 'alloc 1310 address=0xa000 bytes=1024 stream=30'
	echo 'free 1320 address=0xa000 bytes=1024 stream=30'
	echo 'stream-destroy 1500 stream=21 device=0'
	t=2000
	for k in 1 2 3 4 5 6; do
		echo "alloc $((t - 500)) address=$((0x100000 * k)) bytes=20971520 stream=7"
		echo "free $((t - 400)) address=$((0x100000 * k)) bytes=20971520 stream=7"
		[ $k -gt 1 ] && echo "alloc $((t - 300)) address=$((0x10000000 + 0x100000 * k)) bytes=10485760 stream=13 site=\"stash@offload.py:42|unpack@offload.py:80\""
		# A site that makes a block every step and frees it the next:
		# live at every step end, but not growing, so no suspect.
		[ $k -gt 1 ] && echo "free $((t - 250)) address=$((0x20000000 + 0x100000 * (k - 1))) bytes=7340032 stream=7"
		echo "alloc $((t - 200)) address=$((0x20000000 + 0x100000 * k)) bytes=7340032 stream=7 site=\"grad@train.py:20\""
		echo "step-end $t"
		t=$((t + 1000))
	done
} >"$TMP/leak.txt"
spool leak
run "$VRAMTRACE" leaks "$TMP/leak.db" --format json
ok $rc "leaks --format json on a leaking run: exit 0 without --fail-on-leak"
cp "$TMP/out" "$TMP/leak.json"
jq_py "$TMP/leak.json" 'd["verdict"] == "LEAK" and d["steps"] == 5 and d["warmup"] == 1 and d["layer"] == "pool"'
ok $? "LEAK, 5 steps analysed after a warm-up of 1, pool layer"
jq_py "$TMP/leak.json" 'abs(d["growth_bytes_per_step"] - 10485760) < 1'
ok $? "growth: 10 MiB per step"
jq_py "$TMP/leak.json" '[s["garbage"] for s in d["streams"] if s["stream"] == 13] == ["growing"]'
ok $? "side stream 13 is growing garbage"
jq_py "$TMP/leak.json" '[(s["garbage"], s["garbage_bytes"], s["garbage_blocks"]) for s in d["streams"] if s["stream"] == 21] == [("destroyed", 8000, 2)]'
ok $? "destroyed stream 21: its 2 live blocks, 8000 bytes"
jq_py "$TMP/leak.json" '[(s["garbage"], s["garbage_bytes"]) for s in d["streams"] if s["stream"] == 30] == [("stranded", 2097152)]'
ok $? "idle stream 30 with a cached segment: stranded"
jq_py "$TMP/leak.json" '[(s["default"], s["garbage"]) for s in d["streams"] if s["stream"] == 7] == [(True, None)]'
ok $? "the NULL stream (flags 3) is the default, not garbage"
jq_py "$TMP/leak.json" 'd["per_step"][0]["live_bytes"] == 104857600 + 8000 + 7340032'
ok $? "an allocation freed before the first marker is not live at step 1"
jq_py "$TMP/leak.json" 'd["suspects"][0]["site"] == "offload.py:42 stash" and d["suspects"][0]["bytes"] == 5 * 10485760 and d["suspects"][0]["blocks"] == 5 and d["suspects"][0]["stream"] == 13'
ok $? "top suspect: the stash site, 5 blocks of 10 MiB on stream 13"
jq_py "$TMP/leak.json" 'not [s for s in d["suspects"] if s["site"] == "train.py:20 grad"]'
ok $? "a site live at every step end that does not grow is no suspect"
# Unknown is not zero: a suspect with no stack has no site id, as a
# stream that was never destroyed has no destroyed_ns.
{
	echo 'stream-create 1000 stream=7 device=0 flags=3'
	for k in 1 2 3 4 5; do
		echo "alloc $((1000 * k + 500)) address=$((0x100000 * k)) bytes=10485760 stream=7"
		echo "step-end $((1000 * k + 1000))"
	done
} >"$TMP/nostack.txt"
spool nostack
"$VRAMTRACE" leaks "$TMP/nostack.db" --format json >"$TMP/nostack.json"
jq_py "$TMP/nostack.json" '(d["verdict"], d["suspects"][0]["site"], d["suspects"][0]["site_id"]) == ("LEAK", None, None)' &&
    jq_py "$TMP/leak.json" 'd["suspects"][0]["site_id"] > 0'
ok $? "a suspect without a stack: site and site_id null; with one: its id"
jq_py "$TMP/leak.json" 'sorted((s["stream"], s["destroyed_ns"] is None) for s in d["streams"]) == [(7, True), (13, True), (21, False), (30, True)]'
ok $? "destroyed_ns: a time for the destroyed stream, null for the others"
jq_py "$TMP/leak.json" 'sorted((s["stream"], s["handle"]) for s in d["streams"]) == [(7, "0x0"), (13, "0x55d0c0a1b2c0"), (21, None), (30, None)]'
ok $? "handle: the cudaStream_t in hex beside the CUPTI id, null when unknown"
"$VRAMTRACE" report "$TMP/leak.db" --format json >"$TMP/report.json"
jq_py "$TMP/report.json" 'sorted((s["stream"], s["handle"]) for s in d["streams"]) == [(7, "0x0"), (13, "0x55d0c0a1b2c0"), (21, None), (30, None)]'
ok $? "report's JSON: the same handles"
"$VRAMTRACE" leaks "$TMP/leak.db" >"$TMP/leak.out"
grep -q '^     0  13 (0x55d0c0a1b2c0) ' "$TMP/leak.out" &&
    grep -q '^     0  21  ' "$TMP/leak.out"
ok $? "text: the stream table shows the id and the handle in hex, the id alone without one"
"$VRAMTRACE" tui --dump streams "$TMP/leak.db" >"$TMP/leak.tui"
grep -q '^  0 13 (0x55d0c0a1b2c0) ' "$TMP/leak.tui" &&
    grep -q '^  0 7 (0x0) ' "$TMP/leak.tui"
ok $? "TUI Streams: the same"
run "$VRAMTRACE" leaks "$TMP/leak.db"
grep -q '^verdict: LEAK, +10.0 MiB per step, 100% of 5 steps grew, mostly on stream 13' "$TMP/out"
ok $? "text: the verdict line names growth and stream"
run "$VRAMTRACE" leaks "$TMP/leak.db" --fail-on-leak
ok $([ $rc -eq 1 ]; echo $?) "--fail-on-leak: exit 1 on a leak"
run "$VRAMTRACE" leaks "$TMP/leak.db" --threshold 20MiB --fail-on-leak --format json
jq_py "$TMP/out" 'd["verdict"] == "CLEAN" and d["shape"] == "steady" and d["threshold"] == 20971520 and "too slowly" in d["reason"]' && [ $rc -eq 1 ]
ok $? "--threshold 20MiB: CLEAN, steady but too slow; the blocks on destroyed stream 21 still fail"
run "$VRAMTRACE" leaks "$TMP/leak.db" --warmup 4 --format json
jq_py "$TMP/out" 'd["verdict"] == "INCONCLUSIVE" and d["steps"] == 2 and "fewer than 3" in d["reason"]'
ok $? "--warmup 4 leaves 2 steps: INCONCLUSIVE, said why"
run "$VRAMTRACE" leaks "$TMP/leak.db" --format csv
[ "$(sed -n 2p "$TMP/out")" = "1,2000,,,pool,112205632,0" ] &&
    grep -q '^6,7000,0,13,pool,52428800,10485760$' "$TMP/out"
ok $? "--format csv: the total and each stream per step"
run "$VRAMTRACE" leaks "$TMP/leak.db" --layer segment --format json
jq_py "$TMP/out" 'd["layer"] == "segment" and d["verdict"] == "CLEAN"'
ok $? "--layer segment analyses the segments"

# The writer's allocation_groups are the rows, grouped.
G="layer, device, stream, alloc_step, free_step, site_id"
[ "$("$VRAMTRACE" sql "$TMP/leak.db" "select count(*) from (select $G, sum(bytes), count(*) from allocations group by $G except select $G, bytes, blocks from allocation_groups) union all select count(*) from (select $G, bytes, blocks from allocation_groups except select $G, sum(bytes), count(*) from allocations group by $G) union all select count(*) > 5 from allocation_groups" --format csv | tr '\n' ' ')" = "count(*) 0 0 1 " ]
ok $? "allocation_groups: the allocations grouped, nothing more or less"

# The views agree with the report.
"$VRAMTRACE" sql "$TMP/leak.db" --format json "select stream, step, live_bytes from stream_growth where layer = 1" >"$TMP/sg.json"
"$PY" - "$TMP/leak.json" "$TMP/sg.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); v = json.load(open(sys.argv[2]))
got = {(r["stream"], r["step"]): r["live_bytes"] for r in v}
want = {(s["stream"], i + 1): b for s in d["streams"] if s["live_per_step"] != [0] * 6 for i, b in enumerate(s["live_per_step"])}
sys.exit(0 if all(got.get(k) == b for k, b in want.items()) and want else 1)
PY
ok $? "stream_growth: the report's live bytes per stream and step"
"$VRAMTRACE" sql "$TMP/leak.db" --format json "select stream, growth_bytes_per_step, is_default from stream_leaks where layer = 1" >"$TMP/sl.json"
"$PY" - "$TMP/leak.json" "$TMP/sl.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); v = json.load(open(sys.argv[2]))
got = {r["stream"]: (r["growth_bytes_per_step"], bool(r["is_default"])) for r in v}
want = {s["stream"]: (s["growth_bytes_per_step"], s["default"]) for s in d["streams"] if s["stream"] in got}
sys.exit(0 if got == want else 1)
PY
ok $? "stream_leaks: the same growth and default streams"
"$VRAMTRACE" sql "$TMP/leak.db" --format json "select kind, stream, sum(bytes) as bytes, count(*) as blocks from garbage_stream_blocks group by kind, stream" >"$TMP/gb.json"
"$PY" - "$TMP/leak.json" "$TMP/gb.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); v = json.load(open(sys.argv[2]))
got = sorted((r["kind"], r["stream"], r["bytes"], r["blocks"]) for r in v)
want = sorted((s["garbage"], s["stream"], s["garbage_bytes"], s["garbage_blocks"]) for s in d["streams"] if s["garbage"] in ("destroyed", "stranded"))
grows = [s for s in d["streams"] if s["garbage"] == "growing"]
sys.exit(0 if got == want and len(want) == 2 and grows else 1)
PY
ok $? "garbage_stream_blocks: the same destroyed and stranded blocks; the growing stream is the model's, not the view's"
"$VRAMTRACE" sql "$TMP/leak.db" --format json "select site, stream, bytes, blocks from leak_suspects" >"$TMP/ls.json"
"$PY" - "$TMP/leak.json" "$TMP/ls.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); v = json.load(open(sys.argv[2]))
got = [(r["site"], r["stream"], r["bytes"], r["blocks"]) for r in v]
want = [(s["site"], s["stream"], s["bytes"], s["blocks"]) for s in d["suspects"]]
sys.exit(0 if got == want and want else 1)
PY
ok $? "leak_suspects: the same sites, bytes and blocks"

# A clean run with no known default: the stream with the most bytes is it.
{
	t=2000
	for k in 1 2 3 4 5; do
		echo "alloc $((t - 500)) address=$((0x100000 * k)) bytes=20971520 stream=5"
		echo "alloc $((t - 450)) address=$((0x200000 * k)) bytes=1048576 stream=9"
		echo "free $((t - 400)) address=$((0x100000 * k)) bytes=20971520 stream=5"
		echo "free $((t - 350)) address=$((0x200000 * k)) bytes=1048576 stream=9"
		echo "step-end $t"
		t=$((t + 1000))
	done
} >"$TMP/clean.txt"
spool clean
run "$VRAMTRACE" leaks "$TMP/clean.db" --format json --fail-on-leak
jq_py "$TMP/out" 'd["verdict"] == "CLEAN" and d["growth_bytes_per_step"] == 0 and [s["stream"] for s in d["streams"] if s["default"]] == [5] and not any(s["garbage"] for s in d["streams"])' && [ $rc -eq 0 ]
ok $? "a clean run: CLEAN, exit 0 with --fail-on-leak; the busiest stream is the default"

# No step markers: INCONCLUSIVE, saying how to get steps.  The rows of a
# run without steps have no free step, freed or not: what is live at the
# end is what was never freed (4096 bytes, not the 1 MiB freed too).
printf '%s\n' 'alloc 1000 address=0x10 bytes=4096 stream=1 site="keep@train.py:7"' \
    'alloc 1100 address=0x20 bytes=1048576 stream=1 site="tmp@train.py:9"' \
    'free 1200 address=0x20 bytes=1048576 stream=1' >"$TMP/nosteps.txt"
spool nosteps
run "$VRAMTRACE" leaks "$TMP/nosteps.db" --fail-on-leak
grep -q '^verdict: INCONCLUSIVE (no step markers: record it with --torch-steps' "$TMP/out" && [ $rc -eq 0 ] &&
    ! grep -q 'largest at a step end\|^  step ' "$TMP/out"
ok $? "no step markers: INCONCLUSIVE with the fix, exit 0, no step table"
run "$VRAMTRACE" leaks "$TMP/nosteps.db" --format json
jq_py "$TMP/out" '[(s["live_bytes"], s["live_blocks"]) for s in d["streams"]] == [(4096, 1)] and [(x["site"], x["bytes"]) for x in d["suspects"]] == [("train.py:7 keep", 4096)] and d["peak_step_end_bytes"] is None'
ok $? "no step markers: live at the end is what was never freed"

# A run without steps whose destroyed stream freed one of its blocks: the
# view garbage_stream_blocks holds the one never freed, as leaks does.  A
# file whose view was made before that was so (free_step IS NULL, true of
# every row without steps) gets it again when a run is appended to it.
printf '%s\n' 'stream-create 1000 stream=7 device=0 flags=3' \
    'stream-create 1000 stream=21 device=0' \
    'alloc 1100 address=0x1000 bytes=4096 stream=21' \
    'alloc 1200 address=0x2000 bytes=8192 stream=21' \
    'free 1300 address=0x2000 bytes=8192 stream=21' \
    'stream-destroy 1500 stream=21 device=0' >"$TMP/nostepgone.txt"
spool nostepgone
view() {
	"$VRAMTRACE" sql "$TMP/nostepgone.db" "SELECT group_concat(kind ||
	    ':' || bytes, ' ') FROM garbage_stream_blocks WHERE run_id = 1" \
	    --format csv | tail -n 1
}
run "$VRAMTRACE" leaks "$TMP/nostepgone.db" --format json
jq_py "$TMP/out" '[(s["garbage"], s["garbage_bytes"]) for s in d["streams"] if s["stream"] == 21] == [("destroyed", 4096)]' &&
    [ "$(view)" = "destroyed:4096" ]
ok $? "no steps: a destroyed stream's garbage is its block never freed, in leaks and in the view"
sqlite3_py() {	# sqlite3_py DB SQL: run SQL through Python's sqlite3
	"$PY" -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); c.commit()' "$@"
}
old=$("$VRAMTRACE" sql "$TMP/nostepgone.db" "SELECT sql FROM sqlite_master
    WHERE name = 'garbage_stream_blocks'" --format csv | tail -n +2 |
    sed 's/a\.free_ns IS NULL/a.free_step IS NULL/')
sqlite3_py "$TMP/nostepgone.db" "DROP VIEW garbage_stream_blocks; $(echo "$old" | sed 's/^"//; s/"$//');" &&
    [ "$(view)" = "destroyed:8192 destroyed:4096" ] &&
    "$VRAMTRACE" replay "$TMP/nostepgone.vtr" -o "$TMP/nostepgone.db" \
    --append >/dev/null 2>&1 && [ "$(view)" = "destroyed:4096" ]
ok $? "...and a file with the view made before gets it again on an append"

# Usage and input errors.
run "$VRAMTRACE" leaks "$TMP/leak.db" --threshold lots
expect 2 'bad threshold lots' "a bad threshold: exit 2"
run "$VRAMTRACE" leaks "$TMP/leak.db" --format yaml
expect 2 'unknown format yaml' "a bad format: exit 2"
run "$VRAMTRACE" leaks
expect 2 'missing database' "no database: exit 2"
run "$VRAMTRACE" leaks "$TMP/leak.db" --layer tiles
expect 2 'unknown layer tiles' "a bad layer: exit 2"
run "$VRAMTRACE" leaks "$TMP/missing.db"
expect 4 'missing.db: No such file' "a missing file: exit 4"
run "$VRAMTRACE" leaks "$TMP/leak.db" --run 9
expect 4 'no run 9' "a run that does not exist: exit 4"
# A run of 2,000 steps: the text summarizes them (the first and last 5,
# the largest changes, one line per gap); --all-steps prints them all.
{
	echo 'process-start 1000 pid=10'
	echo 'alloc 1100 address=0x1000 bytes=104857600 stream=7'
	t=2000
	k=1
	while [ $k -le 2000 ]; do
		[ $k -eq 1000 ] && echo "alloc $((t - 300)) address=0x40000000 bytes=536870912 stream=7"
		echo "step-end $t"
		t=$((t + 1000))
		k=$((k + 1))
	done
} >"$TMP/long.txt"
spool long
run "$VRAMTRACE" leaks "$TMP/long.db"
sed -n '/^  step /,/^$/p' "$TMP/out" >"$TMP/table"
[ "$(grep -Ec '^ +[0-9]+ ' "$TMP/table")" -eq 11 ] &&
    grep -Eq '^  1000 +612.0 MiB +\+512.0 MiB$' "$TMP/table" &&
    grep -Eq '^ +1 +100.0 MiB .*\(warm-up\)$' "$TMP/table" &&
    grep -Eq '^  2000 +612.0 MiB +\+0 B$' "$TMP/table" &&
    grep -Eq '^   \.\.\. +100.0 MiB +\+0 B  \(994 steps: 6 to 999\)$' "$TMP/table" &&
    grep -Eq '^   \.\.\. +612.0 MiB +\+0 B  \(995 steps: 1001 to 1995\)$' "$TMP/table" &&
    grep -q -- '--all-steps for every one' "$TMP/table"
ok $? "2,000 steps: the first and last 5, the jump at step 1000, a line per gap"
run "$VRAMTRACE" leaks "$TMP/long.db" --all-steps
[ "$(sed -n '/^  step /,/^$/p' "$TMP/out" | grep -Ec '^ +[0-9]+ ')" -eq 2000 ]
ok $? "--all-steps: a line for each of them"

# A snapshot whose trace begins in step 22 of 40 (the zoo's steady leak
# with max_entries=8000): leaks, report and the TUI say so, with the fix.
xz -dc "$srcdir/tests/data/zoo/steady-w8000.pickle.xz" >"$TMP/w8000.pickle"
line="the snapshot's trace begins in step 22 of 40, so the warm-up reaches to it (PyTorch kept the last events only: call torch.cuda.memory._record_memory_history() with a larger max_entries to see every step)"
run "$VRAMTRACE" leaks "$TMP/w8000.pickle"
grep -qxF "history: $line" "$TMP/out" && grep -q "warm-up 22," "$TMP/out"
ok $? "leaks: a trace that begins in step 22 of 40 is said, with the fix"
run "$VRAMTRACE" report "$TMP/w8000.pickle"
grep -qxF "history    $line" "$TMP/out"
ok $? "report: the same line"
run "$VRAMTRACE" tui "$TMP/w8000.pickle" --dump overview
grep -q "^ History     the snapshot's trace begins in step 22 of 40" "$TMP/out"
ok $? "tui: a History row"
cp "$TMP/out" "$TMP/overview"
run "$VRAMTRACE" tui "$TMP/w8000.pickle" --dump streams
"$PY" - "$TMP/overview" "$TMP/out" <<'PY'
import re, sys
ticks = "[\u2581-\u2588]+"
over = re.search("Live/step +(%s)" % ticks,
                 open(sys.argv[1], encoding="utf-8").read())
rows = re.findall("default +(%s)" % ticks,
                  open(sys.argv[2], encoding="utf-8").read())
sys.exit(0 if over and len(over.group(1)) == 19 and
         [len(r) for r in rows] == [19] else 1)
PY
ok $? "tui: the sparklines draw steps 22 to 40, not the steps the trace lost"

# The shape in words: a steady leak grows at every step, unless transients
# (the zoo's varlen-small: batches of 32 to 128 tokens) hide which steps.
xz -dc "$srcdir/tests/data/zoo/steady.pickle.xz" >"$TMP/steady.pickle"
run "$VRAMTRACE" leaks "$TMP/steady.pickle"
grep -q '^shape:   steady: grows at every step from step 2;' "$TMP/out"
ok $? "leaks: a steady leak grows at every step from step 2"
xz -dc "$srcdir/tests/data/zoo/varlen-small.pickle.xz" >"$TMP/varlen.pickle"
run "$VRAMTRACE" leaks "$TMP/varlen.pickle"
grep -q '^shape:   steady: grows throughout from step 4 (seen in windows of 4 steps: transients hide which steps grew);' "$TMP/out"
ok $? "leaks: under transients, steady in windows of 4 steps"

# Pinned host memory, judged beside the device's layer when the run has
# some (pinned_run, lib.sh: 64 MiB kept every step, or in the first 3).
pinned_run hostleak all || exit 99
run "$VRAMTRACE" leaks "$TMP/hostleak.db" --fail-on-leak
[ $rc -eq 1 ] && grep -q '^verdict: CLEAN, +0 B per step' "$TMP/out" &&
    grep -q '^pinned:  LEAK, +64.0 MiB per step, 100% of 11 steps grew, layer host$' "$TMP/out"
ok $? "a pinned host memory leak under a flat device: host LEAK, --fail-on-leak exits 1"
run "$VRAMTRACE" leaks "$TMP/hostleak.db" --format json
jq_py "$TMP/out" 'd["verdict"] == "CLEAN" and d["pinned"]["verdict"] == "LEAK" and d["pinned"]["growth_bytes_per_step"] == 67108864 and d["pinned"]["shape"] == "steady"'
ok $? "...and in JSON, under \"pinned\""
run "$VRAMTRACE" leaks "$TMP/hostleak.db" --layer pool --fail-on-leak
[ $rc -eq 0 ] && ! grep -q '^pinned:' "$TMP/out"
ok $? "...not judged when a layer is asked for"
run "$VRAMTRACE" report "$TMP/hostleak.db"
grep -q '^pinned     LEAK, +64.0 MiB per step' "$TMP/out" &&
    "$VRAMTRACE" report "$TMP/hostleak.db" --format json >"$TMP/r.json" &&
    jq_py "$TMP/r.json" 'd["pinned"]["verdict"] == "LEAK" and d["verdict"] == "CLEAN"'
ok $? "report: the pinned line, and \"pinned\" in JSON"
pinned_run hostpool 3 || exit 99
run "$VRAMTRACE" leaks "$TMP/hostpool.db" --fail-on-leak
[ $rc -eq 0 ] && grep -q '^pinned:  CLEAN' "$TMP/out"
ok $? "pinned memory that fills a pool in 3 steps and stays: host CLEAN, exit 0"
run "$VRAMTRACE" leaks "$TMP/leak.db" --format json
jq_py "$TMP/out" 'd["pinned"] is None'
st=$?
run "$VRAMTRACE" leaks "$TMP/leak.db"
[ $st -eq 0 ] && ! grep -q '^pinned:' "$TMP/out"
ok $? "a run without pinned memory: no pinned line, pinned null"

# The host layer's high-water mark: 64 MiB of pinned memory kept in each
# of 4 steps, and a 300 MiB pinned staging buffer made and freed within
# step 2: 428 MiB in step 2, above the 256 MiB at the end of step 4; the
# device's 100 MiB made and freed each step is not in it.  The same from
# the steps' sums (query-peak.c) and from the walk of every allocation (a
# file without allocation_steps).
{
	echo 'process-start 1000 pid=10'
	echo 'stream-create 1000 stream=13 device=0'
	t=1100
	for k in 1 2 3 4; do
		echo "alloc $t address=0x100000 bytes=104857600 stream=13"
		echo "free $((t + 10)) address=0x100000 bytes=104857600 stream=13"
		echo "alloc $((t + 20)) address=$((0x7f0000000000 + 0x10000000 * k)) bytes=67108864 layer=host device=-1"
		if [ $k -eq 2 ]; then
			echo "alloc $((t + 21)) address=0x7e0000000000 bytes=314572800 layer=host device=-1"
			echo "free $((t + 25)) address=0x7e0000000000 bytes=314572800 layer=host device=-1"
		fi
		echo "step-end $((t + 30))"
		t=$((t + 100))
	done
} >"$TMP/hostpeak.txt"
spool hostpeak || exit 99
cp "$TMP/hostpeak.db" "$TMP/hostwalk.db" && "$PY" - "$TMP/hostwalk.db" <<'PY' || exit 99
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("delete from allocation_steps")
c.commit()
PY
want='^peak: 428.0 MiB in step 2 at +0.000s (high-water mark); 256.0 MiB at the end of step 4 (largest at a step end)$'
run "$VRAMTRACE" leaks "$TMP/hostpeak.db" --layer host
grep -q "$want" "$TMP/out"
st=$?
run "$VRAMTRACE" leaks "$TMP/hostwalk.db" --layer host
[ $st -eq 0 ] && grep -q "$want" "$TMP/out"
ok $? "--layer host: the pinned memory's high-water mark, 428 MiB in step 2, from the steps and from the walk"
"$VRAMTRACE" report "$TMP/hostpeak.db" --layer host --format json >"$TMP/hp.json" &&
    jq_py "$TMP/hp.json" 'd["layer"] == "host" and (d["peak_bytes"], d["peak_step"], d["peak_step_end_bytes"]) == (428 << 20, 2, 256 << 20)' &&
    "$VRAMTRACE" report "$TMP/hostpeak.db" --layer host | grep -q '^peak       428.0 MiB in step 2'
ok $? "report --layer host: the same peak, in text and JSON"
run "$VRAMTRACE" leaks "$TMP/hostpeak.db"
grep -q '^peak: 100.0 MiB in step 1' "$TMP/out"
ok $? "the device's layer: its own 100 MiB, no pinned memory in it"
done_testing
