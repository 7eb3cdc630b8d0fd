/*
 * query.h: the query layer, the only reader of vramtrace databases,
 * listed under a line per file.  The commands and the TUI ask their
 * questions here and hold no SQL: each question fills a plain struct or
 * calls back once per row, so that callers never see SQLite.  The leak
 * report it fills and judges is in leak.h; query*.c's own helpers are in
 * query-int.h.
 *
 * Unknown values are spelled as unknown.h says.  A run id of 0 asks for the
 * newest run.
 */
#ifndef QUERY_H
#define QUERY_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "leak.h"
#include "unknown.h"

/* query.c: the handle, and the user's own SQL. */
struct query;
#define QUERY_NULL	0
#define QUERY_NUMBER	1
#define QUERY_TEXT	2
typedef void (*query_row_fn)(void *, int, const char **, const int *, int);
struct query	*query_open(const char *, char **);
void	 query_close(struct query *);
int	 query_schema_version(struct query *);
int64_t	 query_latest_run(struct query *);
int	 query_has_import(struct query *, const char *);
int	 query_sql(struct query *, const char *, query_row_fn, void *,
	     char **);

/*
 * query-run.c: what a run is (its row, its devices and the counts asked
 * for), what a database holds, and a fingerprint that changes when rows
 * arrive.
 */
struct query_counts {
	int64_t		 runs;		/* UNKNOWN_INT: not counted */
	int64_t		 incomplete_runs;
	int64_t		 processes;
	int64_t		 devices;
	int64_t		 streams;
	int64_t		 steps;
	int64_t		 allocations;
	int64_t		 memcpys;
	int64_t		 offload_events;
	int64_t		 marks;
	int64_t		 sites;
	int64_t		 snapshots;
	int64_t		 segments;
	int64_t		 blocks;
	int64_t		 trace_entries;
	int64_t		 dropped_records;
};
#define QUERY_COUNT_RUNS		0x0001
#define QUERY_COUNT_INCOMPLETE_RUNS	0x0002
#define QUERY_COUNT_PROCESSES		0x0004
#define QUERY_COUNT_DEVICES		0x0008
#define QUERY_COUNT_STREAMS		0x0010
#define QUERY_COUNT_STEPS		0x0020
#define QUERY_COUNT_ALLOCATIONS		0x0040	/* from here on: large */
#define QUERY_COUNT_MEMCPYS		0x0080	/* tables */
#define QUERY_COUNT_OFFLOAD_EVENTS	0x0100
#define QUERY_COUNT_MARKS		0x0200
#define QUERY_COUNT_SITES		0x0400
#define QUERY_COUNT_SNAPSHOTS		0x0800
#define QUERY_COUNT_SEGMENTS		0x1000
#define QUERY_COUNT_BLOCKS		0x2000
#define QUERY_COUNT_TRACE_ENTRIES	0x4000
#define QUERY_COUNT_DROPPED_RECORDS	0x8000
#define QUERY_COUNT_ALL			0xffff

struct query_device {
	int32_t		 device;
	char		*name;		/* NULL: unknown */
	int64_t		 total_bytes;	/* UNKNOWN_INT */
};

struct query_run {
	int64_t		 id;
	char		*source;	/* the strings: NULL when unknown */
	char		*input;
	char		*command;
	char		*host;
	char		*git_commit;
	char		*allocator;
	char		*step_source;
	uint64_t	 start_ns;	/* UNKNOWN_U64 */
	uint64_t	 end_ns;	/* UNKNOWN_U64: unknown, not finished */
	int		 complete;
	struct query_device *devices;	/* by number */
	size_t		 ndevices;
	struct query_counts counts;	/* those asked for */
};

struct query_poll {
	int64_t		 run_id;
	int64_t		 max_step;
	int64_t		 max_allocation;
	int64_t		 max_offload;
};

int	 query_run_counts(struct query *, int64_t, unsigned int,
	     struct query_counts *, char **);
int	 query_run(struct query *, int64_t, unsigned int, struct query_run *,
	     char **);
void	 query_run_free(struct query_run *);
int	 query_run_list(struct query *, struct query_run **, size_t *,
	     char **);
int	 query_run_poll(struct query *, int64_t, struct query_poll *);
int	 query_run_has_host(struct query *, int64_t);

/* query-leaks.c: the leak report of a run (leak.h). */
int	 query_leaks(struct query *, const struct leak_options *,
	     struct leak_report **, char **);
int	 query_leaks_host(struct query *, const struct leak_options *,
	     const struct leak_report *, struct leak_report **, char **);

/* query-blocks.c: blocks (allocations) for browsing, paged. */
enum block_sort {
	SORT_SIZE = 0,
	SORT_AGE,
	SORT_STEP,
	SORT_STREAM,
	SORT_SITE
};

struct block_filter {
	int64_t		 run_id;	/* 0: the newest */
	int		 live_only;	/* only what is live at the end */
	int		 layer;		/* -1: all */
	int		 has_stream;
	uint64_t	 stream;
	int64_t		 step_min;	/* 0: no bound */
	int64_t		 step_max;	/* 0: no bound */
	const char	*search;	/* substring of the site label; NULL */
	enum block_sort sort;
	int		 descending;
};

struct block_row {
	int64_t		 id;
	int32_t		 device;
	uint64_t	 stream;
	int		 layer;
	uint64_t	 address;
	int64_t		 bytes;
	uint64_t	 alloc_ns;	/* UNKNOWN_U64 */
	uint64_t	 free_ns;	/* UNKNOWN_U64: live, or unknown */
	int64_t		 alloc_step;	/* UNKNOWN_INT */
	int64_t		 site_id;	/* UNKNOWN_INT: no stack */
	char		 site[160];	/* its name, else label; "": none */
};

/* One frame of a site's stack, innermost first. */
struct frame_row {
	char		 name[128];
	char		 filename[256];
	int64_t		 line;
};
int	 query_blocks(struct query *, const struct block_filter *, int64_t,
	     struct block_row *, int, char **);
int64_t	 query_blocks_quick(struct query *, const struct block_filter *);
int	 query_blocks_frames(struct query *, int64_t, struct frame_row *, int,
	     char **);

/*
 * query-diff.c: the blocks live at one point and not at another.  A point
 * is a step end of a run, or the end of a run (a snapshot's state).
 */
struct diff_point {
	int64_t		 run_id;	/* 0: the newest */
	int64_t		 step;		/* 0: the end of the run */
};

/* The blocks of one site on one stream that differ. */
struct diff_group {
	int64_t		 site_id;	/* of B for new blocks, A for gone;
					   UNKNOWN_INT: no stack */
	char		*site;		/* label; NULL: no stack */
	char		*name;		/* what people know it by, the */
					/* key (site_origin_name) */
	int32_t		 device;
	uint64_t	 stream;	/* UNKNOWN_U64 */
	int64_t		 new_bytes;	/* live at B, not at A */
	int64_t		 new_blocks;
	int64_t		 gone_bytes;	/* live at A, not at B */
	int64_t		 gone_blocks;
};

struct diff_report {
	struct diff_point a, b;		/* resolved: run ids are set */
	int		 layer;
	int64_t		 a_bytes;	/* live at A; -1: not read */
	int64_t		 b_bytes;	/* live at B; -1: not read */
	int64_t		 new_bytes, new_blocks;
	int64_t		 gone_bytes, gone_blocks;
	struct diff_group *groups;	/* by net bytes, largest first */
	size_t		 ngroups;
};

/* What query_diff() reads besides the totals. */
#define QUERY_DIFF_GROUPS	0x1	/* the groups, with their labels */
#define QUERY_DIFF_LIVE		0x2	/* a_bytes and b_bytes */
#define QUERY_DIFF_ALL		0x3

/* One block live at one step of a run and not at another. */
struct diff_block {
	int64_t		 id;
	int		 is_new;	/* 1: live at B only; 0: at A only */
	int32_t		 device;
	uint64_t	 stream;	/* UNKNOWN_U64 */
	int		 layer;
	int64_t		 bytes;
	int64_t		 alloc_step;	/* UNKNOWN_INT */
	int64_t		 free_step;	/* UNKNOWN_INT: not freed */
	int64_t		 site_id;	/* UNKNOWN_INT: no stack */
	char		 site[160];	/* its name, else label; "": none */
};

int	 query_diff(struct query *, const struct diff_point *,
	     struct query *, const struct diff_point *, int, unsigned int,
	     struct diff_report **, char **);
int	 query_diff_blocks(struct query *, int64_t, int64_t, int64_t, int,
	     int64_t, struct diff_block *, int, char **);
void	 query_diff_free(struct diff_report *);

/*
 * query-check.c: the offload check of a run (record --check-offload):
 * saved tensors compared and those that came back different.  Counts are
 * 0 and texts NULL when unknown.
 */
struct query_check_diff {
	int64_t		 step;		/* the checker's step of the pack */
	int64_t		 index;		/* the pack's number in its step */
	int64_t		 bytes;
	int		 device;	/* -1: host */
	unsigned int	 differs;	/* EVENT_CHECK_* bits */
	char		*engine;	/* the engine's class */
	char		*shape;
	char		*dtype;
	char		*detail;	/* what differs, in words */
	char		*where;		/* FILE:LINE of the pack */
	char		*pack_site;	/* the stacks' labels */
	char		*unpack_site;
	int64_t		 pack_site_id;	/* UNKNOWN_INT: none */
	int64_t		 unpack_site_id;
};
struct query_check {
	int			 checked_run;	/* 0: the check was off */
	int64_t			 steps;
	int64_t			 engines;
	int64_t			 packs;
	int64_t			 unpacks;
	int64_t			 checked;	/* compared with their pack */
	int64_t			 differ;	/* as the steps counted them */
	int64_t			 packed_bytes;
	int64_t			 moved_bytes;
	int64_t			 diffs;		/* differences recorded */
	struct query_check_diff	*first;		/* by step and number */
	size_t			 nfirst;
};
int	 query_check(struct query *, int64_t, size_t, struct query_check *,
	     char **);
void	 query_check_free(struct query_check *);

/* check-report.c: the offload check in words and JSON (not a query). */
const char *check_report_summary(const struct query_check *, char *,
	     size_t);
void	 check_report_text(FILE *, const char *, const struct query_check *);
void	 check_report_json(FILE *, const struct query_check *);

/* query-offload.c: the offload engine's decisions in one step. */
struct query_offload_step {
	int64_t		 step;
	int64_t		 packs;
	int64_t		 offloads;
	int64_t		 offload_bytes;
	int64_t		 stashes;
	int64_t		 stash_bytes;
	int64_t		 reaps;
	int64_t		 unpacks;
	int64_t		 prefetches;
	int64_t		 dedupe_hits;
	int64_t		 dedupe_releases;
	int64_t		 fallbacks;
	int64_t		 fallback_bytes;
	int64_t		 exit_syncs;
};
int	 query_offload(struct query *, int64_t, struct query_offload_step **,
	     size_t *, char **);

/*
 * query-stats.c: the allocator's state at the end of a run, per device and
 * per stream, as PyTorch's memory_viz shows it: reserved and allocated
 * bytes, the free bytes inside the reserved segments, the largest free
 * block and the fragmentation, and the allocator's settings.  A count or
 * size of -1 is unknown (a recording sees no free blocks inside segments;
 * a run with no segment layer has no reserved bytes), a fragmentation of
 * NAN is unknown.
 */
/* One device (stream UNKNOWN_U64 and all set) or one stream of it. */
struct stats_row {
	int32_t		 device;
	uint64_t	 stream;	/* UNKNOWN_U64: unknown, or all */
	int		 all;		/* the device's total */
	int64_t		 reserved;	/* bytes in segments */
	int64_t		 segments;
	int64_t		 allocated;	/* bytes in allocated blocks */
	int64_t		 blocks;
	int64_t		 requested;	/* what the program asked for */
	int64_t		 free;		/* bytes in free blocks of segments */
	int64_t		 free_blocks;
	int64_t		 largest_free;
	double		 fragmentation;	/* 1 - largest free / free */
};

struct stats_setting {
	char		*key;
	char		*value;		/* NULL: none */
};

struct stats {
	int64_t		 run_id;
	int		 snapshot;	/* from a snapshot; 0: from the
					   allocations live at the end */
	char		*allocator;	/* NULL: unknown */
	struct stats_row *rows;		/* by device (total first), stream */
	size_t		 nrows;
	struct stats_setting *settings;	/* by key */
	size_t		 nsettings;
};

/* One segment: a snapshot's, or a recording's live driver allocation. */
struct stats_segment {
	int32_t		 device;
	uint64_t	 stream;	/* UNKNOWN_U64 */
	uint64_t	 address;
	int64_t		 size;
	int64_t		 allocated;	/* bytes in allocated blocks */
	int64_t		 blocks;	/* allocated blocks */
	int64_t		 free;		/* bytes in free blocks; -1: unknown */
	int64_t		 free_blocks;
	int64_t		 largest_free;
};

int	 query_stats(struct query *, int64_t, struct stats **, char **);
int	 query_stats_segments(struct query *, int64_t, int64_t,
	     struct stats_segment *, int, char **);
void	 query_stats_free(struct stats *);

/* query-timeline.c: a run as a stream of timed items, for exports. */
enum query_item_kind {
	QUERY_ITEM_PROCESS,	/* name: "pid P rank R on HOST"; number: rank */
	QUERY_ITEM_STREAM,	/* a (process, device, stream) in use */
	QUERY_ITEM_CHANGE,	/* live bytes of a track change by bytes;
				   number: the track's rank */
	QUERY_ITEM_TOTAL,	/* ... of a device's layer, all streams */
	QUERY_ITEM_MEMCPY,	/* start..end, bytes; number: copy kind */
	QUERY_ITEM_STEP,	/* start..end; number: the step; name */
	QUERY_ITEM_OFFLOAD,	/* at start; bytes; number: step; name: kind */
	QUERY_ITEM_ALLOCATION,	/* start..end; bytes; number: its id; name:
				   its site (query_timeline_allocations) */
	QUERY_ITEM_MAX
};
struct query_item {
	enum query_item_kind kind;
	int64_t		 process_id;	/* processes.id; UNKNOWN_INT: none */
	int32_t		 device;	/* -1: unknown or host */
	uint64_t	 stream;	/* UNKNOWN_U64 */
	int		 layer;		/* -1: not an allocation */
	uint64_t	 start_ns;	/* UNKNOWN_U64 */
	uint64_t	 end_ns;	/* UNKNOWN_U64 */
	int64_t		 bytes;
	int64_t		 number;	/* -1: unknown */
	const char	*name;		/* NULL: none */
};
typedef void (*query_item_fn)(void *, const struct query_item *);
int	 query_timeline(struct query *, int64_t, enum query_item_kind,
	     query_item_fn, void *, char **);
int	 query_timeline_live(struct query *, int64_t, uint64_t, query_item_fn,
	     void *, char **);
struct query_bounds {
	int64_t		 run_id;
	uint64_t	 first_ns;	/* UNKNOWN_U64: no timed item */
	uint64_t	 last_ns;
	int64_t		 events;	/* allocations and frees: at least
					   the QUERY_ITEM_CHANGE items */
	int64_t		 tracks;	/* (process, device, stream, layer) */
	int64_t		 totals;	/* (process, device, layer) */
};
int	 query_timeline_bounds(struct query *, int64_t, struct query_bounds *,
	     char **);
int	 query_timeline_allocations(struct query *, int64_t, int64_t,
	     query_item_fn, void *, char **);

/* input.c: a database, or a snapshot pickle through its imported copy. */
char		*input_database(const char *, char **);
struct query	*input_open(const char *, char **);

#endif
