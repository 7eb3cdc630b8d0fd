/*
 * input.c: what a command that reads a database was given.
 *
 * Every reading command accepts a database or a PyTorch snapshot pickle.
 * A pickle is imported first into a cache file next to it (see
 * input_cache_path()), reused while it is newer than the pickle.
 */
#include "config.h"

#include "vramtrace.h"

#include <stdlib.h>

/*
 * Open path for reading: a database as it is, a pickle through its
 * imported copy.  Returns the query handle, or NULL with *cause.
 */
struct query *
input_open(const char *path, char **cause)
{
	if (util_is_pickle(path)) {
		xasprintf(cause, "%s: reading snapshot pickles is not "
		    "supported by this build", path);
		return (NULL);
	}
	return (query_open(path, cause));
}
