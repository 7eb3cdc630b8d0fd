/*
 * unwrap-int.h: between the parts of unwrap: unwrap.c (which container,
 * unwrap_open), unwrap-zip.c (zip archives), unwrap-stream.c (the
 * compressed streams) and unwrap-out.c (the temporary file).  Each calls
 * only those after it.
 */
#ifndef UNWRAP_INT_H
#define UNWRAP_INT_H

#include <stdint.h>
#include <sys/types.h>

#include "unwrap.h"

/* Bytes read or written at a time. */
#define UNWRAP_CHUNK	(256 * 1024)

/* The pickle's bytes as they are unpacked: an unlinked temporary file. */
struct unwrap_out {
	const char	*path;		/* the container, for messages */
	const char	*what;		/* "gzip", "zip entry" */
	int		 fd;		/* -1 until the first write */
	uint64_t	 size;		/* bytes written */
	uint32_t	 crc;		/* their CRC-32 (zip's, zlib's) */
	uint64_t	 limit;		/* the most bytes it takes */
	int		 local;		/* the temporary file failed */
	int		 unpacked;	/* takes a container's content */
	int		 cut;		/* stopped after its first write */
};

/* unwrap-zip.c */
/*
 * Unpack into out the one pickle the zip archive open on fd (size bytes)
 * holds: torch.save's ARCHIVE/data.pkl, else the one entry named .pickle
 * or .pkl.  Sets *entry to its name (the caller frees it).  0, or -1 with
 * *cause.
 */
int	unwrap_zip(int fd, uint64_t size, struct unwrap_out *out,
	    char **entry, char **cause);

/* unwrap-stream.c: a codec of a compressed stream. */
struct unwrap_codec;

/* Whether the n bytes at head begin with the len bytes of magic. */
int	unwrap_has_magic(const unsigned char *head, size_t n,
	    const char *magic, size_t len);

/* The codec whose magic the n bytes at head begin with, or NULL. */
const struct unwrap_codec *unwrap_codec_of(const unsigned char *head,
	    size_t n);

/* The codec's name: "gzip". */
const char *unwrap_codec_name(const struct unwrap_codec *codec);

/*
 * 0 when this build reads codec; else -1 with *cause, a line naming path
 * and the command that decompresses it.
 */
int	unwrap_codec_refuse(const struct unwrap_codec *codec, const char *path,
	    char **cause);

/*
 * Feed the len bytes at offset start of the file on fd through codec into
 * out.  0, or -1 with *cause.
 */
int	unwrap_stream(const struct unwrap_codec *codec, int fd, off_t start,
	    uint64_t len, struct unwrap_out *out, char **cause);

/*
 * Inflate into out the raw deflate stream of clen bytes at offset off of
 * fd (the data of a zip entry).  0, or -1 with *cause.
 */
int	unwrap_inflate_raw(int fd, off_t off, uint64_t clen,
	    struct unwrap_out *out, char **cause);

/* unwrap-out.c */
/*
 * out->limit for a container of size bytes: UNWRAP_RATIO times its size,
 * at least UNWRAP_RATIO_FLOOR, at most UNWRAP_MAX.
 */
uint64_t unwrap_out_limit(uint64_t size);

/*
 * Whether n more bytes would take out past out->limit: 0, or -1 with
 * *cause saying which limit.
 */
int	unwrap_out_over(const struct unwrap_out *out, uint64_t n,
	    char **cause);

/*
 * Append len bytes to out, refusing more than out->limit in all, and add
 * them to out->crc.  0, or -1 with *cause (and out->local set when the
 * temporary file failed).  A container's content (out->unpacked) whose
 * first byte begins no pickle, zip archive or database is written as far
 * as this first write and stops the unpacking: -1
 * with out->cut set and no cause, so that the reader of the file says
 * what is wrong with it, without a bomb of anything unpacked first.
 */
int	unwrap_out_write(struct unwrap_out *out, const void *buf, size_t len,
	    char **cause);

#endif
