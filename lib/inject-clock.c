/*
 * inject-clock.c: the clock of every event libvramtrace-inject.so makes,
 * CUPTI's, so that events made from driver calls, from activity records
 * and from the library's own API share one time base.  It calls no other
 * file of the library.
 */

#include "config.h"

#include <time.h>

#include <cupti.h>

#include "inject.h"

/*
 * Now, in ns on CUPTI's clock (that of its activity records' timestamps);
 * CLOCK_REALTIME when CUPTI cannot say.  Thread-safe.
 */
uint64_t
inject_now(void)
{
	struct timespec	ts;
	uint64_t	t;

	if (cuptiGetTimestamp(&t) == CUPTI_SUCCESS)
		return (t);
	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}
