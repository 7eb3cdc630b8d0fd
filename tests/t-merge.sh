#!/bin/sh
# t-merge.sh: vramtrace merge: two single-rank files of one job become one
# run with both ranks, allocations and sites intact; --separate keeps them
# apart; snapshots survive; a bad input leaves no output.
. "${srcdir:-.}/tests/lib.sh"
plan 13

cat >"$TMP/r0.txt" <<'SPOOL'
process-start 1000 pid=10 rank=0 local_rank=0 host=node0 command="python train.py"
stream-create 1000 stream=13 device=0
alloc 1100 address=0x1000 bytes=1048576 stream=13 device=0 site="fwd@train.py:12|main@train.py:40"
step-end 1300
alloc 1350 address=0x2000 bytes=2097152 stream=13 device=0 site="fwd@train.py:12|main@train.py:40"
free 1400 address=0x1000 bytes=1048576 stream=13 device=0
memcpy 1450 bytes=4096 stream=13 end=1460 kind=2 src=0 dst=-1
step-end 1500
SPOOL
sed -e 's/pid=10 rank=0/pid=20 rank=1/' -e 's/node0/node1/' \
    -e 's/device=0/device=1/' -e 's/src=0/src=1/' \
    -e 's/fwd@train.py:12/bwd@train.py:30/' "$TMP/r0.txt" >"$TMP/r1.txt"
for r in r0 r1; do
	"$MKSPOOL" "$TMP/$r.txt" "$TMP/$r.vtr" &&
	    "$VRAMTRACE" replay "$TMP/$r.vtr" -o "$TMP/$r.db" || exit 99
done

q() { "$VRAMTRACE" sql "$1" "$2" --format csv | tail -n +2; }

run "$VRAMTRACE" merge "$TMP/r0.db" "$TMP/r1.db" -o "$TMP/all.db"
ok $rc "merge two rank files"
[ "$(q "$TMP/all.db" "select count(*) from runs")" = 1 ]
ok $? "one job: one run"
[ "$(q "$TMP/all.db" "select group_concat(rank || '@' || host, ' ') from (select * from processes order by rank)")" = "0@node0 1@node1" ]
ok $? "two processes, ranks 0 and 1, each with its host"
# Allocations by rank, device, bytes, times and site label, in both.
alloc_sql="select p.rank, a.device, a.stream, a.bytes, a.alloc_ns, a.free_ns,
  a.alloc_step, a.free_step, s.label from allocations a
  join processes p on p.id = a.process_id left join sites s on s.id = a.site_id
  order by 1, 2, 5"
{ q "$TMP/r0.db" "$alloc_sql"; q "$TMP/r1.db" "$alloc_sql"; } >"$TMP/want"
q "$TMP/all.db" "$alloc_sql" >"$TMP/got"
cmp -s "$TMP/want" "$TMP/got"
ok $? "allocations intact: rank, device, stream, bytes, times, steps, site"
[ "$(q "$TMP/all.db" "select count(*) from allocations where run_id <> 1 or process_id not in (select id from processes)")" = 0 ]
ok $? "every allocation belongs to the run and to a process"
[ "$(q "$TMP/all.db" "select group_concat(label, ';') from (select label from sites order by label)")" = "train.py:12 fwd;train.py:30 bwd" ]
ok $? "sites deduplicated by content, not by id"
[ "$(q "$TMP/all.db" "select count(*) from steps")" = 2 ] &&
    [ "$(q "$TMP/all.db" "select count(*) from memcpys")" = 2 ] &&
    [ "$(q "$TMP/all.db" "select count(*) from streams")" = 2 ]
ok $? "steps once, memcpys and streams of both"

run "$VRAMTRACE" merge --separate "$TMP/r0.db" "$TMP/r1.db" -o "$TMP/sep.db"
[ $rc -eq 0 ] && [ "$(q "$TMP/sep.db" "select count(*) from runs")" = 2 ] &&
    [ "$(q "$TMP/sep.db" "select count(distinct run_id) from allocations")" = 2 ]
ok $? "--separate keeps two runs"

sed -e 's/train.py"/eval.py"/' "$TMP/r1.txt" >"$TMP/eval.txt"
"$MKSPOOL" "$TMP/eval.txt" "$TMP/eval.vtr" &&
    "$VRAMTRACE" replay "$TMP/eval.vtr" -o "$TMP/eval.db" || exit 99
run "$VRAMTRACE" merge "$TMP/r0.db" "$TMP/eval.db" -o "$TMP/two.db"
[ $rc -eq 0 ] && [ "$(q "$TMP/two.db" "select count(*) from runs")" = 2 ]
ok $? "another command at the same time is another run"

if [ -f "$srcdir/examples/clean.pickle" ]; then
	"$VRAMTRACE" import "$srcdir/examples/clean.pickle" -o "$TMP/snap.db" \
	    >/dev/null || exit 99
	run "$VRAMTRACE" merge "$TMP/r0.db" "$TMP/snap.db" -o "$TMP/mix.db"
	n() { q "$1" "select (select count(*) from segments) || ' ' || (select count(*) from blocks) || ' ' || (select count(*) from blocks where segment_id not in (select id from segments))"; }
	[ $rc -eq 0 ] && [ "$(n "$TMP/mix.db")" = "$(n "$TMP/snap.db")" ] &&
	    [ "$(q "$TMP/mix.db" "select count(*) from runs")" = 2 ]
	ok $? "a snapshot's segments and blocks come along, linked"
else
	skip 1 "no examples/clean.pickle"
fi

run "$VRAMTRACE" merge "$TMP/r0.db" "$TMP/r1.db" -o "$TMP/all.db"
expect 1 'already exists' "merge refuses to overwrite"
printf 'not a database' >"$TMP/junk.db"
run "$VRAMTRACE" merge "$TMP/r0.db" "$TMP/junk.db" -o "$TMP/bad.db"
expect 1 'junk.db' "a bad input is named, exit 1"
[ ! -e "$TMP/bad.db" ] && [ -z "$(ls "$TMP" | grep 'bad.db.tmp')" ]
ok $? "...and no output is left behind"
done_testing
