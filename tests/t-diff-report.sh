#!/bin/sh
# t-diff-report.sh: vramtrace diff between two steps of a run and between
# two snapshots; vramtrace report on a run and on a snapshot.
. "${srcdir:-.}/tests/lib.sh"
plan 23
XDG_CACHE_HOME=$TMP/cache
export XDG_CACHE_HOME
q() { "$VRAMTRACE" sql "$1" "$2" --format csv | tail -n +2; }

# Step 1 makes the model (A, B); step 2 frees B and stashes C on stream 13;
# step 3 stashes D; E is made and freed within step 3.
cat >"$TMP/run.txt" <<'SPOOL'
alloc 100 address=0x1000 bytes=1000 stream=7 site="model@train.py:10"
alloc 110 address=0x2000 bytes=2000 stream=7 site="tmp@train.py:20"
step-end 200
free 210 address=0x2000 bytes=2000 stream=7
alloc 220 address=0x3000 bytes=300 stream=13 site="stash@offload.py:42"
step-end 300
alloc 310 address=0x4000 bytes=400 stream=13 site="stash@offload.py:42"
alloc 320 address=0x5000 bytes=500 stream=7
free 330 address=0x5000 bytes=500 stream=7
step-end 400
SPOOL
"$MKSPOOL" "$TMP/run.txt" "$TMP/run.vtr"
"$VRAMTRACE" replay "$TMP/run.vtr" -o "$TMP/run.db" >/dev/null
run "$VRAMTRACE" diff "$TMP/run.db@1" "$TMP/run.db@3" --format json
ok $rc "diff run.db@1 run.db@3"
jq_py "$TMP/out" 'd["a"]["live_bytes"] == 3000 and d["b"]["live_bytes"] == 1700 and d["a"]["step"] == 1 and d["b"]["step"] == 3'
ok $? "live bytes at both points"
jq_py "$TMP/out" '(d["new_bytes"], d["new_blocks"], d["gone_bytes"], d["gone_blocks"], d["net_bytes"]) == (700, 2, 2000, 1, -1300)'
ok $? "new, gone and net bytes and blocks"
jq_py "$TMP/out" 'sorted((g["site"], g["stream"], g["new_bytes"], g["new_blocks"], g["gone_bytes"]) for g in d["groups"]) == [("offload.py:42 stash", 13, 700, 2, 0), ("train.py:20 tmp", 7, 0, 0, 2000)]'
ok $? "grouped by site and stream"
run "$VRAMTRACE" diff "$TMP/run.db@2" "$TMP/run.db"
grep -q '^new 400 B in 1 blocks, gone 0 B in 0 blocks, net +400 B$' "$TMP/out" &&
    grep -q 'offload.py:42 stash' "$TMP/out"
ok $? "text: step 2 against the end of the run"
run "$VRAMTRACE" diff "$TMP/run.db@9" "$TMP/run.db"
expect 4 'no step 9' "a step that does not exist: exit 4"
run "$VRAMTRACE" diff "$TMP/run.db"
expect 2 'needs two points' "one argument: exit 2"
run "$VRAMTRACE" diff "$TMP/run.db@x" "$TMP/run.db"
expect 4 'run.db@x' "a file that does not exist (no step suffix): exit 4"

# Within one run a block is its row.  Step 2 frees the 4 KiB buffer and makes
# another at the same address and size (gone and new); step 3 frees the
# 8 KiB one and leaves a 16 KiB one.
cat >"$TMP/reuse.txt" <<'SPOOL'
alloc 100 address=0x1000 bytes=4096 stream=7 site="buf@train.py:5"
alloc 110 address=0x2000 bytes=8192 stream=7 site="act@train.py:6"
step-end 200
free 210 address=0x1000 bytes=4096 stream=7
alloc 220 address=0x1000 bytes=4096 stream=7 site="buf@train.py:5"
step-end 300
free 310 address=0x2000 bytes=8192 stream=7
alloc 320 address=0x3000 bytes=16384 stream=13 site="act@train.py:6"
step-end 400
SPOOL
spool reuse
# The report without its file names, whichever file it came from.
nofile() { sed 's/"file": "[^"]*"//g' "$TMP/out"; }
# A copy of DB as an unfinished run: no allocation groups to read.
unfinished() {
	cp "$1" "$2" &&
	"$PY" -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("UPDATE runs SET complete = 0"); c.commit()' "$2"
}
run "$VRAMTRACE" diff "$TMP/reuse.db@1" "$TMP/reuse.db@3" --format json
jq_py "$TMP/out" 'sorted((g["site"], g["stream"], g["new_bytes"], g["new_blocks"], g["gone_bytes"], g["gone_blocks"]) for g in d["groups"]) == [("train.py:5 buf", 7, 4096, 1, 4096, 1), ("train.py:6 act", 7, 0, 0, 8192, 1), ("train.py:6 act", 13, 16384, 1, 0, 0)] and (d["a"]["live_bytes"], d["b"]["live_bytes"], d["new_blocks"], d["gone_blocks"]) == (12288, 20480, 2, 2)'
ok $? "one run: a block made again at the same address is gone and new"
nofile >"$TMP/groups.json"
unfinished "$TMP/reuse.db" "$TMP/reuse-rows.db"
run "$VRAMTRACE" diff "$TMP/reuse-rows.db@1" "$TMP/reuse-rows.db@3" --format json
nofile | cmp -s - "$TMP/groups.json"
ok $? "one run: the blocks of an unfinished run give the same report as the groups"
cp "$TMP/reuse.db" "$TMP/reuse-copy.db"
run "$VRAMTRACE" diff "$TMP/reuse.db@1" "$TMP/reuse-copy.db@3" --format json
jq_py "$TMP/out" 'all(g["site"] != "train.py:5 buf" for g in d["groups"]) and (d["new_blocks"], d["gone_blocks"]) == (1, 1)'
ok $? "two files: blocks are matched by address and size"
"$PY" -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("DELETE FROM allocations"); c.commit()' "$TMP/reuse-copy.db"
run "$VRAMTRACE" diff "$TMP/reuse-copy.db@1" "$TMP/reuse-copy.db@3" --format json
nofile | cmp -s - "$TMP/groups.json"
ok $? "two steps of a finished run come from its allocation groups alone"

run "$VRAMTRACE" report "$TMP/run.db" --format json
jq_py "$TMP/out" 'd["verdict"] == "INCONCLUSIVE" and d["total_steps"] == 3 and d["peak_bytes"] == 3000 and d["source"] == "replay" and d["allocations"] == 5'
ok $? "report --format json: run, steps, peak, verdict"
run "$VRAMTRACE" report "$TMP/run.db"
grep -q '^verdict    INCONCLUSIVE (fewer than 3 steps after the warm-up)' "$TMP/out" &&
    grep -q '^steps      3' "$TMP/out"
ok $? "report as text"

EX=$srcdir/examples
run "$VRAMTRACE" report "$EX/garbage_stream.pickle" --format json
jq_py "$TMP/out" 'd["verdict"] == "LEAK" and d["source"] == "import" and d["total_steps"] == 5 and d["streams"] and d["suspects"][0]["site"] == "train.py:51 unpack" and d["suspects"][0]["stream"] == 1031036896'
ok $? "report on a snapshot: LEAK, top site on the side stream"
run "$VRAMTRACE" report "$EX/garbage_stream.pickle"
[ "$(wc -l <"$TMP/out")" -le 24 ] && grep -q '^verdict    LEAK, +111.9 MiB per step' "$TMP/out"
ok $? "report as text fits one screen and names the verdict"
run "$VRAMTRACE" diff "$EX/clean.pickle" "$EX/garbage_stream.pickle" --format json
jq_py "$TMP/out" 'd["groups"][0]["stream"] == 1031036896 and d["groups"][0]["site"] == "train.py:51 unpack" and d["groups"][0]["gone_bytes"] == 0 and d["net_bytes"] == d["b"]["live_bytes"] - d["a"]["live_bytes"]'
ok $? "diff of two snapshots: the side stream's stash leads"
run "$VRAMTRACE" diff "$EX/garbage_stream.pickle@1" "$EX/garbage_stream.pickle@5" --format json
jq_py "$TMP/out" 'd["net_bytes"] == d["b"]["live_bytes"] - d["a"]["live_bytes"] and abs(d["net_bytes"] / 4 - 111.9 * 2**20) < 0.1 * 2**20'
ok $? "diff of steps 1 and 5 of a snapshot: 4 steps of 111.9 MiB"
run "$VRAMTRACE" diff "$EX/garbage_stream.pickle@2" "$EX/garbage_stream.pickle@5" --format json
nofile >"$TMP/groups.json"
unfinished "$(ls "$XDG_CACHE_HOME"/vramtrace/garbage_stream.pickle-*.db)" "$TMP/gs.db"
run "$VRAMTRACE" diff "$TMP/gs.db@2" "$TMP/gs.db@5" --format json
nofile | cmp -s - "$TMP/groups.json" && jq_py "$TMP/out" 'len(d["groups"]) >= 2 and d["gone_blocks"] > 0'
ok $? "a snapshot's steps 2 and 5: the groups and the blocks agree"

# Sites are named, and matched across files, as leaks names its suspects:
# two stacks with one innermost frame (a library's, or a C++ frame as in a
# stacks="all" snapshot) are two sites when the program's lines differ.
lib=/usr/lib/python3/dist-packages/torch/nn/functional.py
for f in a b; do
	n=1
	[ $f = b ] && n=2
	{
		echo "alloc 100 address=0x1000 bytes=1000 stream=7 site=\"cross_entropy@$lib:3504|main@train.py:10\""
		echo "alloc 110 address=0x2000 bytes=$((2000 * n)) stream=7 site=\"cross_entropy@$lib:3504|main@train.py:20\""
		echo "alloc 120 address=0x3000 bytes=$((3000 * n)) stream=7 site=\"gather@memory_snapshot.cpp:0|forward@model.py:7|main@train.py:30\""
		echo "step-end 200"
	} >"$TMP/$f.txt"
	"$MKSPOOL" "$TMP/$f.txt" "$TMP/$f.vtr" &&
	    "$VRAMTRACE" replay "$TMP/$f.vtr" -o "$TMP/$f.db" >/dev/null
done
run "$VRAMTRACE" diff "$TMP/a.db" "$TMP/b.db" --format json
jq_py "$TMP/out" 'sorted((g["name"], g["site"], g["new_bytes"], g["gone_bytes"]) for g in d["groups"]) == [("model.py:7 forward < train.py:30 main", "memory_snapshot.cpp:0 gather", 6000, 3000), ("train.py:20 main (in torch/nn/functional.py:3504 cross_entropy)", "'"$lib"':3504 cross_entropy", 4000, 2000)]'
ok $? "diff: sites named by the program's lines, not one innermost frame"
run "$VRAMTRACE" diff "$TMP/a.db" "$TMP/b.db"
grep -q ' train.py:20 main (in torch/nn/functional.py:3504 cross_entropy)$' "$TMP/out"
ok $? "...in the text too"
cp "$TMP/out" "$TMP/names.txt"
[ "$(q "$TMP/a.db" "select group_concat(name, '|') from (select name from sites order by id)")" = \
    "train.py:10 main (in torch/nn/functional.py:3504 cross_entropy)|train.py:20 main (in torch/nn/functional.py:3504 cross_entropy)|model.py:7 forward < train.py:30 main" ]
ok $? "sites.name: each site's name, written with the site"
# A file written before sites had names: named from their frames alike.
older_file "$TMP/b.db" "$TMP/old.db" sites.name || exit 99
run "$VRAMTRACE" diff "$TMP/a.db" "$TMP/old.db"
sed 's/old\.db/b.db/' "$TMP/out" | cmp -s - "$TMP/names.txt"
ok $? "...and a file without sites.name diffs with the same names"
done_testing
