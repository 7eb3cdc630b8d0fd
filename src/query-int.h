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
int	 query_has_site_names(struct query *);
const char *query_site_shown(struct query *);
int	 query_has_groups(struct query *, int64_t);
int	 query_has_alloc_steps(struct query *, int64_t);
int	 query_run_layer(struct query *, int64_t);
int	 query_peak_counts(int, int32_t);
/*
 * The rows of allocations or allocation_steps that count in the run's peak
 * of their layer, as SQL: those on a device, and every row of pinned host
 * memory (layer 3, EVENT_LAYER_HOST: device -1).  query_peak_counts says
 * the same in C.
 */
#define QUERY_PEAK_ROWS	"(layer = 3 OR coalesce(device, -1) >= 0)"

/* query-origin.c: the frames that name a site (site-origin.c). */
int	 query_site_origin(struct query *, int64_t, char **, char **, char **,
	     char **);
int	 query_site_name(struct query *, int64_t, char **, char **, char **);

/*
 * query-events.c: every allocation of a run as two events (+bytes at its
 * alloc, -bytes at its free), walked in time order an instant at a time.
 */
#define QUERY_EVENTS_MAX_SERIES	65535
/* Events sorted at once at most, by default: 128 MiB. */
#define QUERY_EVENTS_WINDOW	(8u << 20)
struct query_series {
	int64_t		 process_id;	/* 0: none */
	int32_t		 device;	/* -1: unknown or host */
	int		 layer;
	uint64_t	 stream;	/* UNKNOWN_U64 */
};
struct query_event {
	uint64_t	 t;		/* ns after the run's first instant */
	uint64_t	 w;		/* series, sign and bytes */
};
struct query_events {
	int64_t		 run_id;
	int64_t		 first_id;	/* the run's allocation ids */
	int64_t		 last_id;
	size_t		 window;	/* events sorted at once at most;
					   0: QUERY_EVENTS_WINDOW */
	/* A new series, numbered from 0. */
	void		 (*series)(void *, size_t, const struct query_series *);
	void		 (*ready)(void *);	/* every series and the
						   extent are known */
	void		 (*instant)(void *, uint64_t,
			     const struct query_event *, size_t);
	void		*arg;
	uint64_t	 first;		/* the extent: UNKNOWN_U64 or the */
	uint64_t	 last;		/* caller's, widened by the walk */
};
int	 query_events_walk(struct query *, struct query_events *, char **);
size_t	 query_event_series(const struct query_event *);
int64_t	 query_event_bytes(const struct query_event *);

/* query-scan.c: one pass over a run, or one process of it. */
int	 query_scan(struct query *, const struct leak_options *,
	     struct leak_report **, char **);

/* query-ranks.c: each ranked process of a run, alone. */
int	 query_ranks(struct query *, const struct leak_options *,
	     struct leak_report *, char **);

/* query-usage.c: a run seen through usage samples only. */
int	 query_usage(struct query *, struct leak_report *, char **);

#endif
