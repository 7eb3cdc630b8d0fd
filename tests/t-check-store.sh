#!/bin/sh
# t-check-store.sh: the offload check's events through the store and the
# query layer, from spools (tests/mkspool) replayed by the real writer:
# check-step deltas added up per engine and step, differences with their
# stacks as sites, what leaks and report say (text, JSON, CSV) and their
# exit status 3, a run that was checked and found nothing, a run that was
# not checked, a database made before the tables existed, and merge.
# (t-check.sh sends the same events from Python.)  The scenario is
# tests/data/spool/check-run.txt.
. "${srcdir:-.}/tests/lib.sh"
plan 20
q() {	# q DB SQL: the rows as a|b lines joined by spaces
	"$VRAMTRACE" sql "$1" "$2" --format csv | sed 1d | tr ',\n' '| ' |
	    sed 's/ $//'
}
# drop_tables DB: make DB look made before the offload check's tables.
drop_tables() {
	"$PY" -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript("DROP VIEW offload_check_engines;"
    " DROP TABLE offload_check_steps; DROP TABLE offload_check_diffs;")
db.close()' "$1"
}
ENGINE=trl.OffloadActivations

cp "$srcdir/tests/data/spool/check-run.txt" "$TMP/bad.txt"
spool bad
ok $? "a spool with check events replays"
[ "$(q "$TMP/bad.db" "SELECT step, engine, device, packs, unpacks, checked,
    differ, packed_bytes, moved_bytes FROM offload_check_steps
    ORDER BY step, engine")" = "1|hand.Engine|-1|1|1|1|0|64|64 1|$ENGINE|0|4|4|4|1|4096|2048 2|$ENGINE|1|4|4|4|1|4096|0" ]
ok $? "check-step deltas: one row per engine and step, added up"
[ "$(q "$TMP/bad.db" "SELECT step, pack_index, engine, shape, dtype, bytes,
    differs, pack_where, pack_ns, unpack_ns FROM offload_check_diffs
    ORDER BY step")" = "1|2|$ENGINE|8x64|float32|2048|40|train.py:3|1200|1700 2|0|$ENGINE|8x64|float32|2048|2|train.py:3|2100|" ]
ok $? "check-diff: a row per difference, an unknown unpack time NULL"
[ "$(q "$TMP/bad.db" "SELECT group_concat(f.name, '<') FROM
    offload_check_diffs d JOIN site_frames sf ON sf.site_id = d.pack_site_id
    JOIN frames f ON f.id = sf.frame_id WHERE d.step = 1 ORDER BY sf.depth") \
$(q "$TMP/bad.db" "SELECT count(DISTINCT pack_site_id), s.label FROM
    offload_check_diffs d JOIN sites s ON s.id = d.unpack_site_id")" = \
    "fwd<main 1|<autograd>:0 MmBackward0" ]
ok $? "the pack and unpack stacks are sites, stored once"
[ "$(q "$TMP/bad.db" "SELECT engine, steps, packs, checked, differ FROM
    offload_check_engines ORDER BY engine")" = "hand.Engine|1|1|1|0 $ENGINE|2|8|8|2" ]
ok $? "the offload_check_engines view adds up per engine"

run "$VRAMTRACE" leaks "$TMP/bad.db"
line="offload check: 2 of 9 saved tensors came back different (first at step 1, packed at train.py:3 by $ENGINE)"
[ $rc -eq 3 ] && grep -qxF "$line" "$TMP/out"
ok $? "leaks: the summary line, and exit 3"
grep -qxF "  2 engines, 2 steps: 9 packs (8.1 KiB), 9 unpacks, 2.1 KiB came back in other memory" "$TMP/out" &&
grep -qxF "  step 1 #2 $ENGINE 8x64 float32 2.0 KiB: contents: 5 of 72 checksums differ" "$TMP/out" &&
grep -qxF "    packed at train.py:3, unpacked at <autograd>:0 MmBackward0" "$TMP/out" &&
grep -qxF "  step 2 #0 $ENGINE 8x64 float32 2.0 KiB: dtype float32 -> bfloat16" "$TMP/out"
ok $? "leaks: what the engines did, each difference with step, tensor and what differs"
run "$VRAMTRACE" leaks "$TMP/bad.db" --fail-on-leak --format json
[ $rc -eq 3 ] && jq_py "$TMP/out" '(d["offload_check"]["checked"] == 9 and
    d["offload_check"]["different"] == 2 and
    d["offload_check"]["packs"] == 9 and
    d["offload_check"]["moved_bytes"] == 2112 and
    [(x["step"], x["index"], x["differs"], x["where"]) for x in
     d["offload_check"]["first"]] == [(1, 2, ["contents", "strides"],
     "train.py:3"), (2, 0, ["dtype"], "train.py:3")] and
    d["offload_check"]["first"][0]["pack_site"] == "train.py:3 fwd")'
ok $? "leaks --format json: offload_check, exit 3 with --fail-on-leak too"
run "$VRAMTRACE" leaks "$TMP/bad.db" --format csv
[ $rc -eq 3 ] && grep -qF "$line" "$TMP/err" &&
    ! grep -q "offload" "$TMP/out"
ok $? "leaks --format csv: the line on stderr, exit 3"
run "$VRAMTRACE" report "$TMP/bad.db"
[ $rc -eq 3 ] && grep -qxF "check      $line" "$TMP/out"
ok $? "report: the line after the verdict, and exit 3"
run "$VRAMTRACE" report "$TMP/bad.db" --format json
[ $rc -eq 3 ] && jq_py "$TMP/out" 'd["offload_check"]["different"] == 2'
ok $? "report --format json: offload_check"

# Checked, nothing different; not checked at all.
grep -v '^check-diff' "$TMP/bad.txt" | sed 's/differ=1/differ=0/' \
    >"$TMP/clean.txt"
spool clean
run "$VRAMTRACE" leaks "$TMP/clean.db"
[ $rc -eq 0 ] && grep -qxF "offload check: 0 of 9 saved tensors came back different" "$TMP/out"
ok $? "a clean check: 0 of M, exit 0"
grep -v '^check-' "$TMP/bad.txt" >"$TMP/off.txt"
spool off
run "$VRAMTRACE" leaks "$TMP/off.db" --format json
[ $rc -eq 0 ] && jq_py "$TMP/out" 'd["offload_check"] is None' &&
    "$VRAMTRACE" report "$TMP/off.db" | grep -vq "offload check"
ok $? "a run not checked: offload_check null, no line, exit 0"

# A database made before the tables: read as not checked, given them by
# the next writer.
cp "$TMP/off.db" "$TMP/old.db"
drop_tables "$TMP/old.db"
run "$VRAMTRACE" leaks "$TMP/old.db" --format json
[ $rc -eq 0 ] && jq_py "$TMP/out" 'd["offload_check"] is None'
ok $? "a database without the tables: not checked, exit 0"
run "$VRAMTRACE" report "$TMP/old.db"
ok $rc "report on it too"
"$VRAMTRACE" replay "$TMP/bad.vtr" -o "$TMP/old.db" --append >/dev/null 2>&1
st=$?
run "$VRAMTRACE" leaks "$TMP/old.db" --run 2
[ $st -eq 0 ] && [ $rc -eq 3 ] && grep -qxF "$line" "$TMP/out" &&
    [ "$(q "$TMP/old.db" "SELECT count(*) FROM offload_check_engines")" = 2 ]
ok $? "replay --append into it: the tables and the view, the new run's rows"
run "$VRAMTRACE" leaks "$TMP/old.db" --run 1
ok $rc "its first run is still not checked"

# Merge: the stacks of differences are remapped with the other sites; a
# file without the tables merges.
run "$VRAMTRACE" merge --separate -o "$TMP/m.db" "$TMP/off.db" "$TMP/bad.db"
[ $rc -eq 0 ] && [ "$(q "$TMP/m.db" "SELECT d.run_id, count(*),
    group_concat(p.label, ';'), group_concat(u.label, ';')
    FROM offload_check_diffs d
    JOIN sites p ON p.id = d.pack_site_id JOIN sites u ON
    u.id = d.unpack_site_id GROUP BY d.run_id")" = \
    "2|2|train.py:3 fwd;train.py:3 fwd|<autograd>:0 MmBackward0;<autograd>:0 MmBackward0" ]
ok $? "merge: differences with their stacks, in the second run"
cp "$TMP/bad.db" "$TMP/bad2.db"
run "$VRAMTRACE" merge --separate -o "$TMP/m2.db" "$TMP/bad2.db" "$TMP/old.db"
[ $rc -eq 0 ] && [ "$(q "$TMP/m2.db" "SELECT run_id, sum(differ) FROM
    offload_check_steps GROUP BY run_id")" = "1|2 3|2" ]
ok $? "merge: steps rows of every run"
cp "$TMP/off.db" "$TMP/old2.db"
drop_tables "$TMP/old2.db"
run "$VRAMTRACE" merge --separate -o "$TMP/m3.db" "$TMP/bad.db" "$TMP/old2.db"
[ $rc -eq 0 ] && [ "$(q "$TMP/m3.db" "SELECT count(*) FROM offload_check_diffs")" = 2 ]
ok $? "merge: a file made before the tables adds nothing to them"
done_testing
