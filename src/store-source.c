/*
 * store-source.c: one event stream, decoded and put in time order for the
 * row writers (store-rows.c).
 *
 * A source is one producer of events: a connection to the collector, or a
 * spool file being replayed.  It owns what is scoped to that stream: the
 * string ids the producer defined, the process row its PROCESS_START made,
 * and the stacks (site strings) it resolved.  It hands each event, with
 * its strings resolved and its process known, to the writer of its table;
 * it binds no SQL itself.  String ids are whatever the producer chose
 * (lib/client.c counts from 1), so they go through a hash map to a dense
 * array of the strings defined: memory follows the strings a stream
 * defined, never the size of an id it names.  A site string holds one
 * frame per line,
 * "name<TAB>filename<TAB>line", innermost first, after an optional first
 * line "!KIND" that says which kind of stack it is (lib/stack.h).
 *
 * Events of one process do not arrive in time order: CUPTI fills a buffer
 * per thread and delivers each when it is flushed, so the free of a tensor
 * on PyTorch's autograd thread can arrive after a later allocation of the
 * same address on the main thread.  Applied as they come, that free would
 * end the wrong allocation.  So a source holds its timed events in a
 * min-heap and applies them in time order once they are older than the
 * newest event by STORE_REORDER_NS (several flush periods); strings and the
 * process start, which later events refer to, are applied at once, and
 * store_source_drain() applies the rest when the stream ends.  Most events
 * do arrive in order, so those wait in a FIFO (sorted by construction) and
 * only the late ones in the heap; releasing merges the two.
 */
#include "config.h"

#include "store-int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define SOURCE_STRINGS_MAX	(1u << 24)

/* How far behind the newest event a source applies events, in ns. */
#define STORE_REORDER_NS	(2000ull * 1000 * 1000)

/*
 * A held event, its arrival number (which breaks ties in time) and the
 * process it arrived under (a spool file may hold several processes).
 */
struct held_event {
	struct event	ev;
	uint64_t	seq;
	int64_t		process_id;
};

/* A string a source defined, and the site it resolved to (0: not yet). */
struct source_string {
	char		*text;
	int64_t		 site_id;
};

struct store_source {
	struct store	*store;
	char		*name;
	struct store_idmap ids;		/* string id -> index in strings + 1 */
	struct source_string *strings;
	size_t		 nstrings;
	size_t		 strings_alloc;
	int64_t		 process_id;	/* of the latest PROCESS_START */
	int64_t		 apply_pid;	/* of the event being applied */
	int64_t		 step_begin;	/* ns of the last STEP_BEGIN; 0 */

	struct held_event *heap;	/* late events: min-heap by (time, seq) */
	size_t		 nheld;
	size_t		 held_alloc;
	struct held_event *fifo;	/* in-order events: a ring */
	size_t		 fifo_head;
	size_t		 nfifo;
	size_t		 fifo_alloc;	/* a power of two, or 0 */
	uint64_t	 seq;
	uint64_t	 newest;	/* the latest time seen */
};

/* Make a source for stream `name` (for messages) writing into s. */
struct store_source *
store_source_create(struct store *s, const char *name)
{
	struct store_source	*src;

	src = xcalloc(1, sizeof *src);
	src->store = s;
	src->name = xstrdup(name);
	return (src);
}

/*
 * Free a source.  What it wrote stays in the store; events it still holds
 * are dropped, so call store_source_drain() first when the stream ended.
 */
void
store_source_free(struct store_source *src)
{
	size_t	i;

	if (src == NULL)
		return;
	for (i = 0; i < src->nstrings; i++)
		free(src->strings[i].text);
	free(src->strings);
	store_idmap_free(&src->ids);
	free(src->heap);
	free(src->fifo);
	free(src->name);
	free(src);
}

static int
source_error(struct store_source *src, char **cause, const char *fmt, ...)
    printflike(3, 4);

static int
source_error(struct store_source *src, char **cause, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;

	if (cause == NULL)
		return (-1);
	va_start(ap, fmt);
	xvasprintf(&msg, fmt, ap);
	va_end(ap);
	xasprintf(cause, "%s: %s", src->name, msg);
	free(msg);
	return (-1);
}

/* The string defined under id, or NULL. */
static struct source_string *
source_string_of(struct store_source *src, uint32_t id)
{
	int64_t	i;

	if (id == 0 || (i = store_idmap_get(&src->ids, id)) == 0)
		return (NULL);
	return (&src->strings[i - 1]);
}

static const char *
source_string(struct store_source *src, uint32_t id)
{
	struct source_string	*ss = source_string_of(src, id);

	return (ss != NULL ? ss->text : NULL);
}

static int
define_string(struct store_source *src, const struct event_string *es,
    char **cause)
{
	struct source_string	*ss;

	if (es->id == 0 || es->id >= SOURCE_STRINGS_MAX)
		return (source_error(src, cause, "string id %" PRIu32
		    " out of range", es->id));
	if ((ss = source_string_of(src, es->id)) == NULL) {
		if (src->nstrings == src->strings_alloc) {
			src->strings_alloc = src->strings_alloc == 0 ? 64 :
			    2 * src->strings_alloc;
			src->strings = xreallocarray(src->strings,
			    src->strings_alloc, sizeof *src->strings);
		}
		ss = &src->strings[src->nstrings++];
		store_idmap_put(&src->ids, es->id, (int64_t)src->nstrings);
	} else
		free(ss->text);
	ss->text = xstrndup(es->text, es->length);
	ss->site_id = 0;
	return (0);
}

/*
 * Resolve a site string id into *site, a sites.id (0 for none).  0, or -1
 * with *cause.
 */
static int
source_site(struct store_source *src, uint32_t id, int64_t *site,
    char **cause)
{
	struct source_string	*ss;
	struct store_frame	*frames = NULL;
	const char		*kind = NULL;
	char			*copy, *line, *save, *f1, *f2;
	size_t			 n = 0;
	int			 rc;

	*site = 0;
	if ((ss = source_string_of(src, id)) == NULL)
		return (0);
	if ((*site = ss->site_id) != 0)
		return (0);
	copy = xstrdup(ss->text);
	for (line = strtok_r(copy, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (n == 0 && kind == NULL && line[0] == '!') {
			kind = line + 1;
			continue;
		}
		frames = xreallocarray(frames, n + 1, sizeof *frames);
		f1 = strchr(line, '\t');
		f2 = f1 != NULL ? strchr(f1 + 1, '\t') : NULL;
		if (f1 != NULL)
			*f1 = '\0';
		if (f2 != NULL)
			*f2 = '\0';
		frames[n].name = line;
		frames[n].filename = f1 != NULL ? f1 + 1 : "??";
		frames[n].line = f2 != NULL ? strtoll(f2 + 1, NULL, 10) : 0;
		n++;
	}
	rc = store_site_add(src->store, frames, n, site, cause);
	if (rc == 0 && *site > 0 && kind != NULL)
		rc = store_site_kind(src->store, *site, kind, cause);
	free(frames);
	free(copy);
	if (rc == 0)
		ss->site_id = *site;
	return (rc);
}

/*
 * Hold an event's size to what a machine can have, since a spool file or
 * a client may say anything: an allocation, a copy, an offloaded or checked
 * tensor and a device's memory are below 128 TiB (ALLOCATION_BYTES_MAX),
 * and a run's allocations, copies and offloads add up to 2 EiB at most
 * (RUN_BYTES_MAX).  Past them a sum, the live bytes of a step, might
 * not fit in 63 bits and come out negative, and a device of 4 EiB would
 * make any leak too slow to matter: either could turn a leak CLEAN.  0, or
 * -1 with *cause.
 */
static int
source_sizes(struct store_source *src, const struct event *ev, char **cause)
{
	struct store	*s = src->store;
	const char	*what;
	uint64_t	 bytes;
	int		 summed = 1;

	switch (ev->type) {
	case EVENT_ALLOC:
	case EVENT_FREE:
		what = "an allocation";
		bytes = ev->u.alloc.bytes;
		break;
	case EVENT_MEMCPY:
		what = "a copy";
		bytes = ev->u.memcpy.bytes;
		break;
	case EVENT_OFFLOAD:
		what = "an offloaded tensor";
		bytes = ev->u.offload.bytes;
		break;
	case EVENT_CHECK_DIFF:
		what = "a checked tensor";
		bytes = ev->u.check_diff.bytes;
		summed = 0;
		break;
	case EVENT_DEVICE:
		what = "a device";
		bytes = ev->u.device.total_bytes;
		summed = 0;
		break;
	default:
		return (0);
	}
	if (bytes > ALLOCATION_BYTES_MAX)
		return (source_error(src, cause, "%s of %" PRIu64 " bytes, more"
		    " than 128 TiB", what, bytes));
	if (!summed)
		return (0);
	if (bytes > RUN_BYTES_MAX - s->source_bytes)
		return (source_error(src, cause, "%s of %" PRIu64 " bytes takes"
		    " the run's sizes past 2 EiB in all", what, bytes));
	s->source_bytes += bytes;
	return (0);
}

static int
source_alloc(struct store_source *src, const struct event *ev, char **cause)
{
	struct store		*s = src->store;
	struct store_allocation	 a;
	int64_t			 site;

	if (source_site(src, ev->u.alloc.site, &site, cause) != 0)
		return (-1);
	memset(&a, 0, sizeof a);
	a.process_id = src->apply_pid;
	a.device = ev->u.alloc.device;
	a.layer = ev->u.alloc.layer;
	a.stream = ev->u.alloc.stream;
	a.address = ev->u.alloc.address;
	a.bytes = ev->u.alloc.bytes;
	a.requested = ev->u.alloc.requested;
	a.correlation = ev->u.alloc.correlation;
	a.site_id = site;
	a.free_requested_ns = a.free_ns = EVENT_NONE;
	if (ev->type == EVENT_ALLOC) {
		a.alloc_ns = ev->time_ns;
		return (store_rows_alloc_begin(s, &a, cause));
	}
	return (store_rows_alloc_end(s, &a, ev->time_ns, ev->time_ns, cause));
}

/* A saved tensor that came back different: its strings and stacks. */
static int
source_check_diff(struct store_source *src, const struct event *ev,
    char **cause)
{
	const struct event_check_diff	*d = &ev->u.check_diff;
	struct store_check_names	 n;

	if (source_site(src, d->pack_site, &n.pack_site, cause) != 0 ||
	    source_site(src, d->unpack_site, &n.unpack_site, cause) != 0)
		return (-1);
	n.engine = source_string(src, d->engine);
	n.shape = source_string(src, d->shape);
	n.dtype = source_string(src, d->dtype);
	n.detail = source_string(src, d->detail);
	n.where = source_string(src, d->where);
	return (store_rows_check_diff(src->store, src->apply_pid, ev->time_ns,
	    d, &n, cause));
}

static int
source_misc(struct store_source *src, const struct event *ev, char **cause)
{
	struct store	*s = src->store;
	const char	*name;

	switch (ev->type) {
	case EVENT_DROPPED:
		return (store_rows_dropped(s, src->apply_pid, ev->time_ns,
		    &ev->u.dropped, source_string(src, ev->u.dropped.source),
		    cause));
	case EVENT_DEVICE:
		return (store_rows_device(s, src->apply_pid, &ev->u.device,
		    source_string(src, ev->u.device.name), cause));
	case EVENT_PROCESS_END:
		if (src->apply_pid == 0)
			return (0);
		return (store_rows_process_end(s, src->apply_pid,
		    ev->time_ns, cause));
	case EVENT_STEP_BEGIN:
		src->step_begin = (int64_t)ev->time_ns;
		return (0);
	case EVENT_STEP_END:
		if (store_rows_step(s, src->apply_pid, ev->u.step.step,
		    (uint64_t)src->step_begin, ev->time_ns,
		    source_string(src, ev->u.step.name), cause) != 0)
			return (-1);
		src->step_begin = 0;
		return (0);
	case EVENT_MARK:
		name = source_string(src, ev->u.step.name);
		return (store_rows_mark(s, src->apply_pid, -1, ev->time_ns,
		    NULL, name != NULL ? name : "mark", cause));
	case EVENT_CHECK_STEP:
		return (store_rows_check_step(s, src->apply_pid,
		    &ev->u.check_step, source_string(src,
		    ev->u.check_step.engine), cause));
	case EVENT_CHECK_DIFF:
		return (source_check_diff(src, ev, cause));
	}
	return (0);
}

static int
held_before(const struct held_event *a, const struct held_event *b)
{
	if (a->ev.time_ns != b->ev.time_ns)
		return (a->ev.time_ns < b->ev.time_ns);
	return (a->seq < b->seq);
}

static void
heap_push(struct store_source *src, const struct event *ev)
{
	struct held_event	 tmp;
	size_t			 i, parent;

	if (src->nheld == src->held_alloc) {
		src->held_alloc = src->held_alloc == 0 ? 1024 :
		    2 * src->held_alloc;
		src->heap = xreallocarray(src->heap, src->held_alloc,
		    sizeof *src->heap);
	}
	i = src->nheld++;
	src->heap[i].ev = *ev;
	src->heap[i].seq = src->seq++;
	src->heap[i].process_id = src->process_id;
	while (i > 0) {
		parent = (i - 1) / 2;
		if (!held_before(&src->heap[i], &src->heap[parent]))
			break;
		tmp = src->heap[i];
		src->heap[i] = src->heap[parent];
		src->heap[parent] = tmp;
		i = parent;
	}
}

static struct held_event
heap_pop(struct store_source *src)
{
	struct held_event	 top = src->heap[0], tmp;
	size_t			 i = 0, l, m;

	src->heap[0] = src->heap[--src->nheld];
	for (;;) {
		l = 2 * i + 1;
		m = i;
		if (l < src->nheld && held_before(&src->heap[l], &src->heap[m]))
			m = l;
		if (l + 1 < src->nheld &&
		    held_before(&src->heap[l + 1], &src->heap[m]))
			m = l + 1;
		if (m == i)
			break;
		tmp = src->heap[i];
		src->heap[i] = src->heap[m];
		src->heap[m] = tmp;
		i = m;
	}
	return (top);
}

static void
fifo_push(struct store_source *src, const struct event *ev)
{
	struct held_event	*ring;
	size_t			 n, i;

	if (src->nfifo == src->fifo_alloc) {
		n = src->fifo_alloc == 0 ? 1024 : 2 * src->fifo_alloc;
		ring = xreallocarray(NULL, n, sizeof *ring);
		for (i = 0; i < src->nfifo; i++)
			ring[i] = src->fifo[(src->fifo_head + i) &
			    (src->fifo_alloc - 1)];
		free(src->fifo);
		src->fifo = ring;
		src->fifo_head = 0;
		src->fifo_alloc = n;
	}
	i = (src->fifo_head + src->nfifo++) & (src->fifo_alloc - 1);
	src->fifo[i].ev = *ev;
	src->fifo[i].seq = src->seq++;
	src->fifo[i].process_id = src->process_id;
}

static const struct held_event *
fifo_tail(const struct store_source *src)
{
	if (src->nfifo == 0)
		return (NULL);
	return (&src->fifo[(src->fifo_head + src->nfifo - 1) &
	    (src->fifo_alloc - 1)]);
}

static int	source_apply(struct store_source *, const struct event *,
		    char **);

/*
 * Apply the held events that are older than `until`, in time order: the
 * older of the FIFO's head and the heap's top each time.  0, or -1.
 */
static int
source_release(struct store_source *src, uint64_t until, char **cause)
{
	const struct held_event	*f;
	struct held_event	 h;

	for (;;) {
		f = src->nfifo > 0 ? &src->fifo[src->fifo_head] : NULL;
		if (f != NULL && (src->nheld == 0 ||
		    held_before(f, &src->heap[0]))) {
			if (f->ev.time_ns >= until)
				break;
			h = *f;
			src->fifo_head = (src->fifo_head + 1) &
			    (src->fifo_alloc - 1);
			src->nfifo--;
		} else if (src->nheld > 0 && src->heap[0].ev.time_ns < until)
			h = heap_pop(src);
		else
			break;
		src->apply_pid = h.process_id;
		if (source_apply(src, &h.ev, cause) != 0)
			return (-1);
	}
	return (0);
}

/*
 * Take one event from this source.  Strings, the process start and events
 * of unknown time are written at once; the others in time order, once they
 * are STORE_REORDER_NS older than the newest event seen.  The store must
 * have a run (store_run_begin).  Returns 0, or -1 with *cause: "NAME:
 * what" for an event the source cannot take, "DB: what" when the database
 * fails.
 */
int
store_source_event(struct store_source *src, const struct event *ev,
    char **cause)
{
	if (src->store->run_id == 0)
		return (source_error(src, cause, "no run to write into"));
	if (ev->type == EVENT_STRING || ev->type == EVENT_PROCESS_START ||
	    ev->time_ns == 0) {
		src->apply_pid = src->process_id;
		return (source_apply(src, ev, cause));
	}
	if (fifo_tail(src) == NULL || fifo_tail(src)->ev.time_ns <= ev->time_ns)
		fifo_push(src, ev);
	else
		heap_push(src, ev);
	if (ev->time_ns > src->newest)
		src->newest = ev->time_ns;
	if (src->newest < STORE_REORDER_NS)
		return (0);
	return (source_release(src, src->newest - STORE_REORDER_NS, cause));
}

/*
 * Write every event the source still holds, in time order.  0, or -1 with
 * *cause.
 */
int
store_source_drain(struct store_source *src, char **cause)
{
	return (source_release(src, UINT64_MAX, cause));
}

static int
source_apply(struct store_source *src, const struct event *ev, char **cause)
{
	struct store	*s = src->store;
	int		 rc = 0;

	s->applied++;
	if (source_sizes(src, ev, cause) != 0)
		return (-1);
	switch (ev->type) {
	case EVENT_STRING:
		return (define_string(src, &ev->u.string, cause));
	case EVENT_PROCESS_START:
		rc = store_rows_process(s, &ev->u.process,
		    source_string(src, ev->u.process.host),
		    source_string(src, ev->u.process.command),
		    source_string(src, ev->u.process.job), ev->time_ns,
		    &src->process_id, cause);
		break;
	case EVENT_ALLOC:
	case EVENT_FREE:
		rc = source_alloc(src, ev, cause);
		break;
	case EVENT_MEMCPY:
		rc = store_rows_memcpy(s, src->apply_pid, ev->time_ns,
		    &ev->u.memcpy, cause);
		break;
	case EVENT_STREAM_CREATE:
		rc = store_rows_stream(s, src->apply_pid, &ev->u.stream, 1,
		    ev->time_ns, cause);
		break;
	case EVENT_STREAM_DESTROY:
		rc = store_rows_stream_end(s, src->apply_pid, &ev->u.stream,
		    ev->time_ns, cause);
		break;
	case EVENT_CONTEXT_CREATE:
	case EVENT_CONTEXT_DESTROY:
		break;		/* contexts matter only through their streams */
	case EVENT_OFFLOAD:
		rc = store_rows_offload(s, src->apply_pid, ev->time_ns,
		    &ev->u.offload, cause);
		break;
	default:
		rc = source_misc(src, ev, cause);
		break;
	}
	if (rc != 0)
		return (-1);
	return (store_maybe_commit(s, cause));
}
