/*
 * libvramtrace.h: the public interface of libvramtrace.so, the library that a
 * training process loads (directly or through the Python package) to mark
 * steps and to offload activations.  Plain C, usable from ctypes: every
 * handle is an opaque pointer or a 64-bit integer, every struct has fixed
 * width fields.
 */
#ifndef LIBVRAMTRACE_H
#define LIBVRAMTRACE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * The library itself (lib/abi.c): what it was built as, for bindings that
 * mirror the structs below (the Python package checks both at load).
 */

/* The version of vramtrace this library belongs to, "MAJOR.MINOR.PATCH". */
const char *vramtrace_version(void);

/*
 * The size of struct name ("vramtrace_offload_tensor") in this library; 0
 * for a name this header does not define.
 */
size_t	vramtrace_struct_size(const char *name);

/* ------------------------------------------------------------------------
 * Step markers (lib/steps.c): mark steps and instants in a recording.
 *
 * Both calls reach the process's one connection to the collector through
 * the injection library (CUDA_INJECTION64_PATH).  They are cheap no-ops
 * when the process is not being recorded, and safe from any thread.
 */

/* End the current training step (a step begins where the last one ended). */
void	vramtrace_step(void);

/* Record a named instant; name is copied, NULL is ignored. */
void	vramtrace_mark(const char *name);

/* ------------------------------------------------------------------------
 * Offload engine (lib/offload*.c): activation offload to pinned host memory.
 *
 * The caller (the Python binding, or a C framework) owns GPU tensors; the
 * engine owns the pinned slab, the two copy streams, the events, the
 * stashes and the dedupe table.  The engine never holds a GPU tensor: when
 * it wants one kept alive or let go, or a GPU buffer allocated, it queues a
 * request that the caller drains with vramtrace_offload_next() after each
 * call.  Streams, events and pointers travel as uint64_t.
 *
 * Every function but vramtrace_offload_config_init() and _create() takes an
 * engine made by vramtrace_offload_create(); one engine serves one device
 * and is not thread-safe (autograd runs hooks of one graph serially).
 * Functions that can fail return -1 and leave a message readable with
 * vramtrace_offload_error().
 * --------------------------------------------------------------------- */

struct vramtrace_offload;

#define VRAMTRACE_OFFLOAD_MAX_DIMS	8

/* Test-only switches that turn an invariant off (VRAMTRACE_OFFLOAD_BREAK). */
#define VRAMTRACE_OFFLOAD_BREAK_DEDUPE_GENERATION 0x1
#define VRAMTRACE_OFFLOAD_BREAK_EXIT_CLEANUP	0x2
#define VRAMTRACE_OFFLOAD_BREAK_STREAM_WAIT	0x4
#define VRAMTRACE_OFFLOAD_BREAK_SLAB		0x8

struct vramtrace_offload_config {
	uint64_t	slab_bytes;	/* pinned slab; 0: sized after step 1 */
	uint64_t	min_offload_size; /* smaller tensors stay on the GPU */
	int64_t		budget;		/* bytes kept on the GPU; -1: off */
	uint64_t	prefetch;	/* bytes brought back beyond room */
	uint64_t	max_memory;	/* the step's peak allocated; 0: off */
	double		max_memory_fraction; /* or of the device; 0: off */
	uint32_t	max_fwd_stash;	/* GPU sources kept alive, at least 1 */
	uint32_t	breaks;		/* VRAMTRACE_OFFLOAD_BREAK_* */
	int32_t		use_streams;	/* copy on side streams */
	int32_t		use_pin_memory;	/* pinned (page-locked) host memory */
	int32_t		device;		/* CUDA device ordinal */
};

/* A tensor as pack sees it: the dedupe key and the bytes to copy. */
struct vramtrace_offload_tensor {
	uint64_t	storage;	/* data pointer of the whole storage */
	uint64_t	generation;	/* changes when that address is reused */
	uint64_t	src;		/* first byte to copy */
	uint64_t	bytes;		/* bytes to copy, from src */
	int64_t		offset;		/* storage offset, in elements */
	int64_t		shape[VRAMTRACE_OFFLOAD_MAX_DIMS];
	int64_t		stride[VRAMTRACE_OFFLOAD_MAX_DIMS];
	int32_t		ndim;		/* > MAX_DIMS: never deduplicated */
	int32_t		dtype;		/* any code, compared for equality */
	uint32_t	flags;		/* VRAMTRACE_OFFLOAD_TENSOR_* */
	uint32_t	version;	/* changes with each write in place */
};
#define VRAMTRACE_OFFLOAD_TENSOR_KEEP	0x1	/* parameter, buffer: stays */
#define VRAMTRACE_OFFLOAD_TENSOR_RECOMPUTE 0x2	/* the caller can make it
						   again at unpack */

/* What pack decided. */
#define VRAMTRACE_OFFLOAD_KEPT		0	/* stays on the GPU */
#define VRAMTRACE_OFFLOAD_STASHED	1	/* copied; hold the source */
#define VRAMTRACE_OFFLOAD_COPIED	2	/* copied; source not needed */
#define VRAMTRACE_OFFLOAD_DEDUPED	3	/* same as a live tensor */
#define VRAMTRACE_OFFLOAD_RECOMPUTE	4	/* let it go; make it again */

/* Where unpack found the tensor. */
#define VRAMTRACE_OFFLOAD_FROM_STASH	1	/* the held source */
#define VRAMTRACE_OFFLOAD_FROM_BUFFER	2	/* the restored buffer */
#define VRAMTRACE_OFFLOAD_NEED_BUFFER	3	/* allocate, restore, retry */

/* A request for the caller. */
#define VRAMTRACE_OFFLOAD_REQ_DROP	1	/* let go of id's GPU tensor */
#define VRAMTRACE_OFFLOAD_REQ_ALLOC	2	/* allocate bytes, restore id */

struct vramtrace_offload_request {
	uint64_t	id;
	uint64_t	bytes;
	uint32_t	kind;		/* VRAMTRACE_OFFLOAD_REQ_* */
	uint32_t	pad;
};

struct vramtrace_offload_stats {
	uint64_t	step;		/* contexts entered */
	uint64_t	packs;
	uint64_t	offloads;	/* device-to-host copies */
	uint64_t	offloaded_bytes;
	uint64_t	kept;
	uint64_t	kept_bytes;
	uint64_t	dedupe_hits;
	uint64_t	dedupe_releases;
	uint64_t	reaps;
	uint64_t	unpacks;
	uint64_t	prefetches;	/* host-to-device copies */
	uint64_t	pool_fallbacks;
	uint64_t	host_allocs;	/* pinned allocations, slab included */
	uint64_t	self_waits;	/* waits of a stream on itself */
	uint64_t	exit_syncs;
	uint64_t	dropped_entries; /* left by a step without backward */
	uint64_t	live_entries;	/* offloaded tensors not yet unpacked */
	uint64_t	fwd_stash;
	uint64_t	bwd_stash;
	uint64_t	slab_bytes;
	uint64_t	slab_used;
	uint64_t	dedupe_keys;
	uint64_t	events;		/* CUDA events created */
	uint64_t	budget_cutoff;	/* candidates offloaded; -1: all */
	uint64_t	restored_bytes;	/* host-to-device bytes */
	uint64_t	fwd_waits;	/* forward waited on a running copy */
	uint64_t	bwd_waits;	/* unpacked before its prefetch */
	uint64_t	learning_steps;	/* steps that measured the profile */
	uint64_t	profile_hooks;	/* hooks of the profile; 0: none */
	uint64_t	predicted_peak;	/* this step's, in bytes; 0: unknown */
	uint64_t	max_memory;	/* the limit in bytes; 0: none */
	uint64_t	hooks;		/* packs and unpacks of this step */
	uint64_t	recomputed;	/* packs answered RECOMPUTE */
	uint64_t	recomputed_bytes;
	uint64_t	idle_steps;	/* run without the hooks */
};

/*
 * Fill cfg with the defaults (the TRL ones: min_offload_size 1024,
 * max_fwd_stash 5, streams and pinned memory on; no budget, no
 * max_memory; slab sized after the first step; prefetch 0) and apply the
 * environment: VRAMTRACE_OFFLOAD_SLAB, _MIN_SIZE, _BUDGET (bytes, suffixes
 * K M G), _MAX_MEMORY (bytes, or a fraction of the device such as 0.8),
 * _STASH, _PREFETCH and _BREAK (a comma list of dedupe-generation,
 * exit-cleanup, stream-wait, slab).  Returns -1 if a variable is malformed
 * (cfg keeps the default for it), else 0.
 */
int	 vramtrace_offload_config_init(struct vramtrace_offload_config *cfg);

/*
 * Create an engine for cfg->device: its two non-blocking copy streams and,
 * when cfg->slab_bytes is set, nothing else yet (the slab is allocated on
 * the first enter).  Returns NULL on failure with a message in err (of
 * errlen bytes, may be NULL).  The caller frees it with _free().
 */
struct vramtrace_offload *vramtrace_offload_create(
	    const struct vramtrace_offload_config *cfg, char *err,
	    size_t errlen);

/*
 * Synchronize the copy streams, then release everything: slab, fallback
 * buffers, events, streams.  The caller must have dropped its GPU tensors.
 * NULL is a no-op.
 */
void	 vramtrace_offload_free(struct vramtrace_offload *e);

/* The last error message; never NULL, owned by the engine. */
const char *vramtrace_offload_error(struct vramtrace_offload *e);

/*
 * Begin a step, with allocated bytes on the device (negative when the
 * caller does not measure memory).  Drops whatever a previous step left (a
 * forward whose backward never ran): syncs the copy streams, queues a DROP
 * for every held tensor, frees every entry, dedupe key and slab block;
 * then sizes the slab if needed and chooses what this step offloads.
 *
 * A caller that measures memory lets the engine learn the step's profile:
 * enter returns 1 when this step learns (the first one, or the first after
 * memory at enter moved or the steps changed), and the caller then reports
 * the bytes allocated after every operation with _sample() (first the most
 * it can have reached inside the operation, its temporaries, when the
 * caller can tell) and at every unpack to _reached().  A learning step
 * offloads every candidate.  Later steps need no measurement: the profile
 * tells, with max_memory, the fewest tensors (the earliest) to offload so
 * that the step's peak stays within it, and in every mode how much may be
 * brought back ahead.
 * Returns 0 for a step that follows the profile (or when nothing is
 * measured), 1 for a learning step, -1 on failure.
 */
int	 vramtrace_offload_enter(struct vramtrace_offload *e,
	     int64_t allocated);

/*
 * Whether the step that _enter() began may run without the saved-tensor
 * hooks: 1 when it follows a profile, offloads nothing, and keeping every
 * saved tensor (the casts of parameters that
 * VRAMTRACE_OFFLOAD_TENSOR_RECOMPUTE would have made again included, as
 * many as the last step that packed had) fits: is predicted to stay
 * within max_memory, or in budget mode saves no more than the budget (as
 * the last step that packed saved); 0 otherwise (a learning step, neither
 * max_memory nor a budget).  A caller that then leaves the hooks out
 * calls only _exit() for the step (autograd keeps what it saves, as
 * without offload): the engine leaves what it learned as it was and
 * counts the step in idle_steps.  When such a step went over max_memory,
 * or in budget mode past the peak predicted with every tensor kept
 * (_peak()), the next one learns again: the steps may have changed
 * unseen.  A caller that calls the hooks all the same gets a step that
 * keeps every tensor.
 */
int	 vramtrace_offload_idle(const struct vramtrace_offload *e);

/*
 * While a step learns, the device had allocated bytes at some point since
 * the last hook (after an operation, or the most reached inside one).
 * Ignored otherwise.
 */
void	 vramtrace_offload_sample(struct vramtrace_offload *e,
	     int64_t allocated);

/*
 * The most bytes the device had allocated during the step before
 * (PyTorch's peak allocated bytes, read as its backward ended, passed
 * before _enter(); pass it only when that step moved it).  When it is
 * over max_memory, the plans of the next steps keep that much more below
 * max_memory, and the 1% margin again (in all at most an eighth of it):
 * what the learning step's samples did not see (an operation's
 * temporaries, when the caller could not tell them); when the step before
 * kept tensors that cost no predicted peak (a step that would offload
 * everything keeps the last ones that fit), no later step keeps them.  In
 * budget mode, an idle step's peak past what keeping every tensor
 * predicts (and 16 MiB) makes the next step learn.  Ignored otherwise.
 */
void	 vramtrace_offload_peak(struct vramtrace_offload *e, int64_t peak);

/*
 * End a step's context; runs even when its body raised.  Syncs the copy
 * streams and empties both stashes (DROP requests); offloaded tensors keep
 * their host copies so that a backward run later, outside the context,
 * can still unpack them, with prefetch.
 */
int	 vramtrace_offload_exit(struct vramtrace_offload *e);

/*
 * A backward that ran after the context ended has finished: sync the copy
 * streams and let go of what was brought back and never unpacked (DROP),
 * as _exit() does for a backward inside the context.
 */
int	 vramtrace_offload_backward_done(struct vramtrace_offload *e);

/*
 * Decide what to do with a tensor autograd saves and, if it is offloaded,
 * issue its device-to-host copy ordered after the work queued so far on
 * compute.  Returns VRAMTRACE_OFFLOAD_KEPT (*id untouched), _STASHED (hold
 * the source tensor under *id until a DROP), _COPIED or _DEDUPED (*id names
 * the earlier live tensor with the same key), _RECOMPUTE (*id untouched),
 * or -1.  A tensor flagged VRAMTRACE_OFFLOAD_TENSOR_RECOMPUTE (with _KEEP:
 * never copied) is one the caller can make again exactly at unpack, such
 * as autocast's cast of a parameter: inside the context and at least
 * min_offload_size bytes, the answer is _RECOMPUTE (hold nothing, make it
 * again when autograd unpacks it); otherwise it is kept.
 *
 * Forward never waits on a copy it need not: a source is let go as soon as
 * its copy is seen done (queried, never waited on; a tensor saved again is
 * a dedupe hit all the same: its key lives as long as its copy); compute
 * waits for the
 * oldest copy only while the forward stash is over its bound, which is
 * max_fwd_stash sources, in budget mode the budget (bytes kept plus
 * sources still held), and with max_memory in a step that follows the
 * profile the headroom it predicts at this pack.
 */
int	 vramtrace_offload_pack(struct vramtrace_offload *e,
	     const struct vramtrace_offload_tensor *t, uint64_t compute,
	     uint64_t *id);

/*
 * Backward is running on stream compute: call it at every unpack, kept
 * tensors included, with the bytes allocated on the device (negative when
 * not measured; a step that follows the profile needs no measurement).
 * Brings back ahead (ALLOC requests) the offloaded tensors backward needs
 * next, last packed first, as long as their bytes fit the room: in a step
 * that follows the profile, the least headroom from here to the end of the
 * step under max_memory (or, without it, under the step's predicted peak
 * plus cfg->prefetch); otherwise what was freed since backward began, plus
 * cfg->prefetch, less twice the largest tensor packed this step.  Copies
 * thus run ahead of backward on the memory backward frees, without raising
 * the peak.  It works inside the context and after it (a backward outside
 * the context).  On the first call of a step that offloads a selection
 * (budget, max_memory), every source still held is let go (DROP), compute
 * waiting for its copy.  Returns 0, or -1.
 */
int	 vramtrace_offload_reached(struct vramtrace_offload *e,
	     int64_t allocated, uint64_t compute);

/*
 * Offloaded tensor id's GPU storage was still alive when backward began,
 * though the caller had let go of its source (something else holds it):
 * its copy lowered no peak.  Later steps keep the tensor at that place in
 * the step's sequence of packs on the GPU while it has the same size, with
 * or without a budget, and the budget counts it as kept.  Call it before
 * id is unpacked.  Returns 0, or -1 for an unknown or spent id.
 */
int	 vramtrace_offload_alive(struct vramtrace_offload *e, uint64_t id);

/*
 * Autograd wants tensor id back on stream compute.  Returns _FROM_STASH
 * (use the source held under id), _FROM_BUFFER (use the buffer given to
 * _restore for id; compute now waits on its copy) or _NEED_BUFFER: allocate
 * *bytes on the GPU, hand it to _restore(), then call _unpack() again.
 * Each pack's handle is unpacked once; -1 for an unknown or spent id.
 */
int	 vramtrace_offload_unpack(struct vramtrace_offload *e, uint64_t id,
	     uint64_t compute, uint64_t *bytes);

/*
 * Issue the host-to-device copy of id into dst (a GPU buffer of the
 * requested bytes, allocated on compute, which the caller holds under id
 * until a DROP).  The copy waits for the work already queued on compute
 * and for id's device-to-host copy.  Returns 0, or -1.
 */
int	 vramtrace_offload_restore(struct vramtrace_offload *e, uint64_t id,
	     uint64_t dst, uint64_t compute);

/* Take the next request into *r: 1, or 0 when none is left. */
int	 vramtrace_offload_next(struct vramtrace_offload *e,
	     struct vramtrace_offload_request *r);

/* Copy the counters into *s. */
void	 vramtrace_offload_stats(struct vramtrace_offload *e,
	     struct vramtrace_offload_stats *s);

/* ------------------------------------------------------------------------
 * Offload check (lib/check.c): what the Python checker of saved-tensor-hook
 * engines (vramtrace.torch.check_offload, `vramtrace record
 * --check-offload`) found, into the recording.
 *
 * Both calls are cheap no-ops when the process is not being recorded, copy
 * what they are given (strings included) and are safe from any thread.
 * NULL strings are allowed and stored as unknown.
 * --------------------------------------------------------------------- */

/* What differs between a packed tensor and what unpack returned. */
#define VRAMTRACE_CHECK_SHAPE		0x01
#define VRAMTRACE_CHECK_DTYPE		0x02
#define VRAMTRACE_CHECK_DEVICE		0x04
#define VRAMTRACE_CHECK_CONTENTS	0x08
#define VRAMTRACE_CHECK_NOT_TENSOR	0x10	/* unpack returned no tensor */
#define VRAMTRACE_CHECK_STRIDES		0x20	/* another layout, with others */

/* What one engine did in one step; the recording adds these up. */
struct vramtrace_check_step {
	int64_t		step;		/* the checker's step number */
	uint64_t	packs;		/* tensors handed to the engine's pack */
	uint64_t	unpacks;	/* tensors its unpack returned */
	uint64_t	checked;	/* unpacks compared with their pack */
	uint64_t	differ;		/* of those, the ones that differed */
	uint64_t	packed_bytes;	/* bytes of the tensors packed */
	uint64_t	moved_bytes;	/* bytes that came back in other memory */
	int32_t		device;		/* -1: host, or several devices */
	uint32_t	pad;
	const char	*engine;	/* the engine's class, "module.Name" */
};

/* A saved tensor that came back different. */
struct vramtrace_check_diff {
	int64_t		step;		/* the step of the pack */
	uint64_t	pack_ns;	/* when it was packed, ns since the epoch */
	uint64_t	unpack_ns;	/* when it was unpacked */
	uint64_t	index;		/* the pack's number in its step, from 0 */
	uint64_t	bytes;		/* of the packed tensor */
	uint32_t	differs;	/* VRAMTRACE_CHECK_*, not STRIDES alone */
	int32_t		device;		/* of the packed tensor; -1: host */
	const char	*engine;	/* the engine's class */
	const char	*pack_site;	/* "function\tfile\tline\n" per frame, */
	const char	*unpack_site;	/*   innermost first */
	const char	*where;		/* FILE:LINE of the pack in the user's
					   code: the first frame outside torch */
	const char	*shape;		/* "8x1024x2048" */
	const char	*dtype;		/* "bfloat16" */
	const char	*detail;	/* what differs, in words */
};

/* Record one engine's activity in one step. */
void	 vramtrace_check_step(const struct vramtrace_check_step *s);

/*
 * Record a difference.  Returns 0, or -1 (nothing recorded) when differs
 * is 0, has an unknown bit, or is VRAMTRACE_CHECK_STRIDES alone.
 */
int	 vramtrace_check_diff(const struct vramtrace_check_diff *d);

#ifdef __cplusplus
}
#endif

#endif
