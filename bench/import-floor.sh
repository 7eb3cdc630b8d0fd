#!/bin/sh
# import-floor.sh DB [PICKLE]: what SQLite alone takes to write what an
# import wrote into DB (a database `vramtrace import` made): its
# allocations and allocation_groups rows, copied into a new database with
# the importer's settings (no journal, 64 MiB of cache, no sort threads),
# then their indexes, all read from DB itself.  Prints seconds, CPU seconds
# and peak RSS; with PICKLE (the snapshot DB was imported from), also the
# import speed that this alone allows: the file's bytes per CPU second.
# Needs the sqlite3 shell.
set -eu
db=$1
work=$(mktemp -d /tmp/vramtrace-bench-floor-XXXXXX)
trap 'rm -rf "$work"' EXIT
ddl() {		# ddl TYPE: DB's CREATE statements of that type for the two tables
	sqlite3 "$db" "SELECT sql || ';' FROM sqlite_master WHERE type = '$1'
	    AND tbl_name IN ('allocations', 'allocation_groups')
	    AND sql IS NOT NULL"
}
{
	echo "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;"
	echo "PRAGMA cache_size = -65536; PRAGMA temp_store = FILE;"
	echo "PRAGMA threads = 0;"
	ddl table
	echo "ATTACH '$db' AS src;"
	echo "BEGIN;"
	echo "INSERT INTO allocations SELECT * FROM src.allocations ORDER BY id;"
	echo "INSERT INTO allocation_groups SELECT * FROM src.allocation_groups;"
	ddl index
	echo "COMMIT;"
} >"$work/floor.sql"
/usr/bin/time -f '%e %U %S %M' -o "$work/time" \
    sqlite3 "$work/floor.db" <"$work/floor.sql" >/dev/null
read -r secs user sys kb <"$work/time"
rows=$(sqlite3 "$db" "SELECT (SELECT count(*) FROM allocations) || ' rows, ' ||
    (SELECT count(*) FROM allocation_groups) || ' groups'")
bytes=$(stat -L -c %s "${2:-$db}")
awk -v r="$rows" -v s="$secs" -v u="$user" -v y="$sys" -v k="$kb" \
    -v b="$bytes" -v p="${2:-}" 'BEGIN {
	printf "%s: %.2f s, %.2f s of CPU, %.1f MB RSS\n", r, s, u + y,
	    k / 1024
	if (p != "")
		printf "at most %.1f MB/s of CPU for %s (%.1f MB)\n",
		    b / 1e6 / (u + y), p, b / 1e6
}'
