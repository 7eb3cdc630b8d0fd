#!/bin/sh
# t-json.sh: one JSON contract (vramtrace(1), JSON OUTPUT): every
# --format json output is valid UTF-8 that json.loads accepts without
# NaN or Infinity, whatever bytes a file name or a frame name holds, and
# the commands name the same things the same way (run_id, suspects,
# complete, the peak's keys, the leak model's shape, period, onset and
# projection).
. "${srcdir:-.}/tests/lib.sh"
plan 4

# A run whose site has a frame name and a file name that are not UTF-8.
{
	echo 'process-start 1000 pid=10'
	echo 'alloc 1100 address=0x1000 bytes=104857600 stream=7'
	t=2000
	for k in 1 2 3 4 5 6; do
		printf 'alloc %d address=%d bytes=8388608 stream=7 site="bad\377name@f\376ile.py:3"\n' $((t - 300)) $((0x10000000 + 0x1000000 * k))
		echo "step-end $t"
		t=$((t + 1000))
	done
} >"$TMP/bad.txt"
bad=$(printf 'x\377y')
"$MKSPOOL" "$TMP/bad.txt" "$TMP/bad.vtr" &&
    "$VRAMTRACE" replay "$TMP/bad.vtr" -o "$TMP/$bad.db" >/dev/null &&
    cp "$srcdir/examples/garbage_stream.pickle" "$TMP/$bad.pickle"
ok $? "a database and a pickle whose names are not UTF-8"

# strict FILE...: each file is UTF-8 JSON with no NaN or Infinity.
strict() {
	"$PY" - "$@" <<'PY'
import json, sys
def refuse(c):
    raise ValueError("bare " + c)
for f in sys.argv[1:]:
    try:
        json.loads(open(f, "rb").read().decode("utf-8"),
                   parse_constant=refuse)
    except ValueError as e:
        print("# %s: %s" % (f, e))
        sys.exit(1)
PY
}
n=0
for input in "$TMP/$bad.db" "$TMP/$bad.pickle"; do
	for c in leaks report history info; do
		n=$((n + 1))
		"$VRAMTRACE" $c "$input" --format json >"$TMP/j$n.json" || echo "# $c failed"
	done
	n=$((n + 1))
	"$VRAMTRACE" diff "$input@1" "$input@5" --format json >"$TMP/j$n.json" || echo "# diff failed"
done
strict "$TMP"/j*.json &&
    grep -q 'bad\\ufffdname' "$TMP/j1.json" && grep -q 'f\\ufffdile' "$TMP/j1.json" &&
    grep -q 'x\\ufffdy.pickle' "$TMP/j7.json"
ok $? "leaks, report, history, info, diff: json.loads takes them, bad bytes as U+FFFD"

# The same names: run_id, complete, suspects, the peak.
"$PY" - "$TMP/j1.json" "$TMP/j2.json" "$TMP/j3.json" "$TMP/j4.json" "$TMP/j5.json" <<'PY'
import json, sys
leaks, report, history, info, diff = (json.load(open(f, "rb")) for f in sys.argv[1:])
peak = {"peak_bytes", "peak_ns", "peak_step", "peak_step_end_bytes",
        "peak_step_end_step"}
run, = history["runs"]
ok = (leaks["run_id"] == report["run_id"] == run["run_id"] == diff["a"]["run_id"] == 1
      and "run_id" in info and "run" not in info and "run" not in run
      and leaks["complete"] is report["complete"] is run["complete"] is True
      and peak <= set(leaks) and peak <= set(report) and peak <= set(run)
      and "sites" not in report
      and set(report["suspects"][0]) == set(leaks["suspects"][0]))
sys.exit(0 if ok else 1)
PY
ok $? "run_id, complete, suspects and the peak named alike in every command"

# The shape model's keys, with the same values, in leaks, report and
# history, on a real periodic leak of the zoo.
xz -dc "$srcdir/tests/data/zoo/periodic.pickle.xz" >"$TMP/periodic.pickle"
for c in leaks report history; do
	"$VRAMTRACE" $c "$TMP/periodic.pickle" --format json >"$TMP/shape-$c.json"
done
"$PY" - "$TMP"/shape-leaks.json "$TMP"/shape-report.json "$TMP"/shape-history.json <<'PY'
import json, sys
leaks, report, history = (json.load(open(f)) for f in sys.argv[1:])
keys = ("shape", "period", "onset", "projection", "growth_bytes_per_step",
        "grew_fraction")
want = tuple(leaks[k] for k in keys)
got = [tuple(d.get(k, "missing") for k in keys)
       for d in (report, history["runs"][0])]
print("# leaks %s, report %s, history %s" % (want, got[0], got[1]))
sys.exit(0 if want[:3] == ("periodic", 5, 5) and got == [want, want] and
         set(report["streams"][0]) >= {"verdict", "garbage", "default"}
         else 1)
PY
ok $? "report and history carry leaks' shape, period, onset, projection and growth"
done_testing
