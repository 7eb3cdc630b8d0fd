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

/*
 * Exit statuses, the same for every command (vramtrace(1), EXIT STATUS),
 * so that a CI can tell a leak from a bad file.  record exits with its
 * command's status instead, once the command ran.
 */
#define EXIT_OK			0
#define EXIT_LEAK		1	/* a check asked for failed: a leak */
#define EXIT_USAGE		2	/* bad usage */
#define EXIT_CORRUPT		3	/* saved tensors came back different */
					/* (leaks, report: the offload check) */
#define EXIT_INPUT		4	/* bad input: unreadable, not a */
					/* database or snapshot, no such run */
#define EXIT_INCONCLUSIVE	5	/* --fail-on-inconclusive: no verdict */
#define EXIT_UNFINISHED		6	/* a check on a run cut short */
#define EXIT_ERROR		7	/* any other failure: an output that */
					/* cannot be written, out of memory */

/* log.c */
extern const char *log_program;
void	log_warn(const char *, ...) printflike(1, 2);
noreturn_fn void fatal(const char *, ...) printflike(1, 2);
void	log_set_fatal_hook(void (*)(void));

/* xmalloc.c */
void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xreallocarray(void *, size_t, size_t);
char	*xstrdup(const char *);
char	*xstrndup(const char *, size_t);
int	 xasprintf(char **, const char *, ...) printflike(2, 3);
int	 xvasprintf(char **, const char *, va_list) printflike(2, 0);
char	*xstrerror_cause(const char *, ...) printflike(1, 2);

/* util.c */
void	 util_sort(void *, size_t, size_t,
	     int (*)(const void *, const void *));
#define UTIL_SELECT_MAX	32	/* the largest element util_select takes */
void	*util_select(void *, size_t, size_t, size_t,
	     int (*)(const void *, const void *));
int	 util_open_input(const char *, char **);
int	 util_check_input(const char *, char **);
int	 util_isatty_out(void);
int	 util_isatty_err(void);
int	 util_scratch_file(const char *);
int	 util_mkstemp(char *);
int	 util_write_file(const char *, int (*)(FILE *, void *, char **),
	     void *, char **);
char	*util_sqlite_uri(const char *, const char *);
const char *util_sqlite_read_mode(const char *);

/* fmt.c */
#define FMT_UNKNOWN	"n/a"	/* how text shows a value not known */
#define FMT_LEN		48	/* a buffer every fmt_* result fits */
const char *fmt_bytes(int64_t, char *, size_t);
const char *fmt_size(int64_t, char *, size_t);
const char *fmt_delta(double, char *, size_t);
const char *fmt_stream(uint64_t, char *, size_t);
const char *fmt_stream_handle(uint64_t, uint64_t, char *, size_t);
const char *fmt_offset(uint64_t, uint64_t, char *, size_t);
const char *fmt_duration(uint64_t, uint64_t, char *, size_t);
const char *fmt_date(uint64_t, char *, size_t);
const char *fmt_percent(double, char *, size_t);
const char *fmt_int(int64_t, char *, size_t);
const char *fmt_safe(const char *);
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

/*
 * The largest allocation (or segment) vramtrace stores and reads: 128 TiB,
 * more than any device has; the reader of a run's instants packs bytes in
 * 47 bits (query-events.c).  What an input says past it is refused.
 */
#define ALLOCATION_BYTES_MAX	((UINT64_C(1) << 47) - 1)

/*
 * What the sizes a run's input gives (its allocations, copies and
 * offloads, a snapshot's trace entries and segments) add up to at most:
 * 2 EiB, more than any run allocates, so that a sum of them, the live
 * bytes of a step or what a stream allocated, fits in 63 bits.  An input
 * that takes them past it is refused.
 */
#define RUN_BYTES_MAX		(UINT64_C(1) << 61)

/* store.c */
struct store;
#define STORE_CREATE	0x1	/* make a new database; fail if it exists */
#define STORE_APPEND	0x2	/* add a run to an existing database */
#define STORE_ATOMIC	0x4	/* the run whole or not at all (store.c) */
#define STORE_BULK	0x8	/* an importer: steps after every row (store.c) */
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
int	 store_run_finish(struct store *, int, uint64_t, int, char **);
int	 store_run_end(struct store *, int, uint64_t, char **);
int64_t	 store_run_id(struct store *);
int	 store_failed(const struct store *);
int	 store_commit(struct store *, char **);
uint64_t store_events_committed(const struct store *);
int	 store_maybe_commit(struct store *, char **);

/* store-atomic.c */
void	 store_atomic_sweep_named(const char *, const char *);

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
	     const char *, const char *, const char *, uint64_t, int64_t *,
	     char **);
int	 store_rows_allocation(struct store *,
	     const struct store_allocation *, char **);
int	 store_rows_alloc_begin(struct store *,
	     const struct store_allocation *, char **);
int	 store_rows_alloc_free_requested(struct store *,
	     const struct store_allocation *, uint64_t, char **);
int	 store_rows_alloc_end(struct store *, const struct store_allocation *,
	     uint64_t, uint64_t, char **);
int	 store_rows_alloc_live_size(struct store *, int32_t, int, uint64_t,
	     uint64_t);
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
struct store_merge_join {	/* a run of a merged file joined to another */
	int64_t		 from;		/* its id in the file */
	int64_t		 into;		/* the run of the output it joined */
	const char	*job;		/* the job both name; NULL: joined by
					   the same command */
	const char	*command;	/* its command; NULL: unknown */
};
int	 store_merge(struct store *, const char *, int,
	     void (*)(const struct store_merge_join *, void *), void *,
	     char **);
int	 store_merge_finish(struct store *, char **);

/* store-schema.c */
#define STORE_SCHEMA_VERSION 1
struct sqlite3;
int	 store_schema_check(struct sqlite3 *, const char *, int *, char **);
const char *store_schema_read_error(int);

/* collector.c */
struct collector;
struct collector_times {
	unsigned	 flush_ms;	/* commit every; 0: 200 */
	unsigned	 grace_ms;	/* after the command, for the others */
	unsigned	 fd_wait_ms;	/* for a descriptor, at most */
};
#define COLLECTOR_STOPPED	0x1	/* the database failed */
#define COLLECTOR_LACKS		0x2	/* processes turned away */
struct collector *collector_create(struct store *,
	     const struct collector_times *, char **);
const char *collector_path(struct collector *);
void	 collector_child(struct collector *);
int	 collector_run(struct collector *, pid_t, int *);
void	 collector_free(struct collector *);

/* query*.c, input.c: the reader, in query.h; leak*.c, in leak.h. */

/* json.c */
size_t	 json_utf8_length(const unsigned char *);
void	 json_string(FILE *, const char *);
void	 json_string_page(FILE *, const char *);
void	 json_u64(FILE *, uint64_t);
void	 json_stream(FILE *, uint64_t);
void	 json_handle(FILE *, uint64_t);
void	 json_time(FILE *, uint64_t);
void	 json_int_or_null(FILE *, int64_t, int);
void	 json_double(FILE *, double, int);

#endif
