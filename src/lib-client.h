/*
 * lib-client.h: libvramtrace.so's way to the injection library (lib-client.c).
 */
#ifndef LIB_CLIENT_H
#define LIB_CLIENT_H

#include <stdint.h>

#include "event.h"

struct lib_inject {
	void		(*step)(void);
	void		(*mark)(const char *);
	void		(*emit)(const struct event *);
	uint32_t	(*string)(const char *);
	void		(*flush)(void);
};

const struct lib_inject *lib_inject(void);

#endif
