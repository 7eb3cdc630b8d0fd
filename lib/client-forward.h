/*
 * client-forward.h: libvramtrace.so's way to the injection library
 * (client-forward.c).
 */
#ifndef CLIENT_FORWARD_H
#define CLIENT_FORWARD_H

#include <stdint.h>

#include "event.h"

struct client_forward {
	void		(*step)(void);
	void		(*mark)(const char *);
	void		(*emit)(const struct event *);
	uint32_t	(*string)(const char *);
	void		(*flush)(void);
};

/*
 * The injection library's entry points, looked up once (thread-safe).  A
 * member is NULL when the process is not being recorded or the library
 * lacks it; the struct itself is never NULL and lives for the process.
 */
const struct client_forward *client_forward(void);

#endif
