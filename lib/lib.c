/*
 * lib.c: the helpers every file of lib/ may use (lib.h): parsing the
 * environment's knobs and the clock events carry.  Linked into the
 * traced process and into the program alike: nothing here allocates,
 * prints or exits.
 */
#include "config.h"

#include "lib.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * Parse a stack mode, "python", "native", "all" or "none", into
 * LIB_STACK_* bits.  0 on success, -1 if s is not one.
 */
int
lib_parse_stacks(const char *s, unsigned *out)
{
	static const struct {
		const char	*name;
		unsigned	 kinds;
	} modes[] = {
		{ "python", LIB_STACK_PYTHON },
		{ "native", LIB_STACK_NATIVE },
		{ "all", LIB_STACK_PYTHON | LIB_STACK_NATIVE },
		{ "none", 0 },
	};
	size_t	i;

	for (i = 0; s != NULL && i < sizeof modes / sizeof modes[0]; i++) {
		if (strcmp(s, modes[i].name) == 0) {
			*out = modes[i].kinds;
			return (0);
		}
	}
	return (-1);
}

/* Parse a decimal unsigned integer; 0 on success, -1 if s is not one. */
int
lib_parse_uint(const char *s, uint64_t *out)
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
lib_parse_bytes(const char *s, uint64_t *out)
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

/* The wall clock in ns since the Unix epoch (CUPTI's time base). */
uint64_t
lib_now_ns(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}
