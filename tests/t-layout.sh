#!/bin/sh
# t-layout.sh: the layout rules of HACKING.md, checked on the built objects
# (tests/layout.py reads their symbols with nm): the libraries that live in
# the traced process never call exit, abort or the program's helpers, and
# no two files of one family call each other in a circle.
. "${srcdir:-.}/tests/lib.sh"
plan 2
b=${top_builddir:-.}
if ! command -v nm >/dev/null 2>&1 || [ -z "$PYTHON3" ]; then
	skip 2 "no nm or python3"
	exit 0
fi
libs=
for l in libvramtrace.so libvramtrace-inject.so \
    python/vramtrace/_offload.abi3.so; do
	[ -f "$b/$l" ] && libs="$libs $b/$l"
done
run "$PYTHON3" "$srcdir/tests/layout.py" inproc $libs
ok $rc "libraries in the traced process never exit or call the program's helpers"
# the in-process libraries' objects are named after their library
# (no injection library's objects in a build without CUDA)
objs=
for o in "$b"/src/*.o "$b"/lib/libvtcore_a-*.o "$b"/lib/libvramtrace_so-*.o \
    "$b"/lib/libvramtrace_inject_so-*.o "$b"/pickle/*.o "$b"/tui/*.o; do
	[ -f "$o" ] && objs="$objs $o"
done
run "$PYTHON3" "$srcdir/tests/layout.py" cycles $objs
[ $rc -eq 0 ] || sed 's/^/# /' "$TMP/out"
ok $rc "no circle of calls within a family"
