#!/bin/sh
# t-cuda-find.sh: how the injection library and the offload engine find
# libcupti and the CUDA runtime at run time (lib/cuda-find.c), without a
# GPU: stand-ins with the real sonames (tests/cudalib/) laid out as
# PyTorch's nvidia-* wheels of CUDA 12 and 13, a toolkit and a linker
# path, loaded into tests/cuda-find-host as a PyTorch process would have
# them; neither library needs libcupti or libcudart to load (readelf); and
# an injection library that finds no libcupti says so on one line and the
# program goes on.
. "${srcdir:-.}/tests/lib.sh"
b=${top_builddir:-.}
plan 25
F=$b/tests/cudalib
HOST=$b/tests/cuda-find-host
unset CUDA_HOME CUDA_PATH VRAMTRACE_CUDA_SEARCH LD_LIBRARY_PATH

# The process states' files.
W12=$TMP/py12/site-packages/nvidia
W13=$TMP/py13/site-packages/nvidia
mkdir -p "$W12/cuda_runtime/lib" "$W12/cuda_cupti/lib" "$W13/cu13/lib" \
	"$TMP/py12/site-packages/torch/lib" "$TMP/cuda/lib64" \
	"$TMP/cuda12/targets/x86_64-linux/lib" "$TMP/ld" "$TMP/odd" \
	"$TMP/empty"
cp "$F/libcudart.so.12" "$W12/cuda_runtime/lib/"
cp "$F/libcupti.so.12" "$W12/cuda_cupti/lib/"
cp "$F/libcudart.so.13" "$F/libcupti.so.13" "$W13/cu13/lib/"
cp "$F/libcupti.so.13" "$F/libcudart.so.13" "$TMP/cuda/lib64/"
cp "$F/libcupti.so.12" "$TMP/cuda12/targets/x86_64-linux/lib/"
cp "$F/libcupti.so.12" "$TMP/ld/"
cp "$F/libcupti.so.13" "$TMP/odd/libcupti-copy.so"

# find EXPECTED-LINE ARGS...: the host's output has the line.
find_is() {
	want=$1
	shift
	run "$@"
	grep -qxF -- "$want" "$TMP/out"
	st=$?
	[ $st -eq 0 ] || sed 's/^/# /' "$TMP/out" "$TMP/err"
	return $st
}

find_is "found $W12/cuda_cupti/lib/libcupti.so.12 (loaded by the process)" \
	"$HOST" -l "$W12/cuda_runtime/lib/libcudart.so.12" \
	-l "$W12/cuda_cupti/lib/libcupti.so.12" cupti "$TMP/cuda"
ok $? "CUDA 12 PyTorch with its CUPTI loaded: that libcupti, not the toolkit's 13"
grep -qx "loaded 1" "$TMP/out"
ok $? "no second libcupti in the process"
find_is "found $W12/cuda_runtime/lib/libcudart.so.12 (loaded by the process)" \
	"$HOST" -l "$W12/cuda_runtime/lib/libcudart.so.12" runtime "$TMP/cuda"
ok $? "the engine's runtime: the one the process has"
grep -qx "loaded 1" "$TMP/out"
ok $? "no second runtime in the process"
find_is "found $W12/cuda_cupti/lib/libcupti.so.12 (PyTorch's nvidia wheels)" \
	"$HOST" -l "$W12/cuda_runtime/lib/libcudart.so.12" cupti "$TMP/cuda"
ok $? "CUDA 12 runtime loaded, CUPTI not: the wheel's libcupti.so.12 beside it"
grep -qx "soname libcupti.so.12" "$TMP/out"
ok $? "the handle is that file's"
find_is "found $W13/cu13/lib/libcupti.so.13 (PyTorch's nvidia wheels)" \
	"$HOST" -l "$W13/cu13/lib/libcudart.so.13" cupti "$TMP/cuda12"
ok $? "CUDA 13 wheel layout (nvidia/cu13/lib): its libcupti.so.13"
find_is "found $TMP/odd/libcupti-copy.so (loaded by the process)" \
	"$HOST" -l "$TMP/odd/libcupti-copy.so" cupti "$TMP/cuda"
ok $? "a libcupti loaded under another file name is found by its soname"
find_is "found $TMP/cuda/lib64/libcupti.so.13 (CUDA_HOME)" \
	env CUDA_HOME="$TMP/cuda" "$HOST" cupti "$TMP/empty"
ok $? "nothing loaded: CUDA_HOME's"
find_is "found $TMP/cuda12/targets/x86_64-linux/lib/libcupti.so.12 (CUDA_PATH)" \
	env CUDA_PATH="$TMP/cuda12" VRAMTRACE_CUDA_SEARCH=toolkit \
	"$HOST" cupti "$TMP/cuda"
ok $? "CUDA_PATH before the toolkit configure found, in targets/*/lib"
find_is "found $TMP/cuda/lib64/libcupti.so.13 (the toolkit vramtrace was built with)" \
	env VRAMTRACE_CUDA_SEARCH=process,wheels,toolkit "$HOST" cupti \
	"$TMP/cuda"
ok $? "then the toolkit configure found"
find_is "found $TMP/ld/libcupti.so.12 (the linker's path)" \
	env LD_LIBRARY_PATH="$TMP/ld" VRAMTRACE_CUDA_SEARCH=system \
	"$HOST" -l "$W12/cuda_runtime/lib/libcudart.so.12" cupti "$TMP/empty"
ok $? "the linker's path, for the major of the runtime loaded"
find_is "none no libcupti.so.13 or .12 in the process, PyTorch's nvidia wheels, the toolkit ($TMP/empty)" \
	env VRAMTRACE_CUDA_SEARCH=process,wheels,toolkit "$HOST" cupti \
	"$TMP/empty"
ok $? "nothing found: one line that says where it looked"
[ "$rc" -eq 1 ] && grep -qx "loaded 0" "$TMP/out"
ok $? "and nothing was loaded"

# No library of the traced process needs CUDA's to load.
libs=$b/libvramtrace.so
[ -f "$b/libvramtrace-inject.so" ] && libs="$libs $b/libvramtrace-inject.so"
readelf -d $libs >"$TMP/dyn" 2>&1
st=$?
grep -E 'NEEDED.*(libcupti|libcudart|libcuda\.)' "$TMP/dyn" && st=1
ok $st "no DT_NEEDED on libcupti, libcudart or libcuda: $(grep -c NEEDED "$TMP/dyn") NEEDED in all"

# The injection library, where the GPU parts are built.
if [ ! -f "$b/libvramtrace-inject.so" ]; then
	skip 10 "no injection library (configure found no CUDA)"
	exit 0
fi
run env VRAMTRACE_OUTPUT="$TMP/off.vtr" VRAMTRACE_CUDA_SEARCH=process \
	"$b/tests/inject-host" "$b/libvramtrace-inject.so"
[ "$rc" -eq 0 ] && grep -qx "the program went on" "$TMP/out"
ok $? "no libcupti: the traced program goes on"
grep -qx "InitializeInjection returned 1" "$TMP/out"
ok $? "and CUDA is told to go on"
[ "$(wc -l <"$TMP/err")" -eq 1 ]
ok $? "the warning is one line"
grep -Eqx 'vramtrace \(cupti, pid [0-9]+\): libcupti not found: no libcupti\.so\.13 or \.12 in the process; vramtrace records nothing more of this process, the program runs on unchanged' \
	"$TMP/err"
ok $? "it names what was missing, where it looked, and that recording is off: $(cat "$TMP/err")"

# Bad settings: one line each, naming the value and what is used instead,
# read before libcupti is looked for.
run env VRAMTRACE_OUTPUT="$TMP/off.vtr" VRAMTRACE_CUDA_SEARCH=process \
	VRAMTRACE_RECORDS=bogus,memory VRAMTRACE_STACKS=weird \
	VRAMTRACE_STACK_DEPTH=abc \
	"$b/tests/inject-host" "$b/libvramtrace-inject.so"
[ "$rc" -eq 0 ] && [ "$(wc -l <"$TMP/err")" -eq 4 ] &&
	grep -q 'VRAMTRACE_RECORDS: unknown record kind bogus (known: calls, memory, pool, copies, memcpy, interpose); recording goes on without it\.$' "$TMP/err" &&
	grep -q 'VRAMTRACE_STACKS: unknown mode weird (known: python, native, all, none); recording goes on with python stacks\.$' "$TMP/err" &&
	grep -q 'VRAMTRACE_STACK_DEPTH: not a number of frames from 1 to 1024: abc; recording goes on with 64\.$' "$TMP/err"
ok $? "bad settings: a line each naming the value and what is used instead"

# A warning is written in one piece: the traced program writes to the same
# stderr, and a line written in parts could be cut by its lines.
if command -v strace >/dev/null 2>&1 &&
    strace -o /dev/null true >/dev/null 2>&1; then
	env VRAMTRACE_OUTPUT="$TMP/off.vtr" VRAMTRACE_CUDA_SEARCH=process \
	    VRAMTRACE_STACKS=weird strace -ff -s 1024 -e trace=write \
	    -o "$TMP/strace" "$b/tests/inject-host" \
	    "$b/libvramtrace-inject.so" >/dev/null 2>&1
	# -ff: a file per thread, whose calls another thread cannot split.
	cat "$TMP"/strace.* | grep -Eq '^write\(2, "vramtrace \(cupti, pid [0-9]+\): VRAMTRACE_STACKS: unknown mode weird .*python stacks\.\\n", [0-9]+\) = [0-9]+$'
	ok $? "a warning is one write (strace -ff -e write: $TMP/strace.*)"
else
	skip 1 "strace cannot run here"
fi

# A libcupti that lacks a function the table needs (a stand-in).
run env VRAMTRACE_OUTPUT="$TMP/off.vtr" CUDA_HOME="$TMP/cuda" \
	VRAMTRACE_CUDA_SEARCH=toolkit \
	"$b/tests/inject-host" "$b/libvramtrace-inject.so"
[ "$rc" -eq 0 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
	grep -Eq "$TMP/cuda/lib64/libcupti.so.13 \(CUDA_HOME\) has no cupti[A-Za-z]+; vramtrace records nothing more of this process, the program runs on unchanged" \
	"$TMP/err"
ok $? "a libcupti without a function it needs: one line naming the file and the function"

# The toolkit's own libcupti has every function of the table (the driver
# is what is missing here).
if ! ls "$CUDA_DIR"/lib64/libcupti.so.* "$CUDA_DIR"/lib/libcupti.so.* \
    "$CUDA_DIR"/targets/*/lib/libcupti.so.* 2>/dev/null | grep -q .; then
	skip 3 "no libcupti in the toolkit configure found"
	exit 0
fi
run env VRAMTRACE_OUTPUT="$TMP/off.vtr" VRAMTRACE_CUDA_SEARCH=toolkit \
	"$b/tests/inject-host" "$b/libvramtrace-inject.so"
[ "$rc" -eq 0 ] && grep -qx "the program went on" "$TMP/out"
ok $? "with the toolkit's libcupti and no GPU the program goes on"
if grep -q 'libcuda.so.1 is not loaded; vramtrace records nothing more of this process, the program runs on unchanged' "$TMP/err"; then
	ok 0 "the toolkit's libcupti has every function the table needs; only the driver is missing"
	[ "$(wc -l <"$TMP/err")" -eq 1 ]
	ok $? "in one line"
else
	# A machine with a driver gets further (no device, or it records).
	skip 2 "this machine has a CUDA driver: $(head -c 200 "$TMP/err")"
fi
done_testing
