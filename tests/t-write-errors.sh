#!/bin/sh
# t-write-errors.sh: when the database refuses a write, every command that
# writes one (record, replay, import, attach) says so in one line naming
# the database and SQLite's cause, exits 7 (an output that cannot be
# written, not a bad input), and leaves the database as it was.  A trigger makes the database refuse, as a full disk or a damaged
# file would.
. "${srcdir:-.}/tests/lib.sh"
plan 24
FAKE="${top_builddir:-.}/tests/libfake-nvml.so"

# refuse DB TABLE [CONDITION]: from now on DB refuses new rows of TABLE
# (those that meet CONDITION, on NEW.column).  After the insert, which
# the refusal undoes: a row SQLite numbers has its id only then.
refuse() {
	"$PY" -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("CREATE TRIGGER refuse_%s AFTER INSERT ON %s WHEN %s BEGIN"
    " SELECT RAISE(ABORT, %s); END" % (sys.argv[2], sys.argv[2],
    sys.argv[3], repr("no new " + sys.argv[2])))
c.commit()' "$1" "$2" "${3:-1}"
}
runs() {	# runs DB: how many runs DB holds
	"$VRAMTRACE" sql "$1" "select count(*) from runs" --format csv |
	    tail -n 1
}

# said PATTERN DESCRIPTION: the last run exited 7 with one line on stderr
# that matches PATTERN.
said() {
	[ "$rc" -eq 7 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
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
# midway TABLE DESCRIPTION COMMAND ARGS...: run COMMAND --append -o DB
# ARGS, where DB is the base database refusing new rows of TABLE.
midway() {
	t=$1 d=$2 c=$3
	shift 3
	cp "$TMP/base.db" "$TMP/no-$t.db"
	refuse "$TMP/no-$t.db" "$t"
	run "$VRAMTRACE" "$c" --append -o "$TMP/no-$t.db" "$@"
	said "$TMP/no-$t.db: cannot write to $t: no new $t\$" "$d"
	[ "$(runs "$TMP/no-$t.db")" = 1 ]
	ok $? "...and the database keeps its one run"
}
snapshot="$srcdir/tests/data/pickle/good/snapshot-p4.pickle"
midway allocations "replay: a row that cannot be written names its table" \
    replay "$TMP/small.vtr"
midway steps "import: the same for a step" import "$snapshot" \
    --step-every 1
midway segments "import: the same for a snapshot's segment" import \
    "$snapshot"
# The summaries written when a run finishes, many rows to an INSERT
# (src/store-insert.c): a group, and one of the first rows of an order.
midway allocation_groups "import: the same for a group" import "$snapshot"
midway allocation_heads "import: the same for a first row" import \
    "$snapshot"

# An import's allocation rows are written by a second thread while the
# first works out the next ones (src/store-queue.c): a row refused far
# into them (fixture_large has 44,412) stops both, and the database is
# left byte for byte as it was.
large=${SHARED_DATA:-$srcdir/../shared/data}/snapshots/fixture_large.pickle
if [ -r "$large" ]; then
	cp "$TMP/base.db" "$TMP/late.db"
	refuse "$TMP/late.db" allocations "NEW.id > 20000"
	cp "$TMP/late.db" "$TMP/late-before.db"
	run "$VRAMTRACE" import --append -o "$TMP/late.db" "$large"
	said "$TMP/late.db: cannot write to allocations: no new allocations\$" \
	    "import: a row refused midway through the written rows is named"
	[ "$(runs "$TMP/late.db")" = 1 ]
	ok $? "...and the database keeps its one run"
	cmp -s "$TMP/late.db" "$TMP/late-before.db"
	ok $? "...byte for byte"
	# The blocks still live at the end (fixture_large has 313) are
	# written by that thread too, when the run finishes.
	cp "$TMP/base.db" "$TMP/live.db"
	refuse "$TMP/live.db" allocations "NEW.free_ns IS NULL"
	cp "$TMP/live.db" "$TMP/live-before.db"
	run "$VRAMTRACE" import --append -o "$TMP/live.db" "$large"
	said "$TMP/live.db: cannot write to allocations: no new allocations\$" \
	    "import: a block still live at the end that is refused is named"
	cmp -s "$TMP/live.db" "$TMP/live-before.db"
	ok $? "...and the database is left byte for byte"
	# While the pickle is read, a second thread makes the store calls
	# of the trace (src/import-pipe.c): rows that wait for their steps
	# go to a temporary file, here in a directory that does not exist.
	# Its error stops the import, which leaves no file behind.
	mkdir "$TMP/notmp"
	run env TMPDIR="$TMP/missing" "$VRAMTRACE" import \
	    -o "$TMP/notmp/x.db" "$large"
	[ "$rc" -ne 0 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
	    grep -q "$TMP/notmp/x.db: cannot keep rows in a temporary file" \
	    "$TMP/err"
	st=$?
	[ $st -eq 0 ] || echo "# status $rc, stderr: $(head -c 300 "$TMP/err")"
	ok $st "import: the trace's rows that cannot be kept are named"
	[ -z "$(ls -A "$TMP/notmp")" ]
	ok $? "...and nothing is left"
	cp "$TMP/base.db" "$TMP/notmp-append.db"
	run env TMPDIR="$TMP/missing" "$VRAMTRACE" import --append \
	    -o "$TMP/notmp-append.db" "$large"
	[ "$rc" -ne 0 ] && cmp -s "$TMP/base.db" "$TMP/notmp-append.db"
	ok $? "...and an appended-to database is byte for byte as it was"
else
	skip 8 "no $large"
fi
