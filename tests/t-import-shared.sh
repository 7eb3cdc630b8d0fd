#!/bin/sh
# t-import-shared.sh: real snapshots rewritten by Python's pickle module
# the way a script that filters or merges snapshots writes them, so that
# the file shares objects: the trace list referenced twice (two devices),
# and a filtered copy of the trace whose every entry is a reference to an
# entry of the original, kept under another key written first.  Each
# imports, holds what Python's pickle module reads from it (the counts of
# snapshot-oracle.py), and `leaks` gives the verdict and the growth per
# step that the original gives.  fixture_large with its trace twice has
# more rows than wait for the first step (STORE_GROUPS_PENDING_MAX), so
# its groups are rebuilt from the rows: device 0's must be the original's.
. "${srcdir:-.}/tests/lib.sh"

dir=${SHARED_DATA:-$srcdir/../shared/data}/snapshots
names="fixture_garbage_stream fixture_clean"
plan 11
for name in $names; do
	f=$dir/$name.pickle
	if [ ! -r "$f" ]; then
		skip 5 "no $f"
		continue
	fi
	"$PY" - "$f" "$TMP/$name" <<'PY'
import pickle, sys
d = pickle.load(open(sys.argv[1], "rb"))
t = d["device_traces"][0]
twice = dict(d, device_traces=[t, t])
kept = {"raw": t}
kept.update(d, device_traces=[[e for e in t]])
for suffix, obj in (("twice", twice), ("kept", kept)):
    with open("%s-%s.pickle" % (sys.argv[2], suffix), "wb") as out:
        pickle.dump(obj, out, protocol=4)
PY
	"$VRAMTRACE" leaks "$f" --format json >"$TMP/$name.want" 2>&1
	for shape in twice kept; do
		p=$TMP/$name-$shape.pickle
		run "$VRAMTRACE" import "$p" -o "$TMP/$name-$shape.db"
		ok $rc "$name, $shape: imports"
		"$PY" "$srcdir/tests/snapshot-oracle.py" "$p" >"$TMP/want"
		"$VRAMTRACE" sql "$TMP/$name-$shape.db" "SELECT 'segments',
		  count(*) FROM segments UNION ALL SELECT 'blocks', count(*)
		  FROM blocks UNION ALL SELECT 'trace_entries',
		  sum(trace_entries) FROM snapshots" --format csv |
		  tail -n +2 | tr ',' ' ' >"$TMP/got"
		"$VRAMTRACE" sql "$TMP/$name-$shape.db" "SELECT 'action ' ||
		  device || ' ' || action AS a, count FROM trace_actions
		  ORDER BY device, action" --format csv | tail -n +2 | tr ',' ' ' \
		  >>"$TMP/got"
		grep -v '^active_\|^steps' "$TMP/want" >"$TMP/want.counts"
		diff "$TMP/want.counts" "$TMP/got" >"$TMP/diff"
		st=$?
		[ $st -eq 0 ] || sed 's/^/# /' "$TMP/diff"
		ok $st "$name, $shape: segments, blocks, entries per action as Python reads them"
	done
	"$VRAMTRACE" leaks "$TMP/$name-kept.db" --format json >"$TMP/got" 2>&1
	"$PY" - "$TMP/$name.want" "$TMP/got" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
keys = ("verdict", "growth_bytes_per_step")
if [a[k] for k in keys] != [b[k] for k in keys]:
    print("# original %s, shared %s" % ([a[k] for k in keys],
                                         [b[k] for k in keys]))
    sys.exit(1)
PY
	ok $? "$name, kept: leaks gives the original's verdict and growth"
done

f=$dir/fixture_large.pickle
if [ -r "$f" ]; then
	"$PY" - "$f" "$TMP/large-twice.pickle" <<'PY'
import pickle, sys
d = pickle.load(open(sys.argv[1], "rb"))
t = d["device_traces"][0]
pickle.dump(dict(d, device_traces=[t, t]), open(sys.argv[2], "wb"), 4)
PY
	groups() {
		"$VRAMTRACE" sql "$1" "SELECT layer, stream, alloc_step,
		  free_step, site_id, bytes, blocks FROM allocation_groups
		  WHERE device = 0 ORDER BY 1, 2, 3, 4, 5, 6" --format csv
	}
	"$VRAMTRACE" import "$f" -o "$TMP/large.db" >/dev/null 2>&1 &&
	    "$VRAMTRACE" import "$TMP/large-twice.pickle" \
	    -o "$TMP/large-twice.db" >/dev/null 2>&1 &&
	    groups "$TMP/large.db" >"$TMP/g1" &&
	    groups "$TMP/large-twice.db" >"$TMP/g2" &&
	    [ "$(wc -l <"$TMP/g1")" -gt 100 ] && cmp -s "$TMP/g1" "$TMP/g2"
	ok $? "fixture_large, twice: device 0's groups, rebuilt from the rows, are the original's"
else
	skip 1 "no $f"
fi
done_testing
