/*
 * report.h: what the HTML report shows, aggregated in C so that the page
 * stays small whatever the size of the run (query-report.c,
 * query-report-sites.c), and the writer of the page (report-html.c).
 *
 * Times are ns from the run's first instant (t0_ns); UNKNOWN_U64 when not
 * known.  A lane is one (process, device) of the run: one rank of a job on
 * its GPU, or a device of a run without processes; device -1 is host
 * memory.  A track is one layer of a lane, a series one stream of a track.
 *
 * Time is cut into nbuckets buckets of bucket_ns.  Each bucket of a track
 * holds the moment of its highest total in that bucket: hi[] of every
 * series of the track is its value at that moment, so a stack of the
 * series reaches the exact highest total of each bucket and the tallest
 * bucket is the track's true peak.  Peaks are exact, taken over every
 * instant, not over buckets.
 */
#ifndef REPORT_H
#define REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct query;
struct query_run;
struct leak_report;

/* The highest live bytes and when: a high-water mark. */
struct report_peak {
	int64_t		 bytes;		/* 0 when nothing was ever live */
	uint64_t	 ns;		/* from t0; UNKNOWN_U64: never */
	int64_t		 step;		/* the step it is in; -1: unknown */
};

struct report_lane {
	int64_t		 process_id;	/* processes.id; 0: none */
	int32_t		 device;	/* -1: host */
	int64_t		 rank;		/* -1: unknown */
	char		*name;		/* "pid P rank R on HOST"; NULL: none */

	/* Per bucket; NULL when the run recorded none for this lane. */
	int64_t		*copy_out;	/* bytes copied device to host */
	int64_t		*copy_in;	/* bytes copied host to device */
	int64_t		*offloaded;	/* bytes the offload engine sent out */
	int64_t		*prefetched;	/* bytes it brought back */
	int64_t		*stash;		/* bytes its stashes hold at the end */
};

struct report_track {
	size_t		 lane;
	int		 layer;		/* enum event_layer */
	struct report_peak peak;
	int64_t		 end_bytes;	/* live at the end of the run */
	size_t		 first;		/* its series: [first, first + n) */
	size_t		 nseries;
};

struct report_series {
	size_t		 track;
	uint64_t	 stream;	/* UNKNOWN_U64: unknown */
	int64_t		 peak_bytes;	/* its own high-water mark */
	int64_t		 end_bytes;
	int64_t		*hi;		/* nbuckets values (see above) */
};

struct report_step {
	int64_t		 step;
	uint64_t	 start_ns;	/* UNKNOWN_U64: unknown */
	uint64_t	 end_ns;
	char		*name;		/* NULL: none */
};

/* One stack frame; a site lists them outermost first. */
struct report_frame {
	char		*name;
	char		*filename;
	int64_t		 line;
};

/* The two moments whose holders the report shows. */
enum report_at {
	REPORT_AT_PEAK = 0,		/* the run's peak (report.peak) */
	REPORT_AT_END,			/* the end of the run */
	REPORT_AT_MAX
};

struct report_site {
	int64_t		 site_id;	/* 0: no stack */
	char		*label;		/* NULL: no stack */
	size_t		*frames;	/* into frames, outermost first */
	size_t		 nframes;
	int64_t		 bytes[REPORT_AT_MAX];	/* live in the layer */
	int64_t		 blocks[REPORT_AT_MAX];
};

/* One block of a site: the largest REPORT_SITE_BLOCKS of each are kept. */
struct report_block {
	size_t		 site;		/* into report.sites */
	size_t		 lane;
	uint64_t	 stream;	/* UNKNOWN_U64: unknown */
	uint64_t	 address;
	int64_t		 bytes;
	int64_t		 alloc_step;	/* -1: unknown */
	uint64_t	 alloc_ns;	/* from t0; UNKNOWN_U64: unknown */
};

struct report {
	int64_t		 run_id;
	int64_t		 first_id;	/* the range of its allocations' ids */
	int64_t		 last_id;
	int		 layer;		/* of the peak and the holders */
	uint64_t	 t0_ns;		/* UNKNOWN_U64: no timed event */
	uint64_t	 span_ns;	/* last instant - t0 */
	uint64_t	 bucket_ns;
	size_t		 nbuckets;	/* 0 when there is no timed event */
	struct report_peak peak;	/* of the device lanes together (all
					   for the host layer), in layer */

	struct report_lane *lanes;	/* by rank, process, device */
	size_t		 nlanes;
	struct report_track *tracks;	/* by lane, then layer */
	size_t		 ntracks;
	struct report_series *series;	/* by track, then stream */
	size_t		 nseries;
	struct report_step *steps;	/* by step */
	size_t		 nsteps;

	/* The sites holding layer's bytes at the peak and at the end. */
	struct report_frame *frames;
	size_t		 nframes;
	struct report_site *sites;	/* by bytes at the peak, then end */
	size_t		 nsites;
	struct report_block *blocks[REPORT_AT_MAX];	/* by site, bytes */
	size_t		 nblocks[REPORT_AT_MAX];
	int64_t		 other_sites[REPORT_AT_MAX];	/* left out ... */
	int64_t		 other_bytes[REPORT_AT_MAX];	/* ... and theirs */
};

/* Buckets of time at most (about a pixel each on a wide screen). */
#define REPORT_BUCKETS		1500
/* Values of series buckets at most: fewer buckets for many series. */
#define REPORT_POINTS		600000
/* Sites the holders keep, and blocks kept of each site at each moment. */
#define REPORT_SITES		400
#define REPORT_SITE_BLOCKS	16

/* query-report.c */
int	 query_report(struct query *, int64_t, int, size_t,
	     struct report **, char **);
void	 query_report_free(struct report *);
int64_t	 query_report_step_at(const struct report *, uint64_t);
int	 query_report_peak(struct query *, int64_t, int, struct report_peak *,
	     uint64_t *, char **);

/* query-peak.c */
int	 query_peak_steps(struct query *, struct report *, char **);

/* query-report-walk.c */
int	 query_report_walk(struct query *, struct report *, size_t, char **);
size_t	 query_report_walk_lane(struct report *, int64_t, int32_t);
size_t	 query_report_walk_bucket(const struct report *, uint64_t);

/* query-report-sites.c */
int	 query_report_sites(struct query *, struct report *, char **);

/* report-html.c */
int	 report_html_write(FILE *, const struct query_run *,
	     const struct report *, const struct leak_report *,
	     const struct leak_report *, char **);

/* report-html-json.c */
void	 report_html_json_count(FILE *, int64_t);
void	 report_html_json_array(FILE *, const int64_t *, size_t);

/* report-html-page.c (made from report-html.html, .css and .js) */
extern const char report_html_head[];
extern const char report_html_tail[];

#endif
