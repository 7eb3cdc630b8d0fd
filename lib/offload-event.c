/*
 * offload-event.c: the engine's pool of CUDA events.
 *
 * Every copy the engine issues records an event, and every wait and every
 * slab reuse is decided on one, so events are taken and given back at the
 * rate of copies; creating one each time would cost a driver call.  The
 * pool is an array of slots; a free slot is on a singly linked list
 * threaded through next_free.  A slot carries a reference count: the copy
 * that records it holds one, and so does every slab block or entry that
 * still has to query or wait on it.  When the count drops to zero the slot
 * goes back on the free list and its CUDA event is reused as is (recording
 * an event again is allowed once nobody needs its previous state).  Each
 * slot remembers the stream it was last recorded on, so that the engine can
 * tell a wait of a stream on itself.
 */
#include "config.h"

#include <stdlib.h>

#include "offload.h"

/*
 * Prepare an empty pool over ops.  Nothing is allocated until the first
 * take.
 */
void
offload_event_init(struct offload_event_pool *p, const struct offload_ops *ops)
{
	p->ops = ops;
	p->slots = NULL;
	p->n = p->alloc = 0;
	p->free_head = OFFLOAD_NO_EVENT;
}

/*
 * Destroy every event and the slot array.  The caller has synchronized the
 * streams the events were recorded on.
 */
void
offload_event_destroy(struct offload_event_pool *p)
{
	uint32_t	i;

	for (i = 0; i < p->n; i++)
		p->ops->event_destroy(p->ops->arg, p->slots[i].handle);
	free(p->slots);
	offload_event_init(p, p->ops);
}

/*
 * Take a slot with one reference into *idx, creating an event when the
 * free list is empty.  Returns 0, or -1 when memory or the runtime failed.
 */
int
offload_event_take(struct offload_event_pool *p, uint32_t *idx)
{
	struct offload_event_slot	*slots, *s;
	uint32_t			 alloc;

	if (p->free_head == OFFLOAD_NO_EVENT) {
		if (p->n == p->alloc) {
			alloc = p->alloc == 0 ? 64 : p->alloc * 2;
			slots = realloc(p->slots, alloc * sizeof *slots);
			if (slots == NULL)
				return (-1);
			p->slots = slots;
			p->alloc = alloc;
		}
		s = &p->slots[p->n];
		if (p->ops->event_create(p->ops->arg, &s->handle) != 0)
			return (-1);
		s->next_free = OFFLOAD_NO_EVENT;
		p->free_head = p->n++;
	}
	*idx = p->free_head;
	s = &p->slots[*idx];
	p->free_head = s->next_free;
	s->refs = 1;
	s->stream = 0;
	s->next_free = OFFLOAD_NO_EVENT;
	return (0);
}

/* Add a reference to a taken slot.  OFFLOAD_NO_EVENT is ignored. */
void
offload_event_ref(struct offload_event_pool *p, uint32_t idx)
{
	if (idx != OFFLOAD_NO_EVENT)
		p->slots[idx].refs++;
}

/*
 * Drop a reference; the last one puts the slot back on the free list.
 * OFFLOAD_NO_EVENT is ignored.
 */
void
offload_event_unref(struct offload_event_pool *p, uint32_t idx)
{
	struct offload_event_slot	*s;

	if (idx == OFFLOAD_NO_EVENT)
		return;
	s = &p->slots[idx];
	if (--s->refs == 0) {
		s->next_free = p->free_head;
		p->free_head = idx;
	}
}

/* Record slot idx on stream.  Returns 0, or -1 if the runtime failed. */
int
offload_event_record(struct offload_event_pool *p, uint32_t idx,
    uint64_t stream)
{
	p->slots[idx].stream = stream;
	return (p->ops->event_record(p->ops->arg, p->slots[idx].handle,
	    stream));
}

/*
 * Whether the work before slot idx's record has completed: 1 yes, 0 not
 * yet.  OFFLOAD_NO_EVENT is complete.  A runtime error counts as not yet,
 * so that memory is never reused on a guess.
 */
int
offload_event_done(struct offload_event_pool *p, uint32_t idx)
{
	if (idx == OFFLOAD_NO_EVENT)
		return (1);
	return (p->ops->event_done(p->ops->arg, p->slots[idx].handle) == 1);
}
