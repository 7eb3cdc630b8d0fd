/*
 * store-regroup.c: a run's allocation_groups rebuilt from its rows, when
 * its steps changed after rows were written (a recording whose markers
 * came late, a bulk load that committed before its steps came).
 *
 * The run's rows are read once, in the order of their ids from the run's
 * first (a run's rows follow each other: a sequential read, no index),
 * and summed into the run's groups in bounded memory
 * (store-groups-table.c).
 */
#include "config.h"

#include "store-int.h"

/* Read the run's rows into its groups.  0, or -1 with *cause. */
static int
regroup_read(struct store *s, char **cause)
{
	struct store_group	 g;
	sqlite3_stmt		*st;
	int			 rc;

	if (sqlite3_prepare_v2(s->db, "SELECT process_id, layer, device,"
	    " stream, alloc_step, free_step, site_id, bytes FROM allocations"
	    " NOT INDEXED WHERE id >= ?2 AND run_id = ?1", -1, &st, NULL) !=
	    SQLITE_OK)
		return (store_sql_error(s, cause, "cannot group:"));
	sqlite3_bind_int64(st, 1, s->run_id);
	sqlite3_bind_int64(st, 2, s->run_first_alloc);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		g.process_id = sqlite3_column_int64(st, 0);
		g.layer = sqlite3_column_int(st, 1);
		g.device = sqlite3_column_int(st, 2);
		g.stream = sqlite3_column_type(st, 3) == SQLITE_NULL ?
		    EVENT_NONE : (uint64_t)sqlite3_column_int64(st, 3);
		g.alloc_step = sqlite3_column_int64(st, 4);
		g.free_step = sqlite3_column_int64(st, 5);
		g.site_id = sqlite3_column_int64(st, 6);
		g.bytes = sqlite3_column_int64(st, 7);
		g.blocks = 1;
		if (store_groups_table_add(s, &g, cause) != 0)
			break;
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		return (0);
	if (rc != SQLITE_ROW)
		store_sql_error(s, cause, "cannot group:");
	return (-1);
}

/*
 * Rebuild the current run's groups from its rows and insert them into
 * allocation_groups, in bounded memory: for a run whose groups were not
 * kept while it was written (!groups.valid).  0, or -1 with *cause.
 */
int
store_regroup(struct store *s, char **cause)
{
	int	rc = 0;

	store_groups_reset(&s->groups);
	if (s->run_first_alloc != 0)	/* else no rows */
		rc = regroup_read(s, cause);
	if (rc == 0)
		rc = store_groups_write(s, cause);
	store_groups_reset(&s->groups);
	return (rc);
}
