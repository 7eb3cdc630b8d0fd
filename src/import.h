/*
 * import.h: reading a PyTorch memory snapshot into a database (import*.c).
 */
#ifndef IMPORT_H
#define IMPORT_H

#include <regex.h>
#include <stdint.h>

#include "pickle.h"
#include "vramtrace.h"

struct import_options {
	const char	*step_marker;	/* ERE on annotation names; NULL: default */
	uint64_t	 step_every_ns;	/* fixed windows when no annotations; 0 */
	int		 append;	/* add a run to an existing database */
	int		 progress;	/* show progress on stderr */
};

struct import_summary {
	int64_t		 segments;
	int64_t		 blocks;
	int64_t		 trace_entries;
	int64_t		 annotations;
	int64_t		 steps;
	const char	*step_source;	/* "annotation", "time" or "none" */
	int64_t		 retimed;	/* entries timed before the one before */
};

/* The most steps --step-every may cut (vramtrace(1), LIMITS). */
#define IMPORT_WINDOWS_MAX	1000000

/* A frame's line that PyTorch writes when it has none: -1 unsigned. */
#define IMPORT_LINE_UNKNOWN	UINT64_MAX

/* The default step marker: the END of every optimizer step. */
#define IMPORT_STEP_MARKER	"^Optimizer\\.step"
/* The smallest block of PyTorch's caching allocator (kMinBlockSize). */
#define IMPORT_BLOCK_MIN	512

/* Limits on a snapshot's values (said in vramtrace(1), import). */
#define IMPORT_DEVICE_MAX	1024	/* devices 0 to 1023 */
#define IMPORT_ACTION_MAX	64	/* distinct trace actions */
#define IMPORT_TIME_US_MAX	(INT64_MAX / 1000)	/* fits in ns */

struct import_site_span;	/* import-site.c */
struct worker;			/* worker.c, for import-pipe.c */

/* What the store is told of a trace entry, by its action. */
enum import_action_kind {
	IMPORT_ACTION_OTHER,		/* an action we do not know */
	IMPORT_ACTION_OOM,		/* a mark */
	IMPORT_ACTION_NOTE,		/* snapshot, annotate: nothing */
	IMPORT_ACTION_ALLOC,		/* a block begins */
	IMPORT_ACTION_SEGMENT_ALLOC,	/* segment_alloc, segment_map */
	IMPORT_ACTION_FREE_REQUESTED,
	IMPORT_ACTION_FREE_COMPLETED,
	IMPORT_ACTION_FREE_OTHER,	/* another free_*: a block's size */
	IMPORT_ACTION_SEGMENT_FREE	/* segment_free, segment_unmap */
};

/* A trace action seen, with its count per device (import-trace.c). */
struct import_action {
	char			 name[32];
	enum import_action_kind	 kind;
	int64_t			*count;	/* [IMPORT_DEVICE_MAX] */
};

/* A block or segment live in the snapshot, checked against the trace. */
struct import_held {
	int32_t		 device;
	int		 layer;
	uint64_t	 address;
	uint64_t	 bytes;
	uint64_t	 requested;
	uint64_t	 stream;
	int64_t		 site_id;
};

/* The (device, stream) pairs seen: a set, open addressing, half full. */
struct import_streams {
	uint64_t	*keys;		/* stream + 1; 0: an empty slot */
	int32_t		*devices;
	size_t		 mask;		/* slots - 1 */
	size_t		 n;
};

/*
 * The element whose values are being checked, for the key path of a
 * message, written out only when one is (import_check_path).
 */
enum import_at {
	IMPORT_AT_ROOT,		/* the top-level dict */
	IMPORT_AT_DEVICE,	/* device_traces[a] */
	IMPORT_AT_TRACE,	/* device_traces[a][b] */
	IMPORT_AT_SEGMENT,	/* segments[a] */
	IMPORT_AT_BLOCK,	/* segments[a].blocks[b] */
	IMPORT_AT_ANNOTATION	/* external_annotations[a] */
};

/* What the streaming callbacks share while a file is read. */
struct import_state {
	const char		*file;
	struct store		*store;
	struct worker		*pipe;		/* import-pipe.c's; NULL */
	struct import_summary	*summary;
	struct import_action	 actions[IMPORT_ACTION_MAX];
	size_t			 nactions;
	uint64_t		 first_ns;	/* of the trace; EVENT_NONE */
	uint64_t		 last_ns;
	int32_t			 entry_device;	/* the entry before's */
	uint64_t		 entry_ns;	/* and its time */
	struct store_frame	*frames;	/* scratch for a stack */
	size_t			 frames_alloc;
	struct import_site_span	*sites;		/* import-site.c's cache */
	struct import_held	*held;		/* the snapshot's live memory */
	size_t			 nheld;
	size_t			 held_alloc;
	struct import_streams	 streams;	/* every stream seen */
	regex_t			 step_re;	/* the step marker */
	int			 step_re_set;
	uint64_t		*ends;		/* step ends, from annotations */
	size_t			 nends;
	size_t			 ends_alloc;
	enum import_at		 at;		/* the element being read */
	size_t			 at_a, at_b;	/* its indexes */
	size_t			 at_frame;	/* its frame + 1; 0: none */
	uint64_t		 total_bytes;	/* import_check_total() */
	char			 path[96];	/* import_check_path() */
};

/* Flags of import_check_*: a key the snapshot may lack. */
#define IMPORT_OPTIONAL	0x1

/*
 * The version of what an import makes of a snapshot: bump it with every
 * change that makes the same pickle give another database, so that no
 * cached import (input.c) made by an older importer answers.
 */
#define IMPORT_VERSION		7

/* import.c */
#define IMPORT_FAIL_OUTPUT	(-2)	/* the database (or a temporary file)
					   could not be written */
int	 import_snapshot(const char *, const char *,
	     const struct import_options *, struct import_summary *, char **);

/* import-check.c */
void	 import_check_at(struct import_state *, enum import_at, size_t,
	     size_t);
const char *import_check_path(struct import_state *);
int	 import_check_value(struct import_state *, const struct pickle_value *,
	     const char *, enum pickle_type, int, const struct pickle_value **,
	     char **);
int	 import_check_int(struct import_state *, const struct pickle_value *,
	     const char *, int64_t, int64_t, int, int64_t *, char **);
int	 import_check_str(struct import_state *, const struct pickle_value *,
	     const char *, int, const char **, char **);
int	 import_check_total(struct import_state *, const char *, int64_t,
	     char **);
int	 import_line_unknown(const struct pickle_value *);
int	 import_check_frames(struct import_state *,
	     const struct pickle_value *, char **);
int	 import_check_root(struct import_state *, const struct pickle_value *,
	     char **);

/* import-trace.c */
int	 import_trace_entry(struct import_state *, int32_t,
	     const struct pickle_value *, size_t, char **);
int	 import_trace_segment(struct import_state *,
	     const struct pickle_value *, size_t, char **);
int	 import_trace_reconcile(struct import_state *, char **);

int	 import_trace_finish(struct import_state *, char **);
void	 import_trace_free(struct import_state *);

/* import-pipe.c: the store call an allocation event makes. */
enum import_pipe_op {
	IMPORT_PIPE_BEGIN,		/* store_rows_alloc_begin */
	IMPORT_PIPE_FREE_REQUESTED,	/* store_rows_alloc_free_requested */
	IMPORT_PIPE_END			/* store_rows_alloc_end */
};
void	 import_pipe_begin(struct import_state *);
int	 import_pipe_alloc(struct import_state *, enum import_pipe_op,
	     const struct store_allocation *, uint64_t, uint64_t, char **);
int	 import_pipe_end(struct import_state *, int, char **);

/* import-site.c */
int	 import_site_of(struct import_state *, const struct pickle_value *,
	     int64_t *, char **);
void	 import_site_free(struct import_state *);

/* import-steps.c */
int	 import_steps_begin(struct import_state *,
	     const struct import_options *, char **);
int	 import_steps_annotation(struct import_state *,
	     const struct pickle_value *, size_t, char **);
int	 import_steps_finish(struct import_state *,
	     const struct import_options *, char **);
void	 import_steps_free(struct import_state *);

#endif
