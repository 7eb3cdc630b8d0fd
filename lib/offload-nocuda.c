/*
 * offload-nocuda.c: vramtrace_offload_create() in a libvramtrace.so that
 * was built without the CUDA toolkit (configure found none): the step
 * markers work, the offload engine says why it cannot.
 */
#include "config.h"

#include <stdio.h>

#include "offload.h"

struct vramtrace_offload *
vramtrace_offload_create(const struct vramtrace_offload_config *cfg,
    char *err, size_t errlen)
{
	(void)cfg;
	if (err != NULL)
		snprintf(err, errlen, "this libvramtrace.so was built without "
		    "CUDA: configure vramtrace --with-cuda=DIR");
	return (NULL);
}
