/*
 * store-top.c: the first rows of a run in each order the blocks view
 * pages every block by, kept while the run is written.
 *
 * Nothing else orders millions of rows by size, age or stream: an index
 * per order over all rows would cost seconds at finish and ~15 bytes a row
 * each.  Instead every row, as it gets its id, is offered to one bounded
 * heap per order (struct store_top_heap), holding the first `max` rows in
 * that order: heap[0] is the last kept, and a row that does not rank above
 * it is dropped at the cost of one comparison.  Each order is a key (bytes,
 * alloc_ns or stream; NULL ranks first ascending and last descending, as
 * in SQLite), then the id ascending, exactly as query-blocks.c sorts.  A
 * few streams also get a heap of their largest rows, for the view filtered
 * to one stream.  When the run finishes the largest rows become
 * allocation_top and the others allocation_heads.  Every row not kept ranks
 * below every row kept in its order, so the first rows of any filter, in
 * that order, are exact as long as the table holds enough of them.
 *
 * Not all the rows kept are written: an eighth of the run's rows per order
 * (STORE_TOP_SHARE), at least STORE_TOP_MIN and at most `max`.  Each
 * costs a b-tree insert (sorted into the table's order first, so that
 * SQLite finds its place at the end), and a small run, which readers sort
 * whole quickly once they are past what was written, would spend a good
 * part of its import writing nearly every row eight times over.
 *
 * Some orders take nearly every row (newest first: rows keep getting
 * newer), and a sift per row would cost log(max) moves each time.  So
 * once a heap is full, a row that ranks above heap[0] waits in `pend`;
 * every `max` such rows are folded in at once: a quickselect keeps the
 * best `max` of heap and pend, and a heapify restores heap[0].  That is a
 * constant cost per row.  Rows that wait rank above heap[0] when they
 * come, so the cut stays right; the fold only tightens it.
 */
#include "config.h"

#include "store-int.h"

#include <stdlib.h>
#include <string.h>

/* Does row a come before row b in heap h's order? */
static int
top_above(const struct store_top_heap *h, const struct store_top_row *a,
    const struct store_top_row *b)
{
	if (a->null != b->null)
		return (h->desc ? b->null : a->null);
	if (!a->null && a->key != b->key)
		return (h->desc ? a->key > b->key : a->key < b->key);
	return (a->id < b->id);
}

static void
top_sift_down(struct store_top_heap *h, size_t i)
{
	struct store_top_row	 r = h->heap[i];
	size_t			 c;

	for (;;) {
		c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && top_above(h, &h->heap[c], &h->heap[c + 1]))
			c++;
		if (!top_above(h, &r, &h->heap[c]))
			break;
		h->heap[i] = h->heap[c];
		i = c;
	}
	h->heap[i] = r;
}

static void
top_swap(struct store_top_row *a, struct store_top_row *b)
{
	struct store_top_row	t = *a;

	*a = *b;
	*b = t;
}

/* Reorder a[0..n) so that a[0..k) are its k first rows in h's order. */
static void
top_select(const struct store_top_heap *h, struct store_top_row *a,
    size_t n, size_t k)
{
	size_t	lo = 0, hi = n - 1, i, store;

	while (lo < hi) {
		top_swap(&a[lo + (hi - lo) / 2], &a[hi]);	/* the pivot */
		for (store = i = lo; i < hi; i++) {
			if (top_above(h, &a[i], &a[hi]))
				top_swap(&a[i], &a[store++]);
		}
		top_swap(&a[store], &a[hi]);
		if (store == k)
			return;
		if (k < store)
			hi = store - 1;
		else
			lo = store + 1;
	}
}

/* Fold the waiting rows in: keep the first max of both, heap[0] last. */
static void
top_fold(struct store_top_heap *h, size_t max)
{
	size_t	i, n = h->n + h->npend;

	if (h->npend == 0)
		return;
	memcpy(h->heap + h->n, h->pend, h->npend * sizeof *h->heap);
	h->npend = 0;
	if (n > max)
		top_select(h, h->heap, n, max);
	h->n = n > max ? max : n;
	for (i = h->n / 2; i-- > 0;)
		top_sift_down(h, i);
}

static void
top_offer(struct store_top_heap *h, size_t max, const struct store_top_row *r)
{
	size_t	i;

	if (h->n == max) {
		if (!top_above(h, r, &h->heap[0]))
			return;
		if (h->pend == NULL) {
			h->pend = xreallocarray(NULL, max, sizeof *h->pend);
			h->heap = xreallocarray(h->heap, 2 * max,
			    sizeof *h->heap);
		}
		h->pend[h->npend++] = *r;
		if (h->npend == max)
			top_fold(h, max);
		return;
	}
	if (h->heap == NULL)
		h->heap = xreallocarray(NULL, max, sizeof *h->heap);
	for (i = h->n++; i > 0 && top_above(h, &h->heap[(i - 1) / 2], r);
	    i = (i - 1) / 2)
		h->heap[i] = h->heap[(i - 1) / 2];
	h->heap[i] = *r;
}

/*
 * Forget the rows kept (a new run).  VRAMTRACE_TOP_ROWS (tests) keeps fewer
 * rows per order than STORE_TOP_ROWS.
 */
void
store_top_reset(struct store_top *t)
{
	const char	*e = getenv("VRAMTRACE_TOP_ROWS");
	size_t		 i;

	for (i = 0; i < STORE_TOP_ORDERS; i++) {
		free(t->orders[i].heap);
		free(t->orders[i].pend);
		t->orders[i].heap = t->orders[i].pend = NULL;
		t->orders[i].npend = 0;
		t->orders[i].n = 0;
		t->orders[i].desc = i == STORE_TOP_SIZE_DESC ||
		    i == STORE_TOP_AGE_DESC || i == STORE_TOP_STREAM_DESC ||
		    i == STORE_TOP_SITE_DESC;
	}
	for (i = 0; i < t->nstreams; i++) {
		free(t->streams[i].heap);
		free(t->streams[i].pend);
	}
	t->nstreams = 0;
	t->last = 0;
	t->rows = 0;
	t->max = STORE_TOP_ROWS;
	if (e != NULL && atoi(e) > 0 && atoi(e) < STORE_TOP_ROWS)
		t->max = (size_t)atoi(e);
}

/* The heap of the largest rows of stream, or NULL if there are too many. */
static struct store_top_heap *
top_stream(struct store_top *t, uint64_t stream)
{
	struct store_top_heap	*h;
	size_t			 i;

	if (t->last < t->nstreams && t->stream_ids[t->last] == stream)
		return (&t->streams[t->last]);
	for (i = 0; i < t->nstreams; i++) {
		if (t->stream_ids[i] == stream) {
			t->last = i;
			return (&t->streams[i]);
		}
	}
	if (t->nstreams == STORE_TOP_STREAMS)
		return (NULL);
	t->last = t->nstreams++;
	t->stream_ids[t->last] = stream;
	h = &t->streams[t->last];
	h->heap = h->pend = NULL;
	h->n = h->npend = 0;
	h->desc = 1;
	return (h);
}

/* Offer row id of the run, allocation a, to every order. */
void
store_top_note(struct store_top *t, int64_t id,
    const struct store_allocation *a)
{
	struct store_top_heap	*h;
	struct store_top_row	 bytes = { id, (int64_t)a->bytes, 0 };
	struct store_top_row	 age = { id, (int64_t)a->alloc_ns, 0 };
	struct store_top_row	 stream = { id, (int64_t)a->stream, 0 };
	struct store_top_row	 site = { id, a->site_id, a->site_id == 0 };

	t->rows++;
	age.null = a->alloc_ns == EVENT_NONE;
	stream.null = a->stream == EVENT_NONE;
	top_offer(&t->orders[STORE_TOP_SIZE_DESC], t->max, &bytes);
	top_offer(&t->orders[STORE_TOP_SIZE_ASC], t->max, &bytes);
	top_offer(&t->orders[STORE_TOP_AGE_ASC], t->max, &age);
	top_offer(&t->orders[STORE_TOP_AGE_DESC], t->max, &age);
	top_offer(&t->orders[STORE_TOP_STREAM_ASC], t->max, &stream);
	top_offer(&t->orders[STORE_TOP_STREAM_DESC], t->max, &stream);
	top_offer(&t->orders[STORE_TOP_SITE_ASC], t->max, &site);
	top_offer(&t->orders[STORE_TOP_SITE_DESC], t->max, &site);
	if (!stream.null && (h = top_stream(t, a->stream)) != NULL)
		top_offer(h, t->max, &bytes);
}

/* The rows of each order to write: store-top.c's top comment says why. */
static size_t
top_written(const struct store_top *t)
{
	uint64_t	n = t->rows / STORE_TOP_SHARE;

	if (n < STORE_TOP_MIN)
		n = STORE_TOP_MIN;
	return (n < t->max ? (size_t)n : t->max);
}

/* Rows by key, then id: allocation_top's order (for qsort). */
static int
top_by_key(const void *va, const void *vb)
{
	const struct store_top_row	*a = va, *b = vb;

	if (a->key != b->key)
		return (a->key < b->key ? -1 : 1);
	return ((a->id > b->id) - (a->id < b->id));
}

/* Rows by id: allocation_heads' order within a sort and part (for qsort). */
static int
top_by_id(const void *va, const void *vb)
{
	const struct store_top_row	*a = va, *b = vb;

	return ((a->id > b->id) - (a->id < b->id));
}

/* What the rows of one heap are written as (top_bind's arg). */
struct top_target {
	int64_t		 run_id;
	int		 order;		/* -1: allocation_top */
	int64_t		 part;
};

/* Bind heap row row as target arg says (store_insert_bind_fn). */
static void
top_bind(sqlite3_stmt *st, int skip, const void *row, void *arg)
{
	const struct store_top_row	*r = row;
	const struct top_target		*t = arg;

	sqlite3_bind_int64(st, skip + 1, t->run_id);
	if (t->order < 0) {
		sqlite3_bind_int64(st, skip + 2, r->key);
		sqlite3_bind_int64(st, skip + 3, r->id);
	} else {
		sqlite3_bind_int(st, skip + 2, t->order);
		sqlite3_bind_int64(st, skip + 3, t->part);
		sqlite3_bind_int64(st, skip + 4, r->id);
	}
}

/*
 * Insert the first `keep` rows of heap h (all when it has fewer) with ins:
 * into allocation_top (order -1), or allocation_heads as sort `order`,
 * part `part`, in the table's order: the heap is left sorted, no longer a
 * heap.  0, or -1 with *cause.
 */
static int
top_insert(struct store *s, struct store_insert *ins, int order,
    int64_t part, struct store_top_heap *h, size_t keep, char **cause)
{
	struct top_target	t = { s->run_id, order, part };

	if (h->n > keep) {
		top_select(h, h->heap, h->n, keep);
		h->n = keep;
	}
	if (h->n > 1)	/* an empty heap has no array */
		qsort(h->heap, h->n, sizeof *h->heap, order < 0 ?
		    top_by_key : top_by_id);
	return (store_insert_rows(s, ins, h->heap, sizeof *h->heap, h->n,
	    top_bind, &t, 0, cause));
}

/*
 * Write the rows kept into allocation_top (the largest) and
 * allocation_heads (the others).  0, or -1 with *cause.
 */
int
store_top_write(struct store *s, char **cause)
{
	struct store_top	*t = &s->top;
	struct store_insert	 top, heads;
	size_t			 i, keep;
	int			 rc;

	for (i = 0; i < STORE_TOP_ORDERS; i++)
		top_fold(&t->orders[i], t->max);
	for (i = 0; i < t->nstreams; i++)
		top_fold(&t->streams[i], t->max);
	if (store_sql_exec(s, store_schema_top_sql, "cannot keep the first"
	    " rows", cause) != 0)
		return (-1);
	if (store_insert_prepare(s, &top, "allocation_top",
	    "INSERT INTO allocation_top VALUES ", "(?, ?, ?)", 3, cause) != 0)
		return (-1);
	if (store_insert_prepare(s, &heads, "allocation_heads",
	    "INSERT OR IGNORE INTO allocation_heads VALUES ", "(?, ?, ?, ?)",
	    4, cause) != 0) {
		store_insert_finalize(&top);
		return (-1);
	}
	keep = top_written(t);
	rc = top_insert(s, &top, -1, 0, &t->orders[STORE_TOP_SIZE_DESC], keep,
	    cause);
	for (i = STORE_TOP_SIZE_ASC; i < STORE_TOP_ORDERS && rc == 0; i++) {
		if (i != STORE_TOP_STREAM_SIZE)
			rc = top_insert(s, &heads, (int)i, 0, &t->orders[i],
			    keep, cause);
	}
	for (i = 0; i < t->nstreams && rc == 0; i++)
		rc = top_insert(s, &heads, STORE_TOP_STREAM_SIZE,
		    (int64_t)t->stream_ids[i], &t->streams[i], keep, cause);
	store_insert_finalize(&top);
	store_insert_finalize(&heads);
	return (rc);
}
