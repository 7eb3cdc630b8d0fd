#!/bin/sh
# t-record-faults.sh: record keeps the traced command's life and exit
# status whatever happens to the database or to its own descriptors.
#
# The traced commands are real processes: tests/t-client-writer sends
# events through client.c as a traced process does.  Faults:
#  - a database that refuses rows (a trigger, as t-write-errors.sh does),
#    and a real full disk: a file size limit (RLIMIT_FSIZE), under which a
#    write fails with EFBIG once SIGXFSZ is caught;
#  - a descendant of the command that outlives it and keeps sending;
#  - too few file descriptors (RLIMIT_NOFILE) for every traced process,
#    while the command runs and when record ends (lim.py lowers record's
#    own limit from inside the command, so that it has as many free as a
#    check needs).
# TAP output.
. "${srcdir:-.}/tests/lib.sh"
plan 43
W="${top_builddir:-.}/tests/t-client-writer"
unset VRAMTRACE_SOCKET VRAMTRACE_OUTPUT PYTORCH_CUDA_ALLOC_CONF \
    VRAMTRACE_STACKS VRAMTRACE_TORCH_HISTORY VRAMTRACE_CHECK_OFFLOAD

q() {	# q DB SQL: the rows, comma-separated, on one line
	"$VRAMTRACE" sql "$1" "$2" --format csv | sed 1d | tr '\n' ' ' |
	    sed 's/ $//'
}
lines() {	# lines PATTERN: how many lines of the last stderr match
	grep -Ec -- "$1" "$TMP/err"
}
show() {	# show: the last stderr, as TAP comments
	sed 's/^/#   /' "$TMP/err"
}

# refuse DB WHAT MESSAGE: make DB refuse WHAT ("INSERT ON allocations")
# with MESSAGE, through a trigger.
refuse() {
	"$PY" -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("CREATE TRIGGER \"refuse %s\" BEFORE %s BEGIN SELECT"
    " RAISE(ABORT, \x27%s\x27); END" % (sys.argv[2], sys.argv[2], sys.argv[3]))
c.commit()' "$@"
}

# refused NAME WHAT MESSAGE DOING: record a run into $TMP/NAME.db, make it
# refuse WHAT with MESSAGE, and record a second run into it (run: $rc,
# $TMP/err) whose command sends the set and exits 3; check that the
# command ran to its end and that record exits with its status.
refused() {
	"$VRAMTRACE" record -o "$TMP/$1.db" -- "$W" send 2>/dev/null
	refuse "$TMP/$1.db" "$2" "$3"
	run "$VRAMTRACE" record --append -o "$TMP/$1.db" -- sh -c \
	    "\"$W\" send && echo ran >\"$TMP/$1.ran\"; exit 3"
	[ "$rc" -eq 3 ] && [ -s "$TMP/$1.ran" ]
	ok $? "$4: the command runs to its end, record exits with its status ($rc)"
}

# limited LIMIT SOFT[:HARD] CMD...: run CMD with the resource limit LIMIT
# (NOFILE, FSIZE) set to SOFT and HARD (SOFT too when not given).
limited() {
	"$PY" -c 'import resource, subprocess, sys
lim = getattr(resource, "RLIMIT_" + sys.argv[1])
v = [int(x) for x in (sys.argv[2] + ":" + sys.argv[2]).split(":")[:2]]
sys.exit(subprocess.call(sys.argv[3:], preexec_fn=lambda:
    resource.setrlimit(lim, tuple(v))))' "$@"
}

# 1. The database refuses rows in the middle of the run (a trigger): the
# command runs to its end, its status is record's, and the run keeps what
# was committed, marked unfinished.
refused refuse "INSERT ON allocations" "no new allocations" \
    "database refusing rows"
[ "$(lines 'refuse.db: cannot write to allocations: no new allocations; recording stops at \+[0-9.]+s: the run keeps what was committed until then and stays marked unfinished, and the command runs on$')" = 1 ] &&
    [ "$(lines '^vramtrace: [0-9]+ of the [0-9]+ events received are lost: all those not committed by \+[0-9.]+s \(the last commit\)$')" = 1 ]
st=$?; [ $st -eq 0 ] || show
ok $st "...one line when it fails, one saying what was lost"
got=$(q "$TMP/refuse.db" "select id, complete from runs")
[ "$got" = "1,1 2,0" ] &&
    [ "$(q "$TMP/refuse.db" "pragma integrity_check")" = ok ] &&
    [ "$(q "$TMP/refuse.db" "select count(*) from allocations")" = 10 ]
ok $? "...the run stays unfinished, the database whole, the first run untouched ($got)"
got=$(q "$TMP/refuse.db" "select exit_status, end_ns >= start_ns from runs
    where id = 2")
[ "$got" = "3,1" ]
ok $? "...with the command's exit status and end time, which the database still takes ($got)"
[ "$(lines '^vramtrace: run 2 of .*refuse.db \(unfinished; its exit status and end time are stored\): 0 processes, 0 allocations')" = 1 ]
st=$?; [ $st -eq 0 ] || show
ok $st "...and the closing line says what was stored"
"$VRAMTRACE" leaks --run 2 --fail-on-leak "$TMP/refuse.db" >"$TMP/out" \
    2>&1
[ $? -eq 6 ] && grep -q '^not finished: .*its database failed' "$TMP/out"
ok $? "...and leaks says so: not finished, exit 6 under --fail-on-leak"

# A database that refuses the end too: the closing line says so, and the
# run is left as the last commit made it.
cp "$TMP/refuse.db" "$TMP/noend.db"
refuse "$TMP/noend.db" "UPDATE ON runs" "no updates"
run "$VRAMTRACE" record --append -o "$TMP/noend.db" -- sh -c "\"$W\" send; exit 3"
got=$(q "$TMP/noend.db" "select complete, exit_status is null, end_ns is null
    from runs where id = 3")
[ "$rc" -eq 3 ] && [ "$got" = "0,1,1" ] &&
    [ "$(lines '^vramtrace: run 3 of .*noend.db \(unfinished; its exit status and end time are not stored either: .*noend.db: cannot end the run: no updates\): ')" = 1 ]
st=$?; [ $st -eq 0 ] || show
ok $st "database refusing the end too: the command's status, and the closing line says nothing more was stored ($rc; $got)"

# 2. A full disk for real: a file size limit of 1 MB on record and what it
# runs.  The writer sends 200 batches of 1500 events over 4 s.
run limited FSIZE 1000000 "$VRAMTRACE" record -o "$TMP/full.db" -- sh -c \
    "\"$W\" bulk 200 && echo ran >\"$TMP/full.ran\"; exit 3"
[ "$rc" -eq 3 ] && [ -s "$TMP/full.ran" ]
ok $? "file size limit: the command runs to its end, record exits with its status ($rc)"
[ "$(lines 'full.db: cannot commit: disk I/O error \(the file size limit, ulimit -f, is reached\); recording stops at')" = 1 ]
st=$?; [ $st -eq 0 ] || show
ok $st "...one line naming the cause (SIGXFSZ caught, the write fails)"
set -- $(sed -n 's/^vramtrace: \([0-9]*\) of the \([0-9]*\) events received are lost.*/\1 \2/p' "$TMP/err")
[ "${1:-0}" -gt 0 ] && [ "${2:-0}" -ge 300000 ] && [ "$1" -lt "$2" ]
ok $? "...every event sent was read, and the lost ones counted (${1:-?} of ${2:-?})"
# How much was committed before the limit, and whether the end still fits
# (the rolled back space usually takes it), depend on the machine's pace:
# what is checked is that the file is whole and says what record says.
got=$(q "$TMP/full.db" "select complete, coalesce(exit_status, 'none'),
    (select count(*) > 0 from allocations) from runs")
stored=$(lines 'run 1 of .*full.db \(unfinished; its exit status and end time are stored\): 1 process, [0-9]+ allocations')
unstored=$(lines 'run 1 of .*full.db \(unfinished; its exit status and end time are not stored either: .*full.db: .*\): 1 process, [0-9]+ allocations')
{ { [ "$got" = "0,3,1" ] && [ "$stored" = 1 ] && [ "$unstored" = 0 ]; } ||
  { [ "$got" = "0,none,1" ] && [ "$stored" = 0 ] && [ "$unstored" = 1 ]; }; } &&
    [ "$(q "$TMP/full.db" "pragma integrity_check")" = ok ]
st=$?; [ $st -eq 0 ] || show
ok $st "...the run holds what was committed, unfinished, with the command's exit status exactly when record's last word says it is stored, and the database is whole ($got; stored $stored, not stored $unstored)"
"$VRAMTRACE" leaks "$TMP/full.db" >"$TMP/out" 2>&1
grep -q '^not finished: ' "$TMP/out"
ok $? "...leaks says the run is not finished"

# 2b. The database fails only when the run is being finished (its
# summaries): every event is kept, the run stays unfinished with the
# command's exit status, and no summary of it is left half written.
refused finish "INSERT ON allocation_top" "no summaries" \
    "failure while finishing"
[ "$(lines 'finish.db: cannot [a-z_ ]*: no summaries; run 2 stays marked unfinished, with every event recorded$')" = 1 ] &&
    [ "$(grep -vc '^vramtrace: \(run 2 of\|next: \)' "$TMP/err")" = 1 ]
st=$?; [ $st -eq 0 ] || show
ok $st "...one line saying so, besides the closing lines"
got=$(q "$TMP/finish.db" "select id, complete, exit_status, end_ns >= start_ns,
    (select count(*) from allocations a where a.run_id = r.id),
    (select count(*) from allocation_groups g where g.run_id = r.id) +
    (select count(*) from allocation_top t where t.run_id = r.id) +
    (select count(*) from allocation_steps s where s.run_id = r.id) > 0
    from runs r")
[ "$got" = "1,1,0,1,10,1 2,0,3,1,10,0" ] &&
    [ "$(q "$TMP/finish.db" "pragma integrity_check")" = ok ]
ok $? "...every event kept, the run unfinished with its exit status and end time, no summary of it, the first run untouched ($got)"
[ "$(lines '^vramtrace: run 2 of .*finish.db \(unfinished; its exit status and end time are stored\): 1 process, 10 allocations, 3 steps')" = 1 ]
ok $? "...and the closing line says what was stored"
"$VRAMTRACE" leaks --run 2 --fail-on-leak "$TMP/finish.db" >"$TMP/out" 2>&1
[ $? -eq 6 ] && grep -q '^not finished: ' "$TMP/out"
ok $? "...leaks says the run is not finished, exit 6 under --fail-on-leak"

# 3. A descendant that outlives the command and keeps sending: record
# ends soon after the command, keeps what arrived, says so in one line; the
# descendant runs on, told once that its events are no longer recorded.
mkdir "$TMP/orphan"
O=$TMP/orphan
run "$VRAMTRACE" record -o "$TMP/orphan.db" -- sh -c "\"$W\" stream \"$O\" \
    2>\"$O/err\" & while [ ! -s \"$O/pid\" ]; do sleep 0.05; done; exit 5"
pid=$(cat "$O/pid" 2>/dev/null)
# It writes done when it ends (not kill -0: an orphan may stay a zombie).
[ "$rc" -eq 5 ] && [ ! -e "$O/done" ]
ok $? "descendant still sending: record ends with the command's status while it runs ($rc)"
[ "$(lines "^vramtrace: 1 process \\(pid $pid\\) still connected [0-9.]+s after the command ended, descendants that outlive it: what they sent until now is recorded, what they send later is not\$")" = 1 ]
st=$?; [ $st -eq 0 ] || show
ok $st "...one line naming it and what it means"
got=$(q "$TMP/orphan.db" "select complete, exit_status, (select count(*) >
    10 from allocations) from runs")
[ "$got" = "1,5,1" ] &&
    [ "$(q "$TMP/orphan.db" "pragma integrity_check")" = ok ]
ok $? "...what it sent until then is stored, the run finished ($got)"
touch "$O/stop"
i=0
while [ ! -e "$O/done" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
[ -e "$O/done" ] && [ "$(grep -c 'cannot send events' "$O/err")" = 1 ]
st=$?; [ $st -eq 0 ] || sed 's/^/#   /' "$O/err"
ok $st "...the descendant runs to its end, with one warning of its own"

# --grace-ms: a shorter grace names the descendant after it; one longer
# than the descendant's life (it stops 3 s after the command, past the
# default 2 s) has record wait for it and keep all it sent.
mkdir "$TMP/grace"
G=$TMP/grace
run "$VRAMTRACE" record --grace-ms 300 -o "$TMP/grace.db" -- sh -c "\"$W\" \
    stream \"$G\" 2>\"$G/err\" & while [ ! -s \"$G/pid\" ]; do sleep 0.05; \
    done; exit 5"
[ "$rc" -eq 5 ] && [ ! -e "$G/done" ] &&
    [ "$(lines "^vramtrace: 1 process \\(pid [0-9]+\\) still connected 0.3s after the command ended")" = 1 ]
st=$?; [ $st -eq 0 ] || show
ok $st "--grace-ms 300: record ends with the command's status, naming the descendant 0.3 s after ($rc)"
touch "$G/stop"
i=0
while [ ! -e "$G/done" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
run "$VRAMTRACE" record --grace-ms 0 -o "$TMP/grace0.db" -- "$W" bulk 20
got=$(q "$TMP/grace0.db" "select complete, exit_status, (select count(*)
    from allocations) from runs")
[ "$rc" -eq 0 ] && [ "$got" = "1,0,20010" ] &&
    [ "$(lines 'still connected')" = 0 ]
st=$?; [ $st -eq 0 ] || show
ok $st "--grace-ms 0: record ends with the command, keeping all it sent ($got)"
mkdir "$TMP/grace2"
G=$TMP/grace2
run "$VRAMTRACE" record --grace-ms 60000 -o "$TMP/grace2.db" -- sh -c "\"$W\" \
    stream \"$G\" 2>\"$G/err\" & while [ ! -s \"$G/pid\" ]; do sleep 0.05; \
    done; (sleep 3; touch \"$G/stop\") & exit 5"
got=$(q "$TMP/grace2.db" "select complete, exit_status, (select count(*)
    from allocations) from runs")
[ "$rc" -eq 5 ] && [ -s "$G/done" ] && [ ! -s "$G/err" ] &&
    [ "$got" = "1,5,$((10 + $(cat "$G/done" 2>/dev/null || echo 0)))" ] &&
    [ "$(lines 'still connected')" = 0 ]
st=$?; [ $st -eq 0 ] || { show; sed 's/^/#   /' "$G/err"; }
ok $st "--grace-ms 60000: record waits for the descendant to end and keeps all it sent ($rc; $got; $(cat "$G/done" 2>/dev/null) pairs)"

# 4. Out of file descriptors: 8 processes connect at once, with 16
# descriptors for record, which takes about 5 of them.  The others wait in
# the socket's backlog, without a busy loop, until a descriptor frees up:
# first they stay (and are turned away once they waited 5 s), then they
# end as soon as they are ready (and those waiting get descriptors).
cat >"$TMP/cpu.py" <<'PY'
import os, resource, subprocess, sys, time
# cpu.py NOFILE DIR N WAIT CMD...: run CMD with that many descriptors, its
# stderr in DIR/err; once N processes are ready (DIR/ready.*), print its
# CPU seconds over 2 s, and wait until DIR/err has WAIT (30 s at most);
# with WAIT "-", none of that.  Then stop them (DIR/stop) and print CMD's
# status.
lim, d, n, want = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
err = open(os.path.join(d, "err"), "w")
p = subprocess.Popen(sys.argv[5:], stderr=err, preexec_fn=lambda:
                     resource.setrlimit(resource.RLIMIT_NOFILE, (lim, lim)))
def cpu():
    f = open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
for i in range(1000):
    if sum(x.startswith("ready.") for x in os.listdir(d)) >= n:
        break
    time.sleep(0.02)
if want != "-":
    c0 = cpu()
    time.sleep(2)
    print("%.2f" % (cpu() - c0))
    for i in range(300):
        if want in open(os.path.join(d, "err")).read():
            break
        time.sleep(0.1)
open(os.path.join(d, "stop"), "w").close()
print(p.wait())
PY
mkdir "$TMP/fds"
set -- $("$PY" "$TMP/cpu.py" 16 "$TMP/fds" 8 "turned away" "$VRAMTRACE" \
    record -o "$TMP/fds.db" -- "$W" hold 8 "$TMP/fds")
cp "$TMP/fds/err" "$TMP/err"
[ "${2:-x}" = 0 ]
ok $? "out of descriptors, processes that stay: the command runs to its end, its status is record's (${2:-?})"
"$PY" -c 'import sys; sys.exit(float(sys.argv[1]) >= 0.5)' "${1:-9}"
ok $? "...no busy loop: record used ${1:-?} s of CPU in the 2 s the processes stayed connected or waiting"
[ "$(lines '^vramtrace: out of file descriptors \(Too many open files; [0-9]+ processes connected, limit 16\): none freed up for 5.0s, so a new process was turned away, and events from processes that connect while none frees up within 5.0s are lost \(raise ulimit -n, or --fd-wait-ms\)$')" = 1 ]
st=$?; [ $st -eq 0 ] || show
ok $st "...one line, once they waited 5 s, saying events from new processes are lost"
got=$(q "$TMP/fds.db" "select count(distinct process_id) between 1 and 7,
    count(*) = 10 * count(distinct process_id) from allocations")
[ "$got" = "1,1" ]
ok $? "...the processes taken are stored whole, those turned away not at all ($got)"
[ "$(lines '^vramtrace: [0-9]+ processes were turned away for want of file descriptors: the run lacks their events and stays marked unfinished$')" = 1 ]
st=$?; [ $st -eq 0 ] || show
ok $st "...and the end says how many were turned away"
got=$(q "$TMP/fds.db" "select complete, exit_status from runs")
[ "$got" = "0,0" ] &&
    [ "$(lines '^vramtrace: run 1 of .*fds.db \(unfinished: it lacks the processes turned away; every event received is stored\): [1-7] process')" = 1 ]
st=$?; [ $st -eq 0 ] || show
ok $st "...the run, which lacks them, stays unfinished with its exit status, and the closing line says so ($got)"
"$VRAMTRACE" leaks --fail-on-leak "$TMP/fds.db" >"$TMP/out" 2>&1
[ $? -eq 6 ] && grep -q '^not finished: .*lacks processes record turned away' \
    "$TMP/out"
ok $? "...so leaks says not finished, exit 6 under --fail-on-leak: never a CLEAN for a run that lost a process"
mkdir "$TMP/fds2"
set -- $("$PY" "$TMP/cpu.py" 16 "$TMP/fds2" 8 - "$VRAMTRACE" record \
    -o "$TMP/fds2.db" -- "$W" hold 8 "$TMP/fds2")
cp "$TMP/fds2/err" "$TMP/err"
got=$(q "$TMP/fds2.db" "select count(distinct process_id), count(*) from
    allocations")
[ "${1:-x}" = 0 ] && [ "$got" = "8,80" ] && [ "$(lines 'turned away')" = 0 ]
st=$?; [ $st -eq 0 ] || show
ok $st "out of descriptors, processes that end: those waiting get the descriptors they free, every process stored whole (${1:-?}; $got)"

# 4b. Out of descriptors when record ends.  lim.py, run by the command,
# lowers record's limit to leave it FREE descriptors; N processes connect
# and stay (those beyond FREE wait in the backlog), the command exits.
cat >"$TMP/lim.py" <<'PY'
import os, resource, sys
# lim.py PID FREE: lower process PID's descriptor limit (soft and hard) to
# its first unused descriptor number plus FREE: it has FREE left.
pid, free = int(sys.argv[1]), int(sys.argv[2])
used = set(int(fd) for fd in os.listdir("/proc/%d/fd" % pid))
lim = 0
while lim in used:
    lim += 1
resource.prlimit(pid, resource.RLIMIT_NOFILE, (lim + free, lim + free))
PY
# held NAME FREE N READY UNTIL [OPTION...]: record into $TMP/NAME.db with
# OPTIONs (run: $rc, $TMP/err) a command that leaves record FREE
# descriptors, starts N processes that send the set each and stay until
# told to stop (t-client-writer hold, their stderr in $TMP/NAME/err),
# waits until READY of them are ready and record's stderr has UNTIL (if
# not empty; 60 s at most in all), and exits 4; then stop them.
held() {
	h=$TMP/$1
	mkdir "$h"
	set -- "$@" -o "$h.db" -- sh -c "
	    \"$PY\" \"$TMP/lim.py\" \$PPID $2 || exit 9
	    \"$W\" hold $3 \"$h\" 2>\"$h/err\" &
	    i=0
	    while [ \$(ls \"$h\" | grep -c '^ready') -lt $4 ] &&
	        [ \$i -lt 600 ]; do sleep 0.05; i=\$((i + 1)); done
	    while [ -n '$5' ] && ! grep -q '$5' \"$TMP/err\" &&
	        [ \$i -lt 1200 ]; do sleep 0.05; i=\$((i + 1)); done
	    sleep 0.3
	    exit 4"
	shift 5
	run "$VRAMTRACE" record "$@"
	touch "$h/stop"
}

# Those waiting take the descriptors that closing the others frees, pass
# after pass: 2 free, 6 processes, all stored whole, nothing turned away.
held take 2 6 6 "" --grace-ms 0
got=$(q "$TMP/take.db" "select complete, exit_status, (select
    count(distinct process_id) || '/' || count(*) from allocations) from runs")
[ "$rc" -eq 4 ] && [ "$got" = "1,4,6/60" ] &&
    [ "$(lines 'turned away')" = 0 ]
st=$?; [ $st -eq 0 ] || show
ok $st "out of descriptors at the end: those still waiting take the descriptors the others free, every process stored whole, the run finished ($rc; $got)"

# None free at all: each one waiting is turned away at the end, counted
# and said, and the run that lacks them is never finished (nor CLEAN).
held none 0 3 3 "" --grace-ms 0
got=$(q "$TMP/none.db" "select complete, exit_status, (select count(*)
    from allocations) from runs")
[ "$rc" -eq 4 ] && [ "$got" = "0,4,0" ] &&
    [ "$(lines '^vramtrace: 3 processes were turned away for want of file descriptors \(3 of them still waiting for one when record ended\): the run lacks their events and stays marked unfinished$')" = 1 ] &&
    [ "$(lines '^vramtrace: run 1 of .*none.db \(unfinished: it lacks the processes turned away; every event received is stored\): 0 processes')" = 1 ]
st=$?; [ $st -eq 0 ] || show
ok $st "no descriptor at the end: the 3 processes waiting are turned away, counted and said, and the run stays unfinished ($rc; $got)"
"$VRAMTRACE" leaks --fail-on-leak "$TMP/none.db" >"$TMP/out" 2>&1
[ $? -eq 6 ] && grep -q '^not finished: ' "$TMP/out"
ok $? "...leaks: not finished, exit 6 under --fail-on-leak"

# --fd-wait-ms: how long one waits for a descriptor while the command runs
# (default 5000, as above); 300 turns them away after 0.3 s.
held wait 0 2 2 "turned away" --fd-wait-ms 300
got=$(q "$TMP/wait.db" "select complete, exit_status from runs")
[ "$rc" -eq 4 ] && [ "$got" = "0,4" ] &&
    [ "$(lines '^vramtrace: out of file descriptors \(Too many open files; 0 processes connected, limit [0-9]+\): none freed up for 0.3s, so a new process was turned away, and events from processes that connect while none frees up within 0.3s are lost \(raise ulimit -n, or --fd-wait-ms\)$')" = 1 ] &&
    [ "$(lines '^vramtrace: 2 processes were turned away for want of file descriptors( \(1 of them still waiting for one when record ended\))?: the run lacks their events')" = 1 ]
st=$?; [ $st -eq 0 ] || show
ok $st "--fd-wait-ms 300: turned away after 0.3 s while the command runs, counted at the end, the run unfinished ($rc; $got)"

# A backlog found full at the end: processes blocked in connect() behind
# it cannot be counted (the socket's name is gone when they retry), so the
# run stays unfinished even though every one waiting was taken.  8 free,
# 8 + backlog + 1 connected or waiting, 8 more blocked.
b=$(cat /proc/sys/net/core/somaxconn 2>/dev/null || echo 128)
[ "$b" -gt 128 ] && b=128
held backlog 8 $((b + 17)) $((b + 9)) "" --grace-ms 0 --fd-wait-ms 600000
# (Counted as words: their lines can interleave.)
unconnected() {
	grep -o 'cannot connect to the collector' "$TMP/backlog/err" | wc -l |
	    tr -d ' '
}
i=0
while [ "$(unconnected)" -lt 8 ] && [ $i -lt 200 ]; do
	sleep 0.05
	i=$((i + 1))
done
got=$(q "$TMP/backlog.db" "select complete, exit_status, (select
    count(distinct process_id) from allocations) from runs")
[ "$rc" -eq 4 ] && [ "$got" = "0,4,$((b + 9))" ] &&
    [ "$(lines "^vramtrace: $((b + 1)) processes waited to connect when record ended, as many as its socket holds: those that waited behind them, if any, could not connect \\(each says so\\), the run lacks their events and stays marked unfinished\$")" = 1 ] &&
    [ "$(lines 'turned away for want')" = 0 ] &&
    [ "$(unconnected)" = 8 ]
st=$?; [ $st -eq 0 ] || show
ok $st "a backlog full at the end: every process waiting taken, those blocked behind it say they could not connect, and the run stays unfinished ($rc; $got; $(unconnected) could not connect)"

# 5. record's stderr is a pipe that closes (record ... 2>&1 | head): record
# goes on without its messages, waits for the command, keeps its status
# and ends the run.  The command gets SIGPIPE as record found it (the
# default here), so its own writes to that pipe would end it as they would
# without record.  First with the database refusing rows, whose warning
# comes while the command runs (record used to die of SIGPIPE then and
# leave the command running, orphaned), then a run that goes well.
mkdir "$TMP/pipe"
P=$TMP/pipe
cp "$TMP/refuse.db" "$TMP/pipe.db"
{ "$VRAMTRACE" record --append -o "$TMP/pipe.db" -- sh -c "sleep 0.5; \
    \"$W\" send; sleep 0.5; grep SigIgn /proc/self/status >\"$P/sig\"; \
    exit 3" 2>&1 >/dev/null; echo $? >"$P/rc"; [ -s "$P/sig" ] &&
    echo after >"$P/order"; } | true
i=0
while [ ! -s "$P/sig" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
[ "$(cat "$P/rc")" = 3 ] && [ -s "$P/order" ]
ok $? "stderr a pipe that closed, database failing: record outlives it, waits for the command and exits with its status ($(cat "$P/rc"))"
got=$(q "$TMP/pipe.db" "select complete, exit_status from runs where id = 3")
[ "$got" = "0,3" ]
ok $? "...the run ends unfinished with the command's exit status ($got)"
[ "$(( 0x$(sed -n 's/SigIgn:\t*//p' "$P/sig") & 0x1000 ))" = 0 ]
ok $? "...and the command takes SIGPIPE as record found it, the default"
{ "$VRAMTRACE" record -o "$TMP/pipe2.db" -- sh -c "\"$W\" send; exit 4" \
    2>&1 >/dev/null; echo $? >"$P/rc2"; } | true
got=$(q "$TMP/pipe2.db" "select complete, exit_status from runs")
[ "$(cat "$P/rc2")" = 4 ] && [ "$got" = "1,4" ]
ok $? "stderr a pipe that closed: the command's status ($(cat "$P/rc2")) and the run finished ($got)"

# The traced processes' own vramtrace lines go to that pipe too: a
# descendant that outlives record, told once that its events can no longer
# be sent, runs on (its client takes back the SIGPIPE of its line).
mkdir "$TMP/pipe3"
D=$TMP/pipe3
{ "$VRAMTRACE" record --grace-ms 0 -o "$TMP/pipe3.db" -- sh -c "\"$W\" \
    stream \"$D\" & while [ ! -s \"$D/pid\" ]; do sleep 0.05; done; exit 5" \
    2>&1 >/dev/null; } | true
sleep 0.5
touch "$D/stop"
i=0
while [ ! -e "$D/done" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
[ -s "$D/done" ]
ok $? "...and a descendant whose line goes to it runs to its end"

# 6. The child starts as it would without record: the descriptor limit
# (record raises its soft limit to the hard one), SIGXFSZ (which record
# catches) and SIGPIPE (which record ignores; here both come in ignored)
# are as record found them.
"$PY" -c 'import resource, signal, subprocess, sys
def limit():
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 4096))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
sys.exit(subprocess.call(sys.argv[1:], preexec_fn=limit))' \
    "$VRAMTRACE" record -o "$TMP/env.db" -- sh -c \
    'ulimit -n; grep SigIgn /proc/self/status' >"$TMP/out" 2>"$TMP/err"
[ "$(head -n 1 "$TMP/out")" = 64 ] &&
    [ "$(( 0x$(sed -n 's/SigIgn:\t*//p' "$TMP/out") & 0x1001000 ))" = \
    $((0x1001000)) ]
st=$?; [ $st -eq 0 ] || sed 's/^/#   /' "$TMP/out"
ok $st "the command gets the descriptor limit, SIGXFSZ and SIGPIPE as record found them"
done_testing
