#!/bin/sh
# t-badfile.sh: files that are not what a command expects get one clear
# line and exit 4 (a bad input), and are left untouched; a spool file that
# is torn or corrupt leaves no database behind; an output that cannot be
# written exits 7.
. "${srcdir:-.}/tests/lib.sh"
plan 12

printf 'just some text, certainly not a database; long enough for a header\n%.0s' 1 2 3 >"$TMP/text.db"
cp "$TMP/text.db" "$TMP/text.orig"
run "$VRAMTRACE" info "$TMP/text.db"
expect 4 'text.db: not a vramtrace database' "a text file is not a database"
cmp -s "$TMP/text.db" "$TMP/text.orig"; ok $? "...and is left untouched"

sqlite3 "$TMP/other.db" 'create table t(x); insert into t values (1);' 2>/dev/null ||
	"${PYTHON3:-python3}" -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('create table t(x)'); c.commit()" "$TMP/other.db"
run "$VRAMTRACE" info "$TMP/other.db"
expect 4 'other.db: not a vramtrace database \(no meta table\)' "another program's SQLite database"

printf 'process-start 1 pid=1\nalloc 2 address=1 bytes=10\n' >"$TMP/s.txt"
"$MKSPOOL" "$TMP/s.txt" "$TMP/s.vtr"
"$VRAMTRACE" replay "$TMP/s.vtr" -o "$TMP/new.db" >/dev/null 2>&1
"${PYTHON3:-python3}" -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"update meta set value='99' where key='schema_version'\"); c.commit()" "$TMP/new.db"
cp "$TMP/new.db" "$TMP/new.orig"
run "$VRAMTRACE" info "$TMP/new.db"
expect 4 'schema version 99 is newer than this vramtrace understands' "a newer schema"
cmp -s "$TMP/new.db" "$TMP/new.orig"; ok $? "...and is left untouched"
run "$VRAMTRACE" merge "$TMP/other.db" -o "$TMP/m1.db"
expect 4 'other.db: not a vramtrace database \(no meta table\)' "merge checks the schema as every reader does"
run "$VRAMTRACE" merge "$TMP/new.db" -o "$TMP/m2.db"
expect 4 'new.db: schema version 99 is newer than this vramtrace understands' "...a newer schema, too"

"$VRAMTRACE" replay "$TMP/s.vtr" -o "$TMP/locked.db" >/dev/null 2>&1
"${PYTHON3:-python3}" - "$TMP/locked.db" "$VRAMTRACE" >"$TMP/lock.out" 2>&1 <<'PY'
import sqlite3, subprocess, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("PRAGMA journal_mode=DELETE")
c.execute("BEGIN EXCLUSIVE")
r = subprocess.run([sys.argv[2], "replay", "/dev/null", "-o", sys.argv[1],
                    "--append"], capture_output=True, text=True)
print(r.returncode, r.stderr.strip())
c.execute("ROLLBACK")
PY
grep -Eq '^7 .*locked.db: database is locked' "$TMP/lock.out"; ok $? "a locked output database, exit 7: $(cat "$TMP/lock.out")"

"$MKSPOOL" "$TMP/s.txt" "$TMP/torn.vtr" --truncate 40
run "$VRAMTRACE" replay "$TMP/torn.vtr" -o "$TMP/torn.db"
expect 4 'torn.vtr: truncated frame at offset 8' "a torn spool file names the offset"
[ ! -e "$TMP/torn.db" ] && [ -z "$(ls "$TMP" | grep torn.db)" ]
ok $? "...and leaves no database, not even a temporary one"
"$MKSPOOL" "$TMP/s.txt" "$TMP/bad.vtr" --corrupt 30
run "$VRAMTRACE" replay "$TMP/bad.vtr" -o "$TMP/bad.db"
expect 4 'bad.vtr: frame checksum mismatch at offset 8' "a corrupt spool file is caught"
[ ! -e "$TMP/bad.db" ]; ok $? "...and leaves no database"
done_testing
