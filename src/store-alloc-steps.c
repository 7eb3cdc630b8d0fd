/*
 * store-alloc-steps.c: the allocation_steps summary of a run, written
 * when it finishes (and again when a merge adds to it).
 *
 * A row per (process, layer, device, stream, step) says what the step
 * allocated (by alloc_step) and what it freed (by free_step); the live
 * bytes at the end of step k are the running sum of alloc_bytes minus
 * freed_bytes up to k.  A step of NULL holds the allocations with no step
 * (made before tracing began); an allocation never freed adds to no
 * freed column.  It is computed from the run's allocation_groups, which
 * store-groups.c has just written, so both tables always say the same;
 * the leak analysis (query-scan.c) then reads O(steps x streams) rows for
 * the series and only the groups live at a step end it asks about.
 */
#include "config.h"

#include "store-int.h"

#include <stdlib.h>

/*
 * (Re)write the allocation_steps rows of the runs the SQL expression runs
 * names (a parenthesised list or subquery of run ids, e.g. "(3)") from
 * their allocation_groups, inside the current transaction.  0, or -1 with
 * *cause.
 */
int
store_alloc_steps_write(struct store *s, const char *runs, char **cause)
{
	char	*sql;
	int	 rc;

	xasprintf(&sql, "DELETE FROM allocation_steps WHERE run_id IN %s;"
	    " INSERT INTO allocation_steps SELECT run_id, process_id, layer,"
	    " device, stream, step, sum(ab), sum(an), sum(fb), sum(fn) FROM"
	    " (SELECT run_id, process_id, layer, device, stream, alloc_step"
	    " AS step, bytes AS ab, blocks AS an, 0 AS fb, 0 AS fn FROM"
	    " allocation_groups WHERE run_id IN %s UNION ALL SELECT run_id,"
	    " process_id, layer, device, stream, free_step, 0, 0, bytes,"
	    " blocks FROM allocation_groups WHERE run_id IN %s AND free_step"
	    " IS NOT NULL) GROUP BY run_id, process_id, layer, device, stream,"
	    " step;", runs, runs, runs);
	rc = store_sql_exec(s, sql, "cannot sum the steps", cause);
	free(sql);
	return (rc);
}
