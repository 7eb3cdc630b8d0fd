#!/bin/sh
# t-pickle-shared.sh: the streaming reader gives what Python's pickle.load()
# gives, whatever the file shares, and its memory does not grow with the
# file.
#
# Every good pickle (the shared-* ones share objects as scripts that filter
# or merge snapshots do) and every real snapshot is read by `t-pickle
# --view` and by `t-pickle-evict --view` (the same reader with a memo
# budget of 64 KiB, so that shared values are evicted and read again from
# the file, and a cap of 8 MiB) and compared with tests/pickle-view.py,
# element by element (in order within each list).  Then files of one shape
# at two sizes, 8 times apart, must make the reader hold about the same
# peak of bytes, and a value larger than the cap is refused.
. "${srcdir:-.}/tests/lib.sh"

b=${top_builddir:-.}
good=$srcdir/tests/data/pickle/good
dir=${SHARED_DATA:-$srcdir/../shared/data}/snapshots
files="$(ls "$good"/*.pickle) $(ls "$dir"/*.pickle 2>/dev/null)"
n=$(echo "$files" | wc -w)
plan $((n * 2 + 7))

view() {	# view PROGRAM FILE: its view, sorted stably by list
	"$1" --view "$2" 2>"$TMP/stats" | sort -s -k1,1 -k2,2n
}

for f in $files; do
	"$PY" "$srcdir/tests/pickle-view.py" "$f" | sort -s -k1,1 -k2,2n \
	    >"$TMP/want"
	for t in t-pickle t-pickle-evict; do
		view "$b/tests/$t" "$f" >"$TMP/got"
		cmp -s "$TMP/want" "$TMP/got"
		st=$?
		[ $st -eq 0 ] || diff "$TMP/want" "$TMP/got" | head -n 4 |
		    cut -c 1-200 | sed 's/^/# /'
		ok $st "$t: $(basename "$f") reads as Python reads it"
	done
done

peak() {	# peak FILE: the bytes t-pickle-evict held at most
	"$b/tests/t-pickle-evict" --view "$1" 2>&1 >/dev/null |
	    sed -n 's/^peak \([0-9]*\) .*/\1/p'
}

# bounded NAME: NAME-1 and NAME-8 hold about the same peak (within a
# quarter and 128 KiB) and NAME-8 still reads as Python reads it.
bounded() {
	small=$(peak "$TMP/$1-1.pickle")
	big=$(peak "$TMP/$1-8.pickle")
	"$PY" "$srcdir/tests/pickle-view.py" "$TMP/$1-8.pickle" |
	    sort -s -k1,1 -k2,2n >"$TMP/want"
	view "$b/tests/t-pickle-evict" "$TMP/$1-8.pickle" >"$TMP/got"
	[ -n "$small" ] && [ -n "$big" ] &&
	    [ "$big" -le $((small + small / 4 + 131072)) ] &&
	    cmp -s "$TMP/want" "$TMP/got"
	st=$?
	echo "# $1: peak $small bytes, 8 times the file: $big bytes"
	ok $st "$2"
}

"$PY" - "$TMP" <<'EOF'
import pickle, sys

def snapshot(n, shape):
    """n trace entries; each stack is used by two entries, as an alloc and
    its free are in a real snapshot."""
    trace = []
    for i in range(n):
        if i % 2 == 0:
            frames = [{"name": "f%d" % i, "filename": "train.py",
                       "line": i}, {"name": "<module>",
                       "filename": "train.py", "line": 1}]
        trace.append({"action": "alloc" if i % 2 == 0 else "free_completed",
                      "addr": 4096 * (i // 2), "size": 512, "stream": 0,
                      "time_us": i, "frames": frames})
    if shape == "twice":
        traces = [trace, trace]
    elif shape == "concat":
        traces = [trace + trace]
    else:
        traces = [trace]
    return {"segments": [], "device_traces": traces,
            "allocator_settings": {}, "external_annotations": []}

for shape in ("stacks", "twice", "concat"):
    for k in (1, 8):
        with open("%s/%s-%d.pickle" % (sys.argv[1], shape, k), "wb") as f:
            pickle.dump(snapshot(2000 * k, shape), f, protocol=4)
for k in (1, 8):
    with open("%s/memoize-%d.pickle" % (sys.argv[1], k), "wb") as f:
        f.write(b"\x80\x04}" + b"\x94" * (k << 20) + b".")
with open("%s/too-big.pickle" % sys.argv[1], "wb") as f:
    pickle.dump({"segments": [], "allocator_settings": list(range(1 << 20))},
                f, protocol=4)
EOF
ok $? "files of 1 and 8 times written"
bounded memoize "1 and 8 MiB of MEMOIZE: the memo holds only what a GET reads"
bounded stacks "stacks each shared by two entries: evicted when cold"
bounded twice "a trace list referenced twice: read again, not kept"
bounded concat "every entry referenced twice: read again, not kept"
run "$b/tests/t-pickle-evict" --view "$TMP/too-big.pickle"
[ "$rc" -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
    grep -q 'too-big.pickle: needs more than 8 MiB of memory at offset' "$TMP/err"
ok $? "a kept value of 16 MiB, with a cap of 8: one line, refused"
# What the real file holds at most, with the memo budget of the program.
t=$("$b/tests/t-pickle" --view "$dir/fixture_large.pickle" 2>&1 >/dev/null |
    sed -n 's/^peak \([0-9]*\) .*/\1/p')
if [ -n "$t" ]; then
	echo "# fixture_large.pickle: peak $t bytes"
	[ "$t" -le $((24 << 20)) ]
	ok $? "a real snapshot holds less than 24 MiB"
else
	skip 1 "no fixture_large.pickle"
fi
done_testing
