/*
 * client.c: the in-process event client (see client.h for the contract).
 *
 * Callers append events to the front of two queues under one mutex; that is
 * all client_emit() does, so a CUPTI callback or an application thread never
 * waits for I/O.  One background thread wakes every flush period (or when the
 * front queue gets large, or on client_flush()), swaps the queues, encodes
 * the back queue into one frame (event.c) and writes it to the collector's
 * socket or the spool file.  The queues grow up to CLIENT_QUEUE_MAX events;
 * past that, events are counted and reported as one EVENT_DROPPED record in
 * the next batch.  EVENT_STRING records are never dropped, since later
 * records name them by id.
 *
 * Strings live in an open-addressing table that maps text to id; the table
 * owns the text, and queued EVENT_STRING records borrow it until the client
 * stops.  An id may also be reserved first and its text defined later
 * (native stacks, symbolised off the hot path); those texts live in
 * client_defined.  Before each batch the thread calls the sweep function
 * the injection library set, outside the lock.  Generations make client_flush() exact: every queued event bumps
 * client_queued, the thread publishes the last generation it has written in
 * client_shipped.
 *
 * The client is a small state machine: UNSET until the first client_start(),
 * then ON or OFF.  It becomes OFF for good on any failure (one warning), in
 * a fork child (pthread_atfork) and after client_stop().
 */

#include "config.h"

#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "lib.h"

#define CLIENT_QUEUE_MAX	(1u << 20)	/* events per batch, at most */
#define CLIENT_WAKE_AT		(1u << 16)	/* wake the thread early */
#define CLIENT_FLUSH_MS		200

/* The collector closed the connection: it ended, or turned us away. */
#define CLIENT_SEND_FAILED	"cannot send events: %s (the collector, " \
	"vramtrace record, ended, was killed or turned this process away; " \
	"its own messages say which)"

enum client_state {
	CLIENT_UNSET,
	CLIENT_ON,
	CLIENT_OFF
};

struct client_queue {
	struct event	*ev;
	size_t		 n;
	size_t		 alloc;
};

struct client_entry {
	char		*text;		/* NULL: empty slot */
	uint32_t	 id;
};

static pthread_mutex_t	 client_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	 client_wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t	 client_done = PTHREAD_COND_INITIALIZER;
static enum client_state client_state = CLIENT_UNSET;
static struct client_queue client_queues[2];
static struct client_queue *client_front = &client_queues[0];
static uint64_t		 client_queued;		/* generation of last event */
static uint64_t		 client_shipped;	/* last generation written */
static uint64_t		 client_dropped;	/* not queued since last batch */
static int		 client_flush_asked;
static int		 client_stopping;
static int		 client_fd = -1;
static int		 client_is_socket;
static unsigned		 client_flush_ms = CLIENT_FLUSH_MS;
static pthread_t	 client_thread;
static int		 client_has_thread;
static int		 client_warned;
static const char	*client_source = "client";
static uint32_t		 client_drop_name;	/* string id */
static struct client_entry *client_strings;
static size_t		 client_strings_size;	/* slots, a power of two */
static uint32_t		 client_strings_used;
static uint32_t		 client_next_id;	/* the last id given */
static char		**client_defined;	/* texts of defined ids */
static size_t		 client_ndefined, client_defined_alloc;
static void		(*client_sweep)(int);

/*
 * Print "vramtrace (SOURCE, pid N): ", fmt with ap, then tail, in one
 * write (the traced program's threads and processes write to the same
 * stderr: a line written in pieces could be cut by theirs); a message
 * longer than CLIENT_SAY_MAX is cut, its tail kept.  A stderr that is a
 * pipe whose reader went away (vramtrace record ... 2>&1 | head) must not
 * end the program with SIGPIPE for a line of ours: the signal is blocked
 * in this thread while we write, and one our write raised is taken back
 * before it is unblocked.
 */
#define CLIENT_SAY_MAX	2048

static void printflike(2, 0)
client_say(const char *tail, const char *fmt, va_list ap)
{
	static const struct timespec	 now = { 0, 0 };
	sigset_t			 sigpipe, old, pending;
	char				 line[CLIENT_SAY_MAX];
	size_t				 len, room;
	int				 saved = errno, was_pending, n;

	room = sizeof line - strlen(tail);
	n = snprintf(line, room, "vramtrace (%s, pid %ld): ", client_source,
	    (long)getpid());
	len = n < 0 ? 0 : (size_t)n < room ? (size_t)n : room - 1;
	n = vsnprintf(line + len, room - len, fmt, ap);
	len += n < 0 ? 0 : (size_t)n < room - len ? (size_t)n : room - len - 1;
	memcpy(line + len, tail, strlen(tail) + 1);
	sigemptyset(&sigpipe);
	sigaddset(&sigpipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &sigpipe, &old);
	was_pending = sigpending(&pending) == 0 &&
	    sigismember(&pending, SIGPIPE);
	fputs(line, stderr);
	fflush(stderr);
	if (!was_pending && sigpending(&pending) == 0 &&
	    sigismember(&pending, SIGPIPE))
		sigtimedwait(&sigpipe, NULL, &now);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
}

/*
 * Say on stderr in one line, once per process, that recording stopped:
 * what happened and what to do (fmt), then what it means.  The traced program's output
 * is not ours to fill, so a second failure stays quiet.
 */
void
client_warn(const char *fmt, ...)
{
	va_list	ap;

	if (client_warned)
		return;
	client_warned = 1;
	va_start(ap, fmt);
	client_say("; vramtrace records nothing more of this process, the"
	    " program runs on unchanged\n", fmt, ap);
	va_end(ap);
}

/*
 * Say on stderr something that recording goes on without (a setting it
 * could not use); fmt says what happened and what is used instead.
 */
void
client_note(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	client_say(".\n", fmt, ap);
	va_end(ap);
}

static uint64_t
client_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

/* Append to the front queue; the caller holds the lock. */
static int
client_push(const struct event *ev, int must)
{
	struct client_queue	*q = client_front;
	struct event		*grown;
	size_t			 alloc;

	if (q->n == q->alloc) {
		if (q->alloc >= CLIENT_QUEUE_MAX && !must) {
			client_dropped++;
			return (0);
		}
		alloc = q->alloc == 0 ? 4096 : q->alloc * 2;
		grown = realloc(q->ev, alloc * sizeof *q->ev);
		if (grown == NULL) {
			client_dropped++;
			return (0);
		}
		q->ev = grown;
		q->alloc = alloc;
	}
	q->ev[q->n++] = *ev;
	client_queued++;
	if (q->n == CLIENT_WAKE_AT)
		pthread_cond_signal(&client_wake);
	return (1);
}

static uint32_t
client_hash(const char *s)
{
	uint32_t	h = 2166136261u;

	while (*s != '\0')
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return (h);
}

/* Queue the EVENT_STRING of id; text stays ours; the lock is held. */
static void
client_push_string(uint32_t id, const char *text, size_t len)
{
	struct event	ev;

	memset(&ev, 0, sizeof ev);
	ev.type = EVENT_STRING;
	ev.time_ns = client_now();
	ev.u.string.id = id;
	ev.u.string.length = (uint32_t)len;
	ev.u.string.text = text;
	client_push(&ev, 1);
}

/* Find or define a string; the caller holds the lock. */
static uint32_t
client_intern(const char *text)
{
	struct client_entry	*old = client_strings, *e;
	size_t			 old_size = client_strings_size, i, mask;
	size_t			 len;

	if (client_strings_used + 1 >= client_strings_size / 2) {
		client_strings_size = old_size == 0 ? 256 : old_size * 2;
		client_strings = calloc(client_strings_size, sizeof *e);
		if (client_strings == NULL) {
			client_strings = old;
			client_strings_size = old_size;
			return (0);
		}
		mask = client_strings_size - 1;
		for (i = 0; i < old_size; i++) {
			if (old[i].text == NULL)
				continue;
			e = &client_strings[client_hash(old[i].text) & mask];
			while (e->text != NULL) {
				if (++e == client_strings + client_strings_size)
					e = client_strings;
			}
			*e = old[i];
		}
		free(old);
	}
	mask = client_strings_size - 1;
	e = &client_strings[client_hash(text) & mask];
	while (e->text != NULL) {
		if (strcmp(e->text, text) == 0)
			return (e->id);
		if (++e == client_strings + client_strings_size)
			e = client_strings;
	}
	len = strnlen(text, EVENT_STRING_MAX);
	if ((e->text = strndup(text, len)) == NULL)
		return (0);
	client_strings_used++;
	e->id = ++client_next_id;
	client_push_string(e->id, e->text, len);
	return (e->id);
}

/* Write all of a buffer; 0 or -1 with errno. */
static int
client_write(const unsigned char *p, size_t len)
{
	ssize_t	n;

	while (len > 0) {
		if (client_is_socket)
			n = send(client_fd, p, len, MSG_NOSIGNAL);
		else
			n = write(client_fd, p, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return (-1);
		p += n;
		len -= (size_t)n;
	}
	return (0);
}

/* Encode and write one batch; 0 or -1 with a warning given. */
static int
client_ship(struct event_buffer *eb, const struct client_queue *q,
    uint64_t dropped)
{
	struct event	ev;
	size_t		i;

	event_buffer_reset(eb);
	for (i = 0; i < q->n; i++) {
		if (event_buffer_add(eb, &q->ev[i]) != 0)
			goto fail;
	}
	if (dropped != 0) {
		memset(&ev, 0, sizeof ev);
		ev.type = EVENT_DROPPED;
		ev.time_ns = client_now();
		ev.u.dropped.count = dropped;
		ev.u.dropped.source = client_drop_name;
		if (event_buffer_add(eb, &ev) != 0)
			goto fail;
	}
	if (event_buffer_close_frame(eb) != 0)
		goto fail;
	if (eb->size != 0 && client_write(eb->data, eb->size) != 0) {
		client_warn(CLIENT_SEND_FAILED, strerror(errno));
		return (-1);
	}
	return (0);

fail:
	client_warn("cannot encode events");
	return (-1);
}

static void *
client_main(void *arg)
{
	struct event_buffer	 eb;
	struct client_queue	*back;
	struct timespec		 ts;
	uint64_t		 generation, dropped;
	int			 stop, failed = 0;

	(void)arg;
	event_buffer_init(&eb);
	if (event_buffer_header(&eb) != 0 ||
	    client_write(eb.data, eb.size) != 0) {
		client_warn(CLIENT_SEND_FAILED, strerror(errno));
		failed = 1;
	}

	pthread_mutex_lock(&client_lock);
	for (;;) {
		if (!client_stopping && !client_flush_asked) {
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += (long)(client_flush_ms % 1000) * 1000000;
			ts.tv_sec += client_flush_ms / 1000 +
			    ts.tv_nsec / 1000000000;
			ts.tv_nsec %= 1000000000;
			pthread_cond_timedwait(&client_wake, &client_lock, &ts);
		}
		if (client_sweep != NULL && !failed) {
			stop = client_stopping;
			pthread_mutex_unlock(&client_lock);
			client_sweep(stop);
			pthread_mutex_lock(&client_lock);
		}
		client_flush_asked = 0;
		back = client_front;
		client_front = back == &client_queues[0] ?
		    &client_queues[1] : &client_queues[0];
		generation = client_queued;
		dropped = client_dropped;
		client_dropped = 0;
		stop = client_stopping;
		pthread_mutex_unlock(&client_lock);

		if (!failed && (back->n != 0 || dropped != 0))
			failed = client_ship(&eb, back, dropped) != 0;
		back->n = 0;

		pthread_mutex_lock(&client_lock);
		if (failed)
			client_state = CLIENT_OFF;
		client_shipped = generation;
		pthread_cond_broadcast(&client_done);
		if ((stop && client_front->n == 0) || failed)
			break;
	}
	pthread_mutex_unlock(&client_lock);
	event_buffer_free(&eb);
	return (NULL);
}

static void
client_fork_prepare(void)
{
	pthread_mutex_lock(&client_lock);
}

static void
client_fork_parent(void)
{
	pthread_mutex_unlock(&client_lock);
}

/* A fork child is never traced: it has no thread and shares our socket. */
static void
client_fork_child(void)
{
	pthread_mutex_unlock(&client_lock);
	if (client_fd != -1)
		close(client_fd);
	client_fd = -1;
	client_has_thread = 0;
	client_state = CLIENT_OFF;
}

/*
 * Open spool file path (flags: 0 or O_TRUNC) and take its lock, held for
 * as long as this process writes it.  -1 when it cannot be opened; *busy
 * is set when another live process holds the lock.
 */
static int
client_spool_lock(const char *path, int flags, int *busy)
{
	int	fd;

	*busy = 0;
	if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags,
	    0644)) == -1)
		return (-1);
	if (flock(fd, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK)
		return (fd);	/* a file system without locks: as before */
	*busy = 1;
	close(fd);
	return (-1);
}

/*
 * Open the spool file at path for this process alone.  A spool file is
 * one process's stream, so one that another live process of the run
 * writes (a program that starts others with the same VRAMTRACE_OUTPUT: a
 * launcher's ranks, a pool of workers) is left to it: this process
 * writes the name with "-PID" before its extension instead, and says so.
 * A file no process holds (an earlier run's) is truncated and reused.
 */
static int
client_spool_open(const char *path)
{
	char		 alt[4096];
	const char	*dot, *slash;
	int		 fd, busy;

	if ((fd = client_spool_lock(path, 0, &busy)) != -1) {
		if (ftruncate(fd, 0) == 0)
			return (fd);
		close(fd);
	}
	if (!busy) {
		client_warn("cannot open the spool file %s: %s (check the"
		    " directory VRAMTRACE_OUTPUT names)", path,
		    strerror(errno));
		return (-1);
	}
	slash = strrchr(path, '/');
	dot = strrchr(slash != NULL ? slash : path, '.');
	if (dot == NULL || dot == path || dot == slash + 1)
		dot = path + strlen(path);
	snprintf(alt, sizeof alt, "%.*s-%ld%s", (int)(dot - path), path,
	    (long)getpid(), dot);
	if ((fd = client_spool_lock(alt, O_TRUNC, &busy)) == -1)
		client_warn("cannot open the spool file %s: %s (check the"
		    " directory VRAMTRACE_OUTPUT names)", alt,
		    busy ? "another process writes it" : strerror(errno));
	else
		client_note("the spool file %s is another process's; this"
		    " one writes %s (VRAMTRACE_OUTPUT with %%p names one file"
		    " per process)", path, alt);
	return (fd);
}

/* Open the socket or the spool file the environment names; -1: none. */
static int
client_open(const char *socket_path, const char *output)
{
	struct sockaddr_un	 sa;
	char			 path[4096];
	const char		*p;
	size_t			 n = 0;
	int			 fd;

	if (socket_path != NULL && *socket_path != '\0') {
		if (strlen(socket_path) >= sizeof sa.sun_path) {
			client_warn("the collector's socket path is too long: %s"
			    " (give vramtrace record a shorter TMPDIR)",
			    socket_path);
			return (-1);
		}
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd == -1) {
			client_warn("cannot make a socket to the collector: %s",
			    strerror(errno));
			return (-1);
		}
		memset(&sa, 0, sizeof sa);
		sa.sun_family = AF_UNIX;
		strcpy(sa.sun_path, socket_path);
		if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
			client_warn("cannot connect to the collector at %s: %s"
			    " (VRAMTRACE_SOCKET names a vramtrace record that"
			    " is no longer running; start the program under"
			    " vramtrace record)", socket_path, strerror(errno));
			close(fd);
			return (-1);
		}
		client_is_socket = 1;
		return (fd);
	}

	/* "%p" in the spool path becomes the process id. */
	for (p = output; *p != '\0' && n < sizeof path - 32; p++) {
		if (p[0] == '%' && p[1] == 'p') {
			n += (size_t)snprintf(path + n, sizeof path - n, "%ld",
			    (long)getpid());
			p++;
		} else
			path[n++] = *p;
	}
	path[n] = '\0';
	return (client_spool_open(path));
}

/* The value of environment variable name, or NULL when unset or empty. */
static const char *
client_env(const char *name)
{
	const char	*s = getenv(name);

	return (s != NULL && *s != '\0' ? s : NULL);
}

/*
 * Write the identity of the launcher's job this process belongs to into
 * buf, the same on every node of it: torchrun's rendezvous id
 * (TORCHELASTIC_RUN_ID; "none" is its default, no identity), else the
 * master's address and port (MASTER_ADDR, MASTER_PORT; a loopback address
 * names no machine), else Slurm's job id.  Returns buf, or NULL when the
 * environment names no job.
 */
static const char *
client_job(char *buf, size_t len)
{
	const char	*id, *addr, *port;

	if ((id = client_env("TORCHELASTIC_RUN_ID")) != NULL &&
	    strcmp(id, "none") != 0)
		snprintf(buf, len, "rdzv_id=%s", id);
	else if ((addr = client_env("MASTER_ADDR")) != NULL &&
	    (port = client_env("MASTER_PORT")) != NULL &&
	    strcmp(addr, "localhost") != 0 && strncmp(addr, "127.", 4) != 0 &&
	    strcmp(addr, "::1") != 0)
		snprintf(buf, len, "master=%s:%s", addr, port);
	else if ((id = client_env("SLURM_JOB_ID")) != NULL)
		snprintf(buf, len, "slurm_job=%s", id);
	else
		return (NULL);
	return (buf);
}

/* Queue the strings and the EVENT_PROCESS_START record; lock held. */
static void
client_hello(void)
{
	struct event	 ev;
	char		 host[256], cmd[4096], job[512];
	const char	*s;
	ssize_t		 n, i;
	int		 fd;

	if (gethostname(host, sizeof host) != 0)
		strcpy(host, "unknown");
	host[sizeof host - 1] = '\0';
	n = 0;
	if ((fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC)) != -1) {
		n = read(fd, cmd, sizeof cmd - 1);
		close(fd);
	}
	if (n < 0)
		n = 0;
	while (n > 0 && cmd[n - 1] == '\0')
		n--;
	for (i = 0; i < n; i++) {
		if (cmd[i] == '\0')
			cmd[i] = ' ';
	}
	cmd[n] = '\0';

	memset(&ev, 0, sizeof ev);
	ev.type = EVENT_PROCESS_START;
	ev.time_ns = client_now();
	ev.u.process.pid = (uint32_t)getpid();
	ev.u.process.rank = (s = getenv("RANK")) != NULL ? atoi(s) : -1;
	ev.u.process.local_rank =
	    (s = getenv("LOCAL_RANK")) != NULL ? atoi(s) : -1;
	ev.u.process.host = client_intern(host);
	ev.u.process.command = client_intern(cmd);
	if ((s = client_job(job, sizeof job)) != NULL)
		ev.u.process.job = client_intern(s);
	s = getenv("PYTORCH_CUDA_ALLOC_CONF");
	if (s != NULL && strstr(s, "cudaMallocAsync") != NULL)
		ev.u.process.flags = EVENT_PROCESS_ASYNC_ALLOCATOR;
	else if (s != NULL)
		ev.u.process.flags = EVENT_PROCESS_NATIVE_ALLOCATOR;
	client_push(&ev, 1);
	client_drop_name = client_intern(client_source);
}

int
client_start(const char *source_name)
{
	const char	*sock, *out, *ms;
	int		 on;

	pthread_mutex_lock(&client_lock);
	if (client_state != CLIENT_UNSET)
		goto out;
	client_state = CLIENT_OFF;
	if (source_name != NULL)
		client_source = source_name;
	sock = getenv("VRAMTRACE_SOCKET");
	out = getenv("VRAMTRACE_OUTPUT");
	if ((sock == NULL || *sock == '\0') && (out == NULL || *out == '\0'))
		goto out;
	if ((ms = getenv("VRAMTRACE_FLUSH_MS")) != NULL && atoi(ms) > 0)
		client_flush_ms = (unsigned)atoi(ms);
	if ((client_fd = client_open(sock, out)) == -1)
		goto out;

	client_hello();
	if (pthread_create(&client_thread, NULL, client_main, NULL) != 0) {
		client_warn("cannot start the thread that sends events (the"
		    " process is out of threads or memory)");
		close(client_fd);
		client_fd = -1;
		goto out;
	}
	client_has_thread = 1;
	client_state = CLIENT_ON;
	pthread_atfork(client_fork_prepare, client_fork_parent,
	    client_fork_child);
	atexit(client_stop);
out:
	on = client_state == CLIENT_ON;
	pthread_mutex_unlock(&client_lock);
	return (on);
}

void
client_emit(const struct event *ev)
{
	pthread_mutex_lock(&client_lock);
	if (client_state == CLIENT_ON)
		client_push(ev, 0);
	pthread_mutex_unlock(&client_lock);
}

uint32_t
client_string(const char *text)
{
	uint32_t	id = 0;

	pthread_mutex_lock(&client_lock);
	if (client_state == CLIENT_ON)
		id = client_intern(text);
	pthread_mutex_unlock(&client_lock);
	return (id);
}

uint32_t
client_string_reserve(void)
{
	uint32_t	id = 0;

	pthread_mutex_lock(&client_lock);
	if (client_state == CLIENT_ON)
		id = ++client_next_id;
	pthread_mutex_unlock(&client_lock);
	return (id);
}

void
client_string_define(uint32_t id, const char *text)
{
	char	**grown, *copy;
	size_t	  n;

	pthread_mutex_lock(&client_lock);
	if (client_state != CLIENT_ON || id == 0 || id > client_next_id)
		goto out;
	if (client_ndefined == client_defined_alloc) {
		n = client_defined_alloc == 0 ? 64 : 2 * client_defined_alloc;
		if ((grown = realloc(client_defined, n * sizeof *grown)) ==
		    NULL)
			goto out;
		client_defined = grown;
		client_defined_alloc = n;
	}
	if ((copy = strndup(text, EVENT_STRING_MAX)) == NULL)
		goto out;
	client_defined[client_ndefined++] = copy;
	client_push_string(id, copy, strlen(copy));
out:
	pthread_mutex_unlock(&client_lock);
}

void
client_set_sweep(void (*fn)(int))
{
	pthread_mutex_lock(&client_lock);
	client_sweep = fn;
	pthread_mutex_unlock(&client_lock);
}

void
client_flush(void)
{
	uint64_t	want;

	pthread_mutex_lock(&client_lock);
	want = client_queued;
	client_flush_asked = 1;
	pthread_cond_signal(&client_wake);
	while (client_state == CLIENT_ON && client_shipped < want)
		pthread_cond_wait(&client_done, &client_lock);
	pthread_mutex_unlock(&client_lock);
}

void
client_stop(void)
{
	struct event	ev;
	size_t		i;

	pthread_mutex_lock(&client_lock);
	if (!client_has_thread) {
		pthread_mutex_unlock(&client_lock);
		return;
	}
	if (client_state == CLIENT_ON) {
		memset(&ev, 0, sizeof ev);
		ev.type = EVENT_PROCESS_END;
		ev.time_ns = client_now();
		ev.u.process.pid = (uint32_t)getpid();
		client_push(&ev, 1);
	}
	client_stopping = 1;
	client_has_thread = 0;
	pthread_cond_signal(&client_wake);
	pthread_mutex_unlock(&client_lock);
	pthread_join(client_thread, NULL);

	pthread_mutex_lock(&client_lock);
	client_state = CLIENT_OFF;
	close(client_fd);
	client_fd = -1;
	for (i = 0; i < 2; i++) {
		free(client_queues[i].ev);
		memset(&client_queues[i], 0, sizeof client_queues[i]);
	}
	for (i = 0; i < client_strings_size; i++)
		free(client_strings[i].text);
	free(client_strings);
	client_strings = NULL;
	client_strings_size = client_strings_used = 0;
	for (i = 0; i < client_ndefined; i++)
		free(client_defined[i]);
	free(client_defined);
	client_defined = NULL;
	client_ndefined = client_defined_alloc = 0;
	client_sweep = NULL;
	pthread_mutex_unlock(&client_lock);
}
