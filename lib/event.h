/*
 * event.h: the neutral event records that flow from capture to the store.
 *
 * Every source (the CUPTI injection library, the offload engine, the step
 * markers in libvramtrace.so, a replayed spool file) produces these records;
 * the store is the only consumer.  A record is a fixed-size struct: a common
 * header (type, process-local time in ns since the Unix epoch) and a union of
 * per-type bodies.  Strings (host names, command lines, mark names) do not fit
 * a fixed-size record, so they travel as EVENT_STRING records that define a
 * small integer id first; later records refer to the id.  Ids are scoped to
 * one connection or one spool file.
 *
 * Unknown is not zero: fields that a source may not know carry a sentinel
 * (EVENT_NONE for unsigned ids, -1 for signed values) and the store writes
 * NULL for them.
 *
 * The binary encoding (event.c) is the same on the collector socket and in
 * spool files (.vtr); see event_encode() and struct event_reader.
 */
#ifndef EVENT_H
#define EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "lib.h"

/* A field whose value is not known. */
#define EVENT_NONE		UINT64_MAX

/* The longest string an EVENT_STRING record may carry, in bytes. */
#define EVENT_STRING_MAX	65535

enum event_type {
	EVENT_PROCESS_START = 1,	/* a traced process connected */
	EVENT_PROCESS_END,		/* it finished cleanly */
	EVENT_STRING,			/* defines a string id */
	EVENT_ALLOC,			/* memory allocated */
	EVENT_FREE,			/* memory released */
	EVENT_MEMCPY,			/* a copy finished */
	EVENT_STREAM_CREATE,
	EVENT_STREAM_DESTROY,
	EVENT_CONTEXT_CREATE,
	EVENT_CONTEXT_DESTROY,
	EVENT_STEP_BEGIN,
	EVENT_STEP_END,
	EVENT_MARK,			/* a named instant */
	EVENT_OFFLOAD,			/* an offload engine decision */
	EVENT_DROPPED,			/* records the source lost */
	EVENT_DEVICE,			/* a device the process uses */
	EVENT_CHECK_STEP,		/* what an offload engine did in a step */
	EVENT_CHECK_DIFF,		/* a saved tensor came back different */
	EVENT_TYPE_MAX
};

/* Memory layers: who handed out the memory. */
enum event_layer {
	EVENT_LAYER_SEGMENT = 0,	/* driver allocation (cudaMalloc, VMM map) */
	EVENT_LAYER_POOL = 1,		/* stream-ordered pool (cudaMallocAsync) */
	EVENT_LAYER_BLOCK = 2,		/* a caching allocator's block */
	EVENT_LAYER_HOST = 3,		/* pinned host memory */
	EVENT_LAYER_MAX
};

/* Copy directions, CUPTI's numbering for the common ones. */
enum event_copy_kind {
	EVENT_COPY_UNKNOWN = 0,
	EVENT_COPY_HTOD = 1,
	EVENT_COPY_DTOH = 2,
	EVENT_COPY_DTOD = 8,
	EVENT_COPY_PEER = 10
};

/* The offload engine's decisions. */
enum event_offload_kind {
	EVENT_OFFLOAD_PACK = 1,		/* autograd handed a tensor over */
	EVENT_OFFLOAD_COPY,		/* a device-to-host copy was issued */
	EVENT_OFFLOAD_STASH,		/* the GPU source was kept alive */
	EVENT_OFFLOAD_REAP,		/* a stash entry was released */
	EVENT_OFFLOAD_DEDUPE_HIT,	/* a live view's key matched */
	EVENT_OFFLOAD_DEDUPE_RELEASE,	/* a key was released with its tensor */
	EVENT_OFFLOAD_UNPACK,		/* backward asked for the tensor */
	EVENT_OFFLOAD_PREFETCH,		/* a host-to-device copy was issued */
	EVENT_OFFLOAD_POOL_FALLBACK,	/* the slab was full: plain pinned memory */
	EVENT_OFFLOAD_EXIT_SYNC,	/* the context was left: streams synced */
	EVENT_OFFLOAD_KIND_MAX
};

struct event_process {
	uint32_t	pid;
	int32_t		rank;		/* -1: not under a launcher */
	int32_t		local_rank;	/* -1: not under a launcher */
	uint32_t	host;		/* string id */
	uint32_t	command;	/* string id: the command line */
	uint32_t	flags;		/* EVENT_PROCESS_* */
	uint32_t	job;		/* string id: the launcher's job, as
					   "rdzv_id=ID" or "master=HOST:PORT";
					   0: none (client_job) */
};
#define EVENT_PROCESS_ASYNC_ALLOCATOR	0x1	/* cudaMallocAsync backend */
#define EVENT_PROCESS_NATIVE_ALLOCATOR	0x2	/* PyTorch caching allocator */

struct event_string {
	uint32_t	id;
	uint32_t	length;		/* bytes, without a terminator */
	const char	*text;		/* borrowed: valid while the record is */
};

struct event_alloc {
	uint64_t	address;
	uint64_t	bytes;
	uint64_t	requested;	/* bytes asked for; EVENT_NONE: unknown */
	uint64_t	stream;		/* stream id as recorded; EVENT_NONE */
	uint64_t	correlation;	/* CUPTI correlation id; EVENT_NONE */
	uint32_t	site;		/* string id of a stack; 0: none */
	int32_t		device;		/* -1: host memory */
	uint8_t		layer;		/* enum event_layer */
};

struct event_memcpy {
	uint64_t	bytes;
	uint64_t	stream;		/* EVENT_NONE: unknown */
	uint64_t	end_ns;		/* start is the header's time */
	uint64_t	correlation;
	int32_t		src_device;
	int32_t		dst_device;
	uint8_t		kind;		/* enum event_copy_kind */
};

struct event_stream {
	uint64_t	stream;		/* id as recorded (CUPTI stream id) */
	uint64_t	handle;		/* cudaStream_t value; EVENT_NONE */
	uint64_t	context;	/* EVENT_NONE: unknown */
	int32_t		device;
	int32_t		priority;
	uint32_t	flags;		/* CUPTI stream flag: 1 default ... */
};

struct event_step {
	int64_t		step;		/* -1: the next one */
	uint32_t	name;		/* string id; 0: none */
};

struct event_offload {
	uint64_t	tensor;		/* the engine's tensor id */
	uint64_t	storage;	/* storage key (address) */
	uint64_t	generation;	/* allocation generation of the address */
	uint64_t	bytes;
	uint64_t	stream;		/* the stream it happened on; EVENT_NONE */
	int32_t		device;
	uint8_t		kind;		/* enum event_offload_kind */
};

struct event_dropped {
	uint64_t	count;
	uint32_t	source;		/* string id naming the source */
};

struct event_device {
	uint64_t	total_bytes;	/* 0: unknown */
	int32_t		device;
	uint32_t	name;		/* string id */
};

/*
 * The offload check (python/vramtrace/_check*.py through lib/check.c): for
 * an engine built on saved-tensor hooks, what it did in a step (counts the
 * store adds up per engine and step), and each saved tensor that its unpack
 * returned different from what its pack received.
 */
struct event_check_step {
	int64_t		step;		/* the checker's step number */
	uint64_t	packs;		/* tensors handed to the engine's pack */
	uint64_t	unpacks;	/* tensors its unpack returned */
	uint64_t	checked;	/* unpacks compared with their pack */
	uint64_t	differ;		/* of those, the ones that differed */
	uint64_t	packed_bytes;	/* bytes of the tensors packed */
	uint64_t	moved_bytes;	/* bytes that came back in other memory */
	uint32_t	engine;		/* string id: the engine's class */
	int32_t		device;		/* -1: host or several */
};

/* What differs between a packed tensor and what unpack returned. */
#define EVENT_CHECK_SHAPE	0x01
#define EVENT_CHECK_DTYPE	0x02
#define EVENT_CHECK_DEVICE	0x04
#define EVENT_CHECK_CONTENTS	0x08
#define EVENT_CHECK_NOT_TENSOR	0x10	/* unpack returned no tensor */
#define EVENT_CHECK_STRIDES	0x20	/* only with another bit: layout */
#define EVENT_CHECK_ALL		0x3f

struct event_check_diff {
	int64_t		step;		/* the step of the pack */
	uint64_t	unpack_ns;	/* the header's time is the pack's */
	uint64_t	index;		/* the pack's number in its step, from 0 */
	uint64_t	bytes;		/* of the packed tensor */
	uint32_t	engine;		/* string id: the engine's class */
	uint32_t	pack_site;	/* string id of a stack; 0: none */
	uint32_t	where;		/* string id: FILE:LINE of the pack in the
					   user's code; 0: none */
	uint32_t	unpack_site;	/* string id of a stack; 0: none */
	uint32_t	shape;		/* string id: "8x1024x2048" */
	uint32_t	dtype;		/* string id: "bfloat16" */
	uint32_t	detail;		/* string id: what differs, in words */
	uint32_t	differs;	/* EVENT_CHECK_*, never 0 */
	int32_t		device;		/* of the packed tensor; -1: host */
};

struct event {
	uint8_t		type;		/* enum event_type */
	uint64_t	time_ns;	/* ns since the Unix epoch; 0: unknown */
	union {
		struct event_process	process;
		struct event_string	string;
		struct event_alloc	alloc;	/* EVENT_ALLOC and EVENT_FREE */
		struct event_memcpy	memcpy;
		struct event_stream	stream;	/* stream and context */
		struct event_step	step;	/* step begin/end, mark */
		struct event_offload	offload;
		struct event_dropped	dropped;
		struct event_device	device;
		struct event_check_step	check_step;
		struct event_check_diff	check_diff;
	} u;
};

/*
 * Encoding.  A stream of bytes starts with a file header (magic and
 * version) and continues with frames; each frame holds a batch of records
 * and a CRC-32 of them, so a reader can tell a torn tail from corruption.
 */
#define EVENT_MAGIC		"VRAMTRC"	/* 7 bytes, then a version byte */
#define EVENT_VERSION		1
#define EVENT_HEADER_SIZE	8
#define EVENT_FRAME_MAX		(1024 * 1024)	/* payload bytes per frame */

/* A growing buffer that frames are written into. */
struct event_buffer {
	unsigned char	*data;
	size_t		 size;		/* bytes used */
	size_t		 alloc;		/* bytes allocated */
	size_t		 frame;		/* offset of the open frame, or SIZE_MAX */
	uint32_t	 count;		/* records in the open frame */
};

/* A reader over bytes that arrive in pieces (a socket) or all at once. */
struct event_reader {
	const char	*name;		/* for messages: file or peer name */
	unsigned char	*data;
	size_t		 size;
	size_t		 alloc;
	size_t		 pos;		/* next byte to decode in data */
	uint64_t	 offset;	/* stream offset of data[0] */
	int		 header_done;
	size_t		 frame_end;	/* end of the current frame, or 0 */
	uint32_t	 frame_left;	/* records left in the current frame */
};

/* event.c */
void	 event_buffer_init(struct event_buffer *);
void	 event_buffer_free(struct event_buffer *);
int	 event_buffer_header(struct event_buffer *);
int	 event_buffer_add(struct event_buffer *, const struct event *);
int	 event_buffer_close_frame(struct event_buffer *);
void	 event_buffer_reset(struct event_buffer *);
size_t	 event_encoded_size(const struct event *);
void	 event_reader_init(struct event_reader *, const char *);
void	 event_reader_free(struct event_reader *);
int	 event_reader_feed(struct event_reader *, const void *, size_t);
int	 event_reader_next(struct event_reader *, struct event *, char **);
int	 event_reader_finish(struct event_reader *, char **);
const char *event_type_name(unsigned int);
const char *event_layer_name(unsigned int);
const char *event_offload_kind_name(unsigned int);

#endif
