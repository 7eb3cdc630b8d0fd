/*
 * fake-runtime.h: a GPU runtime for the offload engine without a GPU
 * (tests/fake-runtime.c), for t-offload-engine and libfake-offload.so.
 * Streams and events are numbers, copies move nothing (device pointers are
 * made up by the tests), host memory is real.  Whether events complete and
 * which stream's waits are counted are up to the test.
 */
#ifndef FAKE_RUNTIME_H
#define FAKE_RUNTIME_H

#include "offload.h"

extern int			fake_runtime_done;	/* events complete */
extern uint64_t			fake_runtime_counted;	/* a stream */
extern int			fake_runtime_waits;	/* its waits */
extern const struct offload_ops	fake_runtime_ops;

#endif
