#!/bin/sh
# t-check.sh: the offload check without torch or a GPU.  Its verdicts and
# bookkeeping (check-compare.py, TAP lines 1-19), then its events from
# Python through libvramtrace.so and a stand-in injection library
# (libfake-inject.so) into a spool file, read back with spooldump and
# replayed: leaks says what the process would say at exit.
. "${srcdir:-.}/tests/lib.sh"
b=${top_builddir:-.}
COMPARE=19
plan $((COMPARE + 5))
if [ -z "$PYTHON3" ]; then
	skip $((COMPARE + 5)) "no python3"
	exit 0
fi
PYTHONPATH="$srcdir/python" "$PYTHON3" "$srcdir/tests/check-compare.py" |
	grep -E '^(not )?ok '
tap_n=$COMPARE
sanitize_python "$b/libvramtrace.so" || exit 99

unset VRAMTRACE_SOCKET
run env PYTHONPATH="$srcdir/python" VRAMTRACE_LIBRARY="$b/libvramtrace.so" \
	CUDA_INJECTION64_PATH="$b/tests/libfake-inject.so" \
	VRAMTRACE_OUTPUT="$TMP/check.vtr" \
	"$PYTHON3" "$srcdir/tests/check-emit.py"
site=$(cat "$TMP/out")
"$b/tests/spooldump" "$TMP/check.vtr" >"$TMP/dump" 2>&1
ok $? "the spool of a process that sent check events decodes"
grep -q '^check-step 4 tests.Engine packs=2 unpacks=2 checked=2 differ=1 packed=32768 moved=16384 device=0$' \
	"$TMP/dump"
ok $? "one step of an engine: packs, unpacks, checks, bytes packed and moved"
grep -q "^check-diff 4 #1 tests.Engine 8x1024 bfloat16 16384 device=0 differs=0x8 at=$site pack=$site unpack=MmBackward0 \"contents: 5 of 9216 checksums differ\"$" \
	"$TMP/dump"
ok $? "the difference: step, number, engine, shape, dtype, bytes, sites, words"
[ "$(grep -c '^check-diff' "$TMP/dump")" -eq 1 ]
ok $? "a copy in another layout is no difference"
"$VRAMTRACE" replay "$TMP/check.vtr" -o "$TMP/check.db" >/dev/null 2>&1 &&
	"$VRAMTRACE" leaks "$TMP/check.db" >"$TMP/leaks" 2>&1
[ $? -eq 3 ] && grep -qxF "offload check: 1 of 2 saved tensors came back different (first at step 4, packed at $site by tests.Engine)" \
	"$TMP/leaks"
ok $? "replayed: leaks says so and exits 3"
[ $tap_failed -eq 0 ] || sed 's/^/# /' "$TMP/dump" "$TMP/err" "$TMP/leaks"
done_testing
