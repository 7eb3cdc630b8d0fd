#!/bin/sh
# build-lib.sh: build libvramtrace.so's offload engine with plain gcc, for
# the GPU tests and benchmark (no autotools on the GPU machine).  Prints the
# library's path.  Links src/client.c when it builds, else the test double
# client-double.c (events go nowhere).
set -e
top=$(cd "$(dirname "$0")/../../.." && pwd)
out=${BUILD:-/tmp/vramtrace-offload}
cuda=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$out"
printf "#define _GNU_SOURCE 1\n" >"$out/config.h"
cc="gcc -std=c11 -O2 -fPIC -shared -Wall -Wextra -Wshadow -Wmissing-prototypes"
inc="-I$out -I$top/src -I$top/include -I$cuda/include"
libs="-L$cuda/lib64 -Wl,-rpath,$cuda/lib64 -lcudart -lpthread"
offload="$top/src/offload.c $top/src/offload-budget.c $top/src/offload-config.c
	$top/src/offload-cuda.c $top/src/offload-dedupe.c $top/src/offload-event.c
	$top/src/offload-slab.c $top/src/offload-stash.c $top/src/util.c"
if [ -f "$top/src/client.c" ] && $cc $inc -o "$out/libvramtrace.so" $offload \
	"$top/src/client.c" "$top/src/event.c" "$top/src/log.c" \
	"$top/src/xmalloc.c" $libs 2>"$out/client.log"; then
	:
else
	echo "build-lib: using the client test double" >&2
	$cc $inc -o "$out/libvramtrace.so" $offload \
		"$top/tests/gpu/offload/client-double.c" $libs
fi
echo "$out/libvramtrace.so"
