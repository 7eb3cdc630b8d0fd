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
};

/* The most steps --step-every may cut (vramtrace(1), LIMITS). */
#define IMPORT_WINDOWS_MAX	1000000

/* The default step marker: the END of every optimizer step. */
#define IMPORT_STEP_MARKER	"^Optimizer\\.step"

/* Per-(device, action) trace entry counts. */
struct import_action_count {
	int32_t		 device;
	char		 action[32];
	int64_t		 count;
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

struct import_stream {
	int32_t		 device;
	uint64_t	 stream;
};

/* What the streaming callbacks share while a file is read. */
struct import_state {
	const char		*file;
	struct store		*store;
	struct import_summary	*summary;
	struct import_action_count *actions;
	size_t			 nactions;
	uint64_t		 first_ns;	/* of the trace; EVENT_NONE */
	uint64_t		 last_ns;
	struct store_frame	*frames;	/* scratch for a stack */
	size_t			 frames_alloc;
	struct import_held	*held;		/* the snapshot's live memory */
	size_t			 nheld;
	size_t			 held_alloc;
	struct import_stream	*streams;	/* every stream seen */
	size_t			 nstreams;
};

/* import.c */
int	 import_snapshot(const char *, const char *,
	     const struct import_options *, struct import_summary *, char **);

/* import-trace.c */
int	 import_trace_entry(struct import_state *, int32_t,
	     const struct pickle_value *, size_t, char **);
int	 import_trace_segment(struct import_state *,
	     const struct pickle_value *, size_t, char **);
int	 import_trace_reconcile(struct import_state *, char **);

/* import-steps.c */
int	 import_steps(struct import_state *, const struct pickle_value *,
	     const struct import_options *, char **);

#endif
