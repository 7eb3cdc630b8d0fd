/*
 * unknown.h: how a value that is not known is spelled, one way per type.
 *
 * Unknown is not zero (a stream of 0 is the default stream, a time of 0 is
 * the epoch, 0 bytes is a measurement).  Every struct of the program, the
 * store's and the query layer's alike, spells an unknown value the way
 * this header says for its type, and every printer shows it one way:
 * "n/a" in text and in the TUI, null in JSON (fmt.c, json.c).
 *
 *	type				unknown		examples
 *	uint64_t (ids, addresses,	UNKNOWN_U64	streams, handles,
 *	  streams, times in ns)		(== EVENT_NONE)	start and end times
 *	int64_t, int32_t that are	-1		counts, pids, ranks,
 *	  never negative when known			steps
 *	double				NAN		rates, fractions
 *	const char *, char *		NULL		host, command, site
 *
 * A signed value that may be negative when known (a delta of bytes) is
 * never unknown: it is computed from known values or not reported.  A
 * device of -1 in an allocation means host memory (EVENT_LAYER_HOST), a
 * known value.
 */
#ifndef UNKNOWN_H
#define UNKNOWN_H

#include <math.h>
#include <stdint.h>

#include "event.h"

#define UNKNOWN_U64	EVENT_NONE
#define UNKNOWN_INT	(-1)
#define UNKNOWN_DOUBLE	NAN

#endif
