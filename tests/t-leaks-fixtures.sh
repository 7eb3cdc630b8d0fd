#!/bin/sh
# t-leaks-fixtures.sh: vramtrace leaks on the real PyTorch snapshots
# ($SHARED_DATA/snapshots, see its README.md) and the bundled examples:
# the leaking ones leak about +112 and +107 MiB per step on their side
# stream, as their programs measured (the trace's block live bytes at the
# Optimizer.step END annotations grow by 111.9 and 107.1 MiB a step), the
# others are clean with no growing stream; and the
# views agree with the report on them.
. "${srcdir:-.}/tests/lib.sh"
plan 17
PY=${PYTHON3:-python3}
SNAP=${SHARED_DATA:-$srcdir/../shared/data}/snapshots
XDG_CACHE_HOME=$TMP/cache
export XDG_CACHE_HOME

# check FILE EXPR: leaks --format json on FILE; EXPR (Python, on d) holds.
check() {
	"$VRAMTRACE" leaks "$1" --format json >"$TMP/out" 2>"$TMP/err" &&
	"$PY" - "$TMP/out" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
MiB = 1024 * 1024
def growing(d): return [s["stream"] for s in d["streams"] if s["garbage"] == "growing"]
def near(x, want, pct): return abs(x - want) <= want * pct / 100
ok = eval(sys.argv[2])
if not ok:
    print("# verdict %s, growth %.1f MiB, growing %s" % (d["verdict"], d["growth_bytes_per_step"] / MiB, growing(d)))
sys.exit(0 if ok else 1)
PY
}

# LEAK, growing by $1 MiB a step within 1% and by what the program
# measured, $2 MiB (the data's README), within 5%.
leaky() {
	echo 'd["verdict"] == "LEAK" and near(d["growth_bytes_per_step"], '"$1"' * MiB, 1) and near(d["growth_bytes_per_step"], '"$2"' * MiB, 5)'
}
if [ -r "$SNAP/fixture_garbage_stream.pickle" ]; then
	check "$SNAP/fixture_garbage_stream.pickle" "$(leaky 111.9 112)"
	ok $? "garbage_stream: LEAK, +111.9 MiB per step (112 within 5%)"
	check "$SNAP/fixture_garbage_stream.pickle" 'growing(d) == [1031036896] and [s["growth_bytes_per_step"] for s in d["streams"] if s["stream"] == 1031036896] == [d["growth_bytes_per_step"]] and d["suspects"][0]["stream"] == 1031036896'
	ok $? "...all of it on side stream 1031036896, kind growing, its top site"
	check "$SNAP/fixture_expandable_leak.pickle" "$(leaky 107.1 107)"
	ok $? "expandable_leak: LEAK, +107.1 MiB per step (107 within 5%)"
	check "$SNAP/fixture_expandable_leak.pickle" 'growing(d) == [344444496]'
	ok $? "...on side stream 344444496, kind growing"
	for f in clean offload_ok large; do
		check "$SNAP/fixture_$f.pickle" 'd["verdict"] == "CLEAN" and growing(d) == [] and abs(d["growth_bytes_per_step"]) < MiB'
		ok $? "$f: CLEAN, no growing stream"
	done
	check "$SNAP/fixture_large.pickle" 'd["steps"] == 59 and d["layer"] == "block"'
	ok $? "large: 59 steps after the warm-up, block layer"
	"$VRAMTRACE" leaks "$SNAP/fixture_garbage_stream.pickle" --format json >"$TMP/leak.json"
	"$VRAMTRACE" sql "$SNAP/fixture_garbage_stream.pickle" --format json "select stream, live_bytes, growth_bytes_per_step from stream_leaks where layer = 2" >"$TMP/sl.json"
	"$PY" - "$TMP/leak.json" "$TMP/sl.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); v = json.load(open(sys.argv[2]))
got = sorted((r["stream"], r["live_bytes"], r["growth_bytes_per_step"]) for r in v)
want = sorted((s["stream"], s["live_bytes"], s["growth_bytes_per_step"]) for s in d["streams"])
sys.exit(0 if got == want else 1)
PY
	ok $? "stream_leaks agrees with the report on garbage_stream"
	"$VRAMTRACE" sql "$SNAP/fixture_garbage_stream.pickle" --format json "select kind, stream, sum(bytes) as bytes from garbage_stream_blocks group by kind, stream" >"$TMP/gb.json"
	"$PY" - "$TMP/leak.json" "$TMP/gb.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); v = json.load(open(sys.argv[2]))
got = [(r["kind"], r["stream"], r["bytes"]) for r in v]
want = [(s["garbage"], s["stream"]) for s in d["streams"] if s["garbage"]]
sys.exit(0 if got == [] and want == [("growing", 1031036896)] else 1)
PY
	ok $? "garbage_stream: growing on 1031036896 in the report, not in garbage_stream_blocks (a judgement of the model)"
	"$VRAMTRACE" sql "$SNAP/fixture_garbage_stream.pickle" --format json "select step, live_bytes from step_growth where layer = 2" >"$TMP/sg.json"
	"$PY" - "$TMP/leak.json" "$TMP/sg.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); v = json.load(open(sys.argv[2]))
sys.exit(0 if [(r["step"], r["live_bytes"]) for r in v] == [(p["step"], p["live_bytes"]) for p in d["per_step"]] else 1)
PY
	ok $? "step_growth agrees with the report's live bytes per step"
else
	skip 11 "no snapshots in $SNAP"
fi
check "$srcdir/examples/garbage_stream.pickle" "$(leaky 111.9 112)"
ok $? "examples/garbage_stream.pickle: LEAK, +111.9 MiB per step"
check "$srcdir/examples/clean.pickle" 'd["verdict"] == "CLEAN"'
ok $? "examples/clean.pickle: CLEAN"
run "$VRAMTRACE" leaks "$srcdir/examples/garbage_stream.pickle"
grep -q '^verdict: LEAK, +111.9 MiB per step, 100% of 4 steps grew, mostly on stream 1031036896' "$TMP/out"
ok $? "the README's command: the verdict line says LEAK, growth and stream"
run "$VRAMTRACE" leaks "$srcdir/examples/garbage_stream.pickle" --fail-on-leak
ok $([ $rc -eq 1 ]; echo $?) "--fail-on-leak on the example: exit 1"

# The peak is the high-water mark (1.0 GiB, inside step 5), not the
# largest step end (950.6 MiB, at the end of step 5); leaks, report and
# history give the same one.
g=$srcdir/examples/garbage_stream.pickle
peak='(d["peak_bytes"], d["peak_step"], d["peak_step_end_bytes"], d["peak_step_end_step"]) == (1081816576, 5, 996762112, 5) and d["peak_ns"] > 0'
check "$g" "$peak" &&
    "$VRAMTRACE" report "$g" --format json >"$TMP/report.json" &&
    jq_py "$TMP/report.json" "$peak" &&
    "$VRAMTRACE" history "$g" --format json >"$TMP/history.json" &&
    "$PY" -c 'import json, sys; l, h = (json.load(open(f)) for f in sys.argv[1:]); r, = h["runs"]; sys.exit(0 if all(r[k] == l[k] for k in l if k.startswith("peak")) else 1)' "$TMP/out" "$TMP/history.json"
ok $? "the example's peak: 1.0 GiB in step 5, 950.6 MiB at the end of step 5, the same in leaks, report and history"
run "$VRAMTRACE" leaks "$g"
grep -q '^peak: 1.0 GiB in step 5 at +0.442s (high-water mark); 950.6 MiB at the end of step 5 (largest at a step end)$' "$TMP/out" &&
    "$VRAMTRACE" report "$g" | grep -q '^peak       1.0 GiB in step 5 at'
ok $? "...and in their text"
done_testing
