#!/bin/sh
# t-ranks.sh: vramtrace leaks on a two-rank job (one run, two processes
# with ranks): each rank has its verdict, the skew names the rank that
# grows, and a run of one process has no ranks.
. "${srcdir:-.}/tests/lib.sh"
plan 8

# Rank 0 on device 0 holds its model; rank 1 on device 1 churns 20 MiB a
# step on its NULL stream and keeps 8 MiB a step on its side stream 13.
# Both use the same stream numbers and addresses, as two processes do.
{
	echo 'process-start 1000 pid=100 rank=0 local_rank=0 host="n1"'
	echo 'stream-create 1000 stream=7 device=0 flags=3'
	echo 'alloc 1100 address=0x1000 bytes=104857600 stream=7 device=0'
	echo 'process-start 1001 pid=101 rank=1 local_rank=1 host="n1"'
	echo 'stream-create 1001 stream=7 device=1 flags=3'
	echo 'stream-create 1001 stream=13 device=1'
	echo 'alloc 1101 address=0x1000 bytes=104857600 stream=7 device=1'
	t=2000
	for k in 1 2 3 4 5 6; do
		echo "alloc $((t - 500)) address=$((0x100000 * k)) bytes=20971520 stream=7 device=1"
		echo "free $((t - 400)) address=$((0x100000 * k)) bytes=20971520 stream=7 device=1"
		echo "alloc $((t - 300)) address=$((0x10000000 + 0x100000 * k)) bytes=8388608 stream=13 device=1 site=\"stash@offload.py:42\""
		echo "step-end $t"
		t=$((t + 1000))
	done
} >"$TMP/ranks.txt"
spool ranks
run "$VRAMTRACE" leaks "$TMP/ranks.db" --format json
cp "$TMP/out" "$TMP/ranks.json"
jq_py "$TMP/ranks.json" '[(x["rank"], x["verdict"]) for x in d["ranks"]] == [(0, "CLEAN"), (1, "LEAK")]'
ok $? "rank 0 CLEAN, rank 1 LEAK"
jq_py "$TMP/ranks.json" 'abs(d["ranks"][1]["growth_bytes_per_step"] - 8388608) < 1 and d["ranks"][0]["growth_bytes_per_step"] == 0 and d["ranks"][1]["grew_fraction"] == 1'
ok $? "rank 1 grows 8 MiB in every step, rank 0 not at all"
jq_py "$TMP/ranks.json" '[(x["local_rank"], x["pid"], x["host"], x["devices"]) for x in d["ranks"]] == [(0, 100, "n1", [0]), (1, 101, "n1", [1])]'
ok $? "each rank's local rank, pid, host and devices"
jq_py "$TMP/ranks.json" 'd["rank_skew"] == {"worst_rank": 1, "worst_growth_bytes_per_step": 8388608, "median_growth_bytes_per_step": 4194304, "ratio": 2}'
ok $? "skew: rank 1 against the median, twice"
jq_py "$TMP/ranks.json" 'd["verdict"] == "LEAK" and [s["garbage"] for s in d["streams"] if s["stream"] == 13] == ["growing"]'
ok $? "the whole run still has its verdict and garbage streams"
run "$VRAMTRACE" leaks "$TMP/ranks.db"
grep -Eq '^ +1 +1 +101 +n1 +1 +LEAK +\+8\.0 MiB +100%$' "$TMP/out" &&
    grep -q '^skew: rank 1 grows +8.0 MiB per step, the median rank +4.0 MiB (2.0x)$' "$TMP/out"
ok $? "text: a row per rank and the skew"

# Ranks at their own pace: rank 0 ends each step at T, rank 1 only at
# T+600, and rank 1 keeps 8 MiB at T+300, inside its own step.  Each rank's
# rows take their steps from that rank's own boundaries.
{
	echo 'process-start 1000 pid=200 rank=0 local_rank=0'
	for k in 1 2 3 4 5; do echo "step-end $((1000 + 1000 * k))"; done
	echo 'process-start 1001 pid=201 rank=1 local_rank=1'
	for k in 1 2 3 4 5; do
		echo "alloc $((1300 + 1000 * k)) address=$((0x100000 * k)) bytes=8388608 stream=13 device=1"
		echo "step-end $((1600 + 1000 * k))"
	done
} >"$TMP/pace.txt"
spool pace
[ "$("$VRAMTRACE" sql "$TMP/pace.db" "select group_concat(alloc_step) from (select alloc_step from allocations order by alloc_ns)" --format csv | tail -n 1)" = '"1,2,3,4,5"' ]
ok $? "rank 1's blocks are in its own steps 1..5, not in rank 0's 2..6"

# One process with a rank: no ranks in the report.
grep -v 'rank=1\|device=1' "$TMP/ranks.txt" >"$TMP/one.txt"
spool one
run "$VRAMTRACE" leaks "$TMP/one.db" --format json
jq_py "$TMP/out" '"ranks" not in d and "rank_skew" not in d' &&
    ! "$VRAMTRACE" leaks "$TMP/one.db" | grep -q '^skew'
ok $? "one process: no ranks, no skew"
done_testing
