/*
 * client.h: how a traced process hands events to vramtrace.
 *
 * Both libraries that live inside the traced process (the CUPTI injection
 * library and libvramtrace.so with the offload engine and step markers) send
 * their events through this client.  It reads its destination from the
 * environment once: VRAMTRACE_SOCKET (the collector's Unix socket, set by
 * `vramtrace record`) or else VRAMTRACE_OUTPUT (a spool file that `vramtrace
 * replay` turns into a database).  With neither set every call is a cheap
 * no-op.  The client never blocks the caller for I/O, never exits or aborts
 * the process, and turns itself off (one warning on stderr) on any failure.
 * A background thread encodes and ships batches (event.c encoding); events
 * that cannot be queued are counted and reported as EVENT_DROPPED.
 */
#ifndef CLIENT_H
#define CLIENT_H

#include "event.h"

/*
 * Start the client if the environment names a destination.  Idempotent and
 * thread-safe.  Returns 1 when events will be recorded, 0 when the client is
 * off (no destination, or it failed and said so once).
 */
int	client_start(const char *source_name);

/*
 * Queue one event.  Never blocks on I/O.  Strings must be defined first with
 * client_string().  A no-op when the client is off.
 */
void	client_emit(const struct event *ev);

/*
 * Return the id of a string, defining it (an EVENT_STRING record) the first
 * time it is seen.  Returns 0 when the client is off.
 */
uint32_t client_string(const char *text);

/*
 * Reserve a string id whose text client_string_define() gives later
 * (events may name it meanwhile).  Returns 0 when the client is off.  The
 * injection library's client only, like the two below.
 */
uint32_t client_string_reserve(void);

/* Define the text of a reserved id; the client copies it. */
void	client_string_define(uint32_t id, const char *text);

/*
 * Have the client's thread call fn before each batch it ships, without
 * its lock held; final is 1 for the last batch.
 */
void	client_set_sweep(void (*fn)(int final));

/* Ship everything queued so far and wait until it has been written. */
void	client_flush(void);

/* Flush and stop; called at exit.  Safe to call more than once. */
void	client_stop(void);

/*
 * Print a warning that recording stopped, on stderr, at most once per
 * process: the traced program's output is not ours to fill.  The text
 * says what happened and what to do; the client adds what it means.
 */
void	client_warn(const char *, ...)
#ifdef __GNUC__
	__attribute__((format(printf, 1, 2)))
#endif
	;

/*
 * Print a note that recording goes on without a setting it could not use,
 * on stderr; the text says what happened and what is used instead.  Only
 * the injection library (client.c) has it.
 */
void	client_note(const char *, ...)
#ifdef __GNUC__
	__attribute__((format(printf, 1, 2)))
#endif
	;

#endif
