/*
 * unwrap-stream.c: the compressed streams a snapshot may come in: gzip
 * (zlib), xz (liblzma) and zstd (libzstd), when configure found them, and
 * a zip entry's raw deflate; bzip2 and lz4 are known by name only.
 *
 * The codecs share one loop (unwrap_stream): each is a step that takes
 * what input it can and gives what output it can, and says when a stream
 * ended.  The input must end where a stream does (more input after one
 * is the next: a gzip member, a zstd frame); input that ends before a
 * stream does is a truncated file.
 */
#include "config.h"

#include "vramtrace.h"
#include "unwrap-int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#ifdef HAVE_LZMA
#include <lzma.h>
#endif
#ifdef HAVE_ZSTD
#include <zstd.h>
#include <zstd_errors.h>
#endif

/* What a codec's step did. */
#define STEP_ERROR	-1
#define STEP_MORE	0	/* wants more input or more room */
#define STEP_END	1	/* a stream (a gzip member, a zstd frame) ended */

/* The buffers between the file and a codec. */
struct unwrap_io {
	const unsigned char	*in;		/* input not yet taken */
	size_t			 in_len;
	int			 eof;		/* no input after in */
	unsigned char		*out;		/* room for output */
	size_t			 out_len;
};

struct unwrap_codec {
	const char	*name;
	const char	*magic;
	size_t		 magic_len;
	const char	*undo;		/* the command that decompresses it */
	const char	*library;	/* the library a build may lack */
	void		*(*begin)(void);
	int		 (*step)(void *, struct unwrap_io *, const char **);
	void		 (*end)(void *);
};

/*
 * zlib's inflate: gzip (a file may hold several members, one after
 * another) or a raw deflate stream (a zip entry's, one stream).
 */
struct unwrap_gzip {
	z_stream	z;
	int		members;	/* another stream may follow */
	int		ended;
};

static void *
inflate_begin(int window_bits, int members)
{
	struct unwrap_gzip	*g = xcalloc(1, sizeof *g);

	if (inflateInit2(&g->z, window_bits) != Z_OK) {
		free(g);
		return (NULL);
	}
	g->members = members;
	return (g);
}

static void *
gzip_begin(void)
{
	return (inflate_begin(16 + MAX_WBITS, 1));
}

static void *
deflate_begin(void)
{
	return (inflate_begin(-MAX_WBITS, 0));
}

static int
gzip_step(void *arg, struct unwrap_io *io, const char **msg)
{
	struct unwrap_gzip	*g = arg;
	int			 zr;

	if (g->ended) {
		if (!g->members) {
			*msg = "data after the end of the stream";
			return (STEP_ERROR);
		}
		inflateReset(&g->z);
		g->ended = 0;
	}
	g->z.next_in = (unsigned char *)(uintptr_t)io->in;
	g->z.avail_in = (uInt)io->in_len;
	g->z.next_out = io->out;
	g->z.avail_out = (uInt)io->out_len;
	zr = inflate(&g->z, Z_NO_FLUSH);
	io->in = g->z.next_in;
	io->in_len = g->z.avail_in;
	io->out = g->z.next_out;
	io->out_len = g->z.avail_out;
	if (zr == Z_STREAM_END) {
		g->ended = 1;
		return (STEP_END);
	}
	if (zr == Z_OK || zr == Z_BUF_ERROR)
		return (STEP_MORE);
	*msg = g->z.msg != NULL ? g->z.msg : zError(zr);
	return (STEP_ERROR);
}

static void
gzip_end(void *arg)
{
	struct unwrap_gzip	*g = arg;

	inflateEnd(&g->z);
	free(g);
}

#ifdef HAVE_LZMA
/* The memory liblzma may use (xz -9 needs 65 MiB). */
#define UNWRAP_XZ_MEMORY	((uint64_t)256 << 20)

static void *
xz_begin(void)
{
	lzma_stream	*s = xcalloc(1, sizeof *s);

	*s = (lzma_stream)LZMA_STREAM_INIT;
	if (lzma_stream_decoder(s, UNWRAP_XZ_MEMORY, LZMA_CONCATENATED) !=
	    LZMA_OK) {
		free(s);
		return (NULL);
	}
	return (s);
}

static int
xz_step(void *arg, struct unwrap_io *io, const char **msg)
{
	lzma_stream	*s = arg;
	lzma_ret	 r;

	s->next_in = io->in;
	s->avail_in = io->in_len;
	s->next_out = io->out;
	s->avail_out = io->out_len;
	r = lzma_code(s, io->eof ? LZMA_FINISH : LZMA_RUN);
	io->in = s->next_in;
	io->in_len = s->avail_in;
	io->out = s->next_out;
	io->out_len = s->avail_out;
	switch (r) {
	case LZMA_STREAM_END:
		return (STEP_END);
	case LZMA_OK:
	case LZMA_BUF_ERROR:
		return (STEP_MORE);
	case LZMA_MEMLIMIT_ERROR:
		*msg = "needs more than 256 MiB of memory to decompress";
		break;
	case LZMA_FORMAT_ERROR:
		*msg = "not an xz stream";
		break;
	case LZMA_OPTIONS_ERROR:
		*msg = "options this liblzma does not support";
		break;
	case LZMA_MEM_ERROR:
		*msg = "out of memory";
		break;
	case LZMA_DATA_ERROR:
		*msg = "the data is damaged";
		break;
	default:
		*msg = "liblzma cannot decode it";
		break;
	}
	return (STEP_ERROR);
}

static void
xz_end(void *arg)
{
	lzma_end(arg);
	free(arg);
}
#define XZ_CODEC	xz_begin, xz_step, xz_end
#else
#define XZ_CODEC	NULL, NULL, NULL
#endif

#ifdef HAVE_ZSTD
/* Frames follow one another; windows larger than zstd's default refused. */
static void *
zstd_begin(void)
{
	return (ZSTD_createDStream());
}

static int
zstd_step(void *arg, struct unwrap_io *io, const char **msg)
{
	ZSTD_inBuffer	 in = { io->in, io->in_len, 0 };
	ZSTD_outBuffer	 out = { io->out, io->out_len, 0 };
	size_t		 r;

	r = ZSTD_decompressStream(arg, &out, &in);
	io->in += in.pos;
	io->in_len -= in.pos;
	io->out += out.pos;
	io->out_len -= out.pos;
	if (ZSTD_getErrorCode(r) ==
	    ZSTD_error_frameParameter_windowTooLarge) {
		*msg = "needs a window over 128 MiB (zstd --long): decompress"
		    " it with zstd -d --long=31 first";
		return (STEP_ERROR);
	}
	if (ZSTD_isError(r)) {
		*msg = ZSTD_getErrorName(r);
		return (STEP_ERROR);
	}
	return (r == 0 ? STEP_END : STEP_MORE);
}

static void
zstd_end(void *arg)
{
	ZSTD_freeDStream(arg);
}
#define ZSTD_CODEC	zstd_begin, zstd_step, zstd_end
#else
#define ZSTD_CODEC	NULL, NULL, NULL
#endif

static const struct unwrap_codec unwrap_codecs[] = {
	{ "gzip", "\x1f\x8b", 2, "gzip -d", NULL,
	    gzip_begin, gzip_step, gzip_end },
	{ "xz", "\xfd" "7zXZ\0", 6, "xz -d", "liblzma", XZ_CODEC },
	{ "zstd", "\x28\xb5\x2f\xfd", 4, "zstd -d", "libzstd", ZSTD_CODEC },
	{ "bzip2", "BZh", 3, "bunzip2", NULL, NULL, NULL, NULL },
	{ "lz4", "\x04\x22\x4d\x18", 4, "lz4 -d", NULL, NULL, NULL, NULL },
};
#define UNWRAP_NCODECS	(sizeof unwrap_codecs / sizeof unwrap_codecs[0])

/* A zip entry's data. */
static const struct unwrap_codec unwrap_deflate = { "deflate", "", 0,
    NULL, NULL, deflate_begin, gzip_step, gzip_end };

/* Whether the n bytes at head begin with the len bytes of magic. */
int
unwrap_has_magic(const unsigned char *head, size_t n, const char *magic,
    size_t len)
{
	return (n >= len && memcmp(head, magic, len) == 0);
}

/* The codec whose magic the n bytes at head begin with, or NULL. */
const struct unwrap_codec *
unwrap_codec_of(const unsigned char *head, size_t n)
{
	size_t	i;

	for (i = 0; i < UNWRAP_NCODECS; i++) {
		if (unwrap_has_magic(head, n, unwrap_codecs[i].magic,
		    unwrap_codecs[i].magic_len))
			return (&unwrap_codecs[i]);
	}
	return (NULL);
}

/* The containers this build reads, for --version. */
const char *
unwrap_formats(void)
{
	return ("gzip"
#ifdef HAVE_LZMA
	    ", xz"
#endif
#ifdef HAVE_ZSTD
	    ", zstd"
#endif
	    ", zip");
}

/*
 * 0 when this build reads codec; else -1 with *cause naming path and the
 * command that decompresses it.
 */
int
unwrap_codec_refuse(const struct unwrap_codec *codec, const char *path,
    char **cause)
{
	if (codec->begin != NULL)
		return (0);
	if (codec->library != NULL)
		xasprintf(cause, "%s: compressed with %s, which this vramtrace"
		    " was built without (%s): decompress it first (%s)", path,
		    codec->name, codec->library, codec->undo);
	else
		xasprintf(cause, "%s: compressed with %s, which vramtrace does"
		    " not read: decompress it first (%s)", path, codec->name,
		    codec->undo);
	return (-1);
}

/*
 * Feed the len bytes at offset start of the file on in through codec into
 * out.  0, or -1 with *cause: the input damaged or ending inside a stream
 * (its byte offset), or out failing.
 */
int
unwrap_stream(const struct unwrap_codec *codec, int in, off_t start,
    uint64_t len, struct unwrap_out *out, char **cause)
{
	struct unwrap_io	 io;
	unsigned char		*ibuf, *obuf;
	const char		*msg = NULL;
	uint64_t		 read_total = 0;
	size_t			 before;
	ssize_t			 n;
	void			*state;
	int			 r = STEP_MORE, rc = -1;

	if ((state = codec->begin()) == NULL) {
		xasprintf(cause, "%s: cannot start a %s decoder (out of"
		    " memory)", out->path, codec->name);
		return (-1);
	}
	ibuf = xmalloc(UNWRAP_CHUNK);
	obuf = xmalloc(UNWRAP_CHUNK);
	memset(&io, 0, sizeof io);
	for (;;) {
		if (io.in_len == 0 && !io.eof) {
			n = len - read_total < UNWRAP_CHUNK ?
			    (ssize_t)(len - read_total) : UNWRAP_CHUNK;
			if (n > 0 && (n = pread(in, ibuf, (size_t)n, start +
			    (off_t)read_total)) <= 0) {
				if (n == 0)
					xasprintf(cause, "%s: truncated while"
					    " it was read", out->path);
				else
					*cause = xstrerror_cause("%s",
					    out->path);
				break;
			}
			io.in = ibuf;
			io.in_len = (size_t)n;
			io.eof = n == 0;
			read_total += (uint64_t)n;
		}
		if (r == STEP_END && io.in_len == 0 && io.eof) {
			rc = 0;
			break;
		}
		io.out = obuf;
		io.out_len = UNWRAP_CHUNK;
		before = io.in_len;
		r = codec->step(state, &io, &msg);
		if (unwrap_out_write(out, obuf, UNWRAP_CHUNK - io.out_len,
		    cause) != 0)
			break;
		if (r == STEP_ERROR) {
			xasprintf(cause, "%s: cannot decompress its %s data at"
			    " byte %" PRIu64 " (%s)", out->path, codec->name, (uint64_t)start +
			    read_total - io.in_len, msg);
			break;
		}
		/* No step forward: the input ended inside a stream. */
		if (r == STEP_MORE && io.in_len == before &&
		    io.out_len == UNWRAP_CHUNK && (io.eof || io.in_len > 0)) {
			xasprintf(cause, "%s: truncated: its %s data ends"
			    " early, at byte %" PRIu64, out->path, codec->name,
			    (uint64_t)start + read_total);
			break;
		}
	}
	codec->end(state);
	free(ibuf);
	free(obuf);
	return (rc);
}

/* A zip entry's raw deflate stream of clen bytes at off into out. */
int
unwrap_inflate_raw(int fd, off_t off, uint64_t clen, struct unwrap_out *out,
    char **cause)
{
	return (unwrap_stream(&unwrap_deflate, fd, off, clen, out, cause));
}

/* The codec's name: "gzip". */
const char *
unwrap_codec_name(const struct unwrap_codec *codec)
{
	return (codec->name);
}
