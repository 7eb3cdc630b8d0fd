#!/bin/sh
# t-cli.sh: the command line: usage errors and exit codes, help, version,
# info and sql on a replayed spool file.
. "${srcdir:-.}/tests/lib.sh"
plan 44

run "$VRAMTRACE"
expect 2 '^usage: vramtrace' "no command: usage, exit 2"
run "$VRAMTRACE" frobnicate
expect 2 'unknown command frobnicate' "unknown command: named, exit 2"
grep -q '^usage: vramtrace' "$TMP/err"; ok $? "unknown command: usage follows"
run "$VRAMTRACE" --frob
expect 2 'unknown option --frob' "unknown global option, exit 2"
run "$VRAMTRACE" info --frob x.db
expect 2 'info: unknown option --frob' "unknown command option: named"
grep -q '^usage: vramtrace info' "$TMP/err"; ok $? "...with the command's usage"
run "$VRAMTRACE" info x.db --format yaml
expect 2 'unknown format yaml' "unknown format, exit 2"
run "$VRAMTRACE" sql
expect 2 'needs a database and a query' "sql without arguments, exit 2"
run "$VRAMTRACE" --version
[ $rc -eq 0 ] && grep -q '^vramtrace [0-9]' "$TMP/out"; ok $? "--version"
run "$VRAMTRACE" --help
[ $rc -eq 0 ] && grep -q 'replay' "$TMP/out"; ok $? "--help lists the commands"
run "$VRAMTRACE" help sql
[ $rc -eq 0 ] && grep -q 'usage: vramtrace sql' "$TMP/out"; ok $? "help CMD"
run "$VRAMTRACE" help nothing
expect 2 'unknown command nothing' "help of an unknown command, exit 2"
run "$VRAMTRACE" info "$TMP/missing.db"
expect 4 'missing.db: No such file' "a missing database, exit 4"

cat >"$TMP/run.txt" <<'SPOOL'
process-start 1000 pid=10 rank=0 host=h1 command="python train.py"
stream-create 1000 stream=13 device=0
alloc 1100 address=0x1000 bytes=1048576 stream=13 site="fwd@train.py:12|main@train.py:40"
alloc 1200 address=0x2000 bytes=2097152 stream=13
step-end 1300
free 1400 address=0x1000 bytes=1048576 stream=13
memcpy 1450 bytes=4096 stream=13 end=1460 kind=2 src=0 dst=-1
step-end 1500
SPOOL
"$MKSPOOL" "$TMP/run.txt" "$TMP/run.vtr"
run "$VRAMTRACE" replay "$TMP/run.vtr" -o "$TMP/run.db"
ok $rc "replay a spool file"
run "$VRAMTRACE" replay "$TMP/run.vtr" -o "$TMP/run.db"
expect 7 'already exists' "replay refuses to overwrite a database, exit 7"
run "$VRAMTRACE" info "$TMP/run.db" --format json
ok $rc "info --format json"
"${PYTHON3:-python3}" - "$TMP/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
want = {"schema_version": 1, "runs": 1, "snapshots": 0, "segments": 0,
        "blocks": 0, "trace_entries": 0, "allocations": 2, "streams": 1,
        "steps": 2, "memcpys": 1, "processes": 1}
bad = {k: (d.get(k), v) for k, v in want.items() if d.get(k) != v}
sys.exit(1 if bad else 0)
PY
ok $? "info --format json has the keys and the counts"
run "$VRAMTRACE" info "$TMP/run.db"
grep -q 'allocations     2' "$TMP/out"; ok $? "info as text"
run "$VRAMTRACE" sql "$TMP/run.db" "select address, bytes from allocations order by address" --format csv
[ "$(cat "$TMP/out")" = "$(printf 'address,bytes\n4096,1048576\n8192,2097152')" ]
ok $? "sql --format csv"
run "$VRAMTRACE" sql "$TMP/run.db" "select label from sites" --format json
grep -q '"label": "train.py:12 fwd"' "$TMP/out"; ok $? "sql --format json"
run "$VRAMTRACE" sql "$TMP/run.db" "select step, live_bytes from step_growth where layer = 1"
[ "$(cat "$TMP/out")" = "$(printf 'step|live_bytes\n1|3145728\n2|2097152')" ]
ok $? "sql --format table on the step_growth view"
run "$VRAMTRACE" sql "$TMP/run.db" "delete from allocations"
expect 2 'refusing a statement that writes' "sql refuses to write, exit 2"
run "$VRAMTRACE" sql "$TMP/run.db" "select 1; select 2"
expect 2 'one statement at a time' "sql runs one statement"
[ "$("$VRAMTRACE" sql "$TMP/run.db" "select count(*) from allocations")" = "$(printf 'count(*)\n2')" ]
ok $? "the database is unchanged"
# A stream is decimal everywhere and n/a (null in JSON) when unknown.
cat >"$TMP/streams.txt" <<'SPOOL'
stream-create 1000 stream=1031036896 device=0
alloc 1100 address=0x1000 bytes=1048576 stream=1031036896 site="fwd@train.py:12"
alloc 1200 address=0x2000 bytes=2097152 site="buf@train.py:9"
step-end 1300
step-end 1500
SPOOL
spool streams
run "$VRAMTRACE" leaks "$TMP/streams.db" --warmup 0
grep -Eq '^ +0  1031036896 ' "$TMP/out" && grep -Eq '^ +0  n/a ' "$TMP/out" &&
    grep -Eq ' n/a +train.py:9 buf$' "$TMP/out"
ok $? "leaks: streams in decimal, an unknown stream as n/a"
run "$VRAMTRACE" leaks "$TMP/streams.db" --format json
jq_py "$TMP/out" 'sorted(s["stream"] or 0 for s in d["streams"]) == [0, 1031036896] and None in [s["stream"] for s in d["streams"]]'
ok $? "leaks --format json: the same stream as a number, unknown as null"
run "$VRAMTRACE" export "$TMP/streams.db" --perfetto "$TMP/streams.json"
grep -q '"dev 0 stream 1031036896"' "$TMP/streams.json" &&
    grep -q '"dev 0 stream n/a"' "$TMP/streams.json"
ok $? "export: thread names spell streams the same way"
run "$VRAMTRACE" tui --dump streams "$TMP/streams.db"
grep -Eq '^ +0 1031036896 ' "$TMP/out" && grep -Eq '^ +0 n/a ' "$TMP/out"
ok $? "tui: the same spelling"
# Every command parses the same way, from its entry in the command table.
cmds=$("$VRAMTRACE" help | sed -n 's/^  \([a-z]*\) .*/\1/p')
[ "$(echo $cmds | wc -w)" -eq 15 ]; ok $? "help lists the 15 commands"
bad=
for c in $cmds; do
	"$VRAMTRACE" help "$c" >"$TMP/help" 2>&1 &&
	"$VRAMTRACE" "$c" -h >"$TMP/h" 2>&1 &&
	"$VRAMTRACE" "$c" --help >"$TMP/hh" 2>&1 &&
	cmp -s "$TMP/help" "$TMP/h" && cmp -s "$TMP/help" "$TMP/hh" &&
	grep -q "^usage: vramtrace $c" "$TMP/help" &&
	grep -q '^  -h, --help ' "$TMP/help" || bad="$bad $c"
done
[ -z "$bad" ]; ok $? "-h, --help and help CMD print the same help for every command${bad:+ (not:$bad)}"
bad=
for c in $cmds; do
	run "$VRAMTRACE" "$c" --frob
	[ $rc -eq 2 ] && [ "$(sed -n 1p "$TMP/err")" = "vramtrace: $c: unknown option --frob" ] &&
	    sed -n 2p "$TMP/err" | grep -q "^usage: vramtrace $c" &&
	    [ "$(grep -c '^vramtrace:' "$TMP/err")" -eq 1 ] || bad="$bad $c"
done
[ -z "$bad" ]; ok $? "every command: an unknown option is one line, the usage, exit 2${bad:+ (not:$bad)}"
run "$VRAMTRACE" leaks -h
[ $rc -eq 0 ] && grep -q '^  -F, --fail-on-leak ' "$TMP/out" && [ ! -s "$TMP/err" ]
ok $? "leaks -h: the help on stdout, exit 0"
run "$VRAMTRACE" leaks "$TMP/run.db" --run
expect 2 '^vramtrace: leaks: option --run needs a value$' "a missing value, exit 2"
run "$VRAMTRACE" info "$TMP/run.db" "$TMP/run.db"
expect 2 '^vramtrace: info: too many arguments$' "too many arguments, exit 2"
run "$VRAMTRACE" leaks --fail-on-leak=yes "$TMP/run.db"
expect 2 'option --fail-on-leak=yes takes no value' "a value for a flag, exit 2"
bad=
for c in leaks report info export tui; do
	run "$VRAMTRACE" "$c" "$TMP/run.db" --run 0 --perfetto "$TMP/x.json"
	[ $rc -eq 2 ] && [ "$(sed -n 1p "$TMP/err")" = "vramtrace: $c: bad run 0 (a number, at least 1)" ] || bad="$bad $c"
done
[ -z "$bad" ]; ok $? "one --run parser: the same message in every command${bad:+ (not:$bad)}"
run "$VRAMTRACE" export "$TMP/run.db" --run 1 --perfetto "$TMP/x.json" --max-points 8
expect 2 'bad max-points 8 \(a number, at least 16\)' "a number under its bound, exit 2"
run "$VRAMTRACE" record --torch-allocator fast -- true
expect 2 'unknown torch-allocator fast \(async, native or keep\)' "a choice not in the list, exit 2"
run "$VRAMTRACE" leaks "$TMP/run.db" --layer 7
expect 2 'unknown layer 7 \(segment, pool, block or host\)' "an unknown layer, exit 2"
run "$VRAMTRACE" record -o "$TMP/stop.db" -- sh -c 'exit 3' --help
[ $rc -eq 3 ] && [ -s "$TMP/stop.db" ]; ok $? "record: what follows the command is the command's"
# The defaults --help states are those the analysis uses.
run "$VRAMTRACE" leaks "$TMP/run.db" --format json
w=$("$VRAMTRACE" leaks -h | sed -n 's/.*--warmup N .*(\([0-9]*\))$/\1/p')
t=$("$VRAMTRACE" leaks -h | tr -s ' \n' ' ' | sed -n 's/.*--threshold BYTES .*(default: \([0-9]*\)% of the device.s memory over \([0-9]*\) steps).*/\1 \2/p')
[ -n "$w" ] && [ -n "$t" ] && jq_py "$TMP/out" "d['warmup'] == $w and d['threshold'] == __import__('math').ceil(${t% *} / 100 * (d['device_bytes'] or 2 ** 30 * 100) / ${t#* })"
ok $? "leaks: the warm-up and threshold --help states are the ones applied"
# The manual's entry of each command has --help's usage line and options.
if command -v "$PY" >/dev/null 2>&1; then
	run "$PY" "$srcdir/tests/manual.py" "$VRAMTRACE" "$srcdir/man/vramtrace.1.in"
	[ $rc -eq 0 ] || sed 's/^/# /' "$TMP/out"
	ok $rc "vramtrace(1) documents every command and option as --help does"
else
	skip 1 "no python3"
fi
# Every file a command writes is made 0644 less the umask (mkstemp made
# the atomically written ones 0600).
mode() { stat -c %a "$1"; }
mkdir "$TMP/modes"
(
	umask 022
	cd "$TMP/modes" || exit 1
	"$VRAMTRACE" replay "$TMP/run.vtr" -o replay.db &&
	"$VRAMTRACE" merge replay.db -o merge.db >/dev/null &&
	"$VRAMTRACE" import "$srcdir/examples/clean.pickle" -o import.db >/dev/null &&
	"$VRAMTRACE" export replay.db --perfetto export.json &&
	"$VRAMTRACE" report replay.db --html report.html &&
	"$VRAMTRACE" record -o record.db -- true &&
	"$VRAMTRACE" replay "$TMP/run.vtr" -o record.db --append
) >"$TMP/out" 2>&1
st=$?
got=$(for f in replay.db merge.db import.db export.json report.html \
    record.db; do
	printf '%s=%s ' "$f" "$(mode "$TMP/modes/$f")"; done)
[ $st -eq 0 ] && [ "$got" = "replay.db=644 merge.db=644 import.db=644 export.json=644 report.html=644 record.db=644 " ]
ok $? "umask 022: databases and exports are 0644${got:+ ($got)}"
(
	umask 027
	cd "$TMP/modes" || exit 1
	"$VRAMTRACE" replay "$TMP/run.vtr" -o replay027.db &&
	"$VRAMTRACE" export replay027.db --perfetto export027.json
) >"$TMP/out" 2>&1
[ $? -eq 0 ] && [ "$(mode "$TMP/modes/replay027.db") $(mode "$TMP/modes/export027.json")" = "640 640" ]
ok $? "umask 027: 0640, as the umask allows"
done_testing
