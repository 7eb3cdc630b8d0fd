/*
 * leak.h: the pure part of the leak analysis, listed under a line per file:
 * a leak report (what the query layer measured of a run, per step, stream
 * and site) and the judgement of it: the verdict, the garbage streams, the
 * ranks' skew and the trend over runs.  Nothing here reads a database or
 * draws: query-leaks.c fills a report, these functions judge it, so that
 * tests/t-leak.c checks them with made-up numbers.
 *
 * Unknown values are spelled as unknown.h says.
 */
#ifndef LEAK_H
#define LEAK_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "slots.h"
#include "unknown.h"

enum leak_verdict {
	LEAK_INCONCLUSIVE = 0,
	LEAK_CLEAN,
	LEAK_LEAK
};

enum leak_garbage {
	LEAK_GARBAGE_NONE = 0,
	LEAK_GARBAGE_DESTROYED,		/* blocks live on a destroyed stream */
	LEAK_GARBAGE_GROWING,		/* a side stream growing */
	LEAK_GARBAGE_STRANDED		/* cached, unused, idle stream */
};

/* What to analyse, and how (leak_options_init gives the defaults). */
struct leak_options {
	int64_t		 run_id;	/* 0: the newest run */
	int		 warmup;	/* steps left out at the start */
	uint64_t	 threshold;	/* bytes per step; 0: what matters */
					/* over the horizon (leak-shape.c) */
	int		 layer;		/* -1: choose (block, pool, segment) */
	int64_t		 process_id;	/* processes.id; 0: all processes */
};
/* The defaults, for the CLI and the TUI alike (leak_options_init). */
#define LEAK_DEFAULT_WARMUP	1
#define LEAK_DEFAULT_THRESHOLD	0	/* scaled to the device */

/*
 * The shape of a series of live bytes per step (leak-shape.c), and the
 * verdict it supports.  The rule, its parameters and its limits are written
 * out at the top of leak-shape.c and in vramtrace(1).
 */
enum leak_shape {
	LEAK_SHAPE_NONE = 0,		/* too few steps to tell */
	LEAK_SHAPE_FLAT,		/* the same at every step */
	LEAK_SHAPE_NOISE,		/* changes that keep nothing */
	LEAK_SHAPE_BOUNDED,		/* rises and falls back (period) */
	LEAK_SHAPE_WARMUP,		/* grew, then a plateau (onset: its step) */
	LEAK_SHAPE_STEADY,		/* grows at every step */
	LEAK_SHAPE_PERIODIC,		/* grows every period-th step */
	LEAK_SHAPE_LATE_ONSET,		/* flat, then grows from onset on */
	LEAK_SHAPE_IRREGULAR		/* keeps growing, at irregular steps */
};

struct leak_shape_params {
	int		 warmup;	/* steps before the baseline (1) */
	int64_t		 horizon;	/* steps of the long run (100000) */
	uint64_t	 device_bytes;	/* the device's memory; 0: unknown */
	double		 device_fraction; /* of it that matters (0.01) */
	uint64_t	 min_growth;	/* what matters when it is unknown */
	uint64_t	 threshold;	/* bytes per step that matter; 0: */
					/* what matters over the horizon */
	int64_t		 peak_bytes;	/* for steps_to_full; 0: the series' */
};

/*
 * What leak_shape_fit() found.  Indices are into the series it was given;
 * -1 is none.  reason is static text (NULL when there is nothing to add).
 */
struct leak_shape_result {
	enum leak_verdict verdict;
	enum leak_shape	 shape;
	const char	*reason;	/* why INCONCLUSIVE, or why CLEAN */
					/* though it grew */
	int64_t		 steps;		/* steps after the baseline */
	double		 growth_bytes_per_step; /* the rate of the growth */
					/* kept (Theil-Sen), else of all */
	double		 growth_upper;	/* its one-sided 99% upper bound */
	double		 p_value;	/* of the trend; 1: not tested */
	int64_t		 period;	/* steps between growths (periodic, */
					/* late onset), falls (bounded); 0 */
	int64_t		 onset;		/* first growing step (leak shapes), */
					/* the plateau's step (warm-up); -1 */
	int64_t		 window;	/* steps per window (W) */
	int64_t		 windows;	/* windows analysed (B) */
	int64_t		 rises;		/* windows whose growth was kept */
	int64_t		 kept_bytes;	/* growth kept since the onset */
	double		 min_rate;	/* bytes per step that matter */
	int64_t		 horizon;	/* steps of the long run */
	double		 horizon_bytes;	/* the rate over the horizon */
	double		 projected_bytes; /* live after the horizon */
	int64_t		 steps_to_full;	/* -1: unknown or not growing */
};

/* Defaults of the rule (see LEAK_SHAPE_* in leak-shape.c). */
#define LEAK_SHAPE_HORIZON		100000
#define LEAK_SHAPE_DEVICE_FRACTION	0.01
#define LEAK_SHAPE_MIN_GROWTH		(1024ULL * 1024 * 1024)

/* One stream's story. */
struct leak_stream {
	int32_t		 device;
	uint64_t	 stream;	/* as recorded; UNKNOWN_U64 */
	uint64_t	 handle;	/* its cudaStream_t in a recording;
					   UNKNOWN_U64 */
	int		 is_default;	/* the default or main compute stream */
	uint64_t	 created_ns;	/* UNKNOWN_U64 */
	uint64_t	 destroyed_ns;	/* UNKNOWN_U64: not destroyed */
	int64_t		 live_bytes;	/* at the end of the last step */
	int64_t		 live_blocks;
	double		 growth_bytes_per_step;
	double		 grew_fraction;
	enum leak_verdict verdict;	/* of this stream alone */
	int64_t		*live_per_step;	/* nsteps values */
	enum leak_garbage garbage;
	int64_t		 garbage_bytes;
	int64_t		 garbage_blocks;

	/* For the classification (leak.c), filled by the query. */
	int		 default_known;	/* is_default came from the data */
	int64_t		 alloc_bytes;	/* allocated over the whole run */
	int64_t		 last_alloc_step; /* 0: never allocated */
	int64_t		 new_live_bytes; /* live at the end, made after */
	int64_t		 new_live_blocks; /* ... the warm-up */
	int64_t		 unfreed_bytes;	/* never freed in the recording */
	int64_t		 unfreed_blocks;
	int64_t		 segment_bytes;	/* segment layer, live at the end */
	int64_t		 segment_blocks;
	uint64_t	 device_bytes;	/* its device's memory; 0: unknown */
};

/* An allocation site holding live bytes allocated in the growing steps. */
struct leak_suspect {
	int64_t		 site_id;	/* UNKNOWN_INT: no stack */
	char		*site;		/* label, "file:line function" */
	char		*origin;	/* the program's innermost frame, the */
	char		*caller;	/* next one out and the library's */
	char		*within;	/* within it (site-origin.c); NULL: none */
	int64_t		 bytes;
	int64_t		 blocks;
	int32_t		 device;
	uint64_t	 stream;
};

struct leak_step {
	int64_t		 step;
	uint64_t	 end_ns;
	int64_t		 live_bytes;	/* total, in the analysed layer */
	int64_t		 delta_bytes;	/* from the step before; 0: first */
};

/*
 * One rank of a job (a process of the run with a rank), analysed alone:
 * only its allocations and streams.
 */
struct leak_rank {
	int64_t		 process_id;
	int64_t		 rank;
	int64_t		 local_rank;	/* -1: unknown */
	int64_t		 pid;		/* -1: unknown */
	char		*host;		/* NULL: unknown */
	int32_t		*devices;	/* the devices it allocated on */
	size_t		 ndevices;
	enum leak_verdict verdict;
	double		 growth_bytes_per_step;
	double		 grew_fraction;
};

/*
 * The ranks' skew: the rank growing fastest against the median growth of
 * all ranks.  ratio is worst / median, NaN when the median is not above 0.
 */
struct leak_skew {
	int		 worst;		/* index into ranks; -1: no ranks */
	double		 median_growth_bytes_per_step;
	double		 ratio;
};

struct leak_report {
	int64_t		 run_id;
	enum leak_verdict verdict;
	const char	*reason;	/* why INCONCLUSIVE, or NULL */
	int		 layer;		/* the layer analysed */
	int		 warmup;
	uint64_t	 threshold;	/* as asked (0: scaled), then the */
					/* bytes per step that matter */
	uint64_t	 device_bytes;	/* the devices' memory; 0: unknown */
	int64_t		 steps_analysed;
	double		 growth_bytes_per_step;
	double		 grew_fraction;
	int64_t		 peak_bytes;
	struct leak_step *steps;
	size_t		 nsteps;
	struct leak_stream *streams;
	size_t		 nstreams;
	size_t		 streams_alloc;	/* leak_report_stream's index: */
	struct slots	 stream_slots;	/* streams by (device, stream) */
	size_t		 streams_indexed; /* how many it holds */
	struct leak_suspect *suspects;
	size_t		 nsuspects;

	/* The shape of the total's growth, its period, onset, projection. */
	struct leak_shape_result shape;

	/* For the verdict line and reports. */
	int		 top_stream;	/* index of the fastest grower; -1 */
	int64_t		 first_live;	/* live bytes at the warm-up's end */

	/*
	 * A run with no allocations but usage samples (attach): one stream
	 * of unknown handle per device, live bytes from the samples.
	 */
	int		 usage_only;

	/*
	 * An imported snapshot without allocation history: no steps; its
	 * streams hold the blocks live at the dump, its suspects the sites.
	 */
	int		 no_history;

	/*
	 * An imported snapshot (source "import"): its streams 0 and 2 are
	 * defaults, and without steps its reason says how to import it.
	 */
	int		 imported;

	/*
	 * An imported snapshot whose trace begins after its first steps
	 * ended (PyTorch kept only its last max_entries events): the first
	 * step that ends after the trace begins, whose end and the later ones
	 * are whole; the warm-up is at least that many steps.  0: all steps.
	 */
	int		 history_from;

	/* Two or more processes with ranks: each alone, and the skew. */
	struct leak_rank *ranks;
	size_t		 nranks;
	struct leak_skew skew;
};

/* What a report of a run seen through usage samples only cannot tell. */
#define LEAK_USAGE_NOTE "attach saw total usage per device only; streams " \
	"and blocks are not visible"
/* Why a snapshot without allocation history has no verdict, and the fix. */
#define LEAK_NO_HISTORY "the snapshot has no allocation history: call " \
	"torch.cuda.memory._record_memory_history() before the steps (its " \
	"enabled=\"all\", the default, not \"state\"), then dump it"
/* Why a run without steps has no verdict, and the fix, by its source. */
#define LEAK_NO_STEPS_IMPORT "no step markers: vramtrace import it with " \
	"--step-marker REGEX (its step annotations' name) or --step-every MS"
#define LEAK_NO_STEPS_RECORD "no step markers: record it with " \
	"--torch-steps, or name its NVTX step ranges with --step-marker REGEX"
/* Why the first steps of a snapshot whose trace lost its start are left out. */
#define LEAK_HISTORY_NOTE "PyTorch kept the last events only: call " \
	"torch.cuda.memory._record_memory_history() with a larger max_entries " \
	"to see every step"
/* Steps a side stream must be idle for its cache to count as stranded. */
#define LEAK_STRANDED_STEPS	3
/* Fewer steps than this after the warm-up: INCONCLUSIVE. */
#define LEAK_MIN_STEPS		3
/* The most suspects a report keeps. */
#define LEAK_MAX_SUSPECTS	20

/* leak.c */
void	 leak_options_init(struct leak_options *);
void	 leak_report_free(struct leak_report *);
struct leak_stream *leak_report_stream(struct leak_report *, int32_t,
	     uint64_t);
const struct leak_stream *leak_report_find_stream(const struct leak_report *,
	     int32_t, uint64_t);
const char *leak_verdict_name(enum leak_verdict);
char	*leak_suspect_name(const struct leak_suspect *);
const char *leak_garbage_name(enum leak_garbage);
int64_t	 leak_report_onset(const struct leak_report *);
size_t	 leak_report_first_whole(const struct leak_report *);
int	 leak_garbage_fails(const struct leak_report *);
double	 leak_grew_fraction(const int64_t *, size_t);
void	 leak_analyse(struct leak_report *);
void	 leak_skew(const struct leak_rank *, size_t, struct leak_skew *);

/* leak-json.c */
void	 leak_json_shape(FILE *, const struct leak_report *);
void	 leak_json_growth(FILE *, const struct leak_report *);
void	 leak_json_pinned(FILE *, const struct leak_report *);
void	 leak_json_streams(FILE *, const struct leak_report *, int);

/* leak-trend.c */
/*
 * The trend of the leak rate over runs: from the growth per step of the
 * last LEAK_TREND_RUNS runs with a verdict (CLEAN or LEAK).
 */
enum leak_direction {
	LEAK_TREND_UNKNOWN = 0,		/* fewer than two such runs */
	LEAK_TREND_FLAT,
	LEAK_TREND_RISING,
	LEAK_TREND_FALLING
};

struct leak_trend {
	enum leak_direction direction;
	size_t		 runs;		/* the runs it was taken from */
	double		 change_bytes_per_step; /* first to last, fitted */
};

#define LEAK_TREND_RUNS		5

void	 leak_trend(struct leak_report *const *, size_t, uint64_t,
	     struct leak_trend *);
const char *leak_direction_name(enum leak_direction);
int	 leak_worse(const struct leak_report *, const struct leak_report *,
	     uint64_t);

/* leak-shape.c */
void	 leak_shape_defaults(struct leak_shape_params *);
void	 leak_shape_fit(const int64_t *, size_t,
	     const struct leak_shape_params *, struct leak_shape_result *);
const char *leak_shape_name(enum leak_shape);

/* leak-stats.c: robust statistics for the shape model. */
double	 leak_stats_select(double *, size_t, size_t);
double	 leak_stats_median(double *, size_t);
double	 leak_stats_mann_kendall(const int64_t *, size_t);
double	 leak_stats_theil_sen(const int64_t *, size_t, double *);

#endif
