/*
 * store-schema.c: the database schema, in one place.
 *
 * store_schema_sql creates schema version STORE_SCHEMA_VERSION; it is run
 * once, in the transaction that creates a database.  store_schema_index_sql
 * builds the secondary indexes; store.c runs it when a run finishes (and
 * store-merge.c when a merge does), not while events stream in.  The
 * partial indexes of allocations are the exception: a new database gets
 * them with its tables, since keeping a few rows' entries as rows come
 * costs less than reading every row at finish.
 * man/vramtrace-db.5 documents every table, column (with its unit) and
 * view; change both together, and bump the version with a migration in
 * store.c for any change that is not purely additive.
 *
 * Conventions: times are integers in ns since the Unix epoch (*_ns); sizes
 * are integers in bytes; NULL means unknown, never zero.  A stream is the
 * value the source recorded (a CUPTI stream id, or the cudaStream_t value in
 * a PyTorch snapshot).  Steps are numbered from 1; an allocation made after
 * the last step marker belongs to step N+1, which has no row in steps.
 */
#include "config.h"

#include "store-int.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

/*
 * The largest rows of each run, and its first rows in other orders
 * (store-top.c), written when it finishes; files made before the tables
 * existed get them then.
 */
#define ALLOCATION_TOP_SQL \
"CREATE TABLE IF NOT EXISTS allocation_top(\n" \
"  run_id INTEGER NOT NULL REFERENCES runs(id),\n" \
"  bytes INTEGER NOT NULL,\n" \
"  allocation_id INTEGER NOT NULL,\n" \
"  PRIMARY KEY(run_id, bytes, allocation_id)) WITHOUT ROWID;\n" \
"CREATE TABLE IF NOT EXISTS allocation_heads(\n" \
"  run_id INTEGER NOT NULL REFERENCES runs(id),\n" \
"  sort INTEGER NOT NULL,\n" \
"  part INTEGER NOT NULL,\n" \
"  allocation_id INTEGER NOT NULL,\n" \
"  PRIMARY KEY(run_id, sort, part, allocation_id)) WITHOUT ROWID;\n"

const char *store_schema_top_sql = ALLOCATION_TOP_SQL;

/*
 * The offload check's rows (vramtrace record --check-offload): what each
 * engine did per checker step, added up over its check-step events, and
 * each saved tensor that came back different, with its pack and unpack
 * stacks as sites.  Files made before the tables existed get them when
 * they are opened for writing; readers take a file without them as a run
 * that was not checked.
 */
#define OFFLOAD_CHECK_SQL \
"CREATE TABLE IF NOT EXISTS offload_check_steps(\n" \
"  id INTEGER PRIMARY KEY,\n" \
"  run_id INTEGER NOT NULL REFERENCES runs(id),\n" \
"  process_id INTEGER REFERENCES processes(id),\n" \
"  device INTEGER,\n" \
"  step INTEGER NOT NULL,\n" \
"  engine TEXT,\n" \
"  packs INTEGER NOT NULL,\n" \
"  unpacks INTEGER NOT NULL,\n" \
"  checked INTEGER NOT NULL,\n" \
"  differ INTEGER NOT NULL,\n" \
"  packed_bytes INTEGER NOT NULL,\n" \
"  moved_bytes INTEGER NOT NULL);\n" \
"CREATE INDEX IF NOT EXISTS offload_check_steps_run\n" \
"  ON offload_check_steps(run_id, step);\n" \
"CREATE TABLE IF NOT EXISTS offload_check_diffs(\n" \
"  id INTEGER PRIMARY KEY,\n" \
"  run_id INTEGER NOT NULL REFERENCES runs(id),\n" \
"  process_id INTEGER REFERENCES processes(id),\n" \
"  device INTEGER,\n" \
"  step INTEGER NOT NULL,\n" \
"  pack_index INTEGER NOT NULL,\n" \
"  engine TEXT,\n" \
"  shape TEXT,\n" \
"  dtype TEXT,\n" \
"  bytes INTEGER NOT NULL,\n" \
"  differs INTEGER NOT NULL,\n" \
"  detail TEXT,\n" \
"  pack_where TEXT,\n" \
"  pack_ns INTEGER,\n" \
"  unpack_ns INTEGER,\n" \
"  pack_site_id INTEGER,\n" \
"  unpack_site_id INTEGER);\n" \
"CREATE VIEW IF NOT EXISTS offload_check_engines AS\n" \
"  SELECT run_id, engine, count(DISTINCT step) AS steps,\n" \
"    sum(packs) AS packs, sum(unpacks) AS unpacks,\n" \
"    sum(checked) AS checked, sum(differ) AS differ,\n" \
"    sum(packed_bytes) AS packed_bytes, sum(moved_bytes) AS moved_bytes\n" \
"  FROM offload_check_steps GROUP BY run_id, engine;\n"

const char *store_schema_check_sql = OFFLOAD_CHECK_SQL;

/*
 * What each step of a run allocated and freed, per process, layer, device
 * and stream (store-alloc-steps.c), written when it finishes: the live
 * bytes at every step end are its running sum, so the leak analysis reads
 * O(steps x streams) rows instead of every allocation group.  Files made
 * before the table existed get it when they are opened for writing; their
 * older runs have no rows, and readers then sum allocation_groups.
 */
#define ALLOCATION_STEPS_SQL \
"CREATE TABLE IF NOT EXISTS allocation_steps(\n" \
"  run_id INTEGER NOT NULL REFERENCES runs(id),\n" \
"  process_id INTEGER,\n" \
"  layer INTEGER NOT NULL,\n" \
"  device INTEGER,\n" \
"  stream INTEGER,\n" \
"  step INTEGER,\n" \
"  alloc_bytes INTEGER NOT NULL,\n" \
"  alloc_blocks INTEGER NOT NULL,\n" \
"  freed_bytes INTEGER NOT NULL,\n" \
"  freed_blocks INTEGER NOT NULL);\n" \
"CREATE INDEX IF NOT EXISTS allocation_steps_run\n" \
"  ON allocation_steps(run_id, layer);\n"

const char *store_schema_steps_sql = ALLOCATION_STEPS_SQL;

/*
 * The blocks of the garbage kinds that are facts (see the leak views
 * below).  "destroyed" is never freed (free_ns: free_step has no step in a
 * run without steps); files made before that was so get the view again
 * when they are opened for writing (store_schema_views_sql).
 */
#define GARBAGE_STREAM_BLOCKS_SQL \
"CREATE VIEW garbage_stream_blocks AS\n" \
"  WITH judged AS (\n" \
"    SELECT k.*, rl.last_step, CASE\n" \
"      WHEN k.destroyed_ns IS NOT NULL THEN 'destroyed'\n" \
"      WHEN k.is_default OR k.stream IS NULL THEN NULL\n" \
"      WHEN k.live_bytes = 0 AND k.last_alloc_step <= rl.last_step - 3\n" \
"        THEN 'stranded' END AS kind\n" \
"    FROM stream_leaks k JOIN run_layers rl ON rl.run_id = k.run_id\n" \
"      AND rl.layer = k.layer)\n" \
"  SELECT j.run_id, j.kind, a.layer, a.device, a.stream, a.id,\n" \
"    a.address, a.bytes, a.alloc_ns, a.alloc_step, a.site_id\n" \
"  FROM judged j JOIN allocations a ON a.run_id = j.run_id\n" \
"    AND a.device IS j.device AND a.stream IS j.stream AND (\n" \
"      (j.kind = 'destroyed' AND a.layer = j.layer\n" \
"        AND a.free_ns IS NULL)\n" \
"      OR (j.kind = 'stranded' AND j.layer > 0 AND a.layer = 0\n" \
"        AND coalesce(a.alloc_step, 1) <= j.last_step\n" \
"        AND (a.free_step IS NULL OR a.free_step > j.last_step)));\n"

/*
 * The partial indexes of allocations, each of a few rows: the blocks never
 * freed (the TUI's first page of blocks), and those live at a step end
 * (blocks gone in a range of steps).  Made with the tables, and by
 * store_schema_index_sql in a file made before they were.
 */
#define ALLOCATIONS_PARTIAL_SQL \
"CREATE INDEX IF NOT EXISTS allocations_live ON allocations(run_id, bytes)" \
"  WHERE free_ns IS NULL;\n" \
"CREATE INDEX IF NOT EXISTS allocations_crossing" \
"  ON allocations(run_id, free_step)" \
"  WHERE free_step > coalesce(alloc_step, 1);\n"

const char *store_schema_views_sql =
"DROP VIEW IF EXISTS garbage_stream_blocks;\n" GARBAGE_STREAM_BLOCKS_SQL;

const char *store_schema_sql =
"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)"
"  WITHOUT ROWID;\n"
"CREATE TABLE runs(\n"
"  id INTEGER PRIMARY KEY,\n"
"  source TEXT NOT NULL,\n"		/* record, import, replay, attach */
"  input TEXT,\n"
"  command TEXT,\n"
"  host TEXT,\n"
"  cwd TEXT,\n"
"  git_commit TEXT,\n"
"  allocator TEXT,\n"
"  step_source TEXT,\n"
"  version TEXT NOT NULL,\n"
"  start_ns INTEGER,\n"
"  end_ns INTEGER,\n"
"  exit_status INTEGER,\n"
"  complete INTEGER NOT NULL DEFAULT 0);\n"
"CREATE TABLE processes(\n"
"  id INTEGER PRIMARY KEY,\n"
"  run_id INTEGER NOT NULL REFERENCES runs(id),\n"
"  pid INTEGER,\n"
"  rank INTEGER,\n"
"  local_rank INTEGER,\n"
"  host TEXT,\n"
"  command TEXT,\n"
"  allocator TEXT,\n"
"  start_ns INTEGER,\n"
"  end_ns INTEGER,\n"
"  job TEXT);\n"				/* the launcher's job identity */
"CREATE TABLE devices(\n"
"  id INTEGER PRIMARY KEY,\n"
"  run_id INTEGER NOT NULL REFERENCES runs(id),\n"
"  process_id INTEGER REFERENCES processes(id),\n"
"  device INTEGER NOT NULL,\n"
"  name TEXT,\n"
"  total_bytes INTEGER);\n"
"CREATE TABLE streams(\n"
"  id INTEGER PRIMARY KEY,\n"
"  run_id INTEGER NOT NULL REFERENCES runs(id),\n"
"  process_id INTEGER REFERENCES processes(id),\n"
"  device INTEGER,\n"
"  stream INTEGER NOT NULL,\n"
"  handle INTEGER,\n"
"  context INTEGER,\n"
"  priority INTEGER,\n"
"  flags INTEGER,\n"
"  created_ns INTEGER,\n"
"  destroyed_ns INTEGER);\n"
"CREATE TABLE steps(\n"
"  run_id INTEGER NOT NULL REFERENCES runs(id),\n"
"  step INTEGER NOT NULL,\n"
"  start_ns INTEGER,\n"
"  end_ns INTEGER NOT NULL,\n"
"  name TEXT,\n"
"  PRIMARY KEY(run_id, step)) WITHOUT ROWID;\n"
"CREATE TABLE marks(\n"
"  id INTEGER PRIMARY KEY,\n"
"  run_id INTEGER NOT NULL REFERENCES runs(id),\n"
"  process_id INTEGER REFERENCES processes(id),\n"
"  device INTEGER,\n"
"  time_ns INTEGER,\n"
"  stage TEXT,\n"			/* START, END, or NULL for an instant */
"  name TEXT NOT NULL);\n"
"CREATE TABLE frames(\n"
"  id INTEGER PRIMARY KEY,\n"
"  name TEXT NOT NULL,\n"
"  filename TEXT NOT NULL,\n"
"  line INTEGER NOT NULL,\n"
"  UNIQUE(filename, line, name));\n"
"CREATE TABLE sites(\n"
"  id INTEGER PRIMARY KEY,\n"
"  hash INTEGER NOT NULL UNIQUE,\n"
"  depth INTEGER NOT NULL,\n"
"  label TEXT NOT NULL,\n"
"  kind TEXT,\n"			/* python, native; NULL: a snapshot's */
"  name TEXT);\n"			/* site_name(); NULL: made before it */
"CREATE TABLE site_frames(\n"
"  site_id INTEGER NOT NULL REFERENCES sites(id),\n"
"  depth INTEGER NOT NULL,\n"
"  frame_id INTEGER NOT NULL REFERENCES frames(id),\n"
"  PRIMARY KEY(site_id, depth)) WITHOUT ROWID;\n"
"CREATE TABLE allocations(\n"
"  id INTEGER PRIMARY KEY,\n"
"  run_id INTEGER NOT NULL REFERENCES runs(id),\n"
"  process_id INTEGER,\n"
"  device INTEGER,\n"
"  stream INTEGER,\n"
"  layer INTEGER NOT NULL,\n"
"  address INTEGER NOT NULL,\n"
"  bytes INTEGER NOT NULL,\n"
"  requested_bytes INTEGER,\n"
"  alloc_ns INTEGER,\n"
"  free_requested_ns INTEGER,\n"
"  free_ns INTEGER,\n"
"  alloc_step INTEGER,\n"
"  free_step INTEGER,\n"
"  site_id INTEGER,\n"
"  correlation_id INTEGER);\n"
"CREATE TABLE allocation_groups(\n"	/* written when a run finishes */
"  run_id INTEGER NOT NULL REFERENCES runs(id),\n"
"  process_id INTEGER,\n"
"  layer INTEGER NOT NULL,\n"
"  device INTEGER,\n"
"  stream INTEGER,\n"
"  alloc_step INTEGER,\n"
"  free_step INTEGER,\n"
"  site_id INTEGER,\n"
"  bytes INTEGER NOT NULL,\n"
"  blocks INTEGER NOT NULL);\n"
ALLOCATION_TOP_SQL
"CREATE TABLE layers(id INTEGER PRIMARY KEY, name TEXT NOT NULL);\n"
"INSERT INTO layers VALUES (0, 'segment'), (1, 'pool'), (2, 'block'),"
"  (3, 'host');\n"
"CREATE TABLE memcpys(\n"
"  id INTEGER PRIMARY KEY,\n"
"  run_id INTEGER NOT NULL REFERENCES runs(id),\n"
"  process_id INTEGER,\n"
"  device INTEGER,\n"
"  stream INTEGER,\n"
"  kind INTEGER NOT NULL,\n"
"  bytes INTEGER NOT NULL,\n"
"  src_device INTEGER,\n"
"  dst_device INTEGER,\n"
"  start_ns INTEGER,\n"
"  end_ns INTEGER,\n"
"  correlation_id INTEGER);\n"
"CREATE TABLE offload_events(\n"
"  id INTEGER PRIMARY KEY,\n"
"  run_id INTEGER NOT NULL REFERENCES runs(id),\n"
"  process_id INTEGER,\n"
"  device INTEGER,\n"
"  stream INTEGER,\n"
"  time_ns INTEGER,\n"
"  step INTEGER,\n"
"  kind TEXT NOT NULL,\n"
"  tensor_id INTEGER,\n"
"  storage_key INTEGER,\n"
"  generation INTEGER,\n"
"  bytes INTEGER);\n"
"CREATE TABLE dropped_records(\n"
"  id INTEGER PRIMARY KEY,\n"
"  run_id INTEGER NOT NULL REFERENCES runs(id),\n"
"  process_id INTEGER,\n"
"  time_ns INTEGER,\n"
"  source TEXT,\n"
"  count INTEGER NOT NULL);\n"
"CREATE TABLE snapshots(\n"
"  id INTEGER PRIMARY KEY,\n"
"  run_id INTEGER NOT NULL REFERENCES runs(id),\n"
"  file TEXT NOT NULL,\n"
"  file_bytes INTEGER,\n"
"  trace_entries INTEGER NOT NULL,\n"
"  annotations INTEGER NOT NULL);\n"
"CREATE TABLE trace_actions(\n"
"  snapshot_id INTEGER NOT NULL REFERENCES snapshots(id),\n"
"  device INTEGER NOT NULL,\n"
"  action TEXT NOT NULL,\n"
"  count INTEGER NOT NULL,\n"
"  PRIMARY KEY(snapshot_id, device, action)) WITHOUT ROWID;\n"
"CREATE TABLE segments(\n"
"  id INTEGER PRIMARY KEY,\n"
"  snapshot_id INTEGER NOT NULL REFERENCES snapshots(id),\n"
"  device INTEGER NOT NULL,\n"
"  address INTEGER NOT NULL,\n"
"  total_size INTEGER NOT NULL,\n"
"  allocated_size INTEGER,\n"
"  active_size INTEGER,\n"
"  requested_size INTEGER,\n"
"  stream INTEGER,\n"
"  segment_type TEXT,\n"
"  pool_id TEXT,\n"
"  is_expandable INTEGER,\n"
"  site_id INTEGER);\n"
"CREATE TABLE blocks(\n"
"  id INTEGER PRIMARY KEY,\n"
"  snapshot_id INTEGER NOT NULL REFERENCES snapshots(id),\n"
"  segment_id INTEGER NOT NULL REFERENCES segments(id),\n"
"  address INTEGER NOT NULL,\n"
"  size INTEGER NOT NULL,\n"
"  requested_size INTEGER,\n"
"  state TEXT NOT NULL,\n"
"  site_id INTEGER);\n"
"CREATE TABLE allocator_settings(\n"
"  snapshot_id INTEGER NOT NULL REFERENCES snapshots(id),\n"
"  key TEXT NOT NULL,\n"
"  value TEXT,\n"
"  PRIMARY KEY(snapshot_id, key)) WITHOUT ROWID;\n"
"CREATE TABLE usage_samples(\n"
"  run_id INTEGER NOT NULL REFERENCES runs(id),\n"
"  device INTEGER NOT NULL,\n"
"  time_ns INTEGER NOT NULL,\n"
"  used_bytes INTEGER NOT NULL);\n"
OFFLOAD_CHECK_SQL
ALLOCATION_STEPS_SQL
/*
 * Views.  live_blocks: what is still allocated at the end of each run.
 * step_growth: live bytes at the end of every step, per run and layer, and
 * the change from the step before.  stream_growth: the same per device and
 * stream.  The sums run over the per-step deltas (bytes allocated minus
 * bytes freed in the step), so each view reads the allocations once.
 */
"CREATE VIEW live_blocks AS\n"
"  SELECT a.*, l.name AS layer_name FROM allocations a\n"
"  JOIN layers l ON l.id = a.layer WHERE a.free_ns IS NULL;\n"
"CREATE VIEW step_deltas AS\n"
"  SELECT run_id, layer, device, stream, step, sum(b) AS delta_bytes FROM (\n"
"    SELECT run_id, layer, device, stream, coalesce(alloc_step, 1) AS step,\n"
"      bytes AS b FROM allocations\n"
"    UNION ALL\n"
"    SELECT run_id, layer, device, stream, free_step, -bytes\n"
"      FROM allocations WHERE free_step IS NOT NULL)\n"
"  GROUP BY run_id, layer, device, stream, step;\n"
"CREATE VIEW stream_growth AS\n"
"  WITH grid AS (\n"
"    SELECT k.run_id, k.layer, k.device, k.stream, s.step\n"
"    FROM (SELECT DISTINCT run_id, layer, device, stream FROM step_deltas) k\n"
"    JOIN steps s ON s.run_id = k.run_id),\n"
"  live AS (\n"
"    SELECT g.run_id, g.layer, g.device, g.stream, g.step,\n"
"      sum(coalesce(d.delta_bytes, 0)) OVER (PARTITION BY g.run_id, g.layer,\n"
"        g.device, g.stream ORDER BY g.step) AS live_bytes\n"
"    FROM grid g LEFT JOIN step_deltas d ON d.run_id = g.run_id\n"
"      AND d.layer = g.layer AND d.device IS g.device\n"
"      AND d.stream IS g.stream AND d.step = g.step)\n"

"  SELECT run_id, layer, device, stream, step, live_bytes,\n"
"    live_bytes - lag(live_bytes) OVER (PARTITION BY run_id, layer, device,\n"
"      stream ORDER BY step) AS growth_bytes\n"
"  FROM live;\n"
"CREATE VIEW step_growth AS\n"
"  SELECT run_id, layer, step, sum(live_bytes) AS live_bytes,\n"
"    sum(growth_bytes) AS growth_bytes\n"
"  FROM stream_growth GROUP BY run_id, layer, step;\n"
/*
 * The leak views, with the defaults of vramtrace leaks (a warm-up of one
 * step): run_layers picks the layer a run is judged on; stream_leaks gives
 * the facts per stream the shape model starts from (Theil-Sen growth after
 * the warm-up, the median of the pairwise slopes of stream_growth, the
 * fraction of steps that grew, whether it is the default stream, when it
 * was destroyed); garbage_stream_blocks lists the blocks of the two garbage
 * kinds that are facts, destroyed and stranded, as leak.c classifies them
 * (a growing side stream is the shape model's judgement: leaks --format
 * json); leak_suspects what leak.c reports.  tests/t-leaks.sh checks that
 * they agree with vramtrace leaks.
 */
"CREATE VIEW run_layers AS\n"
"  SELECT r.id AS run_id, CASE\n"
"    WHEN EXISTS (SELECT 1 FROM allocations WHERE run_id = r.id\n"
"      AND layer = 2) THEN 2\n"
"    WHEN EXISTS (SELECT 1 FROM allocations WHERE run_id = r.id\n"
"      AND layer = 1) THEN 1\n"
"    ELSE 0 END AS layer,\n"
"    (SELECT max(step) FROM steps WHERE run_id = r.id) AS last_step\n"
"  FROM runs r;\n"
"CREATE VIEW stream_leaks AS\n"
"  WITH pairs AS (\n"
"    SELECT a.run_id, a.layer, a.device, a.stream,\n"
"      (b.live_bytes - a.live_bytes) * 1.0 / (b.step - a.step) AS slope\n"
"    FROM stream_growth a JOIN stream_growth b ON b.run_id = a.run_id\n"
"      AND b.layer = a.layer AND b.device IS a.device\n"
"      AND b.stream IS a.stream AND b.step > a.step),\n"
"  ranked AS (\n"
"    SELECT *, row_number() OVER (PARTITION BY run_id, layer, device,\n"
"        stream ORDER BY slope) AS i,\n"
"      count(*) OVER (PARTITION BY run_id, layer, device, stream) AS n\n"
"    FROM pairs),\n"
"  slopes AS (\n"
"    SELECT run_id, layer, device, stream, avg(slope) AS growth\n"
"    FROM ranked WHERE i IN ((n + 1) / 2, n / 2 + 1)\n"
"    GROUP BY run_id, layer, device, stream),\n"
"  per AS (\n"
"    SELECT run_id, layer, device, stream, count(*) AS steps,\n"
"      avg(CASE WHEN step > 1 THEN growth_bytes > 0 END) AS grew_fraction,\n"
"      max(CASE WHEN step = (SELECT max(step) FROM steps s\n"
"        WHERE s.run_id = g.run_id) THEN live_bytes END) AS live_bytes\n"
"    FROM stream_growth g GROUP BY run_id, layer, device, stream),\n"
"  alloc AS (\n"
"    SELECT run_id, layer, device, stream, sum(bytes) AS alloc_bytes,\n"
"      max(coalesce(alloc_step, 1)) AS last_alloc_step,\n"
"      EXISTS (SELECT 1 FROM streams s WHERE s.run_id = a.run_id\n"
"        AND s.stream = a.stream AND (s.device IS a.device\n"
"          OR s.device IS NULL) AND s.flags = 3)\n"
"      OR (a.stream IN (0, 2) AND (SELECT source FROM runs\n"
"        WHERE id = a.run_id) = 'import') AS known_default\n"
"    FROM allocations a GROUP BY run_id, layer, device, stream),\n"
"  dflt AS (\n"
"    SELECT *, known_default OR (NOT max(known_default) OVER dev\n"
"      AND alloc_bytes = max(alloc_bytes) OVER dev) AS is_default\n"
"    FROM alloc WINDOW dev AS (PARTITION BY run_id, layer, device))\n"
"  SELECT d.run_id, d.layer, d.device, d.stream, p.steps,\n"
"    p.live_bytes, coalesce(sl.growth, 0) AS growth_bytes_per_step,\n"
"    coalesce(p.grew_fraction, 0) AS grew_fraction, d.is_default,\n"
"    d.alloc_bytes, d.last_alloc_step,\n"
"    (SELECT destroyed_ns FROM streams s WHERE s.run_id = d.run_id\n"
"      AND s.stream = d.stream AND (s.device IS d.device\n"
"        OR s.device IS NULL) ORDER BY s.id DESC LIMIT 1) AS destroyed_ns\n"
"  FROM dflt d LEFT JOIN per p ON p.run_id = d.run_id\n"
"    AND p.layer = d.layer AND p.device IS d.device\n"
"    AND p.stream IS d.stream\n"
"  LEFT JOIN slopes sl ON sl.run_id = d.run_id AND sl.layer = d.layer\n"
"    AND sl.device IS d.device AND sl.stream IS d.stream;\n"
GARBAGE_STREAM_BLOCKS_SQL
"CREATE VIEW leak_suspects AS\n"
"  WITH per AS (\n"
"    SELECT a.run_id, a.layer, a.site_id, a.device, a.stream,\n"
"      sum(CASE WHEN a.alloc_step > 1 AND a.alloc_step <= rl.last_step\n"
"        AND (a.free_step IS NULL OR a.free_step > rl.last_step)\n"
"        THEN a.bytes ELSE 0 END) AS bytes,\n"
"      sum(CASE WHEN a.alloc_step > 1 AND a.alloc_step <= rl.last_step\n"
"        AND (a.free_step IS NULL OR a.free_step > rl.last_step)\n"
"        THEN 1 ELSE 0 END) AS blocks,\n"
"      sum(CASE WHEN coalesce(a.alloc_step, 1) <= rl.last_step\n"
"        AND (a.free_step IS NULL OR a.free_step > rl.last_step)\n"
"        THEN a.bytes ELSE 0 END) AS live_last,\n"
"      sum(CASE WHEN coalesce(a.alloc_step, 1) <= 1\n"
"        AND (a.free_step IS NULL OR a.free_step > 1)\n"
"        THEN a.bytes ELSE 0 END) AS live_warmup\n"
"    FROM allocations a JOIN run_layers rl ON rl.run_id = a.run_id\n"
"      AND rl.layer = a.layer\n"
"    GROUP BY a.run_id, a.layer, a.site_id, a.device, a.stream)\n"
"  SELECT p.run_id, p.layer, p.site_id, s.label AS site, p.device,\n"
"    p.stream, p.bytes, p.blocks\n"
"  FROM per p LEFT JOIN sites s ON s.id = p.site_id\n"
"  WHERE p.bytes > 0 AND p.live_last > p.live_warmup\n"
"  ORDER BY p.bytes DESC;\n"
ALLOCATIONS_PARTIAL_SQL;

const char *store_schema_index_sql =
"CREATE INDEX IF NOT EXISTS allocations_run_step"
"  ON allocations(run_id, alloc_step, free_step);\n"
ALLOCATIONS_PARTIAL_SQL
"CREATE INDEX IF NOT EXISTS memcpys_run ON memcpys(run_id, start_ns);\n"
"CREATE INDEX IF NOT EXISTS offload_run ON offload_events(run_id, step);\n"
"CREATE INDEX IF NOT EXISTS blocks_snapshot ON blocks(snapshot_id, segment_id);\n"
"CREATE INDEX IF NOT EXISTS segments_snapshot ON segments(snapshot_id);\n"
"CREATE INDEX IF NOT EXISTS streams_run ON streams(run_id, device, stream);\n"
"CREATE INDEX IF NOT EXISTS allocation_groups_run"	/* built here, not */
"  ON allocation_groups(run_id);\n"		/* row by row */
"CREATE INDEX IF NOT EXISTS allocation_groups_alloc"	/* what the leak */
"  ON allocation_groups(run_id, alloc_step);\n"	/* analysis reads */
"CREATE INDEX IF NOT EXISTS allocation_groups_free"	/* beside */
"  ON allocation_groups(run_id, free_step);\n"	/* allocation_steps */
"PRAGMA analysis_limit = 1000;\n"
"ANALYZE;\n";

/*
 * Why SQLite cannot read a database, for the extended codes that are
 * about how it was left rather than what it holds: a hot journal, which a
 * reader that never writes cannot roll back, or a WAL database whose -shm
 * it cannot make.  NULL for any other code.
 */
const char *
store_schema_read_error(int code)
{
	if (code == SQLITE_READONLY_ROLLBACK)
		return ("a writer stopped in the middle of a transaction and "
		    "left its -journal, which vramtrace never rolls back for "
		    "a reader: open it once with sqlite3 to do so");
	if (code == SQLITE_READONLY_CANTINIT ||
	    code == SQLITE_READONLY_CANTLOCK || code == SQLITE_READONLY_DIRECTORY)
		return ("in WAL mode, and the -shm file that reading it needs "
		    "cannot be made in its directory");
	return (NULL);
}

/*
 * Why database `schema` of db is a vramtrace database made to hurt, or
 * NULL (the caller frees it): one of the schema's tables (the names
 * store_schema_sql creates) held as something else, a view or a virtual
 * table, or with a generated column, which the commands would compute at
 * every read (a view can be recursive and never end, a column can build
 * hundreds of MiB a row).  Triggers, which fire on writes only, are left
 * alone: the tests make a database refuse rows with them.
 */
static char *
store_schema_forged(struct sqlite3 *db, const char *schema)
{
	static const char	 create[] = "CREATE TABLE ", maybe[] =
	    "IF NOT EXISTS ";
	const char		*p = store_schema_sql;
	sqlite3_stmt		*st;
	char			*sql, *why = NULL;
	size_t			 len;
	int			 rc;

	xasprintf(&sql, "SELECT 1 FROM \"%s\".sqlite_master WHERE name = ?1"
	    " COLLATE NOCASE AND (type <> 'table' OR sql NOT LIKE"
	    " 'CREATE TABLE%%' OR EXISTS (SELECT 1 FROM pragma_table_xinfo(?1,"
	    " '%s') WHERE hidden <> 0))", schema, schema);
	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	free(sql);
	if (rc != SQLITE_OK)
		return (NULL);
	while (why == NULL && (p = strstr(p, create)) != NULL) {
		p += sizeof create - 1;
		if (strncmp(p, maybe, sizeof maybe - 1) == 0)
			p += sizeof maybe - 1;
		len = strcspn(p, "( \n");
		sqlite3_bind_text(st, 1, p, (int)len, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW)
			xasprintf(&why, "%.*s is not a plain table", (int)len,
			    p);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return (why);
}

/*
 * Check that database `schema` of db ("main", or the name another file was
 * attached as) is a vramtrace database of a version this vramtrace reads:
 * 0 with *version set, or -1 with *why (no path in it; the caller frees it)
 * when it is not an SQLite file, is locked, has no meta table or schema
 * version, is of a newer version, or holds one of its tables as something
 * else (store_schema_forged).  The one check of the store, the query layer
 * and merge.
 */
int
store_schema_check(struct sqlite3 *db, const char *schema, int *version,
    char **why)
{
	sqlite3_stmt	*st;
	char		*sql, *forged;
	int		 rc, step = SQLITE_DONE;

	*why = NULL;
	*version = -1;
	xasprintf(&sql, "SELECT value FROM \"%s\".meta WHERE key ="
	    " 'schema_version'", schema);
	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	free(sql);
	if (rc == SQLITE_OK) {
		if ((step = sqlite3_step(st)) == SQLITE_ROW)
			*version = sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
	}
	if ((rc != SQLITE_OK || (step != SQLITE_ROW && step != SQLITE_DONE)) &&
	    store_schema_read_error(sqlite3_extended_errcode(db)) != NULL)
		*why = xstrdup(store_schema_read_error(
		    sqlite3_extended_errcode(db)));
	else if (rc == SQLITE_NOTADB)
		*why = xstrdup("not a vramtrace database (not an SQLite file)");
	else if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED ||
	    step == SQLITE_BUSY || step == SQLITE_LOCKED)
		*why = xstrdup("database is locked by another program");
	else if (rc != SQLITE_OK)
		*why = xstrdup("not a vramtrace database (no meta table)");
	else if (*version < 1)
		*why = xstrdup("not a vramtrace database (no schema version)");
	else if (*version > STORE_SCHEMA_VERSION)
		xasprintf(why, "schema version %d is newer than this vramtrace"
		    " understands (%d)", *version, STORE_SCHEMA_VERSION);
	else if ((forged = store_schema_forged(db, schema)) != NULL) {
		xasprintf(why, "not a vramtrace database (%s)", forged);
		free(forged);
	}
	return (*why != NULL ? -1 : 0);
}
