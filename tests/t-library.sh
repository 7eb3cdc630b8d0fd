#!/bin/sh
# t-library.sh: the Python package's one way to libvramtrace.so
# (vramtrace._library): VRAMTRACE_LIBRARY, the build tree; the check at
# load of the library's version and struct sizes against the package's
# mirrors, over a stand-in built from lib/abi.c that can be made to
# answer wrong (tests/libabi-skew.so); what step() does then; the offload
# engine without a CUDA runtime; the program through python3 -m vramtrace.
# Skips without python3.
. "${srcdir:-.}/tests/lib.sh"
b=${top_builddir:-.}
plan 17
if [ -z "$PYTHON3" ]; then
	skip 17 "no python3"
	exit 0
fi
sanitize_python "$b/libvramtrace.so" || exit 99
SKEW=$b/tests/libabi-skew.so
unset VRAMTRACE_LIBRARY ABI_SKEW VRAMTRACE_CUDA_SEARCH
PYTHONPATH="$srcdir/python"
export PYTHONPATH
LOAD='import vramtrace; print(vramtrace.load_library()._name)'

run env VRAMTRACE_LIBRARY="$b/libvramtrace.so" "$PYTHON3" -c "$LOAD"
[ "$rc" -eq 0 ] && [ "$(cat "$TMP/out")" = "$b/libvramtrace.so" ]
ok $? "VRAMTRACE_LIBRARY names the library"
version=$("$VRAMTRACE" --version | awk '{print $2}')
run env VRAMTRACE_LIBRARY="$b/libvramtrace.so" "$PYTHON3" -c \
	'import ctypes, vramtrace
lib = vramtrace.load_library()
print(vramtrace.__version__, lib.vramtrace_version().decode())'
[ "$(cat "$TMP/out")" = "$version $version" ]
ok $? "the package, the library and the program are all version $version"
run env VRAMTRACE_LIBRARY="$SKEW" "$PYTHON3" -c "$LOAD"
[ "$rc" -eq 0 ]
ok $? "the stand-in, answering right, loads"

# Every struct the package mirrors, made 8 bytes larger in the library.
for s in vramtrace_offload_config vramtrace_offload_tensor \
    vramtrace_offload_request vramtrace_offload_stats vramtrace_check_step \
    vramtrace_check_diff; do
	ours=$("$PYTHON3" -c "import ctypes
from vramtrace import _library
print(ctypes.sizeof(_library.STRUCTS['$s']))")
	run env VRAMTRACE_LIBRARY="$SKEW" ABI_SKEW=$s "$PYTHON3" -c \
		'import sys, vramtrace
try:
    vramtrace.load_library()
except vramtrace.LibraryError as e:
    sys.exit(str(e))'
	[ "$rc" -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
		grep -qF "vramtrace: struct $s is $((ours + 8)) bytes in $SKEW but $ours in the Python package (vramtrace/_library.py)" \
		"$TMP/err"
	st=$?
	[ $st -eq 0 ] || sed 's/^/# /' "$TMP/err"
	ok $st "struct $s of another size: refused, in one line with both sizes"
done
run env VRAMTRACE_LIBRARY="$SKEW" ABI_SKEW=version "$PYTHON3" -c "$LOAD"
[ "$rc" -ne 0 ] && grep -q "vramtrace: $SKEW is libvramtrace 0.0.1 but the Python package in .* is $version: install both from one build" \
	"$TMP/err"
ok $? "another version: refused, naming both"
run env VRAMTRACE_LIBRARY="$b/tests/libfake-nvml.so" "$PYTHON3" -c "$LOAD"
[ "$rc" -ne 0 ] && grep -q "has no vramtrace_version(): not a libvramtrace.so of version $version" \
	"$TMP/err"
ok $? "a library that is not libvramtrace: refused"
run env VRAMTRACE_LIBRARY="$TMP/none.so" "$PYTHON3" -c "$LOAD"
[ "$rc" -ne 0 ] && grep -q "VRAMTRACE_LIBRARY=$TMP/none.so: no such file" \
	"$TMP/err"
ok $? "VRAMTRACE_LIBRARY naming no file: said so"

# Inside a program: one line, and the program goes on.
run env VRAMTRACE_LIBRARY="$SKEW" ABI_SKEW=vramtrace_offload_stats \
	"$PYTHON3" -c 'import vramtrace
for i in range(3):
    vramtrace.step()
vramtrace.mark("x")
print("went on")'
[ "$rc" -eq 0 ] && grep -qx "went on" "$TMP/out" &&
	[ "$(wc -l <"$TMP/err")" -eq 1 ] &&
	grep -q "^vramtrace: struct vramtrace_offload_stats .*; steps are not marked$" "$TMP/err"
ok $? "step() with a library of another build: one line, the program goes on"

# Where nothing names it: the build tree (when built in the source tree).
if [ -f "$srcdir/libvramtrace.so" ]; then
	run "$PYTHON3" -c "$LOAD"
	[ "$rc" -eq 0 ] && [ "$(cat "$TMP/out")" = "$(cd "$srcdir" && pwd)/libvramtrace.so" ]
	ok $? "without VRAMTRACE_LIBRARY: the build tree's"
else
	skip 1 "built outside the source tree"
fi

# The offload engine where no CUDA runtime can be found: its error.
run env VRAMTRACE_LIBRARY="$b/libvramtrace.so" VRAMTRACE_CUDA_SEARCH=process \
	"$PYTHON3" -c 'from vramtrace import _engine
_engine.Engine(_engine.default_config())'
grep -Eq '^RuntimeError: vramtrace offload: (no CUDA runtime: no libcudart\.so\.13 or \.12 in the process|this libvramtrace\.so was built without CUDA.*)$' \
	"$TMP/err"
ok $? "no CUDA runtime: the engine says so: $(tail -1 "$TMP/err")"

# The program from Python (python3 -m vramtrace: the console script's code).
run env PATH="$(cd "$b" && pwd):$PATH" "$PYTHON3" -m vramtrace --version
[ "$rc" -eq 0 ] && grep -q "^vramtrace $version " "$TMP/out"
ok $? "python3 -m vramtrace runs the program"
# (the interpreter itself: $PYTHON3 may be a launcher that needs PATH)
py=$("$PYTHON3" -c 'import sys; print(sys.executable)')
run env PATH=/nonexistent "$py" -m vramtrace --version
[ "$rc" -eq 127 ] && grep -q "the vramtrace program is neither in the package" "$TMP/err"
ok $? "and says so when there is none"
done_testing
