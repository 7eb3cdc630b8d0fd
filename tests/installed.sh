#!/bin/sh
# installed.sh: check an installed vramtrace (make installcheck runs it,
# after make install, and so does t-install.sh in a DESTDIR); prints TAP,
# exits 1 when something is wrong.
#
#	installed.sh DESTDIR BINDIR LIBDIR INCLUDEDIR PKGLIBDIR PKGPYDIR
#	    PYTHON VERSION MANPAGE [INJECT [EXTENSION]]
#
# The files and links of libvramtrace.so and its soname; no library of the
# traced process needs a CUDA library to load; the examples of
# libvramtrace(3) (MANPAGE) build through pkg-config against the installed
# header and library and run; python imports the installed package and
# loads the installed library; the program says its version.  INJECT is
# libvramtrace-inject.so when it was built, EXTENSION the vramtrace._offload
# extension when it was (its path in the build tree).
D=$1 BINDIR=$2 LIBDIR=$3 INCLUDEDIR=$4 PKGLIBDIR=$5 PKGPYDIR=$6 PY=$7
VERSION=$8 MANPAGE=$9
INJECT=${10:-}
EXTENSION=${11:+${11##*/}}
CC=${CC:-cc}
T=$(mktemp -d /tmp/vramtrace-installed-XXXXXX) || exit 99
trap 'rm -rf "$T"' EXIT
n=0 failed=0
ok() {	# ok STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}

# The library, its soname, its links, its header and vramtrace.pc.
L=$D$LIBDIR
[ -f "$L/libvramtrace.so.$VERSION" ] && [ ! -h "$L/libvramtrace.so.$VERSION" ]
ok $? "libvramtrace.so.$VERSION in $LIBDIR"
soname=$(readelf -d "$L/libvramtrace.so.$VERSION" 2>/dev/null |
	sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ -n "$soname" ] && [ "$(readlink "$L/$soname")" = "libvramtrace.so.$VERSION" ]
ok $? "its soname $soname is a link to it"
[ "$(readlink "$L/libvramtrace.so")" = "$soname" ]
ok $? "libvramtrace.so (the linker's name) is a link to the soname"
libs="$L/libvramtrace.so.$VERSION"
[ -n "$INJECT" ] && libs="$libs $D$PKGLIBDIR/$INJECT"
readelf -d $libs >"$T/dyn" 2>&1 && ! grep -Eq 'NEEDED.*(libcupti|libcudart|libcuda\.)' "$T/dyn"
ok $? "no DT_NEEDED on CUDA's libraries in $(echo $libs | wc -w) installed libraries"
[ -f "$D$INCLUDEDIR/libvramtrace.h" ] && [ -f "$L/pkgconfig/vramtrace.pc" ]
ok $? "libvramtrace.h and vramtrace.pc installed"

# The examples of libvramtrace(3), through pkg-config, against the tree.
awk '/^\.SH /{ex = ($2 == "EXAMPLES")} ex && /^\.EE/{inside = 0; k++}
	ex && inside {print > (dir "/example" k ".txt")}
	ex && /^\.EX/{inside = 1}' dir="$T" k=1 "$MANPAGE"
PKG_CONFIG_PATH=$L/pkgconfig
export PKG_CONFIG_PATH
if [ -n "$D" ]; then
	PKG_CONFIG_SYSROOT_DIR=$D
	export PKG_CONFIG_SYSROOT_DIR
fi
flags=$(pkg-config --cflags --libs vramtrace)
ok $? "pkg-config --cflags --libs vramtrace: $flags"
built=0
for txt in "$T"/example*.txt; do
	grep -q '^#include <libvramtrace.h>' "$txt" || continue
	c=${txt%.txt}.c
	sed -e 's/\\-/-/g' -e 's/\\e/\\/g' -e 's/\\(dq/"/g' -e "s/\\\\(aq/'/g" \
		-e 's/\\&//g' "$txt" >"$c"
	$CC -Wall -Werror -o "${c%.c}" "$c" $flags 2>"$T/cc.log"
	st=$?
	[ $st -eq 0 ] || sed 's/^/# /' "$T/cc.log"
	ok $st "$(basename "$c") of libvramtrace(3) compiles and links"
	built=$((built + 1))
	LD_LIBRARY_PATH=$L "${c%.c}" >"$T/out" 2>"$T/err"
	rc=$?
	if grep -q vramtrace_version "$c"; then
		[ $rc -eq 0 ] && grep -qx "libvramtrace $VERSION" "$T/out"
	else	# the engine: made, or one line saying why not
		[ $rc -eq 0 ] || { [ $rc -eq 1 ] &&
			[ "$(wc -l <"$T/err")" -eq 1 ] &&
			grep -q '^no offload engine: ' "$T/err"; }
	fi
	st=$?
	[ $st -eq 0 ] || sed 's/^/# /' "$T/out" "$T/err"
	ok $st "$(basename "$c") runs with the installed library: $(head -1 "$T/out" "$T/err" | grep -v '^==>' | tr '\n' ' ')"
done
[ $built -ge 2 ]
ok $? "$built examples found in $(basename "$MANPAGE")"

# The program, and the package with python3.
"$D$BINDIR/vramtrace" --version >"$T/out" 2>&1 &&
	grep -q "^vramtrace $VERSION " "$T/out"
ok $? "$BINDIR/vramtrace --version: $(cat "$T/out")"
if [ -z "$PY" ]; then
	echo "ok $((n + 1)) # SKIP no python3: no package installed"
	n=$((n + 1))
else
	[ -f "$D$PKGPYDIR/_site/sitecustomize.py" ] &&
		[ -h "$D$PKGPYDIR/libvramtrace.so" ]
	ok $? "the package, its sitecustomize and its link to the library in $PKGPYDIR"
	env -u VRAMTRACE_LIBRARY PYTHONPATH="$D${PKGPYDIR%/vramtrace}" \
		"$PY" -c 'import os, vramtrace
print(vramtrace.__file__)
print(os.path.realpath(vramtrace.load_library()._name))' >"$T/out" 2>&1
	[ "$(sed -n 1p "$T/out")" = "$D$PKGPYDIR/__init__.py" ] &&
		[ "$(sed -n 2p "$T/out")" = "$(cd "$L" && pwd -P)/libvramtrace.so.$VERSION" ]
	st=$?
	[ $st -eq 0 ] || sed 's/^/# /' "$T/out"
	ok $st "python3 imports the installed package and loads the installed library through it"
	if [ -n "$EXTENSION" ]; then
		PYTHONPATH="$D${PKGPYDIR%/vramtrace}" "$PY" -c 'import vramtrace._offload as m
print(m.__file__)' >"$T/out" 2>&1 &&
			[ "$(cat "$T/out")" = "$D$PKGPYDIR/$EXTENSION" ]
		st=$?
		[ $st -eq 0 ] || sed 's/^/# /' "$T/out"
		ok $st "python3 imports the installed extension vramtrace._offload ($EXTENSION)"
	fi
	PATH="$D$BINDIR:$PATH" PYTHONPATH="$D${PKGPYDIR%/vramtrace}" \
		"$PY" -m vramtrace --version >"$T/out" 2>&1 &&
		grep -q "^vramtrace $VERSION " "$T/out"
	ok $? "python3 -m vramtrace runs the installed program"
fi
echo "1..$n"
[ $failed -eq 0 ]
