/*
 * util.c: small helpers the commands share: byte sizes with units, clocks,
 * recognising a snapshot pickle by its first bytes.
 */
#include "config.h"

#include "vramtrace.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * Format a (possibly negative) byte count for people: "311.0 MiB".  Writes
 * into buf and returns it.
 */
const char *
util_format_bytes(int64_t bytes, char *buf, size_t len)
{
	static const char	*units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double			 v = (double)(bytes < 0 ? -bytes : bytes);
	unsigned int		 u = 0;

	while (v >= 1024.0 && u < 4) {
		v /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%" PRId64 " B", bytes);
	else
		snprintf(buf, len, "%s%.1f %s", bytes < 0 ? "-" : "", v,
		    units[u]);
	return (buf);
}

/*
 * qsort() that accepts an empty array: qsort(NULL, 0, ...) is undefined
 * behaviour, and growing arrays start as NULL.
 */
void
util_sort(void *base, size_t n, size_t size,
    int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

/*
 * Is path a pickle rather than a database?  Looks at the name first
 * (.pickle, .pkl) and then at the first byte (PROTO opcode 0x80).
 */
int
util_is_pickle(const char *path)
{
	const char	*dot = strrchr(path, '.');
	FILE		*f;
	int		 c;

	if (dot != NULL && (strcmp(dot, ".pickle") == 0 ||
	    strcmp(dot, ".pkl") == 0))
		return (1);
	if ((f = fopen(path, "rb")) == NULL)
		return (0);
	c = fgetc(f);
	fclose(f);
	return (c == 0x80);
}

/* Is standard output a terminal? */
int
util_isatty_out(void)
{
	return (isatty(STDOUT_FILENO));
}

/* Is standard error a terminal? */
int
util_isatty_err(void)
{
	return (isatty(STDERR_FILENO));
}
