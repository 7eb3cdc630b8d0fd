#!/bin/sh
# import-same.sh OLD NEW PICKLE...: import each PICKLE with the vramtrace
# programs OLD and NEW and say whether the two databases hold the same
# rows, through `vramtrace sql` (NEW's), table by table.  Row ids may
# differ where rows are written in another order: rows are compared by
# their content, sorted, with the ids they point at replaced by what those
# rows hold (an allocation by its columns, a site by its hash).  For a
# change to the importer or the store that must not change what an import
# makes.  Prints one line per table and pickle; exits 1 on a difference.
set -eu
old=$1 new=$2
shift 2
work=$(mktemp -d /tmp/vramtrace-import-same-XXXXXX)
trap 'rm -rf "$work"' EXIT
A="a.device, a.stream, a.layer, a.address, a.bytes, a.requested_bytes,\
 a.alloc_ns, a.free_requested_ns, a.free_ns, a.alloc_step, a.free_step,\
 (SELECT hash FROM sites WHERE id = a.site_id), a.correlation_id"
H="(SELECT hash FROM sites WHERE id = site_id)"
same() {	# same TABLE SQL: one table of both databases compared
	for v in old new; do
		"$new" sql "$work/$v.db" "$2" --format csv |
		    LC_ALL=C sort >"$work/$v.txt"
	done
	if cmp -s "$work/old.txt" "$work/new.txt"; then
		printf '%-28s %-20s same (%d rows)\n' "$name" "$1" \
		    "$(wc -l <"$work/new.txt")"
	else
		printf '%-28s %-20s DIFFERENT\n' "$name" "$1"
		differ=1
	fi
}
differ=0
for p in "$@"; do
	name=$(basename "$p")
	"$old" import "$p" -o "$work/old.db" >/dev/null
	"$new" import "$p" -o "$work/new.db" >/dev/null
	same allocations "SELECT $A FROM allocations a"
	same allocation_groups "SELECT process_id, layer, device, stream,\
	    alloc_step, free_step, $H, bytes, blocks FROM allocation_groups"
	same allocation_steps "SELECT process_id, layer, device, stream, step,\
	    alloc_bytes, alloc_blocks, freed_bytes, freed_blocks\
	    FROM allocation_steps"
	same allocation_top "SELECT t.bytes, $A FROM allocation_top t\
	    JOIN allocations a ON a.id = t.allocation_id"
	same allocation_heads "SELECT h.sort, h.part, $A FROM\
	    allocation_heads h JOIN allocations a ON a.id = h.allocation_id"
	same sites "SELECT hash, depth, label, kind FROM sites"
	same site_frames "SELECT s.hash, f.depth, r.name, r.filename, r.line\
	    FROM site_frames f JOIN sites s ON s.id = f.site_id\
	    JOIN frames r ON r.id = f.frame_id"
	same frames "SELECT name, filename, line FROM frames"
	same steps "SELECT step, start_ns, end_ns, name FROM steps"
	same marks "SELECT process_id, device, time_ns, stage, name FROM marks"
	same streams "SELECT device, stream, handle, context, priority, flags,\
	    created_ns, destroyed_ns FROM streams"
	same segments "SELECT device, address, total_size, allocated_size,\
	    active_size, requested_size, stream, segment_type, pool_id,\
	    is_expandable, $H FROM segments"
	same blocks "SELECT g.address, b.address, b.size, b.requested_size,\
	    b.state, (SELECT hash FROM sites WHERE id = b.site_id)\
	    FROM blocks b JOIN segments g ON g.id = b.segment_id"
	same snapshots "SELECT file_bytes, trace_entries, annotations\
	    FROM snapshots"
	same trace_actions "SELECT device, action, count FROM trace_actions"
	same allocator_settings "SELECT key, value FROM allocator_settings"
	same runs "SELECT source, step_source, end_ns, exit_status, complete\
	    FROM runs"
	same schema "SELECT type, name, tbl_name, sql FROM sqlite_master"
	rm -f "$work/old.db" "$work/new.db"
done
[ "$differ" = 0 ]
