# tests/gpu/build.sh: source it to build vramtrace from source on a GPU
# machine.  Sets V (the vramtrace binary) and TOP; logs to $OUT/build.log.
# The lent GPU machines have no SQLite, ncursesw or liblzma development
# files: when they are missing, headers and libraries are taken from
# .gpu-deps/ in the source tree (sqlite/: sqlite3.h, libsqlite3.so.0;
# ncurses/: include/, lib/; lzma/: lzma.h and lzma/, with the machine's
# liblzma.so.5), which the caller carries along (it is git-ignored).  With
# GPU_DEPS_ONLY=1 it only points configure at them (SQLITE_CFLAGS and the
# like, exported), for a build of its own (pip install .).
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
OUT=${OUT:-$(mktemp -d)}
deps=$TOP/.gpu-deps
if [ ! -f /usr/include/sqlite3.h ] && [ -f "$deps/sqlite/sqlite3.h" ]; then
	lib=/usr/lib/x86_64-linux-gnu/libsqlite3.so.0
	[ -f $lib ] || lib=$deps/sqlite/libsqlite3.so.0
	export SQLITE_CFLAGS="-I$deps/sqlite"
	export SQLITE_LIBS="$lib -Wl,-rpath,${lib%/*}"
fi
if [ ! -f /usr/include/ncursesw/curses.h ] && [ -d "$deps/ncurses" ]; then
	export NCURSES_CFLAGS="-I$deps/ncurses/include"
	NCURSES_LIBS=
	for l in libncursesw.so.6 libtinfo.so.6; do
		lib=/usr/lib/x86_64-linux-gnu/$l
		[ -f $lib ] || lib=$deps/ncurses/lib/$l
		NCURSES_LIBS="$NCURSES_LIBS $lib -Wl,-rpath,${lib%/*}"
	done
	export NCURSES_LIBS
fi
if [ ! -f /usr/include/lzma.h ] && [ -f "$deps/lzma/lzma.h" ]; then
	export LZMA_CFLAGS="-I$deps/lzma"
	export LZMA_LIBS=/usr/lib/x86_64-linux-gnu/liblzma.so.5
fi
if [ -n "${GPU_DEPS_ONLY:-}" ]; then
	:
elif [ ! -x "$TOP/vramtrace" ] || [ -n "${REBUILD:-}" ]; then
	(cd "$TOP" && autoreconf -fi && ./configure && make -j16) \
		>"$OUT/build.log" 2>&1 || {
		tail -30 "$OUT/build.log"; echo "build failed"; exit 1; }
fi
V=$TOP/vramtrace
