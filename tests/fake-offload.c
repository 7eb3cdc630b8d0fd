/*
 * fake-offload.c: libvramtrace's offload engine over a fake runtime, as a
 * library (tests/libfake-offload.so) that the Python binding loads in
 * place of libvramtrace.so (VRAMTRACE_LIBRARY) to test the saved-tensor hooks
 * without a GPU (tests/offload-python.py), over the fake runtime
 * (fake-runtime.h) with every event complete.
 */
#include "config.h"

#include "fake-runtime.h"

struct vramtrace_offload *
vramtrace_offload_create(const struct vramtrace_offload_config *cfg,
    char *err, size_t errlen)
{
	fake_runtime_done = 1;
	return (offload_engine_create(&fake_runtime_ops, cfg, err, errlen));
}
