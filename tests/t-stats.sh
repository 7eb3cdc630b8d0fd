#!/bin/sh
# t-stats.sh: vramtrace stats: a snapshot's reserved, allocated and free
# bytes per device and stream agree with its segments and blocks (reserved
# = allocated + free), the largest free block and the fragmentation, the
# allocator's settings; a recording's live layers, with what it cannot see
# unknown; bad runs and usage.
. "${srcdir:-.}/tests/lib.sh"
NTESTS=9
plan $NTESTS
if [ -z "$PYTHON3" ]; then
	skip $NTESTS "no python3"
	exit 0
fi
"$VRAMTRACE" import "$srcdir/examples/garbage_stream.pickle" \
    -o "$TMP/g.db" >/dev/null 2>&1 || exit 99
run "$VRAMTRACE" stats "$TMP/g.db" --format json
cp "$TMP/out" "$TMP/g.json"
"$VRAMTRACE" sql "$TMP/g.db" "select s.stream, s.total_size, b.state,
    b.size from segments s join blocks b on b.segment_id = s.id" \
    --format json >"$TMP/blocks.json"
"$PY" - "$TMP/g.json" "$TMP/blocks.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = json.load(open(sys.argv[2]))
dev = d["devices"][0]
want = {}
for r in rows:
    w = want.setdefault(r["stream"], {"free": [], "used": 0, "seg": {}})
    if r["state"] == "inactive":
        w["free"].append(r["size"])
    else:
        w["used"] += r["size"]
for s in dev["streams"]:
    w = want[s["stream"]]
    assert s["allocated_bytes"] == w["used"], (s, w["used"])
    assert s["free_bytes"] == sum(w["free"]), s
    assert s["free_blocks"] == len(w["free"]), s
    assert s["largest_free_bytes"] == max(w["free"]), s
    assert s["reserved_bytes"] == s["allocated_bytes"] + s["free_bytes"], s
    assert abs(s["fragmentation"] - (1 - max(w["free"]) /
                                     sum(w["free"]))) < 1e-4, s
for k in ("reserved_bytes", "allocated_bytes", "free_bytes", "segments",
          "allocated_blocks", "free_blocks"):
    assert dev[k] == sum(s[k] for s in dev["streams"]), k
assert dev["largest_free_bytes"] == max(s["largest_free_bytes"]
                                        for s in dev["streams"])
PY
ok $? "snapshot: per stream, allocated and free blocks as its blocks say; reserved = allocated + free; the device is their sum"
jq_py "$TMP/g.json" 'd["source"] == "snapshot" and [s["stream"] for s in d["devices"][0]["streams"]] == [0, 1031036896] and d["devices"][0]["allocated_blocks"] == 418 and d["devices"][0]["allocated_bytes"] == 911707648 and d["devices"][0]["reserved_bytes"] == 1140850688'
ok $? "garbage_stream: 418 blocks live in 1.1 GiB of segments on the default and the side stream"
jq_py "$TMP/g.json" 'd["allocator"] == "native" and d["settings"]["expandable_segments"] == "false" and d["settings"]["max_split_size"] == "-1"'
ok $? "the allocator and its settings"
run "$VRAMTRACE" stats "$TMP/g.db"
grep -Eq '^0 +all +1\.1 GiB +55 +869\.5 MiB +418 +218\.5 MiB +30 +20\.0 MiB +91%$' "$TMP/out" &&
    grep -Eq '^  expandable_segments +false$' "$TMP/out"
ok $? "text: the device's row, then its streams, then the settings"

SNAP="$SHARED_DATA/snapshots/fixture_expandable_leak.pickle"
if [ -r "$SNAP" ]; then
	run "$VRAMTRACE" stats "$SNAP" --format json
	jq_py "$TMP/out" 'd["settings"]["expandable_segments"] == "true"'
	ok $? "an expandable-segments snapshot says so"
else
	skip 1 "no shared data"
fi

# A recording: pool allocations live, and driver segments.
cat >"$TMP/rec.txt" <<'SPOOL'
process-start 1000 pid=10
alloc 1100 address=0x1000 bytes=1048576 stream=7 device=0
alloc 1200 address=0x2000 bytes=2097152 stream=13 device=0
free 1300 address=0x2000 bytes=2097152 stream=13 device=0
alloc 1400 address=0x9000 bytes=8388608 stream=7 device=0 layer=segment
step-end 1500
SPOOL
spool rec || exit 99
run "$VRAMTRACE" stats "$TMP/rec.db" --format json
jq_py "$TMP/out" 'd["source"] == "allocations" and [(s["stream"], s["reserved_bytes"], s["allocated_bytes"], s["allocated_blocks"], s["free_bytes"], s["fragmentation"]) for s in d["devices"][0]["streams"]] == [(7, 8388608, 1048576, 1, None, None)]'
ok $? "a recording: the segment layer reserved, the pool allocated, free blocks unknown"
grep -v 'layer=segment' "$TMP/rec.txt" >"$TMP/pool.txt"
spool pool || exit 99
run "$VRAMTRACE" stats "$TMP/pool.db" --format json
jq_py "$TMP/out" 'd["devices"][0]["reserved_bytes"] is None and d["devices"][0]["allocated_bytes"] == 1048576'
ok $? "...and without segments, reserved is unknown, not zero"

run "$VRAMTRACE" stats "$TMP/g.db" --run 9
expect 4 'no run 9' "an unknown run: exit 4"
run "$VRAMTRACE" stats
expect 2 'missing database' "no database: usage, exit 2"
done_testing
