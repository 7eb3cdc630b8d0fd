#!/bin/sh
# t-unwrap.sh: snapshots kept compressed or saved by torch.save
# (src/unwrap.c, src/unwrap-zip.c).  tests/data/packed holds one snapshot
# that a real program (PyTorch 2.11: 12 steps, keeping 256 KiB a step)
# wrote twice, with pickle.dump (real.pickle.xz) and with torch.save
# (real.pt.xz: compressed here only to keep the repository small), and
# tiny.pt, one without a trace that torch.save wrote.  Each way of packing
# the pickle (gzip, gzip in two members, xz, zstd, torch.save, a zip made
# by hand, stored and deflated) must import the rows the plain pickle
# imports, and a reading command must give the plain pickle's verdict.
# The hostile corpus (packed/bad, made by packed/make-bad.py) gets exit 4,
# one line naming the file with the substring its EXPECT lists, and leaves
# nothing behind; a codec the build lacks is named as such.  Standard
# input and a FIFO, spooled first, import the same rows; the other reading
# commands refuse them with a line saying to import them.
. "${srcdir:-.}/tests/lib.sh"

data=$srcdir/tests/data/packed
version=$("$VRAMTRACE" --version)
reads() {	# reads CODEC: whether this build unpacks CODEC
	case $version in *"$1"*) return 0 ;; esac
	return 1
}
nbad=$(grep -cv '^#' "$data/bad/EXPECT")
plan $((41 + nbad))

TMPDIR=$TMP/tmp
export TMPDIR
mkdir "$TMPDIR" || exit 99

# rows FILE.db: what an import wrote, but for where it came from
rows() {
	sqlite3 "$1" "SELECT * FROM allocations ORDER BY id;
	    SELECT * FROM segments; SELECT * FROM blocks; SELECT * FROM steps;
	    SELECT * FROM marks; SELECT * FROM sites; SELECT * FROM frames;
	    SELECT * FROM trace_actions;" | cksum
}

xz -dc "$data/real.pickle.xz" >"$TMP/real.pickle" &&
    xz -dc "$data/real.pt.xz" >"$TMP/real.pt" || exit 99
run "$VRAMTRACE" import "$TMP/real.pickle" -o "$TMP/plain.db"
[ $rc -eq 0 ] && grep -q "785 trace entries, 12 steps" "$TMP/out"
ok $? "the plain pickle imports: 785 trace entries, 12 steps"
want=$(rows "$TMP/plain.db")

# same NAME DESCRIPTION: $TMP/NAME imports the plain pickle's rows
same() {
	rm -f "$TMP/packed.db"
	run "$VRAMTRACE" import "$TMP/$1" -o "$TMP/packed.db"
	[ $rc -eq 0 ] && [ "$(rows "$TMP/packed.db")" = "$want" ] &&
	    [ -z "$(ls "$TMPDIR")" ]
	st=$?
	[ $st -eq 0 ] || echo "# exit $rc: $(head -c 300 "$TMP/err")"
	ok $st "$2"
}
gzip -c "$TMP/real.pickle" >"$TMP/real.pickle.gz" || exit 99
same real.pickle.gz "gzip: the plain pickle's rows"
head -c 100000 "$TMP/real.pickle" | gzip -c >"$TMP/two.gz" &&
    tail -c +100001 "$TMP/real.pickle" | gzip -c >>"$TMP/two.gz" || exit 99
same two.gz "gzip in two members, one after the other: the same rows"
if reads xz; then
	cp "$data/real.pickle.xz" "$TMP/" || exit 99
	same real.pickle.xz "xz: the same rows"
else
	skip 1 "built without liblzma"
fi
if reads zstd && command -v zstd >/dev/null; then
	zstd -q -c "$TMP/real.pickle" >"$TMP/real.pickle.zst" || exit 99
	same real.pickle.zst "zstd: the same rows"
else
	skip 1 "built without libzstd, or no zstd command"
fi
same real.pt "torch.save's zip archive: the same rows"
grep -q "/real.pt: 6 segments" "$TMP/out"
ok $? "...and the command names the file it was given"
gzip -c "$TMP/real.pt" >"$TMP/real.pt.gz" || exit 99
same real.pt.gz "torch.save's archive compressed with gzip: the same rows"
if reads xz; then
	cp "$data/real.pt.xz" "$TMP/" || exit 99
	same real.pt.xz "...with xz: the same rows"
else
	skip 1 "built without liblzma"
fi
"$PY" -c '
import sys, zipfile
src, out = sys.argv[1], sys.argv[2]
for method, name in ((zipfile.ZIP_STORED, "stored"),
                     (zipfile.ZIP_DEFLATED, "deflated")):
    with zipfile.ZipFile("%s-%s.zip" % (out, name), "w", method) as z:
        z.writestr("notes.txt", "a snapshot")
        z.writestr("run/snapshot.pickle", open(src, "rb").read())
' "$TMP/real.pickle" "$TMP/hand" || exit 99
same hand-stored.zip "a zip made by hand, its .pickle stored: the same rows"
same hand-deflated.zip "...and deflated: the same rows"
mv "$TMP/real.pickle.gz" "$TMP/snapshot.data" || exit 99
same snapshot.data "a compressed file is known by its bytes, not its name"

mkdir "$TMP/named" && cp "$TMP/real.pt.gz" "$TMP/named/" || exit 99
(cd "$TMP/named" && "$VRAMTRACE" import real.pt.gz) >"$TMP/out" 2>&1
grep -q -- "-> real.db$" "$TMP/out" && [ -f "$TMP/named/real.db" ]
ok $? "without -o, real.pt.gz is imported into real.db"

run "$VRAMTRACE" import "$data/tiny.pt" -o "$TMP/tiny.db"
[ $rc -eq 0 ] && grep -q "1 segments, 2 blocks, 0 trace entries" "$TMP/out"
ok $? "a snapshot without a trace, saved by torch.save, imports"

# A reading command takes them too, through its cache, with the verdict
# of the plain pickle.
run "$VRAMTRACE" leaks "$TMP/real.pickle"
grep '^verdict:' "$TMP/out" >"$TMP/verdict" &&
    grep -q "verdict: LEAK, +256.0 KiB per step" "$TMP/verdict"
ok $? "leaks on the plain pickle: LEAK, +256.0 KiB per step"
for f in real.pt snapshot.data hand-deflated.zip; do
	run "$VRAMTRACE" leaks "$TMP/$f"
	[ $rc -eq 0 ] && grep '^verdict:' "$TMP/out" | cmp -s - "$TMP/verdict"
	ok $? "leaks $f: the plain pickle's verdict"
done
run "$VRAMTRACE" leaks "$TMP/real.pt" --format json
[ $rc -eq 0 ] && [ -z "$(ls "$TMPDIR")" ]
ok $? "...read from the cache the second time, nothing left in TMPDIR"

# Streams: standard input ("-") and a FIFO, spooled into TMPDIR first.
# stream DESCRIPTION SCRIPT: sh -c SCRIPT, with $V the program and $T the
# test's directory, imports the plain pickle's rows into $T/packed.db
stream() {
	rm -f "$TMP/packed.db"
	V=$VRAMTRACE T=$TMP run sh -c "$2"
	[ $rc -eq 0 ] && [ "$(rows "$TMP/packed.db")" = "$want" ] &&
	    [ -z "$(ls "$TMPDIR")" ]
	st=$?
	[ $st -eq 0 ] || echo "# exit $rc: $(head -c 300 "$TMP/err")"
	ok $st "$1"
}
stream "a pipe on standard input: the same rows" \
    'cat "$T/real.pickle" | "$V" import - -o "$T/packed.db"'
grep -q "^standard input: 6 segments" "$TMP/out"
ok $? "...and the command calls it standard input"
stream "a gzip piped in: the same rows" \
    'cat "$T/two.gz" | "$V" import - -o "$T/packed.db"'
stream "a file on standard input: the same rows" \
    '"$V" import - -o "$T/packed.db" <"$T/real.pt"'
mkfifo "$TMP/fifo" || exit 99
stream "a FIFO whose writer comes after the reader: the same rows" \
    '"$V" import "$T/fifo" -o "$T/packed.db" & sleep 1;
    cat "$T/real.pt.gz" >"$T/fifo"; wait $!'
run "$VRAMTRACE" import -
expect 2 "standard input has no name .*give --output" \
    "import - without --output: exit 2, saying why"
run sh -c '"$1" import - -o "$2" </dev/null' sh "$VRAMTRACE" "$TMP/dev.db"
expect 4 "^vramtrace: standard input: a terminal or a device, not a snapshot" \
    "a device on standard input: exit 4, one line"
run sh -c ': | "$1" import - -o "$2"' sh "$VRAMTRACE" "$TMP/empty.db"
expect 4 "^vramtrace: standard input: empty" "an empty pipe: exit 4, one line"
run sh -c 'head -c 5000 "$1" | gzip -c | "$2" import - -o "$3"' sh \
    "$TMP/real.pickle" "$VRAMTRACE" "$TMP/cut.db"
expect 4 "standard input \(gzip content\): .*truncated at offset 5000" \
    "a truncated pickle piped in, gzipped: named standard input (gzip content)"
TMPDIR=$TMP/none run sh -c 'cat "$1" | "$2" import - -o "$3"' sh \
    "$TMP/real.pickle" "$VRAMTRACE" "$TMP/none.db"
expect 7 "standard input: cannot make a temporary file for its piped content" \
    "no TMPDIR to spool a pipe into: exit 7"
[ ! -e "$TMP/dev.db" ] && [ ! -e "$TMP/empty.db" ] && [ ! -e "$TMP/cut.db" ] &&
    [ ! -e "$TMP/none.db" ] && [ -z "$(ls "$TMPDIR")" ]
ok $? "...and no database, nothing left in TMPDIR"
run sh -c 'gzip -c "$1" | "$2" leaks -' sh "$TMP/real.pickle" "$VRAMTRACE"
[ $rc -eq 0 ] && grep '^verdict:' "$TMP/out" | cmp -s - "$TMP/verdict" &&
    [ -z "$(ls "$TMPDIR")" ]
ok $? "leaks -, a gzip piped in: the plain pickle's verdict, nothing left"
V=$VRAMTRACE T=$TMP run sh -c 'cat "$T/real.pt" >"$T/fifo" &
    cat "$T/real.pickle" | "$V" diff - "$T/fifo"'
[ $rc -eq 0 ] && grep -q "^A: standard input run 1 end, 69.6 MiB live" "$TMP/out" &&
    grep -q "^B: .*fifo run 1 end, 69.6 MiB live" "$TMP/out"
ok $? "diff of standard input and a FIFO: both read"
# A stream's temporary database goes as soon as the command has it open:
# a SIGKILL in the middle of a query leaves nothing.
cat "$TMP/real.pickle" | "$VRAMTRACE" sql - 'WITH RECURSIVE c(x) AS
    (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c' \
    >/dev/null 2>&1 &
pid=$!
i=0
until ls -l "/proc/$pid/fd" 2>/dev/null | grep -q 'vramtrace-import-.* (deleted)'
do
	[ $i -lt 600 ] && kill -0 $pid 2>/dev/null || break
	i=$((i + 1))
	sleep 0.1
done
kill -9 $pid 2>/dev/null && wait $pid 2>/dev/null
[ $i -lt 600 ] && [ -z "$(ls "$TMPDIR")" ]
ok $? "sql - killed in its query: its database already gone, nothing left"
# What stopped commands left in TMPDIR goes with the next stream: a
# temporary database being written (SIGKILL in the import) and a finished
# one past a minute that no process holds (SIGKILL in the TUI); one held
# (flock, as a live reader holds it), a recent one and another name stay.
for f in vramtrace-import-abcdef.tmp-ghijkl vramtrace-import-mnopqr \
    vramtrace-import-stuvwx vramtrace-import-yzABCD other-import-EFGHIJ; do
	cp "$TMP/plain.db" "$TMPDIR/$f" || exit 99
done
touch -d '2 minutes ago' "$TMPDIR/vramtrace-import-mnopqr" \
    "$TMPDIR/vramtrace-import-stuvwx" "$TMPDIR/other-import-EFGHIJ"
flock -s "$TMPDIR/vramtrace-import-stuvwx" sleep 30 &
holder=$!
run sh -c 'cat "$1" | "$2" leaks -' sh "$TMP/real.pickle" "$VRAMTRACE"
kill $holder
wait $holder 2>/dev/null
[ $rc -eq 0 ] &&
    [ "$(ls "$TMPDIR" | tr '\n' ' ')" = "other-import-EFGHIJ vramtrace-import-stuvwx vramtrace-import-yzABCD " ] &&
    [ "$(grep -c 'removed .*/vramtrace-import-\(abcdef.tmp-ghijkl\|mnopqr\) .*left by a vramtrace that was stopped' "$TMP/err")" -eq 2 ]
ok $? "a stream removes the databases stopped commands left in TMPDIR, and only those"
rm -f "$TMPDIR"/*
run sh -c 'cat "$1" | "$2" leaks -' sh "$TMP/plain.db" "$VRAMTRACE"
expect 4 "^vramtrace: standard input: a SQLite database, not a pickle" \
    "a database piped in: one line saying so"

# Messages about the pickle's bytes name where they came from.
head -c 5000 "$TMP/real.pickle" | gzip -c >"$TMP/cut.gz" || exit 99
run "$VRAMTRACE" import "$TMP/cut.gz" -o "$TMP/cut.db"
expect 4 "cut.gz \(gzip content\): .*truncated at offset" \
    "a whole gzip of a truncated pickle: the reader's message, named FILE (gzip content)"
"$PY" -c '
import sys, zipfile
with zipfile.ZipFile(sys.argv[2], "w") as z:
    z.writestr("x/data.pkl", open(sys.argv[1], "rb").read()[:5000])
' "$TMP/real.pickle" "$TMP/cut.pt" || exit 99
run "$VRAMTRACE" import "$TMP/cut.pt" -o "$TMP/cut.db"
expect 4 "cut.pt \(x/data.pkl\): .*truncated at offset" \
    "...and in a zip, FILE (ENTRY)"
run "$VRAMTRACE" import "$data/legacy-head.pt" -o "$TMP/legacy.db"
expect 4 "legacy-head.pt: written by torch.save in its legacy format" \
    "torch.save's legacy format: one line saying how to save it instead"

# A temporary file that cannot be made is the machine's fault: exit 7.
TMPDIR=$TMP/none run "$VRAMTRACE" import "$TMP/two.gz" -o "$TMP/none.db"
expect 7 "two.gz: cannot make a temporary file for its gzip content" \
    "no TMPDIR to unpack into: exit 7, naming the file and the cause"
[ ! -e "$TMP/none.db" ]
ok $? "...and no database"
# A disk that fills: a file size limit, with SIGXFSZ ignored (as a
# shell's trap passes it on), makes the write fail as a full disk does.
(trap '' XFSZ; ulimit -f 100 && exec "$VRAMTRACE" import "$TMP/two.gz" \
    -o "$TMP/full.db") >"$TMP/out" 2>"$TMP/err"
rc=$?
expect 7 "two.gz: cannot write its gzip content to a temporary file: File too large" \
    "a write to the temporary file that fails: exit 7, naming the cause"

# The hostile corpus.
tab=$(printf '\t')
while IFS="$tab" read -r file want codec; do
	case $file in
	\#*|'') continue ;;
	esac
	if [ -n "$codec" ] && ! reads "$codec"; then
		want="which this vramtrace was built without"
	fi
	mkdir "$TMP/d" || exit 99
	run "$VRAMTRACE" import "$data/bad/$file" -o "$TMP/d/out.db"
	lines=$(wc -l <"$TMP/err")
	[ $rc -eq 4 ] && [ "$lines" -eq 1 ] && grep -qF -- "$want" "$TMP/err" &&
	    grep -qF -- "$file" "$TMP/err" && [ -z "$(ls "$TMP/d")" ] &&
	    [ -z "$(ls "$TMPDIR")" ]
	st=$?
	[ $st -eq 0 ] || echo "# exit $rc: $(head -c 300 "$TMP/err")" \
	    "/ left: $(ls "$TMP/d" "$TMPDIR")"
	ok $st "bad/$file: $want"
	rm -rf "$TMP/d"
done <"$data/bad/EXPECT"
done_testing
