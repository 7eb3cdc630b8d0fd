/*
 * inject-clock.c: the clock of every event libvramtrace-inject.so makes,
 * CUPTI's, so that events made from driver calls, from activity records
 * and from the library's own API share one time base.  It calls no other
 * file of the library; it reads CUPTI's through the table inject-api.c
 * fills (inject-api.h).
 */

#include "config.h"

#include <time.h>

#include "inject.h"
#include "inject-api.h"

/*
 * Now, in ns on CUPTI's clock (that of its activity records' timestamps);
 * CLOCK_REALTIME when CUPTI cannot say or is not found yet (a mark sent
 * before cuInit).  Thread-safe.
 */
uint64_t
inject_now(void)
{
	struct timespec	ts;
	uint64_t	t;

	if (inject_api.cuptiGetTimestamp != NULL &&
	    inject_api.cuptiGetTimestamp(&t) == CUPTI_SUCCESS)
		return (t);
	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}
