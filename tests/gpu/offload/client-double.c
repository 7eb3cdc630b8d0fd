/*
 * client-double.c: a stand-in for src/client.c in the GPU tests when the
 * real client is not built: it counts events and sends them nowhere.
 */
#include "config.h"

#include "client.h"

static unsigned long	client_double_events;

int
client_start(const char *source_name)
{
	(void)source_name;
	return (0);
}

void
client_emit(const struct event *ev)
{
	(void)ev;
	client_double_events++;
}

uint32_t
client_string(const char *text)
{
	(void)text;
	return (0);
}

void
client_flush(void)
{
}

void
client_stop(void)
{
}
