/*
 * import-trace.c: a snapshot's segments, blocks and trace entries into
 * rows.
 *
 * Trace entries become allocation rows through the store's live table:
 * alloc starts a block-layer allocation, free_requested notes when the
 * program freed it, free_completed ends it; segment_alloc and segment_map
 * start a segment-layer allocation, segment_free and segment_unmap end
 * one.  A free whose allocation happened before the trace began (the trace
 * is a ring buffer) becomes a row with no alloc time.  The snapshot's own
 * segments and blocks are its state at the end: after the trace, whatever
 * they hold that the trace did not leave live was allocated before the
 * trace began, and becomes a row with no alloc time (import_trace_reconcile).
 */
#include "config.h"

#include "import.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static int
field_error(struct import_state *st, char **cause, const char *what,
    size_t index, const char *key, const char *problem)
{
	xasprintf(cause, "%s: %s %zu: \"%s\" %s (not a PyTorch memory "
	    "snapshot)", st->file, what, index, key, problem);
	return (-1);
}

/*
 * Read integer key of dict v (element `index` of a `what` list) into *out.
 * A missing key or another type is an error naming both.  0, or -1 with
 * *cause.
 */
static int
field_int(struct import_state *st, const struct pickle_value *v,
    const char *what, const char *key, size_t index, int64_t *out,
    char **cause)
{
	const struct pickle_value	*f;

	if ((f = pickle_dict_get(v, key)) == NULL)
		return (field_error(st, cause, what, index, key, "is missing"));
	if (pickle_int(f, out) != 0)
		return (field_error(st, cause, what, index, key,
		    "is not an int"));
	return (0);
}

static const char *
field_str(const struct pickle_value *v, const char *key)
{
	const struct pickle_value	*f;

	if ((f = pickle_dict_get(v, key)) == NULL)
		return (NULL);
	return (pickle_str(f, NULL));
}

/*
 * Set *site to the site of a frames list (innermost first), adding it to
 * the store the first time; 0 for no frames or a list that is not frames.
 * 0, or -1 with *cause.
 */
static int
site_of(struct import_state *st, const struct pickle_value *frames,
    int64_t *site, char **cause)
{
	const struct pickle_value	*f;
	size_t				 n, i, k = 0;
	int64_t				 line;

	*site = 0;
	if (frames == NULL || (n = pickle_list_len(frames)) == 0)
		return (0);
	if (n > st->frames_alloc) {
		st->frames = xreallocarray(st->frames, n, sizeof *st->frames);
		st->frames_alloc = n;
	}
	for (i = 0; i < n; i++) {
		f = pickle_list_at(frames, i);
		st->frames[k].name = field_str(f, "name");
		st->frames[k].filename = field_str(f, "filename");
		if (st->frames[k].name == NULL ||
		    st->frames[k].filename == NULL)
			continue;
		if (pickle_int(pickle_dict_get(f, "line"), &line) != 0)
			line = 0;
		st->frames[k++].line = line;
	}
	return (store_site_add(st->store, st->frames, k, site, cause));
}

static void
count_action(struct import_state *st, int32_t device, const char *action)
{
	struct import_action_count	*c;
	size_t				 i;

	for (i = 0; i < st->nactions; i++) {
		c = &st->actions[i];
		if (c->device == device && strcmp(c->action, action) == 0) {
			c->count++;
			return;
		}
	}
	st->actions = xreallocarray(st->actions, st->nactions + 1,
	    sizeof *st->actions);
	c = &st->actions[st->nactions++];
	c->device = device;
	snprintf(c->action, sizeof c->action, "%s", action);
	c->count = 1;
}

static void
note_stream(struct import_state *st, int32_t device, uint64_t stream)
{
	size_t	i;

	for (i = 0; i < st->nstreams; i++) {
		if (st->streams[i].device == device &&
		    st->streams[i].stream == stream)
			return;
	}
	st->streams = xreallocarray(st->streams, st->nstreams + 1,
	    sizeof *st->streams);
	st->streams[st->nstreams].device = device;
	st->streams[st->nstreams++].stream = stream;
}

static void
hold(struct import_state *st, const struct import_held *h)
{
	if (st->nheld == st->held_alloc) {
		st->held_alloc = st->held_alloc == 0 ? 256 :
		    2 * st->held_alloc;
		st->held = xreallocarray(st->held, st->held_alloc,
		    sizeof *st->held);
	}
	st->held[st->nheld++] = *h;
}

/*
 * Write one trace entry of device `device` (element `index` of its list).
 * Unknown actions are counted and otherwise skipped.  0, or -1 with
 * *cause.
 */
int
import_trace_entry(struct import_state *st, int32_t device,
    const struct pickle_value *e, size_t index, char **cause)
{
	struct store_allocation	 a;
	const char		*action;
	int64_t			 addr = 0, size = 0, stream = 0, time_us;
	uint64_t		 t;

	if (pickle_type(e) != PICKLE_DICT)
		return (field_error(st, cause, "trace entry", index, "entry",
		    "is not a dict"));
	if ((action = field_str(e, "action")) == NULL)
		return (field_error(st, cause, "trace entry", index, "action",
		    "is missing or not a str"));
	if (field_int(st, e, "trace entry", "time_us", index, &time_us,
	    cause) != 0)
		return (-1);
	count_action(st, device, action);
	st->summary->trace_entries++;
	t = (uint64_t)time_us * 1000;
	if (st->first_ns == EVENT_NONE || t < st->first_ns)
		st->first_ns = t;
	if (t > st->last_ns)
		st->last_ns = t;
	if (strcmp(action, "oom") == 0)
		return (store_rows_mark(st->store, 0, device, t, NULL, "oom",
		    cause));
	if (strcmp(action, "snapshot") == 0 || strcmp(action, "annotate") == 0)
		return (0);
	if (pickle_dict_get(e, "addr") == NULL)
		return (0);	/* an action we do not know, without an address */
	if (field_int(st, e, "trace entry", "addr", index, &addr,
	    cause) != 0 ||
	    field_int(st, e, "trace entry", "size", index, &size,
	    cause) != 0 ||
	    field_int(st, e, "trace entry", "stream", index, &stream,
	    cause) != 0)
		return (-1);
	memset(&a, 0, sizeof a);
	a.device = device;
	a.stream = (uint64_t)stream;
	a.address = (uint64_t)addr;
	a.bytes = (uint64_t)size;
	a.requested = EVENT_NONE;
	a.correlation = EVENT_NONE;
	a.alloc_ns = t;
	a.free_requested_ns = a.free_ns = EVENT_NONE;
	note_stream(st, device, a.stream);
	if (strcmp(action, "alloc") == 0 || strcmp(action, "segment_alloc") ==
	    0 || strcmp(action, "segment_map") == 0) {
		a.layer = action[0] == 'a' ? EVENT_LAYER_BLOCK :
		    EVENT_LAYER_SEGMENT;
		if (site_of(st, pickle_dict_get(e, "frames"), &a.site_id,
		    cause) != 0)
			return (-1);
		return (store_rows_alloc_begin(st->store, &a, cause));
	}
	if (strcmp(action, "free_requested") == 0) {
		a.layer = EVENT_LAYER_BLOCK;
		return (store_rows_alloc_free_requested(st->store, &a, t,
		    cause));
	}
	if (strcmp(action, "free_completed") == 0) {
		a.layer = EVENT_LAYER_BLOCK;
		return (store_rows_alloc_end(st->store, &a, EVENT_NONE, t,
		    cause));
	}
	if (strcmp(action, "segment_free") == 0 ||
	    strcmp(action, "segment_unmap") == 0) {
		a.layer = EVENT_LAYER_SEGMENT;
		return (store_rows_alloc_end(st->store, &a, t, t, cause));
	}
	return (0);
}

static int
insert_block(struct import_state *st, int64_t segment_id,
    const struct pickle_value *v, int32_t device, uint64_t stream,
    size_t index, char **cause)
{
	struct store_block	 b;
	struct import_held	 h;

	memset(&b, 0, sizeof b);
	b.segment_id = segment_id;
	if (field_int(st, v, "block", "address", index, &b.address,
	    cause) != 0 ||
	    field_int(st, v, "block", "size", index, &b.size,
	    cause) != 0)
		return (-1);
	if (pickle_int(pickle_dict_get(v, "requested_size"),
	    &b.requested_size) != 0)
		b.requested_size = -1;
	if ((b.state = field_str(v, "state")) == NULL)
		return (field_error(st, cause, "block", index, "state",
		    "is missing or not a str"));
	if (site_of(st, pickle_dict_get(v, "frames"), &b.site_id,
	    cause) != 0 || store_snapshot_block(st->store, &b, cause) != 0)
		return (-1);
	st->summary->blocks++;
	if (strncmp(b.state, "active_", 7) != 0)
		return (0);
	memset(&h, 0, sizeof h);
	h.device = device;
	h.layer = EVENT_LAYER_BLOCK;
	h.address = (uint64_t)b.address;
	h.bytes = (uint64_t)b.size;
	h.requested = b.requested_size >= 0 ? (uint64_t)b.requested_size :
	    EVENT_NONE;
	h.stream = stream;
	h.site_id = b.site_id;
	hold(st, &h);
	return (0);
}

/*
 * Write one segment of the snapshot (element `index` of "segments") with
 * its blocks, and remember what it holds for import_trace_reconcile().  0, or -1
 * with *cause.
 */
int
import_trace_segment(struct import_state *st, const struct pickle_value *seg,
    size_t index, char **cause)
{
	static const char		*names[] = { "device", "address",
		"total_size", "allocated_size", "active_size",
		"requested_size", "stream" };
	struct store_segment		 g;
	int64_t				*ints[] = { &g.device, &g.address,
		&g.total_size, &g.allocated_size, &g.active_size,
		&g.requested_size, &g.stream };
	int64_t				 pool0 = 0, pool1 = 0, segment_id;
	const struct pickle_value	*blocks, *pool;
	struct import_held		 h;
	size_t				 i;
	char				 pool_id[64];

	if (pickle_type(seg) != PICKLE_DICT)
		return (field_error(st, cause, "segment", index, "segment",
		    "is not a dict"));
	memset(&g, 0, sizeof g);
	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (field_int(st, seg, "segment", names[i], index,
		    ints[i], cause) != 0)
			return (-1);
	}
	pool = pickle_dict_get(seg, "segment_pool_id");
	if (pool != NULL && pickle_list_len(pool) == 2) {
		pickle_int(pickle_list_at(pool, 0), &pool0);
		pickle_int(pickle_list_at(pool, 1), &pool1);
	}
	snprintf(pool_id, sizeof pool_id, "%" PRId64 ",%" PRId64, pool0,
	    pool1);
	g.pool_id = pool_id;
	g.segment_type = field_str(seg, "segment_type");
	pickle_bool(pickle_dict_get(seg, "is_expandable"), &g.expandable);
	if (site_of(st, pickle_dict_get(seg, "frames"), &g.site_id,
	    cause) != 0 ||
	    store_snapshot_segment(st->store, &g, &segment_id, cause) != 0)
		return (-1);
	st->summary->segments++;
	note_stream(st, (int32_t)g.device, (uint64_t)g.stream);
	memset(&h, 0, sizeof h);
	h.device = (int32_t)g.device;
	h.layer = EVENT_LAYER_SEGMENT;
	h.address = (uint64_t)g.address;
	h.bytes = (uint64_t)g.total_size;
	h.requested = EVENT_NONE;
	h.stream = (uint64_t)g.stream;
	h.site_id = g.site_id;
	hold(st, &h);
	if ((blocks = pickle_dict_get(seg, "blocks")) == NULL)
		return (0);
	for (i = 0; i < pickle_list_len(blocks); i++) {
		if (insert_block(st, segment_id, pickle_list_at(blocks, i),
		    h.device, h.stream, i, cause) != 0)
			return (-1);
	}
	return (0);
}

/*
 * After the trace: write what the snapshot holds that the trace did not
 * leave live (allocated before the trace began, no alloc time).  0, or -1.
 */
int
import_trace_reconcile(struct import_state *st, char **cause)
{
	struct store_allocation	 a;
	struct import_held	*h;
	size_t			 i;

	for (i = 0; i < st->nheld; i++) {
		h = &st->held[i];
		if (store_rows_alloc_is_live(st->store, h->device, h->layer,
		    h->address))
			continue;
		memset(&a, 0, sizeof a);
		a.device = h->device;
		a.layer = h->layer;
		a.stream = h->stream;
		a.address = h->address;
		a.bytes = h->bytes;
		a.requested = h->requested;
		a.site_id = h->site_id;
		a.correlation = EVENT_NONE;
		a.alloc_ns = a.free_requested_ns = a.free_ns = EVENT_NONE;
		if (store_rows_allocation(st->store, &a, cause) != 0)
			return (-1);
	}
	return (0);
}
