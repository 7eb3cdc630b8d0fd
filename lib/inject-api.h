/*
 * inject-api.h: the CUPTI and driver functions the injection library calls,
 * through a table that inject-api.c fills at run time (the library links
 * with neither libcupti nor libcuda; see cuda-find.h).  Included by the
 * CUPTI files alone (inject-api.c, inject-cupti.c, inject-calls.c,
 * inject-entry.c, inject-interpose.c, inject-copies.c, inject-clock.c).
 *
 * Each member has the type of the function of the same name in the
 * headers (__typeof__), so a call through the table is checked as a direct
 * call would be; a name that cuda.h maps to a versioned one
 * (cuDeviceTotalMem to cuDeviceTotalMem_v2) is looked up under that name.
 */
#ifndef INJECT_API_H
#define INJECT_API_H

#include <cupti.h>

/* Every CUPTI function used; each must be there. */
#define INJECT_API_CUPTI(X)						\
	X(cuptiActivityDisable)						\
	X(cuptiActivityEnable)						\
	X(cuptiActivityFlushAll)					\
	X(cuptiActivityGetNextRecord)					\
	X(cuptiActivityGetNumDroppedRecords)				\
	X(cuptiActivityRegisterCallbacks)				\
	X(cuptiEnableCallback)						\
	X(cuptiGetContextId)						\
	X(cuptiGetDeviceId)						\
	X(cuptiGetResultString)						\
	X(cuptiGetStreamIdEx)						\
	X(cuptiGetTimestamp)						\
	X(cuptiSubscribe)						\
	X(cuptiUnsubscribe)

/* The driver's, from the libcuda that loaded us. */
#define INJECT_API_DRIVER(X)						\
	X(cuCtxGetCurrent)						\
	X(cuDeviceGet)							\
	X(cuDeviceGetName)						\
	X(cuDeviceTotalMem)						\
	X(cuGetProcAddress)						\
	X(cuPointerGetAttribute)					\
	X(cuStreamGetFlags)						\
	X(cuStreamGetPriority)

#define INJECT_API_MEMBER(f)	__typeof__(f) *f;

struct inject_api {
	INJECT_API_CUPTI(INJECT_API_MEMBER)
	INJECT_API_DRIVER(INJECT_API_MEMBER)
	/* CUPTI 13 on (names the tool that holds CUPTI); else NULL. */
	__typeof__(cuptiSubscribe_v2)	*cuptiSubscribe_v2;
	void				*cupti;	/* libcupti's handle */
};

extern struct inject_api inject_api;

/* inject-api.c */
int	 inject_api_open(char **);

#endif
