#!/bin/sh
# t-import.sh: every real snapshot, imported, holds what Python's pickle
# module reads from it: segments, blocks, trace entries per action, active
# bytes and blocks per stream (in the snapshot's blocks, and as allocations
# live at the end of the trace), and one step per Optimizer.step END.
. "${srcdir:-.}/tests/lib.sh"

dir=${SHARED_DATA:-$srcdir/../shared/data}/snapshots
[ -d "$dir" ] || dir=$srcdir/examples
files=$(ls "$dir"/*.pickle 2>/dev/null)
n=$(echo "$files" | wc -w)
plan $((n * 3 + 8))
export XDG_CACHE_HOME="$TMP/cache"

ours() {	# what the database says, in the oracle's format
	db=$1
	"$VRAMTRACE" sql "$db" "SELECT 'segments', count(*) FROM segments
	  UNION ALL SELECT 'blocks', count(*) FROM blocks
	  UNION ALL SELECT 'trace_entries', sum(trace_entries) FROM snapshots" \
	  --format csv | tail -n +2 | tr ',' ' '
	"$VRAMTRACE" sql "$db" "SELECT 'action ' || device || ' ' || action,
	  count FROM trace_actions ORDER BY device, action" --format csv |
	  tail -n +2 | tr ',' ' '
	"$VRAMTRACE" sql "$db" "SELECT s.stream, sum(b.size), count(*) FROM
	  blocks b JOIN segments s ON s.id = b.segment_id WHERE b.state LIKE
	  'active%' GROUP BY s.stream ORDER BY s.stream" --format csv |
	  tail -n +2 | tr ',' ' ' | while read -r stream bytes blocks; do
		echo "active_bytes $stream $bytes"
		echo "active_blocks $stream $blocks"
	done
	"$VRAMTRACE" sql "$db" "SELECT 'steps', count(*) FROM steps" \
	  --format csv | tail -n +2 | tr ',' ' '
}

for f in $files; do
	name=$(basename "$f" .pickle)
	run "$VRAMTRACE" import "$f" -o "$TMP/$name.db"
	ok $rc "import $name"
	"${PYTHON3:-python3}" "$srcdir/tests/snapshot-oracle.py" "$f" >"$TMP/$name.want"
	ours "$TMP/$name.db" >"$TMP/$name.got"
	diff "$TMP/$name.want" "$TMP/$name.got" >"$TMP/$name.diff"
	st=$?
	[ $st -eq 0 ] || sed 's/^/# /' "$TMP/$name.diff"
	ok $st "$name: counts, actions, active bytes per stream and steps equal Python's"
	# The trace, replayed, leaves live exactly the snapshot's active
	# blocks, with their sizes (a trace entry gives the size asked for).
	"$VRAMTRACE" sql "$TMP/$name.db" "SELECT stream, sum(bytes), count(*)
	  FROM allocations WHERE layer = 2 AND free_ns IS NULL GROUP BY stream
	  ORDER BY stream" --format csv | tail -n +2 | tr ',' ' ' >"$TMP/$name.live"
	grep '^active_' "$TMP/$name.want" | cut -d' ' -f3 | paste -d' ' - - |
	    paste -d' ' "$TMP/$name.live" - | awk '$2 != $4 || $3 != $5' \
	    >"$TMP/$name.livediff"
	[ -s "$TMP/$name.live" ] && [ ! -s "$TMP/$name.livediff" ]
	ok $? "$name: block allocations live at the end match the active blocks per stream, bytes and count"
	sed 's/^/# stream, bytes, blocks; want: /' "$TMP/$name.livediff"
done

f=$(echo "$files" | head -n 1)
run "$VRAMTRACE" info "$f" --format json
"${PYTHON3:-python3}" - "$TMP/out" "$f" "$srcdir/tests/snapshot-oracle.py" <<'PY'
import json, subprocess, sys
got = json.load(open(sys.argv[1]))
want = dict(l.rsplit(" ", 1) for l in subprocess.run(
    [sys.executable, sys.argv[3], sys.argv[2]], capture_output=True,
    text=True).stdout.splitlines())
keys = ("segments", "blocks", "trace_entries", "steps")
sys.exit(0 if all(got[k] == int(want[k]) for k in keys) else 1)
PY
ok $? "info on a pickle imports it and reports Python's counts"
[ -n "$(ls "$XDG_CACHE_HOME/vramtrace/" 2>/dev/null)" ] && [ ! -e "${f%.pickle}.db" ]
ok $? "...into the cache, not next to the pickle"
cp "$f" "$TMP/again.pickle"
"$VRAMTRACE" import "$TMP/again.pickle" >/dev/null 2>&1
run "$VRAMTRACE" import "$TMP/again.pickle"
expect 7 'again.db: already exists' "import refuses to overwrite its default output, exit 7"
run "$VRAMTRACE" import "$TMP/again.pickle" -o "$TMP/again.db" --step-marker '^nothing' --step-every 50 --append
grep -q 'steps are fixed windows' "$TMP/out" && [ "$("$VRAMTRACE" sql "$TMP/again.db" "select count(*) from runs")" = "$(printf 'count(*)\n2')" ]
ok $? "--append adds a run; --step-every cuts windows when no annotation matches"

# A snapshot imported without steps (no annotation matches): leaks says
# how to get them, and each stream holds at the end what the snapshot's
# active blocks hold, not every block its trace allocated (its rows have
# no free step, freed or not).
g=$(ls "$dir"/*garbage*.pickle | head -n 1)
run "$VRAMTRACE" import "$g" -o "$TMP/stepless.db" --step-marker '^nothing$'
run "$VRAMTRACE" leaks "$TMP/stepless.db" --format json
"${PYTHON3:-python3}" - "$TMP/out" "$g" "$srcdir/tests/snapshot-oracle.py" <<'PY'
import json, subprocess, sys
got = json.load(open(sys.argv[1]))
want = {int(k.split()[1]): int(v) for k, v in (l.rsplit(" ", 1) for l in
        subprocess.run([sys.executable, sys.argv[3], sys.argv[2]],
                       capture_output=True, text=True).stdout.splitlines())
        if k.startswith("active_bytes ")}
live = {s["stream"]: s["live_bytes"] for s in got["streams"]}
ok = (got["verdict"] == "INCONCLUSIVE" and "--step-marker" in got["reason"]
      and len(want) > 1 and live == want and
      sum(x["bytes"] for x in got["suspects"]) <= sum(want.values()))
sys.exit(0 if ok else 1)
PY
ok $? "a snapshot without steps: INCONCLUSIVE with the fix; live per stream is its active blocks"

# Entries timed before the one before them on their device take its time
# (nothing freed before it was allocated); another device's times are its
# own.
"${PYTHON3:-python3}" - "$TMP/retimed.pickle" <<'PY'
import pickle, sys
def e(action, t, addr=0x1000):
    return {"action": action, "addr": addr, "size": 512, "stream": 0,
            "time_us": t, "frames": []}
pickle.dump({"segments": [], "device_traces": [
    [e("alloc", 100), e("free_requested", 50), e("free_completed", 60)],
    [e("alloc", 10, 0x2000)]]}, open(sys.argv[1], "wb"), protocol=4)
PY
run "$VRAMTRACE" import "$TMP/retimed.pickle" -o "$TMP/retimed.db"
[ $rc -eq 0 ] &&
    grep -q '^trace entries timed before the entry before them, given its time: 2$' "$TMP/out" &&
    [ "$("$VRAMTRACE" sql "$TMP/retimed.db" "SELECT group_concat(device ||
      ':' || alloc_ns || ':' || coalesce(free_requested_ns, '-') || ':' ||
      coalesce(free_ns, '-'), ' ') FROM (SELECT * FROM allocations
      ORDER BY device)" --format csv | tail -n 1)" = \
    "0:100000:100000:100000 1:10000:-:-" ]
ok $? "entries timed before the one before them take its time, per device"

# A disk that fills while the rows wait for their steps in $TMPDIR: a file
# size limit, with SIGXFSZ ignored (as a shell's trap passes it on), makes
# that write fail as a full disk does; it is the output's failure (7), not
# the snapshot's (4).
xz -dc "$srcdir/tests/data/zoo/trainer-steady.pickle.xz" >"$TMP/steady.pickle"
(trap '' XFSZ; ulimit -f 512 && exec "$VRAMTRACE" import "$TMP/steady.pickle" \
    -o "$TMP/full.db") >"$TMP/out" 2>"$TMP/err"
rc=$?
expect 7 "full.db: cannot keep rows in a temporary file: File too large" \
    "a temporary file of rows that cannot be written: exit 7, naming the cause"
[ -z "$(ls "$TMP" | grep '^full\.db')" ]
ok $? "...and no database, temporary or not"
done_testing
