#!/bin/sh
# Build and run the pickle reader's tests without Autotools (temporary).
set -e
cd "$(dirname "$0")/.."
CFLAGS="-std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Wshadow -Wmissing-prototypes -Werror"
SRC="src/pickle.c src/pickle-read.c src/pickle-parse.c"
gcc $CFLAGS -O2 -Isrc $SRC tests/t-pickle.c -o tests/t-pickle
clang $CFLAGS -O2 -Isrc $SRC tests/t-pickle.c -o tests/t-pickle-clang
gcc $CFLAGS -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
    -Isrc $SRC tests/t-pickle.c -o tests/t-pickle-asan
export VRAMTRACE_SNAPSHOTS=${VRAMTRACE_SNAPSHOTS:-/work/shared/data/snapshots}
export srcdir=.
for t in tests/t-pickle tests/t-pickle-clang tests/t-pickle-asan; do
	$t > /tmp/$(basename $t).tap || { grep -v '^ok' /tmp/$(basename $t).tap; exit 1; }
	echo "$t: $(grep -c '^ok' /tmp/$(basename $t).tap) ok"
	T_PICKLE=$t sh tests/t-pickle-hostile.sh > /tmp/$(basename $t)-hostile.tap || { grep -v '^ok' /tmp/$(basename $t)-hostile.tap; exit 1; }
	echo "$t hostile: $(grep -c '^ok' /tmp/$(basename $t)-hostile.tap) ok"
done
