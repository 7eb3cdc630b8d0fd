#!/bin/sh
# t-exit.sh: the exit statuses a CI acts on, the same for every command
# (vramtrace(1), EXIT STATUS; src/vramtrace.h): 1 a leak found by a check
# asked for, 2 bad usage, 4 a bad input, 5 INCONCLUSIVE under
# --fail-on-inconclusive, 6 a check on a run cut short, 7 an output that
# cannot be written (3 is the offload check's: t-check-store.sh).  And a run cut short says so in every command.
. "${srcdir:-.}/tests/lib.sh"
plan 17

# leaky NAME STEPS MIB: a run of STEPS steps that keeps MIB MiB of each.
leaky() {
	{
		echo 'process-start 1000 pid=10'
		echo 'alloc 1100 address=0x1000 bytes=104857600 stream=7'
		t=2000
		k=1
		while [ $k -le "$2" ]; do
			echo "alloc $((t - 300)) address=$((0x10000000 + 0x1000000 * k)) bytes=$(($3 * 1048576)) stream=7"
			echo "step-end $t"
			t=$((t + 1000))
			k=$((k + 1))
		done
	} >"$TMP/$1.txt"
	"$MKSPOOL" "$TMP/$1.txt" "$TMP/$1.vtr" &&
	"$VRAMTRACE" replay "$TMP/$1.vtr" -o "$TMP/$1.db" >/dev/null
}
# cut DB OUT: a copy of DB whose run did not finish (as a killed record
# leaves it).
cut() {
	cp "$1" "$2" &&
	"$PY" -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("UPDATE runs SET complete = 0, end_ns = NULL"); c.commit()' "$2"
}
leaky leak 6 8
leaky clean 6 0
leaky short 2 0
cut "$TMP/clean.db" "$TMP/clean-cut.db"
cut "$TMP/leak.db" "$TMP/leak-cut.db"
printf 'not a database, not a snapshot, not a spool: just text\n' >"$TMP/text.db"
cp "$TMP/text.db" "$TMP/text.pickle"
cp "$TMP/text.db" "$TMP/text.vtr"

# statuses CMD...: the statuses of CMD on each argument set, one word each.
status() {
	"$VRAMTRACE" "$@" >/dev/null 2>&1
	printf '%s ' $?
}

got="$(status leaks "$TMP/leak.db")$(status leaks "$TMP/leak.db" --fail-on-leak)$(status leaks "$TMP/clean.db" --fail-on-leak)"
[ "$got" = "0 1 0 " ]; ok $? "leaks: LEAK is 0, 1 with --fail-on-leak; CLEAN 0 ($got)"
got="$(status leaks "$TMP/short.db")$(status leaks "$TMP/short.db" --fail-on-leak)$(status leaks "$TMP/short.db" --fail-on-inconclusive)$(status leaks "$TMP/clean.db" --fail-on-inconclusive)$(status leaks "$TMP/leak.db" --fail-on-inconclusive)"
[ "$got" = "0 0 5 0 0 " ]; ok $? "leaks: INCONCLUSIVE is 5 with --fail-on-inconclusive only ($got)"
got="$(status leaks "$TMP/clean-cut.db")$(status leaks "$TMP/clean-cut.db" --fail-on-leak)$(status leaks "$TMP/clean-cut.db" --fail-on-inconclusive)$(status leaks "$TMP/leak-cut.db" --fail-on-leak)"
[ "$got" = "0 6 6 1 " ]; ok $? "leaks on a run cut short: CLEAN is 6 under either --fail-on, a LEAK still 1 ($got)"

# Bad usage, bad input: every command that reads one database or
# snapshot, given a text file as a database and as a pickle.
bad=
for c in leaks report info history export tui sql diff; do
	case $c in
	export) extra="--perfetto $TMP/x.json" ;;
	tui) extra="--dump overview" ;;
	*) extra= ;;
	esac
	for f in "$TMP/text.db" "$TMP/text.pickle" "$TMP/missing.db"; do
		case $c in
		sql) run "$VRAMTRACE" sql "$f" "select 1" ;;
		diff) run "$VRAMTRACE" diff "$f@1" "$TMP/clean.db@2" ;;
		*) run "$VRAMTRACE" $c "$f" $extra ;;
		esac
		{ [ $rc -eq 4 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
		    grep -q "${f##*/}" "$TMP/err"; } || bad="$bad $c:${f##*/}=$rc"
	done
	run "$VRAMTRACE" $c --no-such-option "$TMP/clean.db"
	[ $rc -eq 2 ] || bad="$bad $c:usage=$rc"
done
[ -z "$bad" ]; ok $? "readers: a bad or missing input is 4 and one line naming it, bad usage 2${bad:+ (not:$bad)}"
run "$VRAMTRACE" leaks "$TMP/clean.db" --run 9
expect 4 'no run 9' "leaks: an unknown run is a bad input, 4"

# Writers: a bad input is 4, an output that cannot be written 7 (in a
# "directory" that is a file: refused to root as well).
run "$VRAMTRACE" import "$TMP/text.pickle" -o "$TMP/i.db"
expect 4 'text.pickle' "import: a bad snapshot is 4"
run "$VRAMTRACE" replay "$TMP/text.vtr" -o "$TMP/r.db"
expect 4 'text.vtr' "replay: a bad spool file is 4"
run "$VRAMTRACE" merge "$TMP/text.db" -o "$TMP/m.db"
expect 4 'text.db' "merge: a bad input is 4"
run "$VRAMTRACE" import "$srcdir/examples/clean.pickle" -o "$TMP/text.db/i.db"
expect 7 'text.db/i.db' "import: an output that cannot be written is 7"
run "$VRAMTRACE" replay "$TMP/clean.vtr" -o "$TMP/text.db/r.db"
expect 7 'text.db/r.db' "replay: an output that cannot be written is 7"
run "$VRAMTRACE" merge "$TMP/clean.db" -o "$TMP/text.db/m.db"
expect 7 'text.db/m.db' "merge: an output that cannot be written is 7"
run "$VRAMTRACE" export "$TMP/clean.db" --perfetto "$TMP/text.db/x.json"
expect 7 'text.db/x.json' "export: an output that cannot be written is 7"

# history --fail-if-worse: 1 for a faster leak, 5 when a run was cut short.
for r in clean leak; do
	"$VRAMTRACE" replay "$TMP/$r.vtr" -o "$TMP/h.db" --append >/dev/null
done
cut "$TMP/h.db" "$TMP/h-cut.db"
"$VRAMTRACE" replay "$TMP/clean.vtr" -o "$TMP/h2.db" --append >/dev/null
"$VRAMTRACE" replay "$TMP/clean.vtr" -o "$TMP/h2.db" --append >/dev/null
cut "$TMP/h2.db" "$TMP/h2-cut.db"
got="$(status history "$TMP/h.db" --fail-if-worse)$(status history "$TMP/h2.db" --fail-if-worse)$(status history "$TMP/h2-cut.db" --fail-if-worse)$(status history "$TMP/h2-cut.db")"
[ "$got" = "1 0 6 0 " ]; ok $? "history --fail-if-worse: worse 1, flat 0, flat but cut short 6 ($got)"

# A run cut short says so in every command's output.
run "$VRAMTRACE" leaks "$TMP/clean-cut.db"
grep -q '^not finished: the run was cut short' "$TMP/out"
ok $? "leaks: the text says the run did not finish"
run "$VRAMTRACE" leaks "$TMP/clean-cut.db" --format json
jq_py "$TMP/out" 'd["complete"] is False' &&
    "$VRAMTRACE" leaks "$TMP/clean.db" --format json >"$TMP/fin.json" &&
    jq_py "$TMP/fin.json" 'd["complete"] is True'
ok $? "leaks --format json: complete false, true for a finished run"
run "$VRAMTRACE" history "$TMP/h2-cut.db"
grep -Eq 'CLEAN \(not finished\)$' "$TMP/out" &&
    "$VRAMTRACE" history "$TMP/h2-cut.db" --format json >"$TMP/h.json" &&
    jq_py "$TMP/h.json" '[r["complete"] for r in d["runs"]] == [False, False]'
ok $? "history: each run cut short says so, in text and JSON"
run "$VRAMTRACE" report "$TMP/clean-cut.db"
grep -q '(not finished)' "$TMP/out" &&
    "$VRAMTRACE" info "$TMP/clean-cut.db" | grep -q '(1 not finished)'
ok $? "report and info: not finished"
done_testing
