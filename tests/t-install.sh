#!/bin/sh
# t-install.sh: make install into a temporary DESTDIR, then make
# installcheck against it (tests/installed.sh prints the TAP: libvramtrace.so
# with its soname and links, the header and vramtrace.pc, the examples of
# libvramtrace(3) built and run against them, the package imported by
# python3 and loading the installed library, the program's version).
# In a sanitizer build, python3 is sanitize_python's and the examples are
# built with the sanitizers too (installcheck-local).
. "${srcdir:-.}/tests/lib.sh"
b=${top_builddir:-.}
T=$TMP
[ -z "$PYTHON3" ] || sanitize_python "$b/libvramtrace.so" || exit 99
unset MAKEFLAGS MFLAGS
if ! ${MAKE:-make} -C "$b" -s install DESTDIR="$T/root" >"$T/log" 2>&1; then
	echo "1..1"
	echo "not ok 1 - make install DESTDIR=$T/root"
	sed 's/^/# /' "$T/log"
	exit 1
fi
${MAKE:-make} -C "$b" -s installcheck DESTDIR="$T/root" ${PYTHON3:+PYTHON3="$PYTHON3"} 2>&1 |
	grep -E '^(not )?ok |^1\.\.|^#'
