#!/bin/sh
# t-tui.sh: the real program on a terminal, in a private tmux server:
# keys in, screen out (the overview's pinned line among them).  Skips when tmux is missing.  Waiting for the
# screen is bounded generously and never decides a result.
. "${srcdir:-.}/tests/lib.sh"
. "${srcdir:-.}/tests/tui-scenario.sh"
NTESTS=35
plan $NTESTS
. "${srcdir:-.}/tests/tui-tmux.sh"

make_leak_db "$TMP/leak.db" && make_clean_db "$TMP/clean.db"
start "$TMP/leak.db"
wait_for 'Verdict +LEAK'; ok $? "overview: the verdict arrives"
! grep -q 'offload check' "$TMP/screen" && ! grep -q 'Pinned' "$TMP/screen"
ok $? "overview: no check line for a run not checked, no pinned line without pinned memory"
wait_for '\? help +q quit *$'; ok $? "the footer lists the keys"
keys 2
wait_for '^ +0 13 .*GARBAGE growing'; ok $? "streams: stream 13 is GARBAGE growing"
grep -E '^ +0 7 ' "$TMP/screen" >"$TMP/row" && ! grep -q GARBAGE "$TMP/row"
ok $? "streams: stream 7 is not flagged"
keys 4
wait_for 'sort size ↓'; ok $? "blocks: sorted by size"
wait_for '20\.0 MiB'	# the rows are drawn after the header
sed -n 4p "$TMP/screen" | grep -q '20.0 MiB'; ok $? "blocks: the largest first"
keys s
wait_for 'sort age ↑' && wait_for '3\.0 MiB'
sed -n 4p "$TMP/screen" | grep -q '3.0 MiB'; ok $? "s: by age, the oldest first"
keys S
wait_for 'sort size ↓' && wait_for '20\.0 MiB'
sed -n 4p "$TMP/screen" | grep -q '20.0 MiB'; ok $? "S: back to size, largest first"
keys Enter
wait_for '#1 +train.py:52 +backward'; ok $? "Enter: the block's stack"
grep -q '#0 *offload.py:88  stash  ◀ origin$' "$TMP/screen" &&
    grep -q '#1 *train.py:52  backward  ◀ caller$' "$TMP/screen"
ok $? "...its origin and caller marked, as leaks names the site"
keys Escape / w e i g h t Enter
wait_for 'site ~ "weight"' && sed -n 4p "$TMP/screen" | grep -q 'model.py:7 weights' &&
    [ "$(grep -c 'MiB .*stash' "$TMP/screen")" -eq 0 ]
ok $? "/: search by site"
keys c / t r a i n . p y : 5 2 Enter
wait_for 'site ~ "train.py:52"' && wait_for 'offload.py:88 stash < train.py:52 backward' &&
    [ "$(grep -c 'weights' "$TMP/screen")" -eq 0 ]
ok $? "/: the rows are named as leaks names their site, and found by that name"
keys c
tm resize-window -t ui -x 80 -y 24
wait_for '\? help +q quit *$' && [ "$(wc -l <"$TMP/screen")" -le 24 ]
ok $? "80x24: the footer stays"
head -n 1 "$TMP/screen" | grep -Eq '^ 1  2  3  4 Blocks  5  6  7  LEAK \+20\.0 MiB/step *$' &&
    tail -n 1 "$TMP/screen" | grep -Eq '^s sort .* t stream  …  +\? help  q quit *$'
ok $? "80x24: the tab bar keeps the verdict whole, the footer ends in … where keys do not fit"
keys 6 a a a a
wait_for 'step 1 -> step 6' &&
    grep -q '+6 blocks +101.0 MiB appeared, -1 blocks -1.0 MiB went away' \
    "$TMP/screen"
ok $? "diff: a moves step A"
keys v
wait_for '^ +100\.0 MiB +5 .*offload\.py:88 stash'
ok $? "diff: v groups by site"
keys g p
wait_for 'steps A B:' &&
    grep -Eq '^ +100\.0 MiB +5 .*offload\.py:88 stash' "$TMP/screen"
ok $? "diff: g is the first row, as in every view, and keeps the groups"
# A after B: what step 4 held and step 1 did not is gone, in the list of
# blocks as in the sites (one diff for both).  The steps typed replace
# those the prompt offers ("1 6").
keys 4 Space 1 Enter v
wait_for 'step 4 -> step 1' &&
    grep -q '+1 blocks +1.0 MiB appeared, -4 blocks -61.0 MiB went away' \
    "$TMP/screen" && wait_for '^- +20\.0 MiB .*offload\.py:88 stash'
ok $? "diff: step A after step B, by block"
keys v
wait_for '^ +0 B +0 +60\.0 MiB +3 .*offload\.py:88 stash'
ok $? "diff: step A after step B, by site"
keys '?'
wait_for 'keys in every view'; ok $? "?: help"
keys q q
i=0; while [ $i -lt 50 ] && screen | grep -q 'help'; do sleep 0.1; i=$((i + 1)); done
screen | grep -q 'q quit'; [ $? -ne 0 ]; ok $? "q quits"

SNAP=${SHARED_DATA:-}/snapshots
export XDG_CACHE_HOME="$TMP/cache"
if [ -f "$SNAP/fixture_garbage_stream.pickle" ]; then
	start "$SNAP/fixture_garbage_stream.pickle"
	wait_for 'LEAK'
	keys 2
	wait_for '^ +0 1031036896 .*GARBAGE growing'
	ok $? "fixture_garbage_stream: the side stream is GARBAGE growing"
	grep -E '^ +0 0 ' "$TMP/screen" >"$TMP/row" && ! grep -q GARBAGE "$TMP/row"
	ok $? "fixture_garbage_stream: the default stream is not flagged"
	start "$SNAP/fixture_clean.pickle"
	wait_for 'CLEAN'
	keys 2
	wait_for '^ +0 0 .*default' && ! grep -q GARBAGE "$TMP/screen"
	ok $? "fixture_clean: no stream flagged"
else
	skip 3 "no snapshot fixtures in $SNAP"
fi

# View 7: the snapshot's segments, the side stream's flagged; g and G go
# to the first and the last row as in every view; at 80 columns the
# garbage kind is a '*' in the last column.
export XDG_CACHE_HOME="$TMP/cache"
start "$srcdir/examples/garbage_stream.pickle"
wait_for 'LEAK'
keys 7
wait_for '^ 0 1031036896 0x7ff144000000 +20\.0 MiB +18\.0 MiB +2\.0 MiB +10 +2\.0 MiB GARBAGE growing *$' &&
    head -n 1 "$TMP/screen" | grep -q ' 7 Segments ' &&
    grep -q '^ device 0: 55 segments, 1\.1 GiB reserved' "$TMP/screen"
ok $? "segments: view 7 lists the segments, the side stream's GARBAGE growing"
keys G
wait_for '^ 0 1031036896 0x7ff207c00000 ' &&
    ! grep -q '0x7ff170000000' "$TMP/screen"
ok $? "segments: G goes to the last segment"
keys g
wait_for '^ 0 0 +0x7ff170000000 ' && ! grep -q '0x7ff207c00000' "$TMP/screen"
ok $? "segments: g goes back to the first"
tm resize-window -t ui -x 80 -y 24
keys G
wait_for '^ 0 1031036896 0x7ff207c00000 .* \*$' &&
    grep -Eq '^ D STREAM .* LARGEST G$' "$TMP/screen" &&
    [ "$(awk '{ if (length($0) > 80) n++ } END { print n + 0 }' "$TMP/screen")" -eq 0 ]
ok $? "segments at 80 columns: every column fits, garbage is '*'"

# The offload check: a line in the overview, the differences in view 5.
make_check_db "$TMP/check.db"
start "$TMP/check.db"
wait_for '^ Check +offload check: 1 of 8 saved tensors came back different \(first at step 2, packed at train\.py:12 by trl\.Off'
ok $? "overview: the offload check's line"
keys 5
wait_for '^ +step 2 #1 8x64x2048 bfloat16 train\.py:12: contents: 12 of 576 checksums differ'
ok $? "offload: the first differences under the check's line"
# tmux may show the screen half drawn (a slow build: the sanitizers): these
# lines are waited for too, not read once from the last capture.
wait_for '^ 1 engine, 8 packs \(8\.0 MiB\), 8 unpacks, 8\.0 MiB came back in other memory' &&
    wait_for '^ +1 +1 +20\.0 MiB'
ok $? "offload: what the engines did, and the engine's own steps below"

# Pinned host memory that leaks under a flat device (lib.sh's pinned_run):
# its verdict on a line of its own under the device's, as leaks judges it.
pinned_run pinned all || exit 99
start "$TMP/pinned.db"
wait_for '^ Pinned +LEAK  \+64\.0 MiB per step, 100% of steps grew \(layer host, warm-up 1\) *$' &&
    grep -Eq '^ Verdict +CLEAN  \+0 B per step' "$TMP/screen" &&
    [ "$(grep -n '^ Pinned' "$TMP/screen" | cut -d: -f1)" -eq \
    $(($(grep -n '^ Verdict' "$TMP/screen" | cut -d: -f1) + 1)) ]
ok $? "overview: the pinned line, LEAK, under the device's CLEAN"
keys 3
wait_for '^ 1 Overview  2 Streams  3 [A-Za-z]+ .* CLEAN pinned LEAK \+64\.0 MiB/step'
ok $? "the tab bar: a pinned LEAK after the device's verdict, on every view"

start --live "$TMP/leak.db"
wait_for 'Run +1 of 1'
"$VRAMTRACE" replay --append "$TMP/leak.vtr" -o "$TMP/leak.db" >/dev/null
wait_for 'Run +2 of 2'; ok $? "--live: a new run shows up"
done_testing
