/*
 * unwrap.h: a snapshot pickle kept compressed or saved with torch.save
 * (unwrap.c).
 */
#ifndef UNWRAP_H
#define UNWRAP_H

#include <stddef.h>
#include <stdint.h>

/* The most bytes a container may unpack to (said in vramtrace(1)). */
#define UNWRAP_MAX		((uint64_t)64 << 30)
/*
 * And the most per byte of the container, beyond UNWRAP_RATIO_FLOOR: real
 * snapshots compress 7 to 25 times; more is a decompression bomb.
 */
#define UNWRAP_RATIO		256
#define UNWRAP_RATIO_FLOOR	((uint64_t)64 << 20)
/* The largest zip central directory read (a snapshot's has a few entries). */
#define UNWRAP_ZIP_DIR_MAX	((uint64_t)16 << 20)
/* unwrap_open() failed for want of a temporary file, not for the input. */
#define UNWRAP_FAIL_LOCAL	(-2)
/* The first bytes unwrap_sniff() looks at. */
#define UNWRAP_SNIFF_LEN	16

/* The containers this build reads: "gzip, xz, zstd, zip". */
const char *unwrap_formats(void);

/*
 * Whether the first n bytes of a file (n up to UNWRAP_SNIFF_LEN) begin a
 * container unwrap_open() recognises (one it reads or one it names).
 */
int	unwrap_sniff(const unsigned char *head, size_t n);

/*
 * Open the snapshot pickle at input for reading: the file itself, or, when
 * it is gzip-, xz- or zstd-compressed or a zip archive holding one pickle
 * (torch.save's), an unlinked temporary file that holds the pickle's
 * bytes.  Standard input ("-") and a FIFO are read to their end into such
 * a file first.  Sets *fd (the caller closes it) and *name, what messages
 * about the pickle's bytes call it (unwrap_label(input), or "path (gzip
 * content)"; the caller frees it).  0, or with *cause (one line naming the
 * input and what is wrong) -1 when the input is at fault,
 * UNWRAP_FAIL_LOCAL when the temporary file could not be made or written
 * (a full disk).
 */
int	unwrap_open(const char *input, int *fd, char **name, char **cause);

/* What messages call the input at path: "standard input" for "-". */
const char *unwrap_label(const char *path);

#endif
