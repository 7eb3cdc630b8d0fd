/*
 * query-int.h: the query layer's insides, for query*.c only.
 */
#ifndef QUERY_INT_H
#define QUERY_INT_H

#include <sqlite3.h>

#include "vramtrace.h"

struct query {
	sqlite3	*db;
	char	*path;
	int	 schema_version;
};

sqlite3_stmt *query_prepare(struct query *, const char *, char **);
int64_t	 query_int(struct query *, const char *);

#endif
