/*
 * cmd-export.c: vramtrace export DB --perfetto OUT.json: a run as a Chrome
 * trace-event file that ui.perfetto.dev (and chrome://tracing) opens.
 *
 * Each traced process is a trace process (pid = processes.id; 0 holds the
 * steps and what has no process) and each (device, stream) of it a thread.
 * Live bytes are counter tracks ("ph": "C"), one per process, device,
 * stream and layer, with the running total at each change, and one per
 * process, device and layer for the device's total over its streams; when
 * a run has more allocation and free events than --max-points, time is
 * cut into buckets and each bucket gives its highest value and its last,
 * so the peak and the final value stay exact.  The changes come in time
 * order (one walk over the allocations); each track keeps its points,
 * at most two per bucket (or one per event under --max-points events),
 * and the tracks are written one after the other.  Copies and steps are
 * complete slices ("ph": "X"), offload decisions instants ("ph": "i").
 * The --allocations largest allocations are async slices ("ph": "b" and
 * "e", id = allocations.id) named by their site, with their size, from
 * their allocation to their free (or the run's end): Perfetto draws those
 * of a site on one track, in as many rows as overlap.  Times are
 * microseconds from the run's first instant, which otherData.t0_ns gives.
 */
#include "config.h"

#include "vramtrace.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "query.h"
#include "slots.h"

static int	cmd_export_exec(const struct cmd_entry *,
		    const struct cmd_args *);

#define EXPORT_MAX_POINTS	100000
#define EXPORT_ALLOCATIONS	100000

static const struct cmd_option cmd_export_options[] = {
	{ .name = "perfetto", .letter = 'p', .flags = CMD_REQUIRED,
	  .kind = CMD_TEXT, .value = "OUT.json",
	  .help = "the Chrome trace-event JSON file to write" },
	CMD_OPTION_RUN("the run to export (default: the newest)"),
	{ .name = "max-points", .letter = 'n', .kind = CMD_NUMBER,
	  .value = "N", .min = 16,
	  .help = "bucket live-byte counters beyond N events (100000)" },
	{ .name = "allocations", .letter = 'a', .kind = CMD_NUMBER,
	  .value = "N",
	  .help = "write the N largest allocations as slices (100000)" },
	CMD_OPTION_END
};

const struct cmd_entry cmd_export_entry = {
	.name = "export",
	CMD_ARGS_DB,
	.options = cmd_export_options,
	.summary = "write a run as a trace that ui.perfetto.dev opens",
	.exec = cmd_export_exec
};

/* A (process, device, stream): a thread of the trace. */
struct export_thread {
	int64_t		 pid;
	int32_t		 device;
	uint64_t	 stream;
};

/* A point of a counter track. */
struct export_point {
	uint64_t		 t;
	int64_t			 value;
};

/* A counter track: its live bytes, its bucket, the points it keeps. */
struct export_track {
	struct query_item	 item;		/* kind NULL: not seen */
	int			 seen;
	int64_t			 value;
	uint64_t		 bucket;
	int			 pending;	/* a bucket not kept yet */
	int64_t			 max_value;
	uint64_t		 max_ns;
	int64_t			 last_value;
	uint64_t		 last_ns;
	struct export_point	*points;
	size_t			 npoints, cap;
};

struct export {
	FILE			*f;
	uint64_t		 t0;
	uint64_t		 width;	/* counter bucket, ns; 0: none */
	uint64_t		 last;	/* the run's last instant */
	int			 first;	/* no event written yet */
	struct export_thread	*threads;
	size_t			 nthreads;
	struct slots		 thread_slots;	/* threads by their key */
	struct export_track	*tracks;	/* by rank (item.number) */
	size_t			 ntracks;
};

/*
 * Start the next event object: the separator and the common keys.  The
 * trace's pid is the process's id, 0 for what belongs to none.
 */
static void
event_begin(struct export *x, const char *ph, int64_t pid, size_t tid)
{
	fprintf(x->f, "%s\n{\"ph\": \"%s\", \"pid\": %" PRId64 ", \"tid\": "
	    "%zu", x->first ? "" : ",", ph, pid >= 0 ? pid : 0, tid);
	x->first = 0;
}

/* Write ", \"KEY\": T" with T in microseconds from t0, ns precision. */
static void
event_time(struct export *x, const char *key, uint64_t t, uint64_t base)
{
	uint64_t	d = t > base ? t - base : 0;

	fprintf(x->f, ", \"%s\": %" PRIu64 ".%03u", key, d / 1000,
	    (unsigned int)(d % 1000));
}

/* The trace thread thread_of() looks for. */
struct export_thread_want {
	const struct export	*x;
	int64_t			 pid;
	int32_t			 device;
	uint64_t		 stream;
};

static uint64_t
thread_hash_at(size_t pos, const void *arg)
{
	const struct export_thread	*t = &((const struct export *)arg)->
	    threads[pos];

	return (slots_hash_stream(t->stream, t->device, (uint64_t)t->pid));
}

static int
thread_same(size_t pos, const void *arg)
{
	const struct export_thread_want	*w = arg;
	const struct export_thread	*t = &w->x->threads[pos];

	return (t->pid == w->pid && t->device == w->device &&
	    t->stream == w->stream);
}

/*
 * The trace thread of (pid, device, stream): its index + 1, the first
 * such; 0: none.  Found through x->thread_slots, not a scan of every
 * thread per allocation.
 */
static size_t
thread_of(struct export *x, int64_t pid, int32_t device, uint64_t stream)
{
	struct export_thread_want	 w = { x, pid, device, stream };
	size_t				*slot;

	slot = slots_find(&x->thread_slots, slots_hash_stream(stream, device,
	    (uint64_t)pid), thread_same, &w);
	return (slot != NULL ? *slot : 0);
}

/* A thread's name: "dev 0 stream 13" (fmt_stream: "n/a" when unknown). */
static void
stream_label(char *buf, size_t len, int32_t device, uint64_t stream)
{
	char	s[FMT_LEN];

	snprintf(buf, len, "dev %d stream %s", (int)device,
	    fmt_stream(stream, s, sizeof s));
}

static void
on_process(void *arg, const struct query_item *it)
{
	struct export	*x = arg;

	event_begin(x, "M", it->process_id, 0);
	fputs(", \"name\": \"process_name\", \"args\": {\"name\": ", x->f);
	json_string(x->f, it->name);
	fprintf(x->f, "}}");
	if (it->number >= 0) {
		event_begin(x, "M", it->process_id, 0);
		fprintf(x->f, ", \"name\": \"process_sort_index\", \"args\": "
		    "{\"sort_index\": %" PRId64 "}}", it->number);
	}
}

static void
on_stream(void *arg, const struct query_item *it)
{
	struct export			*x = arg;
	struct export_thread_want	 w = { x, it->process_id, it->device,
	    it->stream };
	struct export_thread		*t;
	size_t				*slot;
	char				 label[64];

	x->threads = xreallocarray(x->threads, x->nthreads + 1,
	    sizeof *x->threads);
	slots_reserve(&x->thread_slots, x->nthreads, thread_hash_at, x);
	slot = slots_find(&x->thread_slots, slots_hash_stream(w.stream,
	    w.device, (uint64_t)w.pid), thread_same, &w);
	if (*slot == 0)
		*slot = x->nthreads + 1;
	t = &x->threads[x->nthreads++];
	t->pid = it->process_id;
	t->device = it->device;
	t->stream = it->stream;
	stream_label(label, sizeof label, it->device, it->stream);
	event_begin(x, "M", it->process_id, x->nthreads);
	fputs(", \"name\": \"thread_name\", \"args\": {\"name\": ", x->f);
	json_string(x->f, label);
	fputs("}}", x->f);
}

/* Write a point of counter track k. */
static void
counter_write(struct export *x, const struct export_track *k,
    const struct export_point *p)
{
	const struct query_item	*it = &k->item;
	const char		*layer;
	char			 label[64];

	if (it->kind == QUERY_ITEM_TOTAL)
		snprintf(label, sizeof label, "dev %d total", (int)it->device);
	else
		stream_label(label, sizeof label, it->device, it->stream);
	layer = it->layer >= 0 ? event_layer_name((unsigned int)it->layer) :
	    NULL;
	event_begin(x, "C", it->process_id, 0);
	fprintf(x->f, ", \"name\": \"live bytes %s %s\"", label,
	    fmt_text(layer));
	event_time(x, "ts", p->t, x->t0);
	fprintf(x->f, ", \"args\": {\"bytes\": %" PRId64 "}}", p->value);
}

/* Keep a point of counter track k. */
static void
counter_point(struct export_track *k, uint64_t t, int64_t value)
{
	if (k->npoints == k->cap) {
		k->cap = k->cap == 0 ? 16 : 2 * k->cap;
		k->points = xreallocarray(k->points, k->cap,
		    sizeof *k->points);
	}
	k->points[k->npoints].t = t;
	k->points[k->npoints++].value = value;
}

/* Keep the bucket in progress: its highest value, then its last. */
static void
counter_flush(struct export_track *k)
{
	if (!k->pending)
		return;
	counter_point(k, k->max_ns, k->max_value);
	if (k->last_ns != k->max_ns)
		counter_point(k, k->last_ns, k->last_value);
	k->pending = 0;
}

/* A change of a track's live bytes, in time order. */
static void
on_change(void *arg, const struct query_item *it)
{
	struct export		*x = arg;
	struct export_track	*k;
	uint64_t		 t = it->start_ns, b;
	size_t			 i = (size_t)it->number;

	if (i >= x->ntracks) {
		x->tracks = xreallocarray(x->tracks, i + 1, sizeof *x->tracks);
		memset(&x->tracks[x->ntracks], 0, (i + 1 - x->ntracks) *
		    sizeof *x->tracks);
		x->ntracks = i + 1;
	}
	k = &x->tracks[i];
	if (!k->seen) {
		k->item = *it;
		k->item.name = NULL;
		k->seen = 1;
	}
	k->value += it->bytes;
	if (x->width == 0) {
		counter_point(k, t, k->value);
		return;
	}
	b = (t > x->t0 ? t - x->t0 : 0) / x->width;
	if (!k->pending || b != k->bucket) {
		counter_flush(k);
		k->bucket = b;
		k->pending = 1;
		k->max_value = k->value;
		k->max_ns = t;
	} else if (k->value > k->max_value) {
		k->max_value = k->value;
		k->max_ns = t;
	}
	k->last_value = k->value;
	k->last_ns = t;
}

/* Write every counter track's points, a track after the other. */
static void
counters_write(struct export *x)
{
	struct export_track	*k;
	size_t			 i, j;

	for (i = 0; i < x->ntracks; i++) {
		k = &x->tracks[i];
		counter_flush(k);
		for (j = 0; j < k->npoints; j++)
			counter_write(x, k, &k->points[j]);
		free(k->points);
		k->points = NULL;
	}
}

/*
 * An allocation: an async slice on its process, named by its site, from
 * its allocation to its free or the run's end.
 */
static void
on_allocation(void *arg, const struct query_item *it)
{
	struct export	*x = arg;
	const char	*ph[] = { "b", "e" };
	uint64_t	 end = it->end_ns != UNKNOWN_U64 ? it->end_ns : x->last;
	size_t		 tid, i;
	char		 s[FMT_LEN];

	tid = thread_of(x, it->process_id, it->device, it->stream);
	for (i = 0; i < 2; i++) {
		event_begin(x, ph[i], it->process_id, tid);
		fprintf(x->f, ", \"cat\": \"allocation\", \"id\": %" PRId64
		    ", \"name\": ", it->number);
		json_string(x->f, it->name != NULL ? it->name : "no stack");
		event_time(x, "ts", i == 0 ? it->start_ns : end, x->t0);
		if (i == 1) {
			fputs("}", x->f);
			break;
		}
		fprintf(x->f, ", \"args\": {\"bytes\": %" PRId64 ", \"size\": "
		    "\"%s\", \"layer\": \"%s\", \"stream\": ", it->bytes,
		    fmt_bytes(it->bytes, s, sizeof s),
		    event_layer_name((unsigned int)it->layer));
		json_stream(x->f, it->stream);
		fprintf(x->f, ", \"freed\": %s}}", it->end_ns != UNKNOWN_U64 ?
		    "true" : "false");
	}
}

static const char *
copy_kind_name(int64_t kind)
{
	switch (kind) {
	case EVENT_COPY_HTOD:
		return ("HtoD");
	case EVENT_COPY_DTOH:
		return ("DtoH");
	case EVENT_COPY_DTOD:
		return ("DtoD");
	case EVENT_COPY_PEER:
		return ("peer");
	}
	return ("copy");
}

static void
on_memcpy(void *arg, const struct query_item *it)
{
	struct export	*x = arg;
	uint64_t	 end = it->end_ns != EVENT_NONE ? it->end_ns :
			     it->start_ns;

	event_begin(x, "X", it->process_id, thread_of(x, it->process_id,
	    it->device, it->stream));
	fprintf(x->f, ", \"name\": \"memcpy %s\"", copy_kind_name(it->number));
	event_time(x, "ts", it->start_ns, x->t0);
	event_time(x, "dur", end, it->start_ns);
	fprintf(x->f, ", \"args\": {\"bytes\": %" PRId64 "}}", it->bytes);
}

static void
on_step(void *arg, const struct query_item *it)
{
	struct export	*x = arg;
	uint64_t	 start = it->start_ns != EVENT_NONE ? it->start_ns :
			     it->end_ns;

	event_begin(x, "X", 0, 0);
	fprintf(x->f, ", \"name\": \"step %" PRId64 "\"", it->number);
	event_time(x, "ts", start, x->t0);
	event_time(x, "dur", it->end_ns, start);
	fputs(", \"args\": {\"name\": ", x->f);
	json_string(x->f, it->name);
	fputs("}}", x->f);
}

static void
on_offload(void *arg, const struct query_item *it)
{
	struct export	*x = arg;

	event_begin(x, "i", it->process_id, thread_of(x, it->process_id,
	    it->device, it->stream));
	fputs(", \"s\": \"t\", \"name\": ", x->f);
	json_string(x->f, it->name);
	event_time(x, "ts", it->start_ns, x->t0);
	fprintf(x->f, ", \"args\": {\"bytes\": %" PRId64 ", \"step\": %"
	    PRId64 "}}", it->bytes, it->number);
}

/* What export_write needs: the reader, the trace's state, the run. */
struct export_job {
	struct query			*q;
	struct export			*x;
	const struct query_bounds	*b;
	int64_t				 allocations;	/* to write */
	int				 unread;	/* the run failed */
};

/* The job's run could not be read: -1. */
static int
export_unread(struct export_job *job)
{
	job->unread = 1;
	return (-1);
}

/*
 * Write the whole trace of the job's run to f.  0, or -1 with *cause (and
 * job->unread set when the run could not be read).
 */
static int
export_write(FILE *f, void *arg, char **cause)
{
	static const query_item_fn	 fns[QUERY_ITEM_MAX] = {
		[QUERY_ITEM_PROCESS] = on_process,
		[QUERY_ITEM_STREAM] = on_stream,
		[QUERY_ITEM_MEMCPY] = on_memcpy,
		[QUERY_ITEM_STEP] = on_step,
		[QUERY_ITEM_OFFLOAD] = on_offload,
	};
	struct export_job		*job = arg;
	struct export			*x = job->x;
	int				 k;
	char				 name[64];

	x->f = f;
	fprintf(x->f, "{\"displayTimeUnit\": \"ns\", \"otherData\": "
	    "{\"generator\": \"vramtrace %s\", \"run\": %" PRId64
	    ", \"t0_ns\": %" PRIu64 "},\n\"traceEvents\": [", PACKAGE_VERSION,
	    job->b->run_id, x->t0);
	snprintf(name, sizeof name, "run %" PRId64 " (steps)", job->b->run_id);
	event_begin(x, "M", 0, 0);
	fputs(", \"name\": \"process_name\", \"args\": {\"name\": ", x->f);
	json_string(x->f, name);
	fputs("}}", x->f);
	for (k = 0; k < QUERY_ITEM_MAX; k++) {
		/* Changes and totals: one walk, in time order. */
		if (k == QUERY_ITEM_CHANGE) {
			if (query_timeline_live(job->q, job->b->run_id, x->t0,
			    on_change, x, cause) != 0)
				return (export_unread(job));
			counters_write(x);
		}
		if (fns[k] != NULL && query_timeline(job->q, job->b->run_id, k,
		    fns[k], x, cause) != 0)
			return (export_unread(job));
	}
	if (job->allocations > 0 && query_timeline_allocations(job->q,
	    job->b->run_id, job->allocations, on_allocation, x, cause) != 0)
		return (export_unread(job));
	fputs("\n]}\n", x->f);
	return (0);
}

/*
 * Write the trace to path (util_write_file: all or nothing).  EXIT_OK, or
 * with *cause EXIT_INPUT (the run cannot be read) or EXIT_ERROR (path
 * cannot be written).
 */
static int
export_file(struct query *q, const char *path, int64_t run_id,
    uint64_t max_points, int64_t allocations, char **cause)
{
	struct query_bounds	 b;
	struct export		 x;
	struct export_job	 job = { q, &x, &b, allocations, 0 };
	size_t			 i;
	int			 rc;

	if (query_timeline_bounds(q, run_id, &b, cause) != 0)
		return (EXIT_INPUT);
	memset(&x, 0, sizeof x);
	x.first = 1;
	x.t0 = b.first_ns != EVENT_NONE ? b.first_ns : 0;
	x.last = b.last_ns != EVENT_NONE ? b.last_ns : x.t0;
	if ((uint64_t)b.events > max_points && b.last_ns > b.first_ns)
		x.width = (b.last_ns - b.first_ns) / (max_points / 2 /
		    (uint64_t)(b.tracks + b.totals) + 1) + 1;
	rc = util_write_file(path, export_write, &job, cause);
	for (i = 0; i < x.ntracks; i++)
		free(x.tracks[i].points);
	free(x.tracks);
	free(x.threads);
	slots_free(&x.thread_slots);
	return (rc == 0 ? EXIT_OK : job.unread ? EXIT_INPUT : EXIT_ERROR);
}

static int
cmd_export_exec(const struct cmd_entry *self, const struct cmd_args *args)
{
	struct query	*q;
	char		*cause = NULL;
	int		 rc;

	(void)self;
	if ((q = input_open(args->argv[0], &cause)) == NULL)
		return (cmd_fail(EXIT_INPUT, cause));
	rc = export_file(q, cmd_args_text(args, 'p', NULL),
	    (int64_t)cmd_args_number(args, 'r', 0),
	    cmd_args_number(args, 'n', EXPORT_MAX_POINTS),
	    (int64_t)cmd_args_number(args, 'a', EXPORT_ALLOCATIONS), &cause);
	query_close(q);
	if (rc != EXIT_OK)
		return (cmd_fail(rc, cause));
	return (EXIT_OK);
}
