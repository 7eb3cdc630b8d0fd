# lib.sh: helpers for the shell tests (TAP output, a temporary directory).
# Source it; the Makefile exports VRAMTRACE, MKSPOOL, srcdir, SHARED_DATA.

: "${VRAMTRACE:=./vramtrace}"
: "${MKSPOOL:=./tests/mkspool}"
: "${srcdir:=.}"
PY=${PYTHON3:-python3}
tap_n=0
tap_failed=0
TMP=$(mktemp -d /tmp/vramtrace-test-XXXXXX) || exit 99
# Pickles given to reading commands are imported here, not into ~/.cache.
XDG_CACHE_HOME=$TMP/cache
export XDG_CACHE_HOME
trap 'if [ "$tap_failed" -eq 0 ]; then rm -rf "$TMP"; else echo "# kept $TMP"; fi' EXIT

plan() { echo "1..$1"; }

ok() {	# ok CONDITION-STATUS DESCRIPTION
	tap_n=$((tap_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $tap_n - $2"
	else
		echo "not ok $tap_n - $2"
		tap_failed=$((tap_failed + 1))
	fi
}

# sanitized FILE: 0 when FILE (a program or library) is a sanitizer
# build's, which python3 cannot load (the ASan runtime must come first).
sanitized() {
	nm -D "$1" 2>/dev/null | grep -q __asan_init
}

skip() {	# skip COUNT REASON
	i=0
	while [ "$i" -lt "$1" ]; do
		tap_n=$((tap_n + 1))
		echo "ok $tap_n # SKIP $2"
		i=$((i + 1))
	done
}

# run CMD...: run a command, keep its status in $rc, stdout in $TMP/out,
# stderr in $TMP/err.
run() {
	"$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
}

# expect STATUS PATTERN DESCRIPTION: the last run exited STATUS and its
# stderr matches the extended regular expression PATTERN.
expect() {
	[ "$rc" -eq "$1" ] && grep -Eq -- "$2" "$TMP/err"
	st=$?
	[ $st -eq 0 ] || echo "# status $rc, stderr: $(head -c 300 "$TMP/err")"
	ok $st "$3"
}

done_testing() {
	[ "$tap_failed" -eq 0 ]
}

# spool NAME: replay $TMP/NAME.txt into $TMP/NAME.db
spool() {
	"$MKSPOOL" "$TMP/$1.txt" "$TMP/$1.vtr" &&
	"$VRAMTRACE" replay "$TMP/$1.vtr" -o "$TMP/$1.db" >/dev/null
}

# page DB OUT.html: write the HTML report of DB to OUT.html.
page() {
	"$VRAMTRACE" report "$1" --html "$2"
}

# jq_py FILE EXPR: evaluate a Python expression on the JSON in FILE (as d);
# exit 0 when it is true.
jq_py() {
	"$PY" - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}
