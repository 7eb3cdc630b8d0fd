# tui-scenario.sh: databases for the TUI tests, through mkspool and replay.
# Source it after lib.sh.  make_leak_db DB: a run of 6 steps whose side
# stream 13 keeps 20 MiB per step (a stash never cleared) while the main stream 7
# (the one that allocates the most: 100 MiB of activations a step, freed
# within it) is flat, with stacks and offload events.  make_clean_db DB: the same without
# the stash.  make_check_db DB: the leaking run recorded with the offload
# check of another engine (trl.OffloadActivations), one of whose 8 saved
# tensors came back different at step 2.

leak_spool() {
	cat <<'SPOOL'
process-start 1000 pid=10 rank=0 host=h1 command="python train.py"
device 1000 device=0 name="NVIDIA H200" total=150000000000
stream-create 1000 stream=7 device=0
stream-create 1000 stream=13 device=0
alloc 1100 address=0x1000 bytes=1048576 stream=7 layer=block site="fwd@train.py:12|main@train.py:40"
alloc 1150 address=0x9000 bytes=3145728 stream=7 layer=block site="weights@model.py:7|main@train.py:30"
alloc 1200 address=0x2000 bytes=20971520 stream=13 layer=block site="stash@offload.py:88|backward@train.py:52|main@train.py:41"
offload 1250 kind=pack bytes=4096
offload 1260 kind=offload bytes=20971520
offload 1270 kind=stash bytes=20971520
alloc 1210 address=0x80000000 bytes=104857600 stream=7 layer=block site="act@model.py:20|main@train.py:40"
free 1290 address=0x80000000 bytes=104857600 stream=7 layer=block
step-end 1300
free 1400 address=0x1000 bytes=1048576 stream=7
alloc 1410 address=0x1000 bytes=1048576 stream=7 layer=block site="fwd@train.py:12|main@train.py:40"
alloc 1420 address=0x3000 bytes=20971520 stream=13 layer=block site="stash@offload.py:88|backward@train.py:52|main@train.py:41"
offload 1430 kind=stash bytes=20971520
offload 1440 kind=dedupe_hit
alloc 1450 address=0x80000000 bytes=104857600 stream=7 layer=block site="act@model.py:20|main@train.py:40"
free 1490 address=0x80000000 bytes=104857600 stream=7 layer=block
step-end 1500
free 1510 address=0x1000 bytes=1048576 stream=7
alloc 1520 address=0x1000 bytes=1048576 stream=7 layer=block site="fwd@train.py:12|main@train.py:40"
alloc 1530 address=0x4000 bytes=20971520 stream=13 layer=block site="stash@offload.py:88|backward@train.py:52|main@train.py:41"
offload 1540 kind=pool_fallback bytes=8192
alloc 1600 address=0x80000000 bytes=104857600 stream=7 layer=block site="act@model.py:20|main@train.py:40"
free 1690 address=0x80000000 bytes=104857600 stream=7 layer=block
step-end 1700
SPOOL
	# Steps 4 to 6: the same again, 20 MiB more kept each time.
	for k in 0 1 2; do
		t=$((1700 + 200 * k))
		cat <<SPOOL
free $((t + 10)) address=0x1000 bytes=1048576 stream=7
alloc $((t + 20)) address=0x1000 bytes=1048576 stream=7 layer=block site="fwd@train.py:12|main@train.py:40"
alloc $((t + 30)) address=0x$((5 + k))000 bytes=20971520 stream=13 layer=block site="stash@offload.py:88|backward@train.py:52|main@train.py:41"
alloc $((t + 100)) address=0x80000000 bytes=104857600 stream=7 layer=block site="act@model.py:20|main@train.py:40"
free $((t + 190)) address=0x80000000 bytes=104857600 stream=7 layer=block
step-end $((t + 200))
SPOOL
	done
}

make_leak_db() {
	leak_spool >"$TMP/leak.txt"
	"$MKSPOOL" "$TMP/leak.txt" "$TMP/leak.vtr" &&
	    "$VRAMTRACE" replay "$TMP/leak.vtr" -o "$1" >/dev/null
}

make_clean_db() {
	leak_spool | grep -v -e 'stream=13 layer' -e '^offload' >"$TMP/clean.txt"
	"$MKSPOOL" "$TMP/clean.txt" "$TMP/clean.vtr" &&
	    "$VRAMTRACE" replay "$TMP/clean.vtr" -o "$1" >/dev/null
}

make_check_db() {
	{ leak_spool; cat <<'SPOOL'
check-step 1350 step=1 engine=trl.OffloadActivations packs=4 unpacks=4 checked=4 differ=0 packed=4194304 moved=4194304 device=0
check-diff 1420 step=2 index=1 engine=trl.OffloadActivations shape=8x64x2048 dtype=bfloat16 bytes=2097152 differs=0x8 device=0 where=train.py:12 detail="contents: 12 of 576 checksums differ" pack_site="fwd@train.py:12|main@train.py:40" unpack_site="MmBackward0@<autograd>:0" unpack=1480
check-step 1550 step=2 engine=trl.OffloadActivations packs=4 unpacks=4 checked=4 differ=1 packed=4194304 moved=4194304 device=0
SPOOL
	} >"$TMP/check.txt"
	"$MKSPOOL" "$TMP/check.txt" "$TMP/check.vtr" &&
	    "$VRAMTRACE" replay "$TMP/check.vtr" -o "$1" >/dev/null
}
