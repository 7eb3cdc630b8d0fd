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

/* Parse a decimal unsigned integer; 0 on success, -1 if s is not one. */
int
util_parse_uint(const char *s, uint64_t *out)
{
	char			*end;
	unsigned long long	 v;

	if (s == NULL || !isdigit((unsigned char)*s))
		return (-1);
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return (-1);
	*out = v;
	return (0);
}

/*
 * Parse a byte count with an optional unit: B, KiB, MiB, GiB, TiB (powers of
 * 1024; K, M, G, T, KB, MB, GB, TB are taken as the same).  0 or -1.
 */
int
util_parse_bytes(const char *s, uint64_t *out)
{
	static const char	*units = "KMGT";
	char			*end;
	const char		*p;
	double			 v;
	int			 shift = 0;

	if (s == NULL || (!isdigit((unsigned char)*s) && *s != '.'))
		return (-1);
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || v < 0)
		return (-1);
	if (*end != '\0' && (p = strchr(units, toupper((unsigned char)*end)))
	    != NULL) {
		shift = 10 * (int)(p - units + 1);
		end++;
		if (*end == 'i' || *end == 'I')
			end++;
		if (*end == 'B' || *end == 'b')
			end++;
	} else if (*end == 'B' || *end == 'b')
		end++;
	if (*end != '\0')
		return (-1);
	v *= (double)((uint64_t)1 << shift);
	if (v >= 18446744073709551616.0)
		return (-1);
	*out = (uint64_t)v;
	return (0);
}

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

/* The wall clock in ns since the Unix epoch (CUPTI's time base). */
uint64_t
util_now_ns(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
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
