/*
 * collector.c: receive events from traced processes and store them.
 *
 * A collector owns a private directory (mkdtemp) holding one listening Unix
 * socket, a self-pipe that the signal handlers write to, and an array of
 * connections.  Each connection is one traced process (or one library in
 * it): a socket, an event_reader fed with whatever arrives, and the
 * store_source that turns its events into rows.  collector_run() is a poll()
 * loop over the pipe, the listening socket and the connections that commits
 * every flush interval, so a traced program killed with SIGKILL leaves
 * everything up to its last flush.
 *
 * Signals arrive as two bytes on the pipe: the signal number and whether to
 * pass it on to the child.  SIGINT, SIGTERM and SIGHUP that someone sent us
 * with kill() are passed on; those the terminal sent reached the child's
 * process group already.  SIGCHLD makes the loop reap the child; after that
 * the loop drains the connections until they close or stay silent for
 * COLLECTOR_GRACE_MS.
 */

#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vramtrace.h"

#define COLLECTOR_GRACE_MS	5000
#define COLLECTOR_READ		(256 * 1024)

struct collector_conn {
	int			 fd;
	char			*name;
	struct event_reader	 reader;
	struct store_source	*source;
};

struct collector {
	struct store		 *store;
	unsigned		  flush_ms;
	char			 *dir;
	char			 *path;
	int			  listen_fd;
	struct collector_conn	**conns;
	size_t			  nconns;
	unsigned		  serial;	/* connections so far */
};

static int collector_pipe[2] = { -1, -1 };

static void
collector_signal(int sig, siginfo_t *si, void *uc)
{
	unsigned char	msg[2];
	int		saved = errno;

	(void)uc;
	msg[0] = (unsigned char)sig;
	msg[1] = sig != SIGCHLD && si != NULL && si->si_code != SI_KERNEL;
	if (write(collector_pipe[1], msg, sizeof msg) == -1) {
		/* The pipe is full: the loop has plenty to wake for. */
	}
	errno = saved;
}

static uint64_t
collector_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
}

static int
collector_signals(char **cause)
{
	static const int	 sigs[] = { SIGCHLD, SIGINT, SIGTERM, SIGHUP };
	struct sigaction	 sa;
	size_t			 i;

	if (pipe2(collector_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
		*cause = xstrerror_cause("pipe");
		return (-1);
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = collector_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NOCLDSTOP;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaction(sigs[i], &sa, NULL);
	return (0);
}

/*
 * Make a private directory with a listening socket in it, and catch the
 * signals the collector handles.  Call before starting the child, so that
 * its SIGCHLD cannot be missed.  Returns the collector, or NULL with *cause
 * set (the caller frees it).  The store stays the caller's.
 */
struct collector *
collector_create(struct store *store, unsigned flush_ms, char **cause)
{
	struct collector	*c;
	struct sockaddr_un	 sa;
	const char		*tmp;

	c = xcalloc(1, sizeof *c);
	c->store = store;
	c->flush_ms = flush_ms == 0 ? 200 : flush_ms;
	c->listen_fd = -1;
	if ((tmp = getenv("TMPDIR")) == NULL || *tmp == '\0')
		tmp = "/tmp";
	xasprintf(&c->dir, "%s/vramtrace.XXXXXX", tmp);
	if (mkdtemp(c->dir) == NULL) {
		*cause = xstrerror_cause("mkdtemp %s", c->dir);
		free(c->dir);
		c->dir = NULL;
		goto fail;
	}
	xasprintf(&c->path, "%s/socket", c->dir);
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	if (strlen(c->path) >= sizeof sa.sun_path) {
		xasprintf(cause, "socket path too long: %s", c->path);
		goto fail;
	}
	strcpy(sa.sun_path, c->path);
	c->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0);
	if (c->listen_fd == -1 ||
	    bind(c->listen_fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
	    listen(c->listen_fd, 128) != 0) {
		*cause = xstrerror_cause("socket %s", c->path);
		goto fail;
	}
	if (collector_signals(cause) != 0)
		goto fail;
	return (c);

fail:
	collector_free(c);
	return (NULL);
}

/* The socket path to pass to traced processes; owned by the collector. */
const char *
collector_path(struct collector *c)
{
	return (c->path);
}

static void
collector_close(struct collector *c, size_t i)
{
	struct collector_conn	*cc = c->conns[i];
	char			*cause = NULL;

	/* A client that died mid-frame: its complete frames are stored. */
	if (cc->source != NULL &&
	    event_reader_finish(&cc->reader, &cause) != 0) {
		log_warn("%s (kept the complete frames before it)", cause);
		free(cause);
	}
	store_source_free(cc->source);
	event_reader_free(&cc->reader);
	close(cc->fd);
	free(cc->name);
	free(cc);
	c->conns[i] = c->conns[--c->nconns];
}

static void
collector_accept(struct collector *c)
{
	struct collector_conn	*cc;
	int			 fd;

	while ((fd = accept4(c->listen_fd, NULL, NULL,
	    SOCK_CLOEXEC | SOCK_NONBLOCK)) != -1) {
		cc = xcalloc(1, sizeof *cc);
		cc->fd = fd;
		xasprintf(&cc->name, "connection %u", ++c->serial);
		event_reader_init(&cc->reader, cc->name);
		cc->source = store_source_create(c->store, cc->name);
		c->conns = xreallocarray(c->conns, c->nconns + 1,
		    sizeof *c->conns);
		c->conns[c->nconns++] = cc;
	}
}

/* Read what a connection has; returns 1 if data came, 0 if it closed. */
static int
collector_read(struct collector_conn *cc)
{
	static unsigned char	 buf[COLLECTOR_READ];
	struct event		 ev;
	char			*cause = NULL;
	ssize_t			 n;
	int			 rc;

	n = read(cc->fd, buf, sizeof buf);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return (1);
	if (n <= 0)
		return (0);
	if (cc->source == NULL)
		return (1);	/* given up on: read to the end */
	if (event_reader_feed(&cc->reader, buf, (size_t)n) != 0)
		fatal("out of memory");
	while ((rc = event_reader_next(&cc->reader, &ev, &cause)) == 1) {
		if (store_source_event(cc->source, &ev, &cause) != 0)
			break;
	}
	if (cause != NULL) {
		log_warn("%s; ignoring the rest of %s", cause, cc->name);
		free(cause);
		store_source_free(cc->source);
		cc->source = NULL;
	}
	return (1);
}

/* Reap the child; returns 1 once it is gone, with its wait status. */
static int
collector_signalled(pid_t child, int *status)
{
	unsigned char	msg[2];
	int		gone = 0;

	while (read(collector_pipe[0], msg, sizeof msg) == sizeof msg) {
		if (msg[0] != SIGCHLD && msg[1])
			kill(child, msg[0]);
	}
	if (waitpid(child, status, WNOHANG) == child)
		gone = 1;
	return (gone);
}

/*
 * Collect until the child has exited and its processes have hung up (or
 * stayed silent for a grace period after it), committing every flush
 * interval.  *status gets the child's wait status.  Returns 0, or -1 with
 * *cause set when the store fails.
 */
int
collector_run(struct collector *c, pid_t child, int *status, char **cause)
{
	struct pollfd	*pfd = NULL;
	uint64_t	 last_commit, last_data, now;
	size_t		 i, n;
	int		 exited = 0, timeout, rc = -1;

	last_commit = last_data = collector_ms();
	for (;;) {
		pfd = xreallocarray(pfd, c->nconns + 2, sizeof *pfd);
		pfd[0].fd = collector_pipe[0];
		pfd[1].fd = c->listen_fd;
		pfd[0].events = pfd[1].events = POLLIN;
		for (i = 0; i < c->nconns; i++) {
			pfd[i + 2].fd = c->conns[i]->fd;
			pfd[i + 2].events = POLLIN;
		}
		n = c->nconns;
		timeout = (int)c->flush_ms;
		if (poll(pfd, n + 2, timeout) == -1 && errno != EINTR) {
			*cause = xstrerror_cause("poll");
			goto out;
		}
		now = collector_ms();
		if (pfd[0].revents & POLLIN) {
			if (!exited && collector_signalled(child, status)) {
				exited = 1;
				last_data = now;
			}
		}
		/* Back to front: collector_close() moves the last one in. */
		for (i = n; i-- > 0;) {
			if ((pfd[i + 2].revents & (POLLIN | POLLHUP |
			    POLLERR)) == 0)
				continue;
			if (collector_read(c->conns[i]))
				last_data = now;
			else
				collector_close(c, i);
		}
		if (pfd[1].revents & POLLIN)
			collector_accept(c);
		if (now - last_commit >= c->flush_ms) {
			if (store_commit(c->store, cause) != 0)
				goto out;
			last_commit = now;
		}
		if (exited) {
			collector_accept(c);
			if (c->nconns == 0 ||
			    now - last_data >= COLLECTOR_GRACE_MS)
				break;
		}
	}
	while (c->nconns > 0)
		collector_close(c, c->nconns - 1);
	rc = store_commit(c->store, cause);
out:
	free(pfd);
	return (rc);
}

/* Close every connection, remove the socket and its directory. */
void
collector_free(struct collector *c)
{
	if (c == NULL)
		return;
	while (c->nconns > 0)
		collector_close(c, c->nconns - 1);
	free(c->conns);
	if (c->listen_fd != -1) {
		close(c->listen_fd);
		unlink(c->path);
	}
	if (c->dir != NULL)
		rmdir(c->dir);
	free(c->path);
	free(c->dir);
	free(c);
	if (collector_pipe[0] != -1) {
		close(collector_pipe[0]);
		close(collector_pipe[1]);
		collector_pipe[0] = collector_pipe[1] = -1;
	}
}
