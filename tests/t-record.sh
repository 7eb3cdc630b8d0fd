#!/bin/sh
# t-record.sh: vramtrace record and the client, without a GPU.
#
# tests/t-client-writer stands in for a traced process: it sends a known set
# of events through client.c (10 pool allocations of 1..10 KiB on stream 13,
# the odd-numbered half freed, 3 step ends, 6 marks).  Also: what record
# says at the end, a command that cannot run, and the environment the
# options give the command (stacks, the allocator, the sitecustomize).  TAP
# output.

: "${VRAMTRACE:=./vramtrace}"
: "${top_builddir:=.}"
WRITER="$top_builddir/tests/t-client-writer"
T=$(mktemp -d "${TMPDIR:-/tmp}/t-record.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT
unset VRAMTRACE_SOCKET VRAMTRACE_OUTPUT PYTORCH_CUDA_ALLOC_CONF VRAMTRACE_STACKS \
    VRAMTRACE_STACK_DEPTH VRAMTRACE_TORCH_HISTORY VRAMTRACE_TORCH_STEPS \
    VRAMTRACE_CHECK_OFFLOAD VRAMTRACE_TORCH_ASYNC

echo 1..34
n=0
ok() {
	n=$((n + 1))
	if [ "$1" = "$2" ]; then
		echo "ok $n - $3"
	else
		echo "not ok $n - $3"
		echo "#   got '$1', wanted '$2'"
	fi
}
q() {
	"$VRAMTRACE" sql "$1" "$2" --format csv | sed 1d | tr '\n' ' ' |
	    sed 's/ $//'
}

# A build without CUDA has no injection library: it says so and records
# nothing.  The stand-in processes here do not load it, so then any
# readable file does for the rest.
if [ -f "$top_builddir/libvramtrace-inject.so" ]; then
	n=$((n + 1))
	echo "ok $n # SKIP built with CUDA"
else
	"$VRAMTRACE" record -o "$T/nocuda.db" -- true 2>"$T/err"
	ok "$? $(grep -c 'built without CUDA' "$T/err") $(ls "$T" |
	    grep -c nocuda)" "7 1 0" "built without CUDA: said so (exit 7), no database"
	VRAMTRACE_INJECT_LIBRARY=$WRITER
	export VRAMTRACE_INJECT_LIBRARY
fi

"$VRAMTRACE" record -o "$T/exit.db" -- sh -c 'exit 7'
ok "$?" 7 "the command's exit status is ours"

"$VRAMTRACE" record -o "$T/one.db" -- "$WRITER" send
rc=$?
ok "$rc $(q "$T/one.db" 'select count(*), sum(bytes),
    sum(free_ns is null), sum(stream = 13) from allocations')" \
    "0 10,56320,5,10" "one client: every allocation, bytes and free"
ok "$(q "$T/one.db" 'select (select count(*) from steps) as s,
    (select count(*) from marks) as m, (select handle from streams where
    stream = 13) as h, (select exit_status from runs) as e')" "3,6,20480,0" \
    "one client: steps, marks, the stream and the run's end"

"$VRAMTRACE" record -o "$T/one.db" -- true 2>"$T/err"
ok "$? $(wc -l <"$T/err")" "7 1" "an existing database is refused in one line, exit 7 (an output that exists)"

"$VRAMTRACE" record --append -o "$T/one.db" -- "$WRITER" send
ok "$? $(q "$T/one.db" 'select count(*) from runs')" "0 2" \
    "--append adds a run"

"$VRAMTRACE" record -o "$T/fork.db" -- "$WRITER" fork 4
ok "$? $(q "$T/fork.db" 'select count(distinct pid),
    count(distinct a.process_id), count(*), sum(a.bytes)
    from allocations a join processes p on p.id = a.process_id')" \
    "0 4,4,40,225280" "four clients at once land in one run"

"$VRAMTRACE" record -o "$T/torn.db" -- "$WRITER" torn 2>"$T/err"
ok "$? $(q "$T/torn.db" 'select count(*) from allocations')" "137 5" \
    "a client dying mid-frame: its complete frames are kept"
ok "$(grep -c 'truncated' "$T/err")" 1 "the torn tail gives one warning"

"$VRAMTRACE" record --flush-ms 50 -o "$T/kill.db" -- "$WRITER" kill
ok "$? $(q "$T/kill.db" 'select count(*) from allocations')" "137 10" \
    "SIGKILL after a flush: the flushed events are stored"
ok "$(q "$T/kill.db" 'pragma integrity_check')" "ok" \
    "SIGKILL: the database passes the integrity check"

"$VRAMTRACE" record -o "$T/sig.db" -- sh -c 'kill -TERM $$'
ok "$? $(q "$T/sig.db" 'select exit_status from runs')" "143 143" \
    "a command killed by a signal: 128 + signal, and the run is finished"

"$VRAMTRACE" record -o "$T/int.db" -- sleep 30 &
pid=$!
catching $pid 2	# SIGINT: then a second for the command to start
sleep 1
kill -INT $pid
wait $pid
ok "$? $(q "$T/int.db" 'select exit_status, complete from runs')" \
    "130 130,1" "SIGINT is passed to the command; the run is finished"

VRAMTRACE_OUTPUT="$T/spool-%p.vtr" "$WRITER" send
"$VRAMTRACE" replay "$T"/spool-*.vtr -o "$T/replay.db"
ok "$? $(q "$T/replay.db" 'select count(*), sum(bytes) from allocations')" \
    "0 10,56320" "VRAMTRACE_OUTPUT writes a spool file that replay reads"

# One spool file name for two live processes (no %p): the second writes
# its own, NAME-PID.vtr, and says so; both files are whole (the first has
# the set and a pair of events per allocation since).  Once the first has
# ended, a third process takes the name again.
mkdir "$T/held"
VRAMTRACE_OUTPUT="$T/one.vtr" "$WRITER" stream "$T/held" &
held=$!
while [ ! -s "$T/held/pid" ]; do sleep 0.05; done
VRAMTRACE_OUTPUT="$T/one.vtr" "$WRITER" send 2>"$T/err" &
second=$!
wait $second
touch "$T/held/stop"
wait $held
ok "$(sed -e "s|$T/||g" -e "s/$second/PID/g" "$T/err")" \
    "vramtrace (writer, pid PID): the spool file one.vtr is another process's; this one writes one-PID.vtr (VRAMTRACE_OUTPUT with %p names one file per process)." \
    "a spool file another live process writes is left to it, with one line"
"$VRAMTRACE" replay "$T/one-$second.vtr" -o "$T/second.db" >/dev/null &&
"$VRAMTRACE" replay "$T/one.vtr" -o "$T/held.db" >/dev/null
ok "$? $(q "$T/second.db" 'select count(*), sum(bytes) from allocations')
$(q "$T/held.db" "select count(*) = 10 + $(cat "$T/held/done") from allocations")" \
    "0 10,56320
1" "the second process's spool file and the first's are whole"
VRAMTRACE_OUTPUT="$T/one.vtr" "$WRITER" send 2>"$T/err"
"$VRAMTRACE" replay "$T/one.vtr" -o "$T/third.db" >/dev/null
ok "$? $(cat "$T/err") $(q "$T/third.db" 'select count(*) from allocations')" \
    "0  10" "a spool file no process holds is truncated and reused"

"$WRITER" send 2>/dev/null
ok "$?" 1 "with no destination the client is off"

# A collector that is gone: one warning that says what happened, what to
# do and what it means.
VRAMTRACE_SOCKET=$T/gone.sock "$WRITER" send 2>"$T/err"
ok "$(sed -e "s|$T/||" -e 's/pid [0-9]*/pid N/' "$T/err" | head -n 1)" \
    "vramtrace (writer, pid N): cannot connect to the collector at gone.sock: \
No such file or directory (VRAMTRACE_SOCKET names a vramtrace record that is \
no longer running; start the program under vramtrace record); vramtrace \
records nothing more of this process, the program runs on unchanged" \
    "a collector that is gone: what happened, what to do, what it means"

# record speaks: what it stored and what to run next; a run no CUDA
# process connected to says so.
"$VRAMTRACE" record -o "$T/speak.db" -- "$WRITER" send 2>"$T/err"
ok "$(tail -n 2 "$T/err" | sed "s|$T/||g")" "vramtrace: run 1 of speak.db: \
1 process, 10 allocations, 3 steps, 0 stacks
vramtrace: next: vramtrace leaks speak.db (or vramtrace tui speak.db)" \
    "at the end: the run, its counts and the next command"
"$VRAMTRACE" record -o "$T/nosteps.db" -- "$WRITER" nosteps 2>"$T/err"
ok "$? $(grep -c '^vramtrace: no step markers: record it with --torch-steps' "$T/err")" "0 1" \
    "a run without steps: said so, with how to mark them"
"$VRAMTRACE" record -o "$T/none.db" -- sh -c 'exit 0' 2>"$T/err"
ok "$? $(grep -c 'no CUDA process connected' "$T/err")" "0 1" \
    "a command that never used CUDA: said so"

# A command that cannot run leaves no database, so the retry works.
"$VRAMTRACE" record -o "$T/nosuch.db" -- vramtrace-nosuchcmd 2>"$T/err"
ok "$? $(ls "$T" | grep -c nosuch) $(wc -l <"$T/err")" "127 0 1" \
    "a command not found: 127, one line, no database"
"$VRAMTRACE" record -o "$T/nosuch.db" -- "$T" 2>"$T/err"
ok "$? $(ls "$T" | grep -c nosuch)" "127 0" \
    "an exec that fails (a directory): no database"
"$VRAMTRACE" record -o "$T/nosuch.db" -- true 2>/dev/null
ok "$?" 0 "the retry records"

# Stacks and the allocator: the environment the command gets.
env_of() {	# env_of OPTIONS...: record into a fresh $T/env.db
	rm -f "$T"/env.db*
	"$VRAMTRACE" record -o "$T/env.db" "$@" -- sh -c 'echo "${VRAMTRACE_STACKS:--}" \
	    "${VRAMTRACE_STACK_DEPTH:--}" "${VRAMTRACE_TORCH_HISTORY:--}" \
	    "${VRAMTRACE_TORCH_STEPS:--}" "${VRAMTRACE_CHECK_OFFLOAD:--}" \
	    "${VRAMTRACE_TORCH_ASYNC:--}" \
	    "$(echo "$PYTHONPATH" | grep -c _site)"' 2>"$T/err"
}
ok "$(env_of)" "- - - - - 1 1" \
    "by default: Python stacks (the library's default), cudaMallocAsync record chose: the sitecustomize keeps torch.compile's CUDA graphs off it"
ok "$(env_of --stacks all --stack-depth 8 --torch-steps)" \
    "all 8 - 1 - 1 1" "--stacks, --stack-depth, --torch-steps"
ok "$(env_of --torch-allocator native)" "- - 1000000 - - - 1" \
    "native allocator: PyTorch's history through the sitecustomize"
ok "$(env_of --torch-allocator native --stacks none)" \
    "none - - - - - 0" "native allocator without stacks: no history"
ok "$(env_of --check-offload --stacks none)" "none - - - 1 1 1" \
    "--check-offload: the offload check through the sitecustomize"
ok "$(VRAMTRACE_CHECK_OFFLOAD=1 env_of --stacks none)" "none - - - 1 1 1" \
    "VRAMTRACE_CHECK_OFFLOAD=1 already set: the sitecustomize as well"
ok "$(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True env_of) \
$(grep -c 'keeps its caching allocator' "$T/err")" \
    "- - 1000000 - - - 1 1" \
    "PYTORCH_CUDA_ALLOC_CONF set: the allocator stays native, said so"
ok "$(PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync \
    VRAMTRACE_TORCH_ASYNC=1 env_of --stacks none)" "none - - - - - 0" \
    "cudaMallocAsync the program chose: nothing for Python"
"$VRAMTRACE" record --stacks bogus -o "$T/bad.db" -- true 2>/dev/null
r1=$?
VRAMTRACE_STACKS=bogus "$VRAMTRACE" record -o "$T/bad.db" -- true \
    2>/dev/null
ok "$r1 $? $(ls "$T" | grep -c bad.db)" "2 2 0" \
    "a bad --stacks or VRAMTRACE_STACKS: usage error, no database"
