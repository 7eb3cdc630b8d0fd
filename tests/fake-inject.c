/*
 * fake-inject.c: a stand-in for libvramtrace-inject.so without CUDA, for
 * the tests of what libvramtrace.so forwards (the offload check's events
 * from Python).  Given as CUDA_INJECTION64_PATH, it offers the entry
 * points client-forward.c looks up for events and strings (not the step
 * markers), over the same client (client.c), so events go to
 * VRAMTRACE_OUTPUT or VRAMTRACE_SOCKET as they would from a traced process.
 */
#include "config.h"

#include "client.h"

#define FAKE_API	__attribute__((visibility("default")))

void	 vramtrace_inject_emit(const struct event *) FAKE_API;
uint32_t vramtrace_inject_string(const char *) FAKE_API;
void	 vramtrace_inject_flush(void) FAKE_API;

void
vramtrace_inject_emit(const struct event *ev)
{
	if (client_start("fake"))
		client_emit(ev);
}

uint32_t
vramtrace_inject_string(const char *text)
{
	return (client_start("fake") ? client_string(text) : 0);
}

void
vramtrace_inject_flush(void)
{
	client_flush();
}
