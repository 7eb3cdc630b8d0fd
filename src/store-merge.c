/*
 * store-merge.c: copy every run of another vramtrace database into the
 * store, with ids remapped, so that the files written on the nodes of one
 * multi-node job become one database.
 *
 * The other file is ATTACHed as a reader opens it (util_sqlite_read_mode:
 * never created, never rolled back, nothing left beside it; no statement
 * here writes to it) and each table is copied with one INSERT ...
 * SELECT.  Tables with an integer id get the output's largest id as an
 * offset (computed for all tables before anything is copied, so that a
 * reference such as allocations.process_id can add the offset of the table
 * it names).  Sites are added again through store_site_add(), which
 * deduplicates them by content, and keeps their kind (python, native);
 * the temp table site_map turns the other file's site ids into ours.
 *
 * Runs go through run_map.  With joining on, a run of the other file is
 * the same job seen from another machine, and becomes a run already in the
 * output, when both have the same source and their time spans overlap,
 * and either both name the same job (processes.job: the rendezvous id, the
 * master's address and port, or Slurm's job id, the same on every node),
 * or one of them names none and they have the same command and no rank in
 * common (the command of a run without one is that of its processes; two
 * runs naming different jobs never join).  Its processes, streams and
 * allocations join that run, its steps are taken where the run has none
 * of that number yet.  The span of a run is that of its processes when
 * they have times, else the run's own start and end.
 *
 * The tables and their columns come from the output's schema
 * (sqlite_master, pragma_table_info), so a table added to the schema, or a
 * column added to a table, is copied without a change here; a table the
 * other file was made without (the offload check's) has nothing to copy,
 * and a column the other file is too old to have is copied as NULL.
 */
#include "config.h"

#include "store-int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/*
 * Tables copied by hand (runs, sites), rebuilt (allocation_steps: summed
 * again from the merged allocation_groups of each run the file added to,
 * so that a run joined with one written before the table existed is
 * summed whole) or not at all (meta, layers, and
 * allocation_top and allocation_heads: the largest rows of two files are
 * not the largest of a joined run, and a merged run without them is read
 * the slow way); every
 * other table of the schema is copied with the generic rule, in the order
 * the schema creates them, which respects their references.
 */
static const char *const merge_special =
    "'meta', 'layers', 'runs', 'frames', 'sites', 'site_frames',"
    " 'allocation_top', 'allocation_heads', 'allocation_steps'";

/* Tables whose id other tables refer to: their offsets. */
enum merge_off {
	OFF_RUNS, OFF_PROCESSES, OFF_SNAPSHOTS, OFF_SEGMENTS, OFF_MAX
};
static const char *const off_tables[OFF_MAX] = {
	"runs", "processes", "snapshots", "segments"
};

/*
 * The runs of a database (schema "main" or "src") as a subquery: id,
 * source, command, job (job_column: "p.job", or "NULL" for a file without
 * it), span t0 and t1.  The caller frees it.
 */
static char *
merge_spans(const char *db, const char *job_column)
{
	char	*sql;

	xasprintf(&sql, "SELECT r.id, r.source, coalesce(r.command,"
	    " min(p.command)) AS command, min(%s) AS job,"
	    " coalesce(min(p.start_ns), r.start_ns) AS t0,"
	    " max(coalesce(max(p.end_ns), r.end_ns), coalesce(min(p.start_ns),"
	    " r.start_ns)) AS t1 FROM %s.runs r LEFT JOIN %s.processes p"
	    " ON p.run_id = r.id GROUP BY r.id", job_column, db, db);
	return (sql);
}

static int
merge_exec(struct store *s, char **cause, const char *fmt, ...)
    printflike(3, 4);

/* Format and run SQL with no results.  0, or -1 with *cause. */
static int
merge_exec(struct store *s, char **cause, const char *fmt, ...)
{
	va_list	 ap;
	char	*sql;
	int	 rc;

	va_start(ap, fmt);
	xvasprintf(&sql, fmt, ap);
	va_end(ap);
	rc = store_sql_exec(s, sql, "cannot merge", cause);
	free(sql);
	return (rc);
}

/* The offset of table t, its largest id in the output (0 when empty). */
static int64_t
merge_max_id(struct store *s, const char *t)
{
	sqlite3_stmt	*st;
	char		*sql;
	int64_t		 v = 0;

	xasprintf(&sql, "SELECT coalesce(max(id), 0) FROM main.%s", t);
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	free(sql);
	return (v);
}

/* The index in off_tables of table t, or -1. */
static int
merge_off_index(const char *t)
{
	int	i;

	for (i = 0; i < OFF_MAX; i++) {
		if (strcmp(off_tables[i], t) == 0)
			return (i);
	}
	return (-1);
}

/*
 * The SELECT expression for column c of table t: ids get their table's
 * offset (its largest id now, or the one taken before anything was copied
 * for the tables others refer to), run and site references (site_id and
 * every *_site_id) go through the maps, a process
 * without a host gets its run's host (so the hosts of a job stay apart).
 * The caller frees it.
 */
static char *
merge_column(struct store *s, const char *t, const char *c,
    const int64_t *off)
{
	static const struct {
		const char	*column;
		int		 table;
	} refs[] = {
		{ "process_id", OFF_PROCESSES },
		{ "snapshot_id", OFF_SNAPSHOTS },
		{ "segment_id", OFF_SEGMENTS },
	};
	char	*e;
	size_t	 i, n;
	int	 ti;

	if (strcmp(t, "runs") == 0 && strcmp(c, "id") == 0)
		return (xstrdup("(SELECT new FROM temp.run_map WHERE"
		    " old = id)"));
	if (strcmp(c, "id") == 0) {
		ti = merge_off_index(t);
		xasprintf(&e, "id + %lld", (long long)(ti >= 0 ? off[ti] :
		    merge_max_id(s, t)));
		return (e);
	}
	for (i = 0; i < sizeof refs / sizeof refs[0]; i++) {
		if (strcmp(c, refs[i].column) == 0) {
			xasprintf(&e, "%s + %lld", c,
			    (long long)off[refs[i].table]);
			return (e);
		}
	}
	if (strcmp(c, "run_id") == 0)
		return (xstrdup("(SELECT new FROM temp.run_map WHERE"
		    " old = run_id)"));
	n = strlen(c);
	if (strcmp(c, "site_id") == 0 || (n > 8 &&
	    strcmp(c + n - 8, "_site_id") == 0)) {
		xasprintf(&e, "(SELECT new FROM temp.site_map WHERE"
		    " old = %s)", c);
		return (e);
	}
	if (strcmp(t, "processes") == 0 && strcmp(c, "host") == 0)
		return (xstrdup("coalesce(host, (SELECT host FROM src.runs"
		    " WHERE src.runs.id = run_id))"));
	return (xstrdup(c));
}

/*
 * Copy the rows of table t from src that match where (SQL, "" for all)
 * with every column remapped (NULL for a column src lacks); steps of a
 * joined run that already has them are kept as they are.  0, or -1 with
 * *cause.
 */
static int
merge_table(struct store *s, const char *t, const char *where,
    const int64_t *off, char **cause)
{
	sqlite3_stmt	*st;
	char		*cols = xstrdup(""), *exprs = xstrdup(""), *e, *next;
	const char	*c;
	int		 rc = 0, have;

	if (sqlite3_prepare_v2(s->db, "SELECT name FROM"
	    " pragma_table_info(?1, 'main') ORDER BY cid", -1, &st, NULL) !=
	    SQLITE_OK) {
		free(cols);
		free(exprs);
		return (store_sql_error(s, cause, "cannot merge:"));
	}
	sqlite3_bind_text(st, 1, t, -1, SQLITE_STATIC);
	while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
		c = (const char *)sqlite3_column_text(st, 0);
		if ((have = store_sql_has_column(s, "src", t, c, cause)) < 0)
			rc = -1;
		e = have > 0 ? merge_column(s, t, c, off) : xstrdup("NULL");
		xasprintf(&next, "%s%s%s", cols, *cols ? ", " : "", c);
		free(cols);
		cols = next;
		xasprintf(&next, "%s%s%s", exprs, *exprs ? ", " : "", e);
		free(exprs);
		exprs = next;
		free(e);
	}
	sqlite3_finalize(st);
	if (rc == 0)
		rc = merge_exec(s, cause, "INSERT %sINTO main.%s(%s) SELECT %s"
		    " FROM src.%s %s", strcmp(t, "steps") == 0 ? "OR IGNORE " :
		    "", t, cols, exprs, t, where);
	free(cols);
	free(exprs);
	return (rc);
}

/*
 * Map the other file's runs to ours: join those that are the same job
 * (when join is set; the rule is at the top of this file), give the others
 * fresh ids, then copy the new ones and widen the joined ones.  run_map's
 * job is the job both runs name, NULL when they joined by their command.
 * 0, or -1 with *cause.
 */
static int
merge_runs(struct store *s, const int64_t *off, int join, char **cause)
{
	char	*main_spans, *src_spans;
	int	 rc;

	if ((rc = store_sql_has_column(s, "src", "processes", "job",
	    cause)) < 0)
		return (-1);
	main_spans = merge_spans("main", "p.job");
	src_spans = merge_spans("src", rc ? "p.job" : "NULL");
	rc = merge_exec(s, cause, "CREATE TEMP TABLE run_map(old INTEGER"
	    " PRIMARY KEY, new INTEGER NOT NULL, joined INTEGER NOT NULL,"
	    " job TEXT, command TEXT);"
	    "CREATE TEMP TABLE main_spans AS %s;"
	    "INSERT INTO temp.run_map SELECT r.id, coalesce(m.id, r.id + %lld),"
	    " m.id IS NOT NULL, CASE WHEN m.job = r.job THEN m.job END,"
	    " r.command FROM (%s) r"
	    " LEFT JOIN temp.main_spans m ON m.id = (SELECT x.id FROM"
	    " temp.main_spans x WHERE %d AND x.source = r.source AND"
	    " x.t0 <= r.t1 AND r.t0 <= x.t1 AND CASE WHEN x.job IS NOT NULL"
	    " AND r.job IS NOT NULL THEN x.job = r.job ELSE x.command IS"
	    " r.command AND NOT EXISTS (SELECT 1 FROM main.processes a"
	    " JOIN src.processes b ON b.rank = a.rank WHERE a.run_id = x.id"
	    " AND b.run_id = r.id) END ORDER BY x.id LIMIT 1);"
	    "DROP TABLE temp.main_spans;", main_spans,
	    (long long)off[OFF_RUNS], src_spans, join);
	free(main_spans);
	free(src_spans);
	if (rc != 0)
		return (-1);
	if (merge_table(s, "runs", "WHERE id IN (SELECT old FROM"
	    " temp.run_map WHERE NOT joined)", off, cause) != 0)
		return (-1);
	/* A joined run spans both; a failure anywhere is its status. */
	return (merge_exec(s, cause, "UPDATE main.runs AS o SET"
	    " start_ns = coalesce(min(o.start_ns, r.start_ns), r.start_ns),"
	    " end_ns = coalesce(max(o.end_ns, r.end_ns), o.end_ns),"
	    " exit_status = coalesce(max(o.exit_status, r.exit_status),"
	    " o.exit_status, r.exit_status),"
	    " complete = min(o.complete, r.complete)"
	    " FROM src.runs r JOIN temp.run_map m ON m.old = r.id"
	    " WHERE m.joined AND o.id = m.new"));
}

/*
 * Add the site of path whose frames (name, filename, line; depth order)
 * the statement returns, with its kind (NULL: none), and map old to it.
 * 0, or -1 with *cause.
 */
static int
merge_site(struct store *s, const char *path, sqlite3_stmt *fr,
    sqlite3_stmt *map, int64_t old, const char *kind, char **cause)
{
	struct store_frame	*f = NULL;
	size_t			 n = 0, i;
	int64_t			 id;
	int			 rc;

	sqlite3_bind_int64(fr, 1, old);
	while (sqlite3_step(fr) == SQLITE_ROW) {
		f = xreallocarray(f, n + 1, sizeof *f);
		f[n].name = xstrdup((const char *)sqlite3_column_text(fr, 0));
		f[n].filename = xstrdup((const char *)sqlite3_column_text(fr,
		    1));
		f[n++].line = sqlite3_column_int64(fr, 2);
	}
	sqlite3_reset(fr);
	rc = store_site_add(s, f, n, &id, cause);
	for (i = 0; i < n; i++) {
		free((char *)f[i].name);
		free((char *)f[i].filename);
	}
	free(f);
	if (rc != 0)
		return (-1);
	if (id == 0) {
		if (cause != NULL)
			xasprintf(cause, "%s: site %lld has no frames", path,
			    (long long)old);
		return (-1);
	}
	if (kind != NULL && store_site_kind(s, id, kind, cause) != 0)
		return (-1);
	sqlite3_bind_int64(map, 1, old);
	sqlite3_bind_int64(map, 2, id);
	return (store_sql_step(s, map, "temp.site_map", cause));
}

/*
 * Copy the sites through store_site_add(), which deduplicates by content
 * (a site's hash is over frame ids, which differ between files), with
 * their kinds, and fill temp.site_map.  0, or -1 with *cause.
 */
static int
merge_sites(struct store *s, const char *path, char **cause)
{
	sqlite3_stmt	*sites = NULL, *fr = NULL, *map = NULL;
	int		 rc = -1, kind;

	if ((kind = store_sql_has_column(s, "src", "sites", "kind",
	    cause)) < 0 || merge_exec(s, cause, "CREATE TEMP TABLE"
	    " site_map(old INTEGER PRIMARY KEY, new INTEGER NOT NULL)") != 0)
		return (-1);
	if (sqlite3_prepare_v2(s->db, kind ? "SELECT id, kind FROM src.sites" :
	    "SELECT id, NULL FROM src.sites", -1, &sites,
	    NULL) != SQLITE_OK || sqlite3_prepare_v2(s->db, "SELECT f.name,"
	    " f.filename, f.line FROM src.site_frames sf JOIN src.frames f"
	    " ON f.id = sf.frame_id WHERE sf.site_id = ?1 ORDER BY sf.depth",
	    -1, &fr, NULL) != SQLITE_OK || sqlite3_prepare_v2(s->db,
	    "INSERT INTO temp.site_map VALUES (?1, ?2)", -1, &map, NULL) !=
	    SQLITE_OK) {
		store_sql_error(s, cause, "cannot merge the sites:");
		goto out;
	}
	while (sqlite3_step(sites) == SQLITE_ROW) {
		if (merge_site(s, path, fr, map, sqlite3_column_int64(sites,
		    0), (const char *)sqlite3_column_text(sites, 1),
		    cause) != 0)
			goto out;
	}
	rc = 0;
out:
	sqlite3_finalize(sites);
	sqlite3_finalize(fr);
	sqlite3_finalize(map);
	return (rc);
}

/* Copy every table that is not special, in schema order.  0, or -1. */
static int
merge_rest(struct store *s, const int64_t *off, char **cause)
{
	sqlite3_stmt	*st;
	char		*sql, **names = NULL;
	size_t		 n = 0, i;
	int		 rc = 0;

	xasprintf(&sql, "SELECT name FROM main.sqlite_master WHERE type ="
	    " 'table' AND name NOT IN (%s) AND name NOT LIKE 'sqlite_%%'"
	    " AND name IN (SELECT name FROM src.sqlite_master WHERE type ="
	    " 'table') ORDER BY rowid", merge_special);
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
		free(sql);
		return (store_sql_error(s, cause, "cannot merge:"));
	}
	free(sql);
	while (sqlite3_step(st) == SQLITE_ROW) {
		names = xreallocarray(names, n + 1, sizeof *names);
		names[n++] = xstrdup((const char *)sqlite3_column_text(st, 0));
	}
	sqlite3_finalize(st);
	for (i = 0; i < n; i++) {
		if (rc == 0)
			rc = merge_table(s, names[i], "", off, cause);
		free(names[i]);
	}
	free(names);
	return (rc);
}

/* Check that the attached file is a vramtrace database we understand. */
static int
merge_check(struct store *s, const char *path, char **cause)
{
	char	*why = NULL;
	int	 version;

	if (store_schema_check(s->db, "src", &version, &why) == 0 &&
	    version == STORE_SCHEMA_VERSION)
		return (0);
	if (cause != NULL) {
		if (why != NULL)
			xasprintf(cause, "%s: %s", path, why);
		else
			xasprintf(cause, "%s: schema version %d, this vramtrace"
			    " merges version %d", path, version,
			    STORE_SCHEMA_VERSION);
	}
	free(why);
	return (-1);
}

/*
 * Call fn (if not NULL) with arg for each run of the file just merged that
 * joined a run of the output.  Returns how many did.
 */
static int
merge_report(struct store *s, void (*fn)(const struct store_merge_join *,
    void *), void *arg)
{
	struct store_merge_join	 j;
	sqlite3_stmt		*st;
	int			 n = 0;

	if (sqlite3_prepare_v2(s->db, "SELECT old, new, job, command FROM"
	    " temp.run_map WHERE joined ORDER BY old", -1, &st, NULL) !=
	    SQLITE_OK)
		return (0);
	while (sqlite3_step(st) == SQLITE_ROW) {
		j.from = sqlite3_column_int64(st, 0);
		j.into = sqlite3_column_int64(st, 1);
		j.job = (const char *)sqlite3_column_text(st, 2);
		j.command = (const char *)sqlite3_column_text(st, 3);
		if (fn != NULL)
			fn(&j, arg);
		n++;
	}
	sqlite3_finalize(st);
	return (n);
}

/*
 * Copy every run of the vramtrace database at path into the store, with
 * new ids; with join set, a run that is the same job as one already in the
 * store (the rule is at the top of this file) becomes part of it, and
 * joined (if not NULL) is called with arg for each, once the file is
 * committed.  The file is only read.  Commits any open transaction first
 * and leaves none open.  Returns the number of runs of the file that were
 * joined to an existing run (>= 0), or -1 with *cause; nothing of the file
 * is kept on error.
 */
int
store_merge(struct store *s, const char *path, int join,
    void (*joined)(const struct store_merge_join *, void *), void *arg,
    char **cause)
{
	sqlite3_stmt	*st;
	int64_t		 off[OFF_MAX];
	int		 i, rc = -1, n;
	const char	*why;
	char		*uri;

	if (util_check_input(path, cause) != 0 || store_commit(s, cause) != 0)
		return (-1);
	if (sqlite3_prepare_v2(s->db, "ATTACH ?1 AS src", -1, &st, NULL) !=
	    SQLITE_OK)
		return (store_sql_error(s, cause, "cannot merge:"));
	uri = util_sqlite_uri(path, util_sqlite_read_mode(path));
	sqlite3_bind_text(st, 1, uri, -1, free);
	i = sqlite3_step(st);
	sqlite3_finalize(st);
	if (i != SQLITE_DONE) {
		why = store_schema_read_error(sqlite3_extended_errcode(s->db));
		if (cause != NULL)
			xasprintf(cause, "%s: %s%s", path, why != NULL ? why :
			    "cannot open: ", why != NULL ? "" :
			    sqlite3_errmsg(s->db));
		return (-1);
	}
	if (merge_check(s, path, cause) != 0 || store_sql_begin(s, cause) != 0)
		goto out;
	for (i = 0; i < OFF_MAX; i++)
		off[i] = merge_max_id(s, off_tables[i]);
	if (merge_runs(s, off, join, cause) != 0 ||
	    merge_sites(s, path, cause) != 0)
		goto out;
	if (merge_rest(s, off, cause) != 0 || store_alloc_steps_write(s,
	    "(SELECT new FROM temp.run_map)", cause) != 0 ||
	    store_commit(s, cause) != 0)
		goto out;
	/* Temporary tables outlive the transaction. */
	n = merge_report(s, joined, arg);
	if (merge_exec(s, cause, "DROP TABLE temp.run_map;"
	    " DROP TABLE temp.site_map;") == 0)
		rc = n;
out:
	if (s->in_txn) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		s->in_txn = 0;
	}
	sqlite3_exec(s->db, "DETACH src", NULL, NULL, NULL);
	return (rc);
}

/*
 * After the last store_merge(): build the secondary indexes, as a finished
 * run has them.  0, or -1 with *cause.
 */
int
store_merge_finish(struct store *s, char **cause)
{
	return (store_sql_exec(s, store_schema_index_sql,
	    "cannot build the indexes", cause));
}
