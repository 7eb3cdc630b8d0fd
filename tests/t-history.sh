#!/bin/sh
# t-history.sh: vramtrace history over runs appended to one database: a run
# per line, the trend of the leak rate, and --fail-if-worse for CI; the
# pinned host memory's verdict beside a run's; and info --run on such a
# database.
. "${srcdir:-.}/tests/lib.sh"
plan 13

# leaky NAME MIB: a run of 6 steps that keeps MIB MiB of every step.
leaky() {
	{
		echo 'process-start 1000 pid=10'
		echo 'alloc 1100 address=0x1000 bytes=104857600 stream=7'
		t=2000
		for k in 1 2 3 4 5 6; do
			echo "alloc $((t - 300)) address=$((0x10000000 + 0x1000000 * k)) bytes=$(($2 * 1048576)) stream=7"
			echo "step-end $t"
			t=$((t + 1000))
		done
	} >"$TMP/$1.txt"
	"$MKSPOOL" "$TMP/$1.txt" "$TMP/$1.vtr"
}

# history DB RATE...: append a run for each rate to DB.
history() {
	db=$1
	shift
	for mib in "$@"; do
		leaky "r$mib" "$mib" &&
		"$VRAMTRACE" replay "$TMP/r$mib.vtr" -o "$db" --append >/dev/null
	done
}

history "$TMP/up.db" 2 4 8
run "$VRAMTRACE" history "$TMP/up.db" --format json
cp "$TMP/out" "$TMP/up.json"
jq_py "$TMP/up.json" '[(r["run_id"], r["verdict"], r["growth_bytes_per_step"], r["steps"]) for r in d["runs"]] == [(1, "LEAK", 2097152, 6), (2, "LEAK", 4194304, 6), (3, "LEAK", 8388608, 6)]'
ok $? "a run per entry, oldest first, with its verdict, rate and steps"
jq_py "$TMP/up.json" 'all(r["source"] == "replay" and r["start_ns"] > 0 and r["peak_bytes"] > 104857600 and "command" in r and "git_commit" in r for r in d["runs"])'
ok $? "each run's source, start, peak, command and commit"
jq_py "$TMP/up.json" 'd["trend"] == {"direction": "rising", "runs": 3, "change_bytes_per_step": 6291456} and d["worse"]'
ok $? "2, 4, 8 MiB per step: rising by 6 MiB, the newest is worse"
run "$VRAMTRACE" history "$TMP/up.db" --fail-if-worse
[ $rc -eq 1 ] && grep -q 'run 3 leaks +4.0 MiB per step faster than run 2' "$TMP/err" &&
    grep -Eq '^ +3  [0-9-]+ [0-9:]+  replay +6 +.* +\+8\.0 MiB  LEAK$' "$TMP/out" &&
    grep -q '^trend: rising, the leak rate changed by +6.0 MiB per step over the last 3 runs' "$TMP/out"
ok $? "--fail-if-worse: exit 1, says by how much; the table and the trend"
run "$VRAMTRACE" history "$TMP/up.db" --fail-if-worse --threshold 5MiB
[ $rc -eq 0 ]
ok $? "a rise under --threshold is not worse"

# info --run counts one run; without it, the whole database.
run "$VRAMTRACE" info "$TMP/up.db" --run 2 --format json
jq_py "$TMP/out" '(d["run_id"], d["runs"], d["processes"], d["steps"], d["allocations"]) == (2, 1, 1, 6, 7)' &&
    "$VRAMTRACE" info "$TMP/up.db" | grep -q '^  steps           18$'
ok $? "info --run: that run's counts; without it, the database's"
run "$VRAMTRACE" info "$TMP/up.db" --run 4
expect 4 'no run 4' "info --run of a run that does not exist: exit 4"

history "$TMP/down.db" 8 4 2
run "$VRAMTRACE" history "$TMP/down.db" --fail-if-worse --format json
[ $rc -eq 0 ] && jq_py "$TMP/out" 'd["trend"]["direction"] == "falling" and not d["worse"]'
ok $? "8, 4, 2 MiB per step: falling, exit 0 with --fail-if-worse"

history "$TMP/flat.db" 4 4
run "$VRAMTRACE" history "$TMP/flat.db" --format json
jq_py "$TMP/out" 'd["trend"]["direction"] == "flat"'
ok $? "the same rate twice: flat"

history "$TMP/one.db" 4
run "$VRAMTRACE" history "$TMP/one.db" --fail-if-worse
[ $rc -eq 0 ] && grep -q '^trend: unknown' "$TMP/out"
ok $? "one run: no trend, nothing to be worse than"

# Pinned host memory (lib.sh's pinned_run): after the verdict of a run
# that has some, its pinned verdict as leaks judges it; a run without any
# keeps its line as it was, and "pinned" is null in its JSON, as in leaks'.
leaky r2 2 && "$VRAMTRACE" replay "$TMP/r2.vtr" -o "$TMP/mixed.db" >/dev/null &&
    pinned_run pleak all && pinned_run ppool 3 &&
    "$VRAMTRACE" replay "$TMP/pleak.vtr" -o "$TMP/mixed.db" --append >/dev/null &&
    "$VRAMTRACE" replay "$TMP/ppool.vtr" -o "$TMP/mixed.db" --append >/dev/null ||
    exit 99
run "$VRAMTRACE" history "$TMP/mixed.db"
grep -Eq '^ +1  [0-9-]+ [0-9:]+  replay +6 +112\.0 MiB +\+2\.0 MiB  LEAK$' "$TMP/out" &&
    grep -Eq '^ +2  .* +\+0 B  CLEAN; pinned: LEAK, \+64\.0 MiB per step$' "$TMP/out" &&
    grep -Eq '^ +3  .* +\+0 B  CLEAN; pinned: CLEAN, \+0 B per step$' "$TMP/out"
ok $? "text: the pinned verdict after the device's where the run has pinned memory"
run "$VRAMTRACE" history "$TMP/mixed.db" --format json
cp "$TMP/out" "$TMP/mixed.json"
"$VRAMTRACE" leaks "$TMP/mixed.db" --run 2 --format json >"$TMP/l2.json" &&
    "$VRAMTRACE" leaks "$TMP/mixed.db" --run 3 --format json >"$TMP/l3.json" &&
    "$PY" - "$TMP/mixed.json" "$TMP/l2.json" "$TMP/l3.json" <<'PY'
import json, sys
h, l2, l3 = (json.load(open(a)) for a in sys.argv[1:])
r = h["runs"]
assert r[0]["pinned"] is None and list(r[0])[-2:] == ["verdict", "pinned"], r[0]
assert r[1]["pinned"] == l2["pinned"] and r[2]["pinned"] == l3["pinned"]
assert [x["pinned"]["verdict"] for x in r[1:]] == ["LEAK", "CLEAN"]
assert [x["verdict"] for x in r] == ["LEAK", "CLEAN", "CLEAN"]
PY
ok $? "JSON: \"pinned\" as leaks gives it, null for a run without pinned memory"

run "$VRAMTRACE" history
expect 2 'missing database' "no database: exit 2"
done_testing
