#!/bin/sh
# t-install.sh: make install into a temporary DESTDIR, then make
# installcheck against it (tests/installed.sh prints the TAP: libvramtrace.so
# with its soname and links, the header and vramtrace.pc, the examples of
# libvramtrace(3) built and run against them, the package imported by
# python3 and loading the installed library, the program's version).
# Skips in a sanitizer build (its libraries load only under the sanitizer).
b=${top_builddir:-.}
if nm -D "$b/libvramtrace.so" 2>/dev/null | grep -q __asan_init; then
	echo "1..0 # SKIP sanitizer build"
	exit 0
fi
T=$(mktemp -d /tmp/vramtrace-install-XXXXXX) || exit 99
trap 'rm -rf "$T"' EXIT
unset MAKEFLAGS MFLAGS
if ! ${MAKE:-make} -C "$b" -s install DESTDIR="$T/root" >"$T/log" 2>&1; then
	echo "1..1"
	echo "not ok 1 - make install DESTDIR=$T/root"
	sed 's/^/# /' "$T/log"
	exit 1
fi
${MAKE:-make} -C "$b" -s installcheck DESTDIR="$T/root" 2>&1 |
	grep -E '^(not )?ok |^1\.\.|^#'
