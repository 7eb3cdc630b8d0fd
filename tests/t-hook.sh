#!/bin/sh
# t-hook.sh: a function's calls redirected in the objects that import it
# (lib/got.c, which the injection library uses for the CUDA
# runtime's allocation calls), without CUDA: tests/hook-host imports
# hook_probe() lazily and by address and loads tests/hook/libhook-use.so,
# bound to a second definition, which must be left alone, and dlopen,
# which acts for its caller, must never be redirected; then
# tests/hook/libhook-late.so, loaded later, must be seen loaded and
# redirected by the next pass, and 8 copies of it, loaded by 8 threads at
# once while passes run, by the pass after; got_replace
# (lib/got-replace.c) replaces the real function where the host keeps it
# in writable data, and nowhere else.
. "${srcdir:-.}/tests/lib.sh"
b=${top_builddir:-.}
copies=
for i in 1 2 3 4 5 6 7 8; do
	cp "$b/tests/hook/libhook-late.so" "$TMP/libhook-late$i.so"
	copies="$copies $TMP/libhook-late$i.so"
done
"$b/tests/hook-host" "$b/tests/hook/libhook-use.so" \
    "$b/tests/hook/libhook-late.so" $copies
