/*
 * store-int.h: the insides of the store family (src/store*.c), shared by
 * its files and included by nothing else.  Its functions are listed under
 * a line per file, like vramtrace.h's; store-sql.c is at the bottom and
 * calls no other file of the family.
 */
#ifndef STORE_INT_H
#define STORE_INT_H

#include <sys/types.h>

#include <signal.h>
#include <sqlite3.h>

#include "vramtrace.h"

/*
 * The prepared statements of an open store, by the file that owns them:
 * store-rows.c (STMT_ALLOC .. STMT_CHECK_DIFF), store-site.c (frames, sites),
 * store-snapshot.c (segments .. trace actions).
 */
enum store_stmt {
	STMT_ALLOC,
	STMT_FREE_UPDATE,
	STMT_MEMCPY,
	STMT_OFFLOAD,
	STMT_STREAM_CREATE,
	STMT_STREAM_DESTROY,
	STMT_STEP,
	STMT_MARK,
	STMT_DROPPED,
	STMT_DEVICE,
	STMT_PROCESS,
	STMT_PROCESS_END,
	STMT_USAGE,
	STMT_CHECK_STEP_ADD,
	STMT_CHECK_STEP,
	STMT_CHECK_DIFF,
	STMT_FRAME_INSERT,
	STMT_FRAME_FIND,
	STMT_SITE_INSERT,
	STMT_SITE_FIND,
	STMT_SITE_FRAME,
	STMT_SITE_KIND,
	STMT_SEGMENT,
	STMT_BLOCK,
	STMT_SETTING,
	STMT_ACTION,
	STMT_MAX
};

/* A statement's text, for store_sql_prepare(). */
struct store_sql_text {
	enum store_stmt	 id;
	const char	*sql;
};

/* A check-diff event's strings and stacks, resolved (NULL, 0: none). */
struct store_check_names {
	const char	*engine;
	const char	*shape;
	const char	*dtype;
	const char	*detail;
	const char	*where;
	int64_t		 pack_site;	/* sites.id */
	int64_t		 unpack_site;
};

/* The ends of one process's (or the run's) steps, increasing. */
struct store_timeline {
	int64_t		 process_id;	/* 0: the run */
	uint64_t	*ends;
	size_t		 n;
	size_t		 alloc;
};

/* Step boundaries of the run and of each process (store-steps.c). */
struct store_steps {
	struct store_timeline	 run;
	struct store_timeline	*procs;
	size_t			 nprocs;
	uint64_t		 max_assigned_ns; /* latest time given a step */
	int			 dirty;		/* a boundary arrived late */
};

/* What store_steps_add() made of a boundary. */
enum store_steps_added {
	STORE_STEPS_IGNORED,	/* a repeat or a gap: nothing changed */
	STORE_STEPS_PROCESS,	/* a step of its process only */
	STORE_STEPS_RUN		/* a new step of the run: write its row */
};

/* A small open-addressing map from 64-bit hashes to row ids (store-idmap.c). */
struct store_idmap {
	uint64_t	*keys;		/* 0 marks an empty slot */
	int64_t		*ids;
	size_t		 mask;
	size_t		 count;
};

/*
 * The table of live allocations (store-live.c): small key slots, each
 * naming its entry in a dense pool, so that a lookup touches 24 bytes.
 */
struct store_live_entry {
	struct store_allocation	a;
	int64_t			rowid;	/* 0: not inserted yet */
};
struct store_live_slot {
	uint64_t		 address;
	int32_t			 device;
	int32_t			 layer;
	uint32_t		 entry;	/* pool index + 1; 0: an empty slot */
};
struct store_live {
	struct store_live_slot	*slots;
	size_t			 mask;	/* slots - 1; a power of two - 1 */
	size_t			 count;
	struct store_live_entry	*pool;
	size_t			 pool_used;	/* entries ever handed out */
	size_t			 pool_alloc;
	uint32_t		*spare;		/* pool indexes given back */
	size_t			 nspare;
};

/*
 * One (process, layer, device, stream, alloc step, free step, site) and its
 * sums.
 */
struct store_group {
	int64_t		 process_id;	/* 0: NULL */
	int		 layer;
	int32_t		 device;
	uint64_t	 stream;
	int64_t		 alloc_step;	/* 0: NULL */
	int64_t		 free_step;	/* 0: NULL */
	int64_t		 site_id;	/* 0: NULL */
	int64_t		 bytes;
	int64_t		 blocks;	/* 0 marks an empty slot */
};

/* The run's allocation groups (store-groups.c). */
/*
 * What one step of one stream allocated and freed, summed from the groups
 * as they are written (store-alloc-steps.c): a row of allocation_steps.
 * Its key is a group's (process, layer, device, stream) with the step as
 * alloc_step, free_step and site_id 0; key.blocks is 0 in an empty slot.
 */
struct store_step_sum {
	struct store_group	 key;
	int64_t			 alloc_bytes;
	int64_t			 alloc_blocks;
	int64_t			 freed_bytes;
	int64_t			 freed_blocks;
};

/* A bulk load's rows that wait for their steps (store-pending.c). */
struct store_pending {
	int			 fd;		/* -1 until the buffer fills */
	off_t			 size;		/* bytes written to fd */
	struct store_allocation	*buf;
	size_t			 nbuf;		/* rows in buf */
};

/* The step sums of the run being written: a hash table, half full. */
struct store_step_sums {
	struct store_step_sum	*slots;
	size_t			 mask;
	size_t			 count;
	int			 valid;		/* 0: too many, or overflow */
};

struct store_groups {
	struct store_group	*slots;
	size_t			 mask;
	size_t			 count;
	int			 spill_fd;	/* sorted runs; -1: none yet */
	off_t			 spill_size;
	off_t			*runs;		/* where each run starts */
	size_t			 nruns;
	struct store_allocation	*pending;	/* final before any step */
	size_t			 npending;
	size_t			 pending_alloc;
	int			 valid;		/* 0: rebuild from the rows */
};

/*
 * Rows that wait for the first step at most; past it, the groups are
 * rebuilt from the rows at finish (an import's steps come last).
 */
#define STORE_GROUPS_PENDING_MAX	(1u << 16)

/*
 * Step sums kept in memory at most (12 MiB of table); past it
 * allocation_steps is summed by SQL from allocation_groups.
 */
#define STORE_STEP_SUMS_MAX		(1u << 16)

/*
 * Groups summed in memory at most (8 MiB of table); past it they go to
 * sorted runs on disk.
 */
#ifndef STORE_GROUPS_MAX	/* a test builds the store with less */
#define STORE_GROUPS_MAX		(1u << 16)
#endif

/*
 * The first rows of the run in each order of the blocks view
 * (store-top.c): bounded heaps, heap[0] the last kept.  The numbers are
 * allocation_heads.sort; STORE_TOP_SIZE_DESC is allocation_top, and
 * STORE_TOP_STREAM_SIZE the largest rows of each of the first
 * STORE_TOP_STREAMS streams (kept in streams[], not orders[]).
 */
#define STORE_TOP_ROWS		10000
/* Rows written per order: an eighth of the run's, at least STORE_TOP_MIN. */
#define STORE_TOP_SHARE		8
#define STORE_TOP_MIN		1000
#define STORE_TOP_STREAMS	64
enum store_top_order {
	STORE_TOP_SIZE_DESC,
	STORE_TOP_SIZE_ASC,
	STORE_TOP_AGE_ASC,
	STORE_TOP_AGE_DESC,
	STORE_TOP_STREAM_ASC,
	STORE_TOP_STREAM_DESC,
	STORE_TOP_STREAM_SIZE,
	STORE_TOP_SITE_ASC,
	STORE_TOP_SITE_DESC,
	STORE_TOP_ORDERS
};
struct store_top_row {
	int64_t		 id;
	int64_t		 key;
	int		 null;		/* the key is NULL */
};
struct store_top_heap {
	struct store_top_row *heap;	/* room for 2 * max once it churns */
	size_t		 n;
	int		 desc;
	struct store_top_row *pend;	/* accepted since the last fold */
	size_t		 npend;
};
struct store_top {
	struct store_top_heap orders[STORE_TOP_ORDERS];
	struct store_top_heap streams[STORE_TOP_STREAMS];
	uint64_t	 stream_ids[STORE_TOP_STREAMS];
	size_t		 nstreams;
	size_t		 last;		/* the stream of the last row */
	size_t		 max;		/* rows kept per heap */
	uint64_t	 rows;		/* rows noted */
};

struct store {
	sqlite3		*db;
	char		*path;		/* the name the caller asked for */
	char		*tmp_path;	/* STORE_ATOMIC: where we write */
	int		 tmp_fd;	/* holds tmp_path's lock; -1 */
	int		 atomic_slot;	/* store-atomic.c's slot + 1; 0 */
	int		 one_txn;	/* an atomic append: no autocommit */
	volatile sig_atomic_t interrupted; /* a signal stops the writers */
	int		 flags;
	int		 in_txn;
	int		 failed;	/* SQLite refused something */
	int64_t		 run_id;
	int64_t		 snapshot_id;	/* store_snapshot_begin(); 0: none */
	int64_t		 run_first_alloc; /* the run's first row id; 0 */
	sqlite3_stmt	*stmt[STMT_MAX];
	struct store_live live;
	struct store_pending pending;
	struct store_queue *queue;	/* store-queue.c's writer; NULL */
	struct store_steps steps;
	int		 unstepped;	/* rows written before any boundary */
	uint64_t	 source_bytes;	/* the run's sizes from its sources */

	struct store_idmap sites;	/* stack hash -> sites.id */
	struct store_idmap frames;	/* frame hash -> frames.id */
	uint64_t	 writes;	/* statements since the last commit */
	uint64_t	 applied;	/* events the sources applied */
	uint64_t	 committed;	/* ...of them, as of the last commit */
	struct store_groups groups;
	struct store_step_sums step_sums;
	struct store_top top;
};

/* store-sql.c */
int	 store_sql_error(struct store *, char **, const char *, ...)
	     printflike(3, 4);
int	 store_io_error(struct store *, char **, const char *);
int	 store_sql_prepare(struct store *, const struct store_sql_text *,
	     size_t, char **);
void	 store_sql_bind_opt(sqlite3_stmt *, int, uint64_t);
void	 store_sql_bind_id(sqlite3_stmt *, int, int64_t);
void	 store_sql_bind_text(sqlite3_stmt *, int, const char *);
int	 store_sql_step_bound(struct store *, sqlite3_stmt *, const char *,
	     char **);
int	 store_sql_step(struct store *, sqlite3_stmt *, const char *,
	     char **);
int	 store_sql_exec(struct store *, const char *, const char *, char **);
int	 store_sql_begin(struct store *, char **);
int	 store_sql_open(struct store *, const char *, char **);
int	 store_sql_has_column(struct store *, const char *, const char *,
	     const char *, char **);

/* store-atomic.c */
int	 store_atomic_create(struct store *, char **);
void	 store_atomic_watch(struct store *);
void	 store_atomic_forget(struct store *);
void	 store_atomic_remove(struct store *);
void	 store_atomic_release(struct store *);
void	 store_atomic_reraise(void);

/* store-rows.c */
int	 store_rows_prepare(struct store *, char **);
int	 store_rows_process_end(struct store *, int64_t, uint64_t, char **);
int	 store_rows_device(struct store *, int64_t,
	     const struct event_device *, const char *, char **);
int	 store_rows_dropped(struct store *, int64_t, uint64_t,
	     const struct event_dropped *, const char *, char **);
int	 store_rows_memcpy(struct store *, int64_t, uint64_t,
	     const struct event_memcpy *, char **);
int	 store_rows_check_step(struct store *, int64_t,
	     const struct event_check_step *, const char *, char **);
int	 store_rows_check_diff(struct store *, int64_t, uint64_t,
	     const struct event_check_diff *, const struct store_check_names *,
	     char **);
int	 store_rows_offload(struct store *, int64_t, uint64_t,
	     const struct event_offload *, char **);
int	 store_rows_stream_end(struct store *, int64_t,
	     const struct event_stream *, uint64_t, char **);
int	 store_rows_flush(struct store *, char **);
int	 store_rows_finish(struct store *, char **);

/* store-site.c */
int	 store_site_prepare(struct store *, char **);

/* store-snapshot.c */
int	 store_snapshot_prepare(struct store *, char **);

/* store-schema.c */
extern const char *store_schema_sql;
extern const char *store_schema_index_sql;
extern const char *store_schema_top_sql;
extern const char *store_schema_check_sql;
extern const char *store_schema_steps_sql;
extern const char *store_schema_views_sql;

/* store-steps.c */
void	 store_steps_reset(struct store_steps *);
int	 store_steps_known(struct store_steps *, int64_t);
int64_t	 store_steps_of(struct store_steps *, int64_t, uint64_t);
enum store_steps_added store_steps_add(struct store_steps *, int64_t,
	     int64_t *, uint64_t *, uint64_t);

/* store-group-key.c */
uint64_t store_group_key_hash(const struct store_group *);
void	 store_group_key_bind(struct store *, sqlite3_stmt *, int,
	     const struct store_group *);

/* store-groups.c */
void	 store_groups_reset(struct store_groups *);
void	 store_groups_note(struct store *, const struct store_allocation *);
void	 store_groups_flush_pending(struct store *);
int	 store_groups_write(struct store *, char **);

/* store-groups-table.c */
typedef int (*store_groups_fn)(struct store *, const struct store_group *,
	     void *, char **);
int	 store_groups_table_add(struct store *, const struct store_group *,
	     char **);
int	 store_groups_table_each(struct store *, store_groups_fn, void *,
	     char **);
void	 store_groups_table_free(struct store_groups *);

/* store-insert.c */
#define STORE_INSERT_MANY	32	/* rows an INSERT */
struct store_insert {
	sqlite3_stmt	*one;		/* one row */
	sqlite3_stmt	*many;		/* STORE_INSERT_MANY rows */
	int		 params;	/* a row's parameters */
	const char	*table;		/* for messages */
};
typedef void (*store_insert_bind_fn)(sqlite3_stmt *, int, const void *,
	     void *);
int	 store_insert_prepare(struct store *, struct store_insert *,
	     const char *, const char *, const char *, int, char **);
int	 store_insert_rows(struct store *, struct store_insert *,
	     const void *, size_t, size_t, store_insert_bind_fn, void *,
	     int64_t, char **);
void	 store_insert_finalize(struct store_insert *);

/* store-queue.c */
#define STORE_QUEUE_NO_STEP	INT64_MIN	/* a step that binds NULL */
/*
 * An INSERT of allocation rows: the head, then the values of each row,
 * separated by commas: STORE_ALLOC_PARAMS parameters a row.
 */
#define STORE_ALLOC_INSERT	"INSERT INTO allocations(run_id, process_id," \
	" device, stream, layer, address, bytes, requested_bytes, alloc_ns," \
	" free_requested_ns, free_ns, alloc_step, free_step, site_id," \
	" correlation_id) VALUES "
#define STORE_ALLOC_VALUES	"(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
#define STORE_ALLOC_PARAMS	15
struct store_queue;
void	 store_queue_bind(sqlite3_stmt *, int, int64_t,
	     const struct store_allocation *, int64_t, int64_t);
int	 store_queue_begin(struct store *, char **);
int	 store_queue_row(struct store *, const struct store_allocation *,
	     int64_t, int64_t, int64_t *, char **);
int	 store_queue_end(struct store *, int, char **);

/* store-pending.c */
int	 store_pending_add(struct store *, const struct store_allocation *,
	     char **);
int	 store_pending_insert(struct store *, int (*)(struct store *,
	     const struct store_allocation *, char **), char **);
int	 store_pending_any(const struct store_pending *);
void	 store_pending_free(struct store_pending *);

/* store-regroup.c */
int	 store_regroup(struct store *, char **);

/* store-alloc-steps.c */
void	 store_alloc_steps_reset(struct store_step_sums *);
void	 store_alloc_steps_note(struct store_step_sums *,
	     const struct store_group *);
int	 store_alloc_steps_write(struct store *, const char *, char **);
int	 store_alloc_steps_write_run(struct store *, char **);

/* store-top.c */
void	 store_top_reset(struct store_top *);
void	 store_top_note(struct store_top *, int64_t,
	     const struct store_allocation *);
int	 store_top_write(struct store *, char **);

/* store-live.c */
void	 store_live_init(struct store_live *);
void	 store_live_free(struct store_live *);
struct store_live_entry *store_live_find(struct store_live *, uint64_t,
	     int32_t, int);
struct store_live_entry *store_live_add(struct store_live *,
	     const struct store_allocation *, int *);
void	 store_live_remove(struct store_live *, struct store_live_entry *);
int	 store_live_each(struct store_live *,
	     int (*)(struct store_live_entry *, void *), void *);

/* store-idmap.c */
void	 store_idmap_free(struct store_idmap *);
int64_t	 store_idmap_get(struct store_idmap *, uint64_t);
void	 store_idmap_put(struct store_idmap *, uint64_t, int64_t);

#endif
