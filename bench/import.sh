#!/bin/sh
# import.sh [SIZE [DIR]]: how fast `vramtrace import` reads snapshots, and
# how much memory it takes, for fixture_large.pickle (12 MB, a real one),
# the leak zoo's trainer-steady snapshot (3.3 MB, real: transformers'
# Trainer with Python stacks), a generated snapshot of SIZE (default 300M)
# with the same structure (bench/gen-snapshot.py), one of SIZE whose
# blocks live as long as a real run's (gen-snapshot.py --real-lifetimes,
# where by default each lives 50 steps), one of SIZE whose
# trace entries each have a frames list of their own, as PyTorch writes
# most (gen-snapshot.py --fresh-frames), one of SIZE that shares objects as
# a filtering script writes it (gen-snapshot.py --share: a second device
# made of references to every other entry of the first, and the original
# list kept under another key), and a 32 MiB pickle of MEMOIZE opcodes
# (not a snapshot: it is refused, after the whole file is read).
# Prints, for each, seconds, MB/s (file bytes per wall-clock second), CPU
# seconds (user and system), MB/s of CPU (file bytes per CPU second: what
# the machine's load does not change), peak RSS, RSS per file byte and the
# exit status.  Generated files go to DIR and are reused from there when
# given, else to a temporary directory.  Run from a built tree.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
size=${1:-300M}
shared=${SHARED_DATA:-$top/../shared/data}
work=$(mktemp -d /tmp/vramtrace-bench-import-XXXXXX)
trap 'rm -rf "$work"' EXIT
dir=${2:-$work}
mkdir -p "$dir"
gen() {		# gen NAME ARGS...: a generated snapshot in $dir, once
	out=$dir/$1.pickle
	shift
	[ -f "$out" ] || python3 "$top/bench/gen-snapshot.py" "$@" "$out" \
	    >/dev/null
}
gen "snapshot-$size" -s "$size"
gen "shared-$size" -s "$size" --share
gen "fresh-$size" -s "$size" --fresh-frames
gen "real-$size" -s "$size" --real-lifetimes
[ -f "$dir/trainer-steady.pickle" ] || xz -dc \
    "$top/tests/data/zoo/trainer-steady.pickle.xz" >"$dir/trainer-steady.pickle"
[ -f "$dir/memoize-32M.pickle" ] || python3 -c '
import sys
open(sys.argv[1], "wb").write(b"\x80\x04}" + b"\x94" * (32 << 20) + b".")
' "$dir/memoize-32M.pickle"
printf '%-24s %8s %8s %7s %7s %7s %9s %8s %4s\n' file MB seconds MB/s \
    "cpu s" "MB/cpu" "RSS MB" RSS/file exit
for f in "$shared/snapshots/fixture_large.pickle" \
    "$dir/trainer-steady.pickle" "$dir/snapshot-$size.pickle" \
    "$dir/real-$size.pickle" "$dir/fresh-$size.pickle" \
    "$dir/shared-$size.pickle" \
    "$dir/memoize-32M.pickle"; do
	[ -f "$f" ] || continue
	rm -f "$work/out.db"
	st=0
	/usr/bin/time -f '%e %U %S %M' -o "$work/time" \
		"$top/vramtrace" import "$f" -o "$work/out.db" >/dev/null \
		2>"$work/err" || st=$?
	bytes=$(stat -L -c %s "$f")
	# time(1) says "Command exited with non-zero status" first on failure
	read -r secs user sys kb <<EOF
$(tail -n 1 "$work/time")
EOF
	awk -v n="$(basename "$f")" -v b="$bytes" -v s="$secs" -v u="$user" \
	    -v y="$sys" -v k="$kb" -v x="$st" 'BEGIN {
	    printf "%-24s %8.1f %8.2f %7.1f %7.2f %7.1f %9.1f %8.3f %4d\n",
	    n, b / 1e6, s, b / 1e6 / (s > 0 ? s : 0.01), u + y,
	    b / 1e6 / (u + y > 0 ? u + y : 0.01), k / 1024, k * 1024 / b,
	    x }'
done
