#!/bin/sh
# t-merge.sh: vramtrace merge: two single-rank files of one job become one
# run with both ranks, allocations and sites intact; --separate keeps them
# apart; snapshots survive; a bad input leaves no output.  Then real node
# files, recorded from processes that carry the injection library's client
# and stack capture (tests/merge-node.py over tests/libstack-probe.so): the
# nodes of one job join by its identity although their commands differ,
# other jobs and runs whose ranks collide stay apart, Python stacks keep
# their kind, and files older than processes.job and sites.kind merge.
. "${srcdir:-.}/tests/lib.sh"
: "${top_builddir:=.}"
PROBE=$top_builddir/tests/libstack-probe.so
unset VRAMTRACE_SOCKET VRAMTRACE_OUTPUT TORCHELASTIC_RUN_ID MASTER_ADDR \
    MASTER_PORT SLURM_JOB_ID RANK LOCAL_RANK
plan 22

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
expect 7 'already exists' "merge refuses to overwrite, exit 7"
printf 'not a database' >"$TMP/junk.db"
run "$VRAMTRACE" merge "$TMP/r0.db" "$TMP/junk.db" -o "$TMP/bad.db"
expect 4 'junk.db' "a bad input is named, exit 4"
[ ! -e "$TMP/bad.db" ] && [ -z "$(ls "$TMP" | grep 'bad.db.tmp')" ]
ok $? "...and no output is left behind"
# job NAME NODES: nodes NODES of job NAME will wait for each other in
# $TMP/NAME, so that their processes overlap like the nodes of a job.
job() {
	mkdir -p "$TMP/$1" && echo "$2" >"$TMP/$1/nodes"
}

# node NAME NODE ENV... [-- ARG...]: record node NODE of job NAME in the
# background into $TMP/NAME-NODE.db, with the environment ENV, and ARGs
# at the end of its command line.
node() {
	name=$1 id=$2
	shift 2
	set -- "$@" --
	envs=
	while [ "$1" != -- ]; do
		envs="$envs $1"
		shift
	done
	shift
	# shellcheck disable=SC2086
	env $envs VRAMTRACE_INJECT_LIBRARY="$PROBE" "$VRAMTRACE" record \
	    -o "$TMP/$name-$id.db" -- "$PY" "$srcdir/tests/merge-node.py" \
	    "$PROBE" "$TMP/$name" "$id" "$@" >/dev/null 2>"$TMP/$name-$id.err" &
}

# recorded NAME: wait for the nodes of NAME; 0 when each wrote its file.
recorded() {
	wait
	for id in $(cat "$TMP/$1/nodes"); do
		[ -s "$TMP/$1-$id.db" ] || { cat "$TMP/$1-$id.err"; return 1; }
	done
}

if ! "$PY" -c 'import ctypes' 2>/dev/null; then
	skip 9 "no python3 with ctypes"
	done_testing
	exit 0
fi
sanitize_python "$PROBE" || exit 99

job job "0 1"
node job 0 RANK=0 TORCHELASTIC_RUN_ID=job-42 -- --node_rank=0
node job 1 RANK=1 TORCHELASTIC_RUN_ID=job-42 -- --node_rank=1
recorded job || exit 99
run "$VRAMTRACE" merge "$TMP/job-0.db" "$TMP/job-1.db" -o "$TMP/job.db"
[ $rc -eq 0 ] && [ "$(q "$TMP/job.db" "select count(*) from runs")" = 1 ] &&
    [ "$(q "$TMP/job.db" "select group_concat(rank || ' ' || job, ';') from (select * from processes order by rank)")" = "0 rdzv_id=job-42;1 rdzv_id=job-42" ]
ok $? "two nodes of one job, commands differing by --node_rank: one run, both ranks"
grep -q "job-1.db: run 1 joins run 1: both name job rdzv_id=job-42" \
    "$TMP/out"
ok $? "merge says which run joined which, and why"
[ "$(q "$TMP/job.db" "select group_concat(x, ';') from (select s.kind || ' ' || substr(s.label, instr(s.label, 'merge-node.py')) || ' ' || group_concat(p.rank, '+') as x from allocations a join sites s on s.id = a.site_id join processes p on p.id = a.process_id group by s.id order by s.label)")" = \
    "python merge-node.py:21 alloc_weights 0+1;python merge-node.py:25 alloc_grads 0+1" ]
ok $? "one site per Python stack, kind python, holding both ranks' blocks"
[ "$(q "$TMP/job.db" "select count(*) from site_frames sf join frames f on f.id = sf.frame_id where f.name = 'main'")" = 2 ]
ok $? "...with their whole stacks"

job two "0 1"
node two 0 RANK=0 TORCHELASTIC_RUN_ID=job-43
node two 1 RANK=1 TORCHELASTIC_RUN_ID=job-44
recorded two || exit 99
run "$VRAMTRACE" merge "$TMP/two-0.db" "$TMP/two-1.db" -o "$TMP/jobs.db"
[ $rc -eq 0 ] && [ "$(q "$TMP/jobs.db" "select count(*) from runs")" = 2 ] &&
    ! grep -q joins "$TMP/out"
ok $? "the same command at the same time in another job: another run"

job bare "a b"
node bare a RANK=0
node bare b RANK=0
recorded bare || exit 99
run "$VRAMTRACE" merge "$TMP/bare-a.db" "$TMP/bare-b.db" -o "$TMP/b.db"
[ $rc -eq 0 ] && [ "$(q "$TMP/b.db" "select count(*) from runs")" = 2 ]
ok $? "no job named, same command and time, rank 0 in both: two runs"

job master "0 1"
node master 0 TORCHELASTIC_RUN_ID=none MASTER_ADDR=10.1.2.3 MASTER_PORT=29500
node master 1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500
recorded master || exit 99
[ "$(q "$TMP/master-0.db" "select job from processes")" = \
    "master=10.1.2.3:29500" ] &&
    [ "$(q "$TMP/master-1.db" "select count(job) from processes")" = 0 ]
ok $? "without a rendezvous id the master names the job, unless loopback"

# A file written before processes.job and sites.kind existed.
if ! command -v sqlite3 >/dev/null; then
	skip 2 "no sqlite3 to make an older file"
	done_testing
	exit
fi
cp "$TMP/job-1.db" "$TMP/old.db"
sqlite3 "$TMP/old.db" "alter table processes drop column job;
    alter table sites drop column kind" || exit 99
run "$VRAMTRACE" merge "$TMP/old.db" -o "$TMP/old-m.db"
[ $rc -eq 0 ] && [ "$(q "$TMP/old-m.db" "select count(job) || ' ' || (select count(kind) from sites) from processes")" = "0 0" ]
ok $? "an older file merges: no job, no kinds"
run "$VRAMTRACE" merge "$TMP/job-0.db" "$TMP/old.db" -o "$TMP/mixed.db"
[ $rc -eq 0 ] && [ "$(q "$TMP/mixed.db" "select count(*) from runs")" = 2 ] &&
    [ "$(q "$TMP/mixed.db" "select group_concat(kind, ' ') from sites")" = "python python" ]
ok $? "...and beside a newer one: commands differ, two runs; kinds kept"

done_testing
