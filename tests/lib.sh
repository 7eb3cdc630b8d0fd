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
trap 'sanitizer_reports; san=$?
if [ "$tap_failed" -eq 0 ]; then rm -rf "$TMP"; else echo "# kept $TMP"; fi
[ "$san" -eq 0 ] || exit 1' EXIT

# A build without CUDA has no injection library, and record refuses to
# start without one (t-record.sh checks that): the commands the tests
# record load no CUDA, so any readable file stands in for it.
if [ ! -f "${top_builddir:-.}/libvramtrace-inject.so" ] &&
    [ -z "${VRAMTRACE_INJECT_LIBRARY:-}" ]; then
	VRAMTRACE_INJECT_LIBRARY=$VRAMTRACE
	export VRAMTRACE_INJECT_LIBRARY
fi

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
# build's (configure --enable-sanitizers: ASan and UBSan).
sanitized() {
	nm -D "$1" 2>/dev/null | grep -q __asan_init
}

# sanitize_python LIBRARY: when LIBRARY is a sanitizer build's, make $PY
# and $PYTHON3 a python3 that can load it, with every check on but one: a
# wrapper ($TMP/bin/python3) that runs the real interpreter with the
# sanitizer runtimes LIBRARY was linked with preloaded (ASan's must come
# first in the process, and python3 is not built with it), Python's
# objects from malloc (PYTHONMALLOC=malloc, so that ASan sees their
# bounds), and no leak check (the interpreter does not free everything at
# exit).  A report stops the process (halt_on_error).  ASan's goes to a
# file under $TMP, which the test's exit finds (sanitizer_reports): it
# fails the test even where the test expects python3 to fail.  UBSan's
# goes to stderr (GCC's, beside ASan, ignores log_path) with exit status
# 1.  Elsewhere it does nothing.  Status 1, with a line saying why, when
# there is no ASan runtime to preload.
sanitize_python() {
	sanitized "$1" || return 0
	san_rt=$(ldd "$1" 2>/dev/null |
	    awk '$1 ~ /^lib(asan|ubsan)\.so/ && $3 ~ /^\// { print $3 }' | sort)
	san_py=$("${PYTHON3:-$PY}" -c 'import sys; print(sys.executable)')
	case $san_rt in
	*/libasan.so*) [ -n "$san_py" ] ;;
	*) false ;;
	esac || {
		echo "# $1: no ASan runtime (ldd) or no python3 to preload it into"
		return 1
	}
	mkdir -p "$TMP/bin" && cat >"$TMP/bin/python3" <<EOF || return 1
#!/bin/sh
LD_PRELOAD="$(echo $san_rt)\${LD_PRELOAD:+ \$LD_PRELOAD}" \\
ASAN_OPTIONS="\${ASAN_OPTIONS:+\$ASAN_OPTIONS:}detect_leaks=0:halt_on_error=1:log_path=$TMP/sanitizer" \\
UBSAN_OPTIONS="\${UBSAN_OPTIONS:+\$UBSAN_OPTIONS:}halt_on_error=1:print_stacktrace=1" \\
PYTHONMALLOC=malloc exec "$san_py" "\$@"
EOF
	chmod +x "$TMP/bin/python3" || return 1
	PY=$TMP/bin/python3 PYTHON3=$TMP/bin/python3
}

# sanitizer_reports: at a test's exit, the reports of the processes that
# sanitize_python ran, as comments; any fails the test (exit status 1).
sanitizer_reports() {
	san_n=0
	for f in "$TMP"/sanitizer.*; do
		[ -f "$f" ] || continue
		echo "# sanitizer report $f:"
		sed 's/^/# /' "$f"
		san_n=$((san_n + 1))
	done
	[ "$san_n" -eq 0 ] && return 0
	tap_failed=$((tap_failed + san_n))
	return 1
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

# catching PID SIGNUM: wait (at most about 30 s) until process PID
# catches signal SIGNUM (1 to 32), its handler set: a test that signals a
# program it just started waits for that, not a fixed time, which a loaded
# machine may spend starting it.  0 once it does, else 1.
catching() {
	i=0
	while [ $i -lt 300 ]; do
		m=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$1/status" \
		    2>/dev/null)
		m=${m#????????}
		[ -n "$m" ] && [ $(((0x$m >> ($2 - 1)) & 1)) -eq 1 ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

done_testing() {
	[ "$tap_failed" -eq 0 ]
}

# spool NAME: replay $TMP/NAME.txt into $TMP/NAME.db
spool() {
	"$MKSPOOL" "$TMP/$1.txt" "$TMP/$1.vtr" &&
	"$VRAMTRACE" replay "$TMP/$1.vtr" -o "$TMP/$1.db" >/dev/null
}

# pinned_run NAME KEEP: $TMP/NAME.db, a run of 12 steps whose device
# memory is flat (100 MiB made and freed on stream 13 each step) and whose
# pinned host memory (layer host, device -1, as the recorder writes it)
# gains 64 MiB in every step (KEEP all: a leak), or in steps 1 to KEEP only
# and is then reused (a caching host allocator's pool filling up).
pinned_run() {
	{
		echo 'process-start 1000 pid=10'
		echo 'device 1000 device=0 total=85899345920 name="NVIDIA H100"'
		echo 'stream-create 1000 stream=13 device=0'
		t=1100
		for k in 1 2 3 4 5 6 7 8 9 10 11 12; do
			echo "alloc $t address=0x100000 bytes=104857600 stream=13"
			echo "free $((t + 10)) address=0x100000 bytes=104857600 stream=13"
			if [ "$2" = all ] || [ $k -le "$2" ]; then
				echo "alloc $((t + 20)) address=$((0x7f0000000000 + 0x10000000 * k)) bytes=67108864 layer=host device=-1 site=\"stash@offload.py:40\""
			fi
			echo "step-end $((t + 30))"
			t=$((t + 100))
		done
		echo "process-end $t pid=10"
	} >"$TMP/$1.txt" && spool "$1"
}

# older_file DB COPY TABLE.COLUMN...: COPY, the database DB as a vramtrace
# made before those columns existed (dropped through Python's sqlite3).
older_file() {
	cp "$1" "$2" || return
	"$PY" - "$2" "$@" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for col in sys.argv[4:]:
    c.execute("alter table %s drop column %s" % tuple(col.split(".")))
c.commit()
PY
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
