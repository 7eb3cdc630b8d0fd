#!/bin/sh
# t-export.sh: vramtrace export --perfetto: the JSON loads, its counters
# agree with the database (final value = live bytes at the end, maximum =
# peak, per track and per device total), copies, steps and offload
# decisions are there, allocations are slices with their size and site,
# and bucketing keeps the peak and the final value.
. "${srcdir:-.}/tests/lib.sh"
plan 14
if [ -z "$PYTHON3" ] || ! "$PYTHON3" -c 'import json' 2>/dev/null; then
	skip 14 "no python3"
	exit 0
fi

cat >"$TMP/run.txt" <<'SPOOL'
process-start 1000 pid=10 rank=0 host=h1 command="python train.py"
stream-create 1000 stream=13 device=0
stream-create 1000 stream=14 device=0
alloc 1100 address=0x1000 bytes=1048576 stream=13 device=0
alloc 1200 address=0x2000 bytes=2097152 stream=14 device=0
alloc 1200 address=0x9000 bytes=512 stream=13 device=0 layer=segment
step-end 1300
free 1400 address=0x1000 bytes=1048576 stream=13 device=0
memcpy 1450 bytes=4096 stream=13 end=1460 kind=2 src=0 dst=-1
offload 1470 kind=stash tensor=1 storage=0x2000 bytes=4096 stream=14 device=0
alloc 1480 address=0x3000 bytes=4194304 stream=14 device=0
free 1490 address=0x3000 bytes=4194304 stream=14 device=0
step-end 1500
SPOOL
# A long run: 400 allocations that grow and shrink, for bucketing.
{
	echo 'process-start 1000 pid=11 rank=0 command="python long.py"'
	i=0
	while [ $i -lt 400 ]; do
		t=$((2000 + i * 10))
		echo "alloc $t address=$((4096 + i * 4096)) bytes=$(( (i % 7 + 1) * 1024 )) stream=5 device=0"
		[ $((i % 3)) -eq 0 ] && [ $i -gt 0 ] &&
		    echo "free $((t + 5)) address=$((4096 + (i - 1) * 4096)) bytes=$(( ((i - 1) % 7 + 1) * 1024 )) stream=5 device=0"
		[ $((i % 50)) -eq 49 ] && echo "step-end $((t + 8))"
		i=$((i + 1))
	done
} >"$TMP/long.txt"
for f in run long; do
	"$MKSPOOL" "$TMP/$f.txt" "$TMP/$f.vtr" &&
	    "$VRAMTRACE" replay "$TMP/$f.vtr" -o "$TMP/$f.db" || exit 99
done

# check DB JSON: counters against the allocations, read with sql.
check() {
	"$VRAMTRACE" sql "$1" "select process_id, device, stream, l.name,
	    alloc_ns, free_ns, bytes from allocations a join layers l
	    on l.id = a.layer" --format json >"$TMP/allocs.json" || return 1
	"$PYTHON3" - "$TMP/allocs.json" "$2" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
trace = json.load(open(sys.argv[2]))
ev = trace["traceEvents"]
ch = {}
for r in rows:
    for s in ("stream %d" % r["stream"], "total"):
        key = (r["process_id"], r["device"], s, r["name"])
        ch.setdefault(key, []).append((r["alloc_ns"], r["bytes"]))
        if r["free_ns"] is not None:
            ch[key].append((r["free_ns"], -r["bytes"]))
want = {}
for (p, d, s, layer), c in ch.items():
    c.sort()
    live = peak = 0
    for t, b in c:
        live += b
        peak = max(peak, live)
    name = "live bytes dev %d %s %s" % (d, s, layer)
    want[(p, name)] = (live, peak)
got = {}
for e in ev:
    if e["ph"] != "C":
        continue
    k = (e["pid"], e["name"])
    v = e["args"]["bytes"]
    last, peak, ts = got.get(k, (0, 0, -1))
    assert e["ts"] >= ts, "counter times go back"
    got[k] = (v, max(peak, v), e["ts"])
got = {k: v[:2] for k, v in got.items()}
if got != want:
    print("# want", want)
    print("# got ", got)
    sys.exit(1)
PY
}

run "$VRAMTRACE" export "$TMP/run.db" --perfetto "$TMP/run.json"
ok $rc "export --perfetto"
check "$TMP/run.db" "$TMP/run.json"
ok $? "counters: final value and peak per track and device total equal the database's"
jq_py "$TMP/run.json" '[(e["pid"], e["args"]["bytes"]) for e in d["traceEvents"] if e["name"] == "live bytes dev 0 total pool"] == [(1, 1048576), (1, 3145728), (1, 2097152), (1, 6291456), (1, 2097152)]'
ok $? "the device total: both streams together, the 4 MiB allocation on top of 2 MiB"
"$PYTHON3" - "$TMP/run.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
x = [e for e in ev if e["ph"] == "X" and e["name"].startswith("memcpy")]
assert len(x) == 1 and x[0]["name"] == "memcpy DtoH", x
assert abs(x[0]["ts"] - 0.35) < 1e-9 and abs(x[0]["dur"] - 0.01) < 1e-9, x
assert x[0]["args"]["bytes"] == 4096
steps = [e for e in ev if e["ph"] == "X" and e["name"].startswith("step")]
assert [s["name"] for s in steps] == ["step 1", "step 2"], steps
i = [e for e in ev if e["ph"] == "i"]
assert len(i) == 1 and i[0]["name"] == "stash" and i[0]["s"] == "t", i
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
         if e["ph"] == "M" and e["name"] in ("process_name", "thread_name")}
assert names[(1, 0)] == "pid 10 rank 0 on h1", names
assert names[(x[0]["pid"], x[0]["tid"])] == "dev 0 stream 13", names
assert names[(i[0]["pid"], i[0]["tid"])] == "dev 0 stream 14", names
PY
ok $? "copies and steps are slices, offload decisions instants, named threads"

# The allocations: async slices, begin and end, with size and site.
"$VRAMTRACE" sql "$TMP/run.db" "select a.id, a.alloc_ns, a.free_ns, a.bytes,
    s.label from allocations a left join sites s on s.id = a.site_id" \
    --format json >"$TMP/a.json"
"$PYTHON3" - "$TMP/a.json" "$TMP/run.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
trace = json.load(open(sys.argv[2]))
t0 = trace["otherData"]["t0_ns"]
last = 1500    # the run's last instant: its last step's end
b = {e["id"]: e for e in trace["traceEvents"] if e["ph"] == "b"}
e = {e["id"]: e for e in trace["traceEvents"] if e["ph"] == "e"}
assert sorted(b) == sorted(e) == sorted(r["id"] for r in rows), (b, e)
for r in rows:
    s, f = b[r["id"]], e[r["id"]]
    assert s["cat"] == f["cat"] == "allocation" and s["name"] == f["name"]
    assert s["name"] == (r["label"] or "no stack"), s
    assert s["args"]["bytes"] == r["bytes"], s
    assert abs(s["ts"] - (r["alloc_ns"] - t0) / 1000) < 1e-9, s
    end = r["free_ns"] if r["free_ns"] is not None else last
    assert abs(f["ts"] - (end - t0) / 1000) < 1e-9, (f, end)
    assert s["args"]["freed"] == (r["free_ns"] is not None), s
assert b[1]["args"]["size"] == "1.0 MiB" and b[1]["args"]["stream"] == 13
PY
ok $? "allocations are slices from alloc to free (or the end), with size and site"
run "$VRAMTRACE" export "$TMP/run.db" --perfetto "$TMP/two.json" --allocations 2
jq_py "$TMP/two.json" 'sorted(e["args"]["bytes"] for e in d["traceEvents"] if e["ph"] == "b") == [2097152, 4194304]'
ok $? "--allocations 2: the two largest"

run "$VRAMTRACE" export "$TMP/long.db" --perfetto "$TMP/long.json"
check "$TMP/long.db" "$TMP/long.json"
ok $? "a long run, every change"
run "$VRAMTRACE" export "$TMP/long.db" --perfetto "$TMP/small.json" --max-points 40
check "$TMP/long.db" "$TMP/small.json"
ok $? "bucketed: the peak and the final value survive"
n=$("$PYTHON3" -c 'import json,sys; print(sum(e["ph"] == "C" for e in json.load(open(sys.argv[1]))["traceEvents"]))' "$TMP/small.json")
all=$("$PYTHON3" -c 'import json,sys; print(sum(e["ph"] == "C" for e in json.load(open(sys.argv[1]))["traceEvents"]))' "$TMP/long.json")
[ "$n" -le 44 ] && [ "$all" -gt 400 ]
ok $? "bucketed: $n points instead of $all"

run "$VRAMTRACE" export "$TMP/run.db" --perfetto "$TMP/r9.json" --run 9
expect 4 'no run 9' "an unknown run, exit 4"
[ ! -e "$TMP/r9.json" ] && [ -z "$(ls "$TMP" | grep 'r9.json.tmp')" ]
ok $? "...and no file left behind"
run "$VRAMTRACE" export "$TMP/run.db"
expect 2 'missing --perfetto' "no output: usage, exit 2"
# A run of more series of live bytes than the walk follows (65,535): the
# run is what cannot be read (4), not the output (7).
"$PYTHON3" - >"$TMP/wide.txt" <<'PY'
import sys
w = sys.stdout.write
w("process-start 1 pid=1\n")
for i in range(65536):
    w("alloc %d address=%d bytes=512 stream=%d\n" % (i + 2, 4096 * (i + 1), i + 1))
PY
spool wide
run "$VRAMTRACE" export "$TMP/wide.db" --perfetto "$TMP/wide.json"
expect 4 'wide.db: the run has more than 65535 series of live bytes' \
    "a run of too many series: exit 4, saying so"
[ ! -e "$TMP/wide.json" ] && [ -z "$(ls "$TMP" | grep 'wide.json')" ]
ok $? "...and no file left behind"
done_testing
