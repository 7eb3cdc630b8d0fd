#!/bin/sh
# t-readonly.sh: the commands that read a database leave it as they found
# it.  A database that record or replay --append wrote is in WAL mode,
# which SQLite reads through -wal and -shm files: a reading command leaves
# none behind and does not change the file.  While another process writes
# the database, a reading command sees what it committed and leaves the
# writer's files alone; a log left by a writer that died is read, and kept.
. "${srcdir:-.}/tests/lib.sh"
plan 21
unset VRAMTRACE_SOCKET VRAMTRACE_OUTPUT

cat >"$TMP/run.txt" <<'SPOOL'
process-start 1000 pid=10
stream-create 1000 stream=7 device=0 flags=3
alloc 1100 address=0x1000 bytes=1048576 stream=7 site="fwd@train.py:12"
step-end 1300
alloc 1400 address=0x2000 bytes=2097152 stream=7
step-end 1500
alloc 1600 address=0x3000 bytes=2097152 stream=7
step-end 1700
SPOOL
mkdir "$TMP/db" "$TMP/o"
"$MKSPOOL" "$TMP/run.txt" "$TMP/run.vtr" &&
    "$VRAMTRACE" replay "$TMP/run.vtr" -o "$TMP/db/run.db" --append >/dev/null
DB=$TMP/db/run.db
# The file header's read and write versions are 2 in WAL mode.
[ "$(od -A n -t u1 -j 18 -N 2 "$DB" | tr -s ' ')" = " 2 2" ] &&
    [ "$(ls "$TMP/db")" = run.db ]
ok $? "replay --append leaves a database in WAL mode, alone in its folder"

# What the folder holds: names, sizes, times and the database's contents.
state() {
	ls -l --time-style=+%s.%N "$TMP/db" | sed 1d
	cksum "$DB"
}
state >"$TMP/before"
unchanged() {	# unchanged DESCRIPTION: run with run, then compare
	state >"$TMP/after"
	[ $rc -eq 0 ] && cmp -s "$TMP/before" "$TMP/after"
	st=$?
	[ $st -eq 0 ] || { echo "# status $rc"; diff "$TMP/before" \
	    "$TMP/after" | sed 's/^/# /'; }
	ok $st "$1"
}
run "$VRAMTRACE" info "$DB"; unchanged "info"
run "$VRAMTRACE" info "$DB" --run 1 --format json; unchanged "info --run"
run "$VRAMTRACE" leaks "$DB" --format json; unchanged "leaks"
run "$VRAMTRACE" report "$DB"; unchanged "report"
run "$VRAMTRACE" history "$DB"; unchanged "history"
run "$VRAMTRACE" sql "$DB" "select count(*) from allocations"
unchanged "sql"
run "$VRAMTRACE" diff "$DB@1" "$DB@3"; unchanged "diff"
run "$VRAMTRACE" export "$DB" --perfetto "$TMP/o/trace.json"
unchanged "export"
for v in overview streams steps blocks offload diff; do
	run "$VRAMTRACE" tui --dump $v "$DB"; unchanged "tui --dump $v"
done
run "$VRAMTRACE" sql "$DB" "delete from allocations"
[ $rc -eq 2 ] && [ "$("$VRAMTRACE" sql "$DB" "select count(*) from allocations" | tail -n 1)" = 3 ]
ok $? "a statement that writes is refused, and nothing is written"

# record itself: a database it made is read and left alone too.
(cd "$TMP/o" && "$VRAMTRACE" record -o "$TMP/db/rec.db" -- true) >/dev/null 2>&1
state >"$TMP/before"
run "$VRAMTRACE" leaks "$TMP/db/rec.db"
rc=0	# a run with no steps: the verdict does not matter here
unchanged "leaks on what record wrote"

# A writer at work: it holds the database open with a commit in its log.
cat >"$TMP/writer.py" <<'PY'
import os, sqlite3, subprocess, sys
db, vt = sys.argv[1], sys.argv[2]
c = sqlite3.connect(db, isolation_level=None)
c.execute("INSERT INTO marks(run_id, name) VALUES (1, 'from-writer')")
seen = subprocess.run([vt, "sql", db, "select count(*) from marks where"
                       " name = 'from-writer'"], capture_output=True,
                      text=True).stdout.split()[-1]
kept = os.path.exists(db + "-wal") and os.path.exists(db + "-shm")
c.execute("INSERT INTO marks(run_id, name) VALUES (1, 'from-writer')")
c.close()
gone = not os.path.exists(db + "-wal") and not os.path.exists(db + "-shm")
print(seen, kept, gone)
if sys.argv[3:] == ["die"]:
    c = sqlite3.connect(db, isolation_level=None)
    c.execute("INSERT INTO marks(run_id, name) VALUES (1, 'before-dying')")
    os._exit(0)
PY
[ "$("$PY" "$TMP/writer.py" "$DB" "$VRAMTRACE")" = "1 True True" ] &&
    [ "$("$VRAMTRACE" sql "$DB" "select count(*) from marks" | tail -n 1)" = 2 ]
ok $? "while a writer is at work: its commit is read, its files are kept"
"$PY" "$TMP/writer.py" "$DB" "$VRAMTRACE" die >/dev/null
# Reading rebuilds the -shm, SQLite's shared index of the log; the
# database and its log stay as they were.
logs() { ls "$TMP/db"; cksum "$DB" "$DB-wal"; }
logs >"$TMP/before"
[ -s "$DB-wal" ] && [ -e "$DB-shm" ] &&
    [ "$("$VRAMTRACE" sql "$DB" "select count(*) from marks where name = 'before-dying'" | tail -n 1)" = 1 ] &&
    logs | cmp -s "$TMP/before" -
ok $? "a writer that died: its log is read, and left as it was"

# A database in WAL mode in a directory its reader may not write: SQLite
# cannot make the -shm file it needs to read it, and the message says so
# (not "not a vramtrace database").  Root writes anywhere, so as root the
# reader is nobody (setpriv); where that cannot be done, this skips.
mkdir "$TMP/ro"
cp "$TMP/db/rec.db" "$TMP/ro/wal.db"
chmod 555 "$TMP/ro"
chmod 755 "$TMP"
reader() {	# reader CMD...: run CMD as a user who cannot write $TMP/ro
	if [ "$(id -u)" -ne 0 ]; then
		"$@"
	else
		setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
	fi
}
if [ "$(od -A n -t u1 -j 18 -N 1 "$TMP/ro/wal.db" | tr -d ' ')" = 2 ] &&
    reader "$VRAMTRACE" --version >/dev/null 2>&1 &&
    ! reader touch "$TMP/ro/probe" 2>/dev/null; then
	run reader "$VRAMTRACE" info "$TMP/ro/wal.db"
	expect 4 "^vramtrace: $TMP/ro/wal.db: in WAL mode, and the -shm file that reading it needs cannot be made in its directory\$" \
	    "a WAL database in a directory the reader cannot write: named as such, exit 4"
	[ "$(wc -l <"$TMP/err")" -eq 1 ] && [ "$(ls "$TMP/ro")" = wal.db ]
	ok $? "...in one line, and nothing is left beside it"
else
	skip 2 "cannot read as a user who may not write a directory"
fi
chmod 755 "$TMP/ro"
done_testing
