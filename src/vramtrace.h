/*
 * vramtrace.h: declarations shared by the vramtrace program, listed under a
 * line per file so that this header doubles as a map of the sources.
 */
#ifndef VRAMTRACE_H
#define VRAMTRACE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "event.h"
#include "lib.h"
#include "unknown.h"

#ifdef __GNUC__
#define noreturn_fn __attribute__((noreturn))
#else
#define noreturn_fn
#endif

/* Exit statuses shared by every command. */
#define EXIT_OK		0
#define EXIT_FOUND	1	/* a failure found, or a bad input file */
#define EXIT_USAGE	2	/* bad usage */

/* log.c */
extern const char *log_program;
void	log_warn(const char *, ...) printflike(1, 2);
noreturn_fn void fatal(const char *, ...) printflike(1, 2);
void	log_set_fatal_hook(void (*)(void));
char	*xstrerror_cause(const char *, ...) printflike(1, 2);

/* xmalloc.c */
void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xreallocarray(void *, size_t, size_t);
char	*xstrdup(const char *);
char	*xstrndup(const char *, size_t);
int	 xasprintf(char **, const char *, ...) printflike(2, 3);
int	 xvasprintf(char **, const char *, va_list);

/* util.c */
void	 util_sort(void *, size_t, size_t,
	     int (*)(const void *, const void *));
int	 util_is_pickle(const char *);
int	 util_isatty_out(void);
int	 util_isatty_err(void);
int	 util_mkstemp(char *);

/* fmt.c */
#define FMT_UNKNOWN	"n/a"	/* how text shows a value not known */
#define FMT_LEN		32	/* a buffer every fmt_* result fits */
const char *fmt_bytes(int64_t, char *, size_t);
const char *fmt_delta(double, char *, size_t);
const char *fmt_stream(uint64_t, char *, size_t);
const char *fmt_offset(uint64_t, uint64_t, char *, size_t);
const char *fmt_duration(uint64_t, uint64_t, char *, size_t);
const char *fmt_date(uint64_t, char *, size_t);
const char *fmt_percent(double, char *, size_t);
const char *fmt_int(int64_t, char *, size_t);
const char *fmt_text(const char *);

/* nvml.c */
struct nvml;
struct nvml	*nvml_open(char **);
void	 nvml_close(struct nvml *);
unsigned int nvml_devices(struct nvml *);
int	 nvml_process_usage(struct nvml *, unsigned int, unsigned int,
	     uint64_t *, char **);

/* git.c */
char	*git_head(const char *);

/* store.c */
struct store;
#define STORE_CREATE	0x1	/* make a new database; fail if it exists */
#define STORE_APPEND	0x2	/* add a run to an existing database */
#define STORE_ATOMIC	0x4	/* write a temporary file, rename on close */
struct store_run_info {
	const char	*source;	/* "record", "import", "replay", "attach" */
	const char	*input;		/* the file imported or replayed; NULL */
	const char	*command;	/* command line; NULL */
	const char	*host;		/* NULL: this host */
	const char	*cwd;		/* NULL */
	const char	*git_commit;	/* NULL */
	const char	*allocator;	/* "async", "native", "unknown"; NULL */
	const char	*step_source;	/* "nvtx", "annotation", "api", ... */
	uint64_t	 start_ns;	/* 0: now */
};
struct store	*store_open(const char *, int, char **);
int	 store_close(struct store *, char **);
void	 store_abort(struct store *);
int	 store_run_begin(struct store *, const struct store_run_info *,
	     char **);
int	 store_run_finish(struct store *, int, uint64_t, char **);
int64_t	 store_run_id(struct store *);
int	 store_commit(struct store *, char **);
int	 store_maybe_commit(struct store *, char **);

/* store-rows.c */
struct store_allocation {
	int64_t		 process_id;	/* processes.id; 0: none */
	int32_t		 device;	/* -1: host */
	int		 layer;		/* enum event_layer */
	uint64_t	 stream;	/* EVENT_NONE: unknown */
	uint64_t	 address;
	uint64_t	 bytes;
	uint64_t	 requested;	/* EVENT_NONE: unknown */
	uint64_t	 alloc_ns;	/* EVENT_NONE: before the trace began */
	uint64_t	 free_requested_ns; /* EVENT_NONE: not freed or unknown */
	uint64_t	 free_ns;	/* EVENT_NONE: still live at the end */
	int64_t		 site_id;	/* 0: none */
	uint64_t	 correlation;	/* EVENT_NONE */
};
int	 store_rows_process(struct store *, const struct event_process *,
	     const char *, const char *, uint64_t, int64_t *, char **);
int	 store_rows_allocation(struct store *,
	     const struct store_allocation *, char **);
int	 store_rows_alloc_begin(struct store *,
	     const struct store_allocation *, char **);
int	 store_rows_alloc_free_requested(struct store *,
	     const struct store_allocation *, uint64_t, char **);
int	 store_rows_alloc_end(struct store *, const struct store_allocation *,
	     uint64_t, uint64_t, char **);
int	 store_rows_alloc_is_live(struct store *, int32_t, int, uint64_t);
int	 store_rows_stream(struct store *, int64_t,
	     const struct event_stream *, int, uint64_t, char **);
int	 store_rows_step(struct store *, int64_t, int64_t, uint64_t, uint64_t,
	     const char *, char **);
int	 store_rows_mark(struct store *, int64_t, int32_t, uint64_t,
	     const char *, const char *, char **);
int	 store_rows_usage(struct store *, int32_t, uint64_t, uint64_t,
	     char **);
int	 store_rows_assign_steps(struct store *, char **);

/* store-site.c */
struct store_frame {
	const char	*name;
	const char	*filename;
	int64_t		 line;
};
int	 store_site_add(struct store *, const struct store_frame *, size_t,
	     int64_t *, char **);
int	 store_site_kind(struct store *, int64_t, const char *, char **);

/* store-source.c */
struct store_source;
struct store_source *store_source_create(struct store *, const char *);
void	 store_source_free(struct store_source *);
int	 store_source_event(struct store_source *, const struct event *,
	     char **);
int	 store_source_drain(struct store_source *, char **);

/* store-snapshot.c */
struct store_segment {		/* the snapshot's integers, as read */
	int64_t		 device;
	int64_t		 address;
	int64_t		 total_size;
	int64_t		 allocated_size;
	int64_t		 active_size;
	int64_t		 requested_size;
	int64_t		 stream;
	const char	*segment_type;	/* "large", "small"; NULL: unknown */
	const char	*pool_id;	/* "A,B": the pool's two ids */
	int		 expandable;
	int64_t		 site_id;	/* 0: none */
};
struct store_block {
	int64_t		 segment_id;	/* store_snapshot_segment() gave it */
	int64_t		 address;
	int64_t		 size;
	int64_t		 requested_size; /* -1: unknown */
	const char	*state;		/* "active_allocated", ... */
	int64_t		 site_id;	/* 0: none */
};
int	 store_snapshot_begin(struct store *, const char *, int64_t,
	     char **);
int	 store_snapshot_segment(struct store *, const struct store_segment *,
	     int64_t *, char **);
int	 store_snapshot_block(struct store *, const struct store_block *,
	     char **);
int	 store_snapshot_setting(struct store *, const char *, const char *,
	     char **);
int	 store_snapshot_action(struct store *, int32_t, const char *, int64_t,
	     char **);
int	 store_snapshot_finish(struct store *, int64_t, int64_t, uint64_t,
	     const char *, char **);

/* store-merge.c */
int	 store_merge(struct store *, const char *, int, char **);
int	 store_merge_finish(struct store *, char **);

/* store-schema.c */
#define STORE_SCHEMA_VERSION 1
struct sqlite3;
int	 store_schema_check(struct sqlite3 *, const char *, int *, char **);

/* collector.c */
struct collector;
struct collector *collector_create(struct store *, unsigned, char **);
const char *collector_path(struct collector *);
int	 collector_run(struct collector *, pid_t, int *, char **);
void	 collector_free(struct collector *);

/* query.c */
struct query;
#define QUERY_NULL	0
#define QUERY_NUMBER	1
#define QUERY_TEXT	2
typedef void (*query_row_fn)(void *, int, const char **, const int *, int);
struct query	*query_open(const char *, char **);
void	 query_close(struct query *);
void	*query_db(struct query *);
int	 query_schema_version(struct query *);
int64_t	 query_latest_run(struct query *);
int	 query_has_import(struct query *, const char *);
int	 query_sql(struct query *, const char *, query_row_fn, void *,
	     char **);

/* query-run.c */
struct query_counts {
	int64_t		runs;		/* each UNKNOWN_INT when not counted */
	int64_t		incomplete_runs;
	int64_t		processes;
	int64_t		devices;
	int64_t		streams;
	int64_t		steps;
	int64_t		allocations;
	int64_t		memcpys;
	int64_t		offload_events;
	int64_t		marks;
	int64_t		sites;
	int64_t		snapshots;
	int64_t		segments;
	int64_t		blocks;
	int64_t		trace_entries;
	int64_t		dropped_records;
};
#define QUERY_COUNT_RUNS		0x0001
#define QUERY_COUNT_INCOMPLETE_RUNS	0x0002
#define QUERY_COUNT_PROCESSES		0x0004
#define QUERY_COUNT_DEVICES		0x0008
#define QUERY_COUNT_STREAMS		0x0010
#define QUERY_COUNT_STEPS		0x0020
#define QUERY_COUNT_ALLOCATIONS		0x0040
#define QUERY_COUNT_MEMCPYS		0x0080
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
	int32_t		device;
	char		*name;		/* NULL: unknown */
	int64_t		total_bytes;	/* UNKNOWN_INT */
};
struct query_run {
	int64_t		id;
	char		*source;	/* the strings: NULL when unknown */
	char		*input;
	char		*command;
	char		*host;
	char		*git_commit;
	char		*allocator;
	char		*step_source;
	uint64_t	start_ns;	/* UNKNOWN_U64: unknown */
	uint64_t	end_ns;		/* UNKNOWN_U64: unknown or not finished */
	int		complete;
	struct query_device *devices;	/* by number */
	size_t		ndevices;
	struct query_counts counts;	/* those asked for */
};
struct query_poll {
	int64_t		run_id;
	int64_t		max_step;
	int64_t		max_allocation;
	int64_t		max_offload;
};
int	 query_run_counts(struct query *, int64_t, unsigned int,
	     struct query_counts *, char **);
int	 query_run(struct query *, int64_t, unsigned int, struct query_run *,
	     char **);
void	 query_run_free(struct query_run *);
int	 query_run_list(struct query *, struct query_run **, size_t *,
	     char **);
int	 query_run_poll(struct query *, int64_t, struct query_poll *);

/* query-timeline.c */
enum query_item_kind {
	QUERY_ITEM_PROCESS,	/* name: "pid P rank R on HOST"; number: rank */
	QUERY_ITEM_STREAM,	/* a (process, device, stream) in use */
	QUERY_ITEM_CHANGE,	/* live bytes of a track change by bytes */
	QUERY_ITEM_MEMCPY,	/* start..end, bytes; number: copy kind */
	QUERY_ITEM_STEP,	/* start..end; number: the step; name */
	QUERY_ITEM_OFFLOAD,	/* at start; bytes; number: step; name: kind */
	QUERY_ITEM_MAX
};
struct query_item {
	enum query_item_kind kind;
	int64_t		 process_id;	/* processes.id; 0: none */
	int32_t		 device;	/* -1: unknown or host */
	uint64_t	 stream;	/* EVENT_NONE: unknown */
	int		 layer;		/* -1: not an allocation */
	uint64_t	 start_ns;	/* EVENT_NONE: unknown */
	uint64_t	 end_ns;	/* EVENT_NONE: unknown */
	int64_t		 bytes;
	int64_t		 number;	/* -1: unknown */
	const char	*name;		/* NULL: none */
};
typedef void (*query_item_fn)(void *, const struct query_item *);
int	 query_timeline(struct query *, int64_t, enum query_item_kind,
	     query_item_fn, void *, char **);
struct query_bounds {
	int64_t		 run_id;
	uint64_t	 first_ns;	/* EVENT_NONE: no timed item */
	uint64_t	 last_ns;
	int64_t		 changes;	/* QUERY_ITEM_CHANGE items */
	int64_t		 tracks;	/* their (process, device, stream, layer) */
};
int	 query_timeline_bounds(struct query *, int64_t, struct query_bounds *,
	     char **);

/* input.c */
struct query	*input_open(const char *, char **);

/* json.c */
void	 json_string(FILE *, const char *);
void	 json_stream(FILE *, uint64_t);
void	 json_time(FILE *, uint64_t);
void	 json_int_or_null(FILE *, int64_t, int);

#endif
