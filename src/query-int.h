/*
 * query-int.h: the query layer's insides, for query*.c only, listed under a
 * line per file: the handle, the SQL and column helpers of query.c, and
 * the files under query-leaks.c.
 */
#ifndef QUERY_INT_H
#define QUERY_INT_H

#include <sqlite3.h>

#include "vramtrace.h"
#include "query.h"

/* query.c */
struct query {
	sqlite3	*db;
	char	*path;
	int	 schema_version;
};
sqlite3_stmt *query_prepare(struct query *, const char *, char **);
int64_t	 query_int(struct query *, const char *);
int64_t	 query_int_arg(struct query *, const char *, int64_t);
int	 query_fail(struct query *, char **);
int	 query_site_label(struct query *, int64_t, char **, char **);
uint64_t query_column_u64(sqlite3_stmt *, int);
int64_t	 query_column_int(sqlite3_stmt *, int);
char	*query_column_text(sqlite3_stmt *, int);
void	 query_column_copy(sqlite3_stmt *, int, char *, size_t);
int	 query_has_groups(struct query *, int64_t);
int	 query_run_layer(struct query *, int64_t);

/* query-scan.c: one pass over a run, or one process of it. */
int	 query_scan(struct query *, const struct leak_options *,
	     struct leak_report **, char **);

/* query-ranks.c: each ranked process of a run, alone. */
int	 query_ranks(struct query *, const struct leak_options *,
	     struct leak_report *, char **);

/* query-usage.c: a run seen through usage samples only. */
int	 query_usage(struct query *, struct leak_report *, char **);

#endif
