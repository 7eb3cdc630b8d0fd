#!/bin/sh
# t-hostile.sh: inputs made to hurt and faults an unlucky user meets, each
# with its expected outcome: bounded memory and output for a tiny hostile
# file, all-or-nothing appends, nothing left behind by a signal (and what
# a SIGKILL left cleaned by the next run), special files refused in one
# line without waiting, text from a file escaped before it reaches a
# terminal, inputs merged without being changed, output names that are
# files and never SQLite URIs, and tui --dump failing when its queries do.
. "${srcdir:-.}/tests/lib.sh"
plan 43
unset VRAMTRACE_SOCKET VRAMTRACE_OUTPUT
tab=$(printf '\t')
esc=$(printf '\033')
cr=$(printf '\r')

# one STATUS PATTERN DESCRIPTION: the last run exited STATUS with one line
# on stderr matching PATTERN.
one() {
	[ "$(wc -l <"$TMP/err")" -eq 1 ]
	lines=$?
	expect "$1" "$2" "$3"
	[ $lines -eq 0 ] || echo "# $(wc -l <"$TMP/err") lines on stderr"
}

# Nothing of OUT is left in its folder: no file, no OUT.tmp-*, no journal.
left() {
	ls "$(dirname "$1")" | grep -F "$(basename "$1")"
}

# A small run: its first two lines start the forged one below.
printf '%s\n' 'process-start 500 pid=20' \
    'stream-create 500 stream=7 device=0 flags=3' \
    'alloc 600 address=0x9000 bytes=4096 stream=7 site="step@loop.py:3"' \
    'step-end 700' >"$TMP/run.txt"
spool run || exit 99

# --- Bounded resources -------------------------------------------------
# One string record naming id 2^24-1 made replay allocate 256 MiB.
printf 'process-start 1 pid=1\nstring 2 id=16777215 text=x\nalloc 3 address=4096 bytes=512\n' >"$TMP/hid.txt"
"$MKSPOOL" "$TMP/hid.txt" "$TMP/hid.vtr" || exit 99
if sanitized "$VRAMTRACE"; then
	skip 1 "a sanitizer build: ASan reserves terabytes of address space for its shadow memory, over any such limit"
else
	(ulimit -v 200000; "$VRAMTRACE" replay "$TMP/hid.vtr" -o "$TMP/hid.db") \
	    >/dev/null 2>"$TMP/err"
	rc=$?
	[ $rc -eq 0 ] && [ "$("$VRAMTRACE" sql "$TMP/hid.db" \
	    'select count(*) from allocations' | tail -n 1)" = 1 ]
	ok $? "a string id of 2^24-1 replays in 200 MB of address space ($(head -c 200 "$TMP/err"))"
fi

# A 160-byte snapshot whose trace spans 31 years, cut into 1 ms steps.
"$PY" - "$TMP/wide.pickle" <<'PY'
import pickle, sys
e = lambda t, a: {"action": "alloc", "addr": a, "size": 512, "stream": 0,
                  "time_us": t, "frames": []}
pickle.dump({"segments": [], "device_traces": [[e(1, 4096), e(10**15, 8192)]]},
            open(sys.argv[1], "wb"), protocol=4)
PY
mkdir "$TMP/w"
run timeout 60 "$VRAMTRACE" import "$TMP/wide.pickle" --step-every 1 -o "$TMP/w/w.db"
one 4 'wide.pickle: --step-every 1 ms cuts 1000000000000 steps .*at most 1000000' \
    "import --step-every: too many windows is one line naming the file"
[ -z "$(ls "$TMP/w")" ]; ok $? "...and leaves nothing behind"

# An allocation (or a device) past 128 TiB, more than any device has;
# allocations of 128 TiB at overlapping addresses, 70,000 of them: their
# sum, the live bytes of a step, wrapped past 63 bits (negative: a leak
# came out CLEAN).  A run's sizes add up to 2 EiB at most.
printf '%s\n' 'alloc 1000 address=0x100000 bytes=4611686018427387904 stream=7' \
    'step-end 2000' >"$TMP/huge.txt"
awk 'BEGIN { for (i = 1; i <= 16385; i++)
	printf "alloc %d address=%d bytes=140737488355327 stream=7\n", 1000 + i, 4096 * i
	print "step-end 100000" }' >"$TMP/many.txt"
"$MKSPOOL" "$TMP/huge.txt" "$TMP/huge.vtr" &&
    "$MKSPOOL" "$TMP/many.txt" "$TMP/many.vtr" || exit 99
"$PY" - "$TMP/many.pickle" <<'PY'
import pickle, sys
size = (1 << 47) - 512
trace = [{"action": "alloc", "addr": 4096 * (i + 1), "size": size,
          "stream": 0, "time_us": 1000 + i, "frames": []}
         for i in range(70000)]
pickle.dump({"segments": [], "device_traces": [trace]},
            open(sys.argv[1], "wb"), protocol=4)
PY
mkdir "$TMP/h"
run "$VRAMTRACE" replay "$TMP/huge.vtr" -o "$TMP/h/h.db"
one 4 "huge.vtr: an allocation of 4611686018427387904 bytes, more than 128 TiB" \
    "replay: an allocation past 128 TiB is one line naming the file"
run "$VRAMTRACE" replay "$TMP/many.vtr" -o "$TMP/h/h.db"
one 4 "many.vtr: an allocation of 140737488355327 bytes takes the run's sizes past 2 EiB in all" \
    "replay: allocations whose sizes add up past 2 EiB are one line naming the file"
# A device of 4 EiB made a leak of 2 MiB a step too slow to matter: CLEAN.
printf '%s\n' 'device 500 device=0 total=4611686018427387904' \
    'alloc 1000 address=0x1000 bytes=2097152 stream=7' 'step-end 2000' \
    >"$TMP/dev.txt"
"$MKSPOOL" "$TMP/dev.txt" "$TMP/dev.vtr" || exit 99
run "$VRAMTRACE" replay "$TMP/dev.vtr" -o "$TMP/h/h.db"
one 4 "dev.vtr: a device of 4611686018427387904 bytes, more than 128 TiB" \
    "replay: a device past 128 TiB is one line naming the file"
run "$VRAMTRACE" import "$TMP/many.pickle" -o "$TMP/h/h.db"
one 4 "many.pickle: device_traces\[0\]\[16384\].size is 140737488354816, which takes the sizes of the file past 2 EiB in all" \
    "import: trace entries whose sizes add up past 2 EiB are one line naming the entry"
[ -z "$(ls "$TMP/h")" ]; ok $? "...and leave nothing behind"

# --- All or nothing ----------------------------------------------------
cp "$TMP/run.db" "$TMP/t.db" && cp "$TMP/t.db" "$TMP/t.orig"
cat "$TMP/run.txt" "$TMP/run.txt" >"$TMP/two.txt"
"$MKSPOOL" "$TMP/two.txt" "$TMP/bad.vtr" --corrupt $(($(wc -c <"$TMP/run.vtr") + 40))
run "$VRAMTRACE" replay "$TMP/bad.vtr" -o "$TMP/t.db" --append
one 4 'bad.vtr: frame checksum mismatch' "replay --append of a corrupt spool fails"
cmp -s "$TMP/t.db" "$TMP/t.orig" && [ "$(left "$TMP/t.db")" = t.db ]
ok $? "...and leaves the database byte for byte as it was, nothing beside it"
run "$VRAMTRACE" import "$TMP/wide.pickle" --step-every 1 --append -o "$TMP/t.db"
cmp -s "$TMP/t.db" "$TMP/t.orig" && [ "$(left "$TMP/t.db")" = t.db ]
ok $? "a failed import --append leaves it as it was too"
# A file from before sites.kind, processes.job and the offload check's
# tables: the upgrade is part of the run's transaction, undone with it.
cp "$TMP/t.orig" "$TMP/old.db"
"$PY" - "$TMP/old.db" <<'PY' || exit 99
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript("ALTER TABLE sites DROP COLUMN kind;"
                 " ALTER TABLE processes DROP COLUMN job;"
                 " DROP VIEW offload_check_engines;"
                 " DROP TABLE offload_check_steps;"
                 " DROP TABLE offload_check_diffs;")
db.close()
PY
cp "$TMP/old.db" "$TMP/old.orig"
run "$VRAMTRACE" import "$TMP/wide.pickle" --step-every 1 --append -o "$TMP/old.db"
cmp -s "$TMP/old.db" "$TMP/old.orig" && [ "$(left "$TMP/old.db")" = old.db ]
ok $? "a failed import --append to a file of an older schema leaves it as it was"

# A spool long enough to be stopped in the middle.
"$PY" - >"$TMP/big.txt" <<'PY'
import sys
w = sys.stdout.write
w("process-start 1 pid=1\n")
for i in range(300000):
    w("alloc %d address=%d bytes=512\n" % (i + 2, 4096 * (i + 1)))
PY
"$MKSPOOL" "$TMP/big.txt" "$TMP/big.vtr" || exit 99
# stopped SIGNAL FILE ARGS...: run vramtrace ARGS with SIGNAL's default
# action (a background job of sh ignores SIGINT), send it SIGNAL once it
# has a file open whose name matches FILE (an extended regular
# expression); $rc is its exit status, 99 when it never had one open.
stopped() {
	sig=$1 file=$2
	shift 2
	"$PY" -c 'import os, signal, sys
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(s, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$VRAMTRACE" "$@" >"$TMP/out" 2>"$TMP/err" &
	pid=$!
	i=0 opened=0
	while [ $i -lt 600 ] && kill -0 $pid 2>/dev/null; do
		if ls -l /proc/$pid/fd 2>/dev/null | grep -Eq -- "-> .*$file"; then
			opened=1
			break
		fi
		i=$((i + 1))
		sleep 0.05
	done
	kill -s "$sig" $pid
	wait $pid 2>/dev/null
	rc=$?
	[ $opened -eq 1 ] || rc=99
}
stopped HUP '/t\.db$' replay "$TMP/big.vtr" -o "$TMP/t.db" --append
[ $rc -eq 129 ] && cmp -s "$TMP/t.db" "$TMP/t.orig" && [ "$(left "$TMP/t.db")" = t.db ]
ok $? "SIGHUP in the middle of replay --append: the database as it was (exit $rc)"
mkdir "$TMP/s"
for sig in INT TERM HUP; do
	stopped $sig '/s/new\.db\.tmp-' replay "$TMP/big.vtr" -o "$TMP/s/new.db"
	[ $rc -gt 128 ] && [ -z "$(ls "$TMP/s")" ]
	ok $? "SIG$sig in the middle of replay: no output, no temporary file (exit $rc)"
done
# (once it writes in WAL mode: an empty temporary file is taken for one
# another vramtrace has just made, for a minute)
stopped KILL '/s/new\.db\.tmp-......-wal$' replay "$TMP/big.vtr" -o "$TMP/s/new.db"
ls "$TMP/s" | grep -q '^new\.db\.tmp-......$'
ok $? "SIGKILL leaves the temporary file ($(ls "$TMP/s" | tr '\n' ' '))"
run "$VRAMTRACE" replay "$TMP/run.vtr" -o "$TMP/s/new.db"
[ $rc -eq 0 ] && grep -q 'removed .*new\.db\.tmp-.* left by a vramtrace that was stopped' "$TMP/err" &&
    [ "$(ls "$TMP/s")" = new.db ]
ok $? "...which the next run for that output removes, saying so"

# --- Special files -----------------------------------------------------
mkfifo "$TMP/fifo" && mkdir "$TMP/dir" || exit 99
for c in "replay" "merge"; do
	run timeout 10 "$VRAMTRACE" $c "$TMP/fifo" -o "$TMP/x.db"
	one 4 'fifo: a named pipe \(FIFO\), not a file to read' "$c: a FIFO at once, in one line"
done
# A snapshot is read from a FIFO (t-unwrap.sh): without a writer, each
# command says that it waits for one.
for c in "import" "info" "leaks" "tui --dump overview"; do
	case $c in
	import) o="-o $TMP/x.db" ;;
	*) o= ;;
	esac
	run timeout 2 "$VRAMTRACE" $c "$TMP/fifo" $o
	[ $rc -eq 124 ] &&
	    grep -q 'fifo: a named pipe (FIFO) without a writer: waiting for one' "$TMP/err"
	ok $? "$c: a FIFO without a writer is waited for, saying so"
done
run "$VRAMTRACE" import "$TMP/dir" -o "$TMP/x.db"
one 4 'dir: a directory, not a file to read' "import: a directory"
run "$VRAMTRACE" replay /dev/zero -o "$TMP/x.db"
one 4 '/dev/zero: a device, not a file to read' "replay: a device"
[ ! -e "$TMP/x.db" ]; ok $? "...and none of them left an output"

# --- Text from a file never drives the terminal -------------------------
forged="f${esc}]0;pwned$(printf '\a')${esc}[2J${cr}verdict: CLEAN@train.py:12"
{
	head -n 2 "$TMP/run.txt"
	for t in 1100 1400 1600 1800; do
		printf 'alloc %d address=%d bytes=4194304 stream=7 site="%s"\n' \
		    $t $t "$forged"
		printf 'step-end %d\n' $((t + 100))
	done
} >"$TMP/esc.txt"
spool esc || exit 99
for c in "leaks" "report" "diff" "sql" "sql --format csv" "tui --dump blocks"; do
	case $c in
	diff) set -- "$TMP/esc.db@1" "$TMP/esc.db@4" ;;
	sql*) set -- "$TMP/esc.db" "select name from frames" ;;
	*) set -- "$TMP/esc.db" ;;
	esac
	"$VRAMTRACE" $c "$@" >"$TMP/out" 2>&1
	grep -q 'pwned' "$TMP/out" && ! grep -q "$esc" "$TMP/out" &&
	    ! grep -q "$cr" "$TMP/out" && ! grep -q '^verdict: CLEAN' "$TMP/out"
	ok $? "$c: a frame name's escape sequences and CR print escaped"
done

# --- merge reads its inputs, and only reads them -----------------------
run "$VRAMTRACE" merge "$TMP/none.db" -o "$TMP/m.db"
[ $rc -eq 4 ] && [ ! -e "$TMP/none.db" ] && [ ! -e "$TMP/m.db" ]
ok $? "merge: a missing input is not created"
"$PY" - "$TMP/run.db" "$TMP/hot.db" <<'PY'
import shutil, sqlite3, sys
# A writer stopped in the middle of a transaction that spilled its cache:
# a copy of the database and its journal is a hot journal.
shutil.copy(sys.argv[1], sys.argv[2] + ".w")
c = sqlite3.connect(sys.argv[2] + ".w", isolation_level=None)
c.execute("PRAGMA journal_mode = DELETE")
c.execute("PRAGMA cache_size = 1")
c.execute("BEGIN")
c.execute("UPDATE allocations SET bytes = bytes + 1")
c.execute("CREATE TABLE filler(x)")
for i in range(2000):
    c.execute("INSERT INTO filler VALUES (randomblob(500))")
shutil.copy(sys.argv[2] + ".w", sys.argv[2])
shutil.copy(sys.argv[2] + ".w-journal", sys.argv[2] + "-journal")
PY
cksum "$TMP/hot.db" "$TMP/hot.db-journal" >"$TMP/hot.sum"
run "$VRAMTRACE" merge "$TMP/hot.db" -o "$TMP/m.db"
one 4 'hot.db: a writer stopped in the middle of a transaction' "merge: a hot journal is named as such"
cksum "$TMP/hot.db" "$TMP/hot.db-journal" | cmp -s - "$TMP/hot.sum" && [ ! -e "$TMP/m.db" ]
ok $? "...and is neither rolled back nor changed"
run "$VRAMTRACE" info "$TMP/hot.db"
one 4 'hot.db: a writer stopped in the middle of a transaction' "info says the same"
mkdir "$TMP/wal"
cp "$TMP/run.db" "$TMP/wal/in.db"
"$PY" -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute("PRAGMA journal_mode = WAL")' "$TMP/wal/in.db"
cksum "$TMP/wal/in.db" >"$TMP/wal.sum"
run "$VRAMTRACE" merge "$TMP/wal/in.db" -o "$TMP/m.db"
[ $rc -eq 0 ] && [ "$(ls "$TMP/wal")" = in.db ] && cksum "$TMP/wal/in.db" | cmp -s - "$TMP/wal.sum"
ok $? "merge: an input in WAL mode is read, unchanged, nothing left beside it"

# A file whose table allocations is a view that never ends (a recursive
# one): every reader refuses it at once, naming the table, as merge does.
cp "$TMP/run.db" "$TMP/view.db"
"$PY" - "$TMP/view.db" <<'PY' || exit 99
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for (v,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'view'"
                       " AND sql LIKE '%allocations%'").fetchall():
    db.execute("DROP VIEW " + v)
db.executescript("DROP TABLE allocations; CREATE VIEW Allocations AS"
                 " WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1"
                 " FROM c) SELECT x AS id, 1 AS run_id, NULL AS process_id,"
                 " 0 AS device, 7 AS stream, 2 AS layer, 4096 * x AS address,"
                 " 512 AS bytes, 512 AS requested_bytes, x AS alloc_ns,"
                 " NULL AS free_requested_ns, NULL AS free_ns, 1 AS alloc_step,"
                 " NULL AS free_step, NULL AS site_id, NULL AS correlation_id"
                 " FROM c;")
db.close()
PY
st=0
for c in leaks report info history stats; do
	run timeout 60 "$VRAMTRACE" $c "$TMP/view.db"
	[ $rc -eq 4 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
	    grep -q 'view.db: not a vramtrace database (allocations is not a plain table)' "$TMP/err" ||
	    { echo "# $c: exit $rc: $(head -c 200 "$TMP/err")"; st=1; }
done
ok $st "a table made an endless view: leaks, report, info, history, stats refuse it in one line"
run timeout 60 "$VRAMTRACE" merge "$TMP/view.db" -o "$TMP/mv.db"
one 4 'view.db: not a vramtrace database \(allocations is not a plain table\)' \
    "...and merge too"
# A generated column, computed at every read (20 MB of text a row): refused
# too.
cp "$TMP/run.db" "$TMP/gen.db"
"$PY" - "$TMP/gen.db" <<'PY' || exit 99
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
cols = [r[1] for r in db.execute("PRAGMA table_info(runs)")]
decl = ", ".join("%s TEXT GENERATED ALWAYS AS (replace(hex(zeroblob("
                 "10000000)), '0', 'ab')) VIRTUAL" % c if c == "command"
                 else c for c in cols)
for (v,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'view'"
                       ).fetchall():
    db.execute("DROP VIEW " + v)
keep = ", ".join(c for c in cols if c != "command")
db.executescript("ALTER TABLE runs RENAME TO old; CREATE TABLE runs(%s);"
                 " INSERT INTO runs(%s) SELECT %s FROM old; DROP TABLE old;"
                 % (decl, keep, keep))
db.close()
PY
run timeout 60 "$VRAMTRACE" leaks "$TMP/gen.db"
one 4 'gen.db: not a vramtrace database \(runs is not a plain table\)' \
    "a generated column, computed at every read: refused"

# --- Names are files ---------------------------------------------------
(cd "$TMP/s" && "$VRAMTRACE" replay "$TMP/run.vtr" -o 'file:x.db?mode=memory') >/dev/null 2>&1
rc=$?
[ $rc -eq 0 ] && [ -s "$TMP/s/file:x.db?mode=memory" ] &&
    (cd "$TMP/s" && "$VRAMTRACE" info 'file:x.db?mode=memory' >/dev/null)
ok $? "-o 'file:x.db?mode=memory' writes a file of that name, which info reads"

# --- tui --dump fails when a query does --------------------------------
cp "$TMP/run.db" "$TMP/broken.db"
"$PY" -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("DROP TABLE offload_events"); c.commit()' "$TMP/broken.db"
run "$VRAMTRACE" tui --dump offload "$TMP/broken.db"
expect 4 'broken.db: no such table: offload_events' "tui --dump: a failed query is exit 4 (a bad input), with its cause"
done_testing
