#!/bin/sh
# t-write-errors.sh: when the database refuses a write, every command that
# writes one (record, replay, import, attach) says so in one line naming
# the database and SQLite's cause, exits 1, and leaves the database as it
# was.  A trigger makes the database refuse, as a full disk or a damaged
# file would.
. "${srcdir:-.}/tests/lib.sh"
plan 12
FAKE="${top_builddir:-.}/tests/libfake-nvml.so"

# refuse DB TABLE: from now on DB refuses new rows of TABLE.
refuse() {
	"$PY" -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("CREATE TRIGGER refuse_%s BEFORE INSERT ON %s BEGIN"
    " SELECT RAISE(ABORT, %s); END" % (sys.argv[2], sys.argv[2],
    repr("no new " + sys.argv[2])))
c.commit()' "$1" "$2"
}
runs() { "$VRAMTRACE" sql "$1" "select count(*) from runs" --format csv | tail -n 1; }

# said PATTERN DESCRIPTION: the last run exited 1 with one line on stderr
# that matches PATTERN.
said() {
	[ "$rc" -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
	    grep -Eq -- "$1" "$TMP/err"
	st=$?
	[ $st -eq 0 ] || echo "# status $rc, stderr: $(head -c 300 "$TMP/err")"
	ok $st "$2"
}

"$MKSPOOL" "$srcdir/tests/data/spool/small-run.txt" "$TMP/small.vtr" &&
    "$VRAMTRACE" replay -o "$TMP/base.db" "$TMP/small.vtr" >/dev/null
ok $? "a database to append to"
cp "$TMP/base.db" "$TMP/norun.db"
refuse "$TMP/norun.db" runs
started="$TMP/norun.db: cannot start a run: no new runs\$"

run "$VRAMTRACE" record --append -o "$TMP/norun.db" -- true
said "$started" "record: a run that cannot start is named, with its cause"
run "$VRAMTRACE" replay --append -o "$TMP/norun.db" "$TMP/small.vtr"
said "$started" "replay: the same"
run "$VRAMTRACE" import --append -o "$TMP/norun.db" \
    "$srcdir/tests/data/pickle/good/snapshot-p4.pickle"
said "$started" "import: the same"
if [ -f "$FAKE" ]; then
	sleep 5 &
	pid=$!
	VRAMTRACE_NVML_LIB="$FAKE" FAKE_NVML_PID=$pid \
	    run "$VRAMTRACE" attach --append -o "$TMP/norun.db" $pid
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	said "$started" "attach: the same"
else
	skip 1 "no fake NVML library"
fi
[ "$(runs "$TMP/norun.db")" = 1 ]
ok $? "...and the database keeps its one run"

# A write that fails in the middle of a run: the run is not kept.
cp "$TMP/base.db" "$TMP/noalloc.db"
refuse "$TMP/noalloc.db" allocations
run "$VRAMTRACE" replay --append -o "$TMP/noalloc.db" "$TMP/small.vtr"
said "$TMP/noalloc.db: cannot write to allocations: no new allocations\$" \
    "replay: a row that cannot be written is named, with its table"
[ "$(runs "$TMP/noalloc.db")" = 1 ]
ok $? "...and the half-written run is not kept"
cp "$TMP/base.db" "$TMP/nostep.db"
refuse "$TMP/nostep.db" steps
run "$VRAMTRACE" import --append -o "$TMP/nostep.db" \
    "$srcdir/tests/data/pickle/good/snapshot-p4.pickle" --step-every 1
said "$TMP/nostep.db: cannot write to steps: no new steps\$" \
    "import: the same"
[ "$(runs "$TMP/nostep.db")" = 1 ]
ok $? "...and the database keeps its one run"

cp "$TMP/base.db" "$TMP/noseg.db"
refuse "$TMP/noseg.db" segments
run "$VRAMTRACE" import --append -o "$TMP/noseg.db" \
    "$srcdir/tests/data/pickle/good/snapshot-p4.pickle"
said "$TMP/noseg.db: cannot write to segments: no new segments\$" \
    "import: a snapshot's segment that cannot be written, the same"
[ "$(runs "$TMP/noseg.db")" = 1 ]
ok $? "...and the database keeps its one run"
