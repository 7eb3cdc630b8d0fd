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
 * the loop drains the connections until they close, for the grace the
 * caller gave at most (record --grace-ms): a process still connected then
 * (a descendant of the command that outlives it) has what it had sent by
 * then stored and is named, and the collector ends.
 *
 * The command's life and exit status come first, whatever happens to the
 * database or to our descriptors:
 *
 *	when the database refuses a write (a full disk; a file size limit,
 *	since SIGXFSZ is caught and the write fails with EFBIG), recording
 *	stops: one warning, no more writes, the connections are still read
 *	(their events counted as lost), the child is still reaped, and
 *	collector_run() says COLLECTOR_STOPPED so that the run is left
 *	unfinished with what the last commit made durable;
 *
 *	out of file descriptors, accept() fails while the listening socket
 *	stays readable, which would make poll() spin: the connection is left
 *	waiting in the socket's backlog, the listening socket is no longer
 *	polled, and accept() is tried again after every wake-up (a process
 *	that ends frees a descriptor; COLLECTOR_RETRY_MS at most apart).  A
 *	waiting process runs on, its events queued in its socket and its
 *	memory; it blocks only where it waits for them to be written (a
 *	flush, its exit) once its socket is full, or in connect() once the
 *	backlog is.  So the wait is bounded: connections that still find no
 *	descriptor fd_wait_ms (record --fd-wait-ms) after the first failure
 *	are turned away, a reserve descriptor closed to accept each and
 *	close it at once (its client warns and turns itself off; the program
 *	runs on).  The soft limit is raised to the hard one first; the child
 *	gets the old one back.
 *
 * The end is where nothing may be dropped unsaid.  The socket's name goes
 * first and the socket is shut for reading, so that no process can
 * connect any more (one that tries is told so by its own client) and the
 * backlog holds all there is to take; then the connections open are read
 * and closed, which frees their descriptors for those still waiting in
 * the backlog, taken alike, pass after pass, until the backlog is empty;
 * one that finds no descriptor even with nothing open is turned away.
 * Every process turned away, during the run or at its end, is counted and
 * said at the end, and collector_run() says COLLECTOR_LACKS, so that the
 * run is never marked complete: its verdict covers only the processes it
 * holds.  So does a backlog found full at the end (processes blocked in
 * connect() behind it then fail to connect, and no one can count them),
 * and one whose connections could be neither taken nor turned away.
 */

#include "config.h"

#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vramtrace.h"

#define COLLECTOR_RETRY_MS	100	/* accept() again after a failure */
#define COLLECTOR_BACKLOG	128	/* connections waiting, at most */
#define COLLECTOR_READ		(256 * 1024)
#define COLLECTOR_PIDS		8	/* named in a warning, at most */

struct collector_conn {
	int			 fd;
	pid_t			 pid;		/* the peer's; 0: unknown */
	char			*name;
	struct event_reader	 reader;
	struct store_source	*source;	/* NULL: given up on */
};

static const int collector_sigs[] = { SIGCHLD, SIGINT, SIGTERM, SIGHUP };
#define COLLECTOR_NSIGS	(sizeof collector_sigs / sizeof collector_sigs[0])

struct collector {
	struct store		 *store;
	unsigned		  flush_ms;
	unsigned		  grace_ms;	/* after the child, for others */
	unsigned		  fd_wait_ms;	/* for a descriptor, at most */
	char			 *dir;
	char			 *path;
	int			  listen_fd;
	int			  backlog;	/* it holds, at most */
	int			  listen_paused; /* accept() failed: retry */
	uint64_t		  waiting_since; /* a connection waits for a
						    descriptor since; 0 */
	int			  reserve_fd;	/* closed to turn one away */
	struct collector_conn	**conns;
	size_t			  nconns;
	unsigned		  serial;	/* connections so far */
	unsigned		  refused;	/* turned away: no descriptor */
	unsigned		  refused_end;	/* of them, when record ended */
	size_t			  drained;	/* in the backlog at the end */
	int			  drain_error;	/* errno: the end could neither
						   take nor turn away; 0 */

	struct rlimit		  nofile;	/* as we found it: the child's */
	struct sigaction	  old_xfsz;	/* the same */

	uint64_t		  start_ms;	/* when the command started */
	uint64_t		  commit_ms;	/* the last commit */
	uint64_t		  events;	/* received */
	int			  stopped;	/* the database failed */
};

static int collector_pipe[2] = { -1, -1 };
static volatile sig_atomic_t collector_xfsz;	/* a write hit ulimit -f */

static void
collector_signal_xfsz(int sig)
{
	(void)sig;
	collector_xfsz = 1;
}

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

/* Seconds since the command started, for messages. */
static double
collector_since(struct collector *c, uint64_t ms)
{
	return ((double)(ms - c->start_ms) / 1000.0);
}

/*
 * Catch the signals the collector handles, and SIGXFSZ: a write past the
 * file size limit then fails with EFBIG, which stops recording, instead of
 * killing us (the handler notes it for the message).  Keep what was there
 * for collector_child().
 */
static int
collector_signals(struct collector *c, char **cause)
{
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
	for (i = 0; i < COLLECTOR_NSIGS; i++)
		sigaction(collector_sigs[i], &sa, NULL);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = collector_signal_xfsz;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGXFSZ, &sa, &c->old_xfsz);
	return (0);
}

/*
 * Raise the soft limit on descriptors to the hard one (poll() has no
 * FD_SETSIZE): each traced process takes one.
 */
static void
collector_limits(struct collector *c)
{
	struct rlimit	rl;

	if (getrlimit(RLIMIT_NOFILE, &c->nofile) != 0)
		return;
	rl = c->nofile;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/*
 * How many connections the listening socket holds waiting: what we ask
 * listen() for, or the system's cap (net.core.somaxconn) when lower.
 */
static int
collector_backlog(void)
{
	FILE	*f;
	int	 n = COLLECTOR_BACKLOG;

	if ((f = fopen("/proc/sys/net/core/somaxconn", "re")) == NULL)
		return (n);
	if (fscanf(f, "%d", &n) != 1 || n < 1 || n > COLLECTOR_BACKLOG)
		n = COLLECTOR_BACKLOG;
	fclose(f);
	return (n);
}

/*
 * Make a private directory with a listening socket in it, and catch the
 * signals the collector handles.  Call before starting the child, so that
 * its SIGCHLD cannot be missed.  t: how often to commit (flush_ms, 0:
 * 200), how long collector_run waits, after the child ended, for the
 * processes still connected (grace_ms, 0: not at all), and how long a
 * process that connects may wait for a descriptor (fd_wait_ms, 0: turned
 * away at once when none is free).  Returns the collector, or
 * NULL with *cause set (the caller frees it).  The store stays the
 * caller's.  SIGXFSZ stays caught in this process until it ends (the
 * caller's own writes to the store, after collector_run, fail rather than
 * kill it too).
 */
struct collector *
collector_create(struct store *store, const struct collector_times *t,
    char **cause)
{
	struct collector	*c;
	struct sockaddr_un	 sa;
	const char		*tmp;

	c = xcalloc(1, sizeof *c);
	c->store = store;
	c->flush_ms = t->flush_ms == 0 ? 200 : t->flush_ms;
	c->grace_ms = t->grace_ms;
	c->fd_wait_ms = t->fd_wait_ms;
	c->listen_fd = c->reserve_fd = -1;
	collector_limits(c);
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
	    listen(c->listen_fd, (c->backlog = collector_backlog())) != 0) {
		*cause = xstrerror_cause("socket %s", c->path);
		goto fail;
	}
	if ((c->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1) {
		*cause = xstrerror_cause("/dev/null");
		goto fail;
	}
	if (collector_signals(c, cause) != 0)
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

/*
 * In the child, before it runs the command: the signals the collector
 * passes on take their default action (even where a shell that started
 * us in the background ignores SIGINT: record passes it on, so the
 * command must take it); SIGXFSZ and the descriptor limit are given back
 * as the collector found them.
 */
void
collector_child(struct collector *c)
{
	size_t	i;

	for (i = 0; i < COLLECTOR_NSIGS; i++)
		signal(collector_sigs[i], SIG_DFL);
	sigaction(SIGXFSZ, &c->old_xfsz, NULL);
	setrlimit(RLIMIT_NOFILE, &c->nofile);
}

/*
 * The database failed (cause, which this frees): say so once, and write
 * nothing more.  The connections are still read, to count what is lost.
 */
static void
collector_stop(struct collector *c, char *cause)
{
	log_warn("%s%s; recording stops at +%.1fs: the run keeps what was "
	    "committed until then and stays marked unfinished, and the "
	    "command runs on", cause, collector_xfsz ? " (the file size "
	    "limit, ulimit -f, is reached)" : "",
	    collector_since(c, collector_ms()));
	free(cause);
	c->stopped = 1;
}

static void
collector_commit(struct collector *c, uint64_t now)
{
	char	*cause = NULL;

	if (c->stopped)
		return;
	if (store_commit(c->store, &cause) != 0)
		collector_stop(c, cause);
	else
		c->commit_ms = now;
}

static void
collector_close(struct collector *c, size_t i)
{
	struct collector_conn	*cc = c->conns[i];
	char			*cause = NULL;

	/* A client that died mid-frame: its complete frames are stored. */
	if (cc->source != NULL && !c->stopped &&
	    event_reader_finish(&cc->reader, &cause) != 0) {
		log_warn("%s (kept the complete frames before it)", cause);
		free(cause);
		cause = NULL;
	}
	if (cc->source != NULL && !c->stopped &&
	    store_source_drain(cc->source, &cause) != 0) {
		if (store_failed(c->store))
			collector_stop(c, cause);
		else {
			log_warn("%s", cause);
			free(cause);
		}
	}
	store_source_free(cc->source);
	event_reader_free(&cc->reader);
	close(cc->fd);
	free(cc->name);
	free(cc);
	c->conns[i] = c->conns[--c->nconns];
}

static void
collector_add(struct collector *c, int fd)
{
	struct collector_conn	*cc;
	struct ucred		 cred;
	socklen_t		 len = sizeof cred;

	cc = xcalloc(1, sizeof *cc);
	cc->fd = fd;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0)
		cc->pid = cred.pid;
	xasprintf(&cc->name, "connection %u", ++c->serial);
	event_reader_init(&cc->reader, cc->name);
	cc->source = store_source_create(c->store, cc->name);
	c->conns = xreallocarray(c->conns, c->nconns + 1, sizeof *c->conns);
	c->conns[c->nconns++] = cc;
}

/*
 * Turn away the connection waiting first in the backlog: free the reserve
 * descriptor to accept it and close it at once, so that its process stops
 * sending (its client says so once and turns itself off), and count it.
 * 1 when one was turned away, 0 when none was waiting, -1 (errno set)
 * when that failed too.
 */
static int
collector_turn_away(struct collector *c)
{
	int	fd, error;

	if (c->reserve_fd == -1) {
		errno = EMFILE;
		return (-1);
	}
	close(c->reserve_fd);
	fd = accept4(c->listen_fd, NULL, NULL, SOCK_CLOEXEC);
	error = errno;
	if (fd != -1)
		close(fd);
	c->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd == -1) {
		errno = error;
		return (error == EAGAIN || error == EWOULDBLOCK ? 0 : -1);
	}
	c->refused++;
	return (1);
}

/*
 * Accept what is waiting (now: the time), while the command runs or its
 * grace lasts.  A failure that leaves the connection waiting (no
 * descriptor, no memory) stops polling the listening socket until the
 * next try, at the next wake-up: never a busy loop.  Out of descriptors
 * since fd_wait_ms, every connection waiting is turned away, the first
 * time with a warning.
 */
static void
collector_accept(struct collector *c, uint64_t now)
{
	struct rlimit	rl;
	int		fd, error, full, turned;

	c->listen_paused = 0;
	for (;;) {
		fd = accept4(c->listen_fd, NULL, NULL,
		    SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd != -1) {
			collector_add(c, fd);
			continue;
		}
		error = errno;
		if (error == EINTR || error == ECONNABORTED)
			continue;
		if (error == EAGAIN || error == EWOULDBLOCK)
			break;
		full = error == EMFILE || error == ENFILE;
		if (full && c->waiting_since == 0)
			c->waiting_since = now;
		if (full && now - c->waiting_since >= c->fd_wait_ms &&
		    (turned = collector_turn_away(c)) >= 0) {
			if (turned == 0)
				break;		/* none left waiting */
			if (c->refused == 1 && getrlimit(RLIMIT_NOFILE,
			    &rl) == 0)
				log_warn("out of file descriptors (%s; %zu "
				    "processes connected, limit %llu): none "
				    "freed up for %.1fs, so a new process was "
				    "turned away, and events from processes "
				    "that connect while none frees up within "
				    "%.1fs are lost (raise ulimit -n, or "
				    "--fd-wait-ms)", strerror(error),
				    c->nconns, (unsigned long long)rl.rlim_cur,
				    c->fd_wait_ms / 1000.0,
				    c->fd_wait_ms / 1000.0);
			continue;
		}
		c->listen_paused = 1;
		return;
	}
	c->waiting_since = 0;
}

/*
 * At the end, when no process can connect any more: accept what waits in
 * the backlog while descriptors are free.  Once accept() fails, with
 * connections open (closing them frees their descriptors) it stops; with
 * none open the next one is turned away.  Counts in c->drained every
 * connection it took from the backlog, and keeps in c->drain_error an
 * error that left some there.  Returns how many it took, 0 once the
 * backlog is empty.
 */
static size_t
collector_drain(struct collector *c)
{
	size_t	taken = 0;
	int	fd, turned;

	for (;;) {
		fd = accept4(c->listen_fd, NULL, NULL,
		    SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd != -1) {
			collector_add(c, fd);
			c->drained++;
			taken++;
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK || c->nconns > 0)
			return (taken);
		if ((turned = collector_turn_away(c)) != 1) {
			if (turned == -1)
				c->drain_error = errno;
			return (taken);
		}
		c->drained++;
		c->refused_end++;
	}
}

/*
 * Read what a connection has: returns how many bytes came, 0 when it
 * closed, -1 when nothing is there now.  Once the database failed, events
 * are only counted.
 */
static ssize_t
collector_read(struct collector *c, struct collector_conn *cc)
{
	static unsigned char	 buf[COLLECTOR_READ];
	struct event		 ev;
	char			*cause = NULL;
	ssize_t			 n;

	n = read(cc->fd, buf, sizeof buf);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return (-1);
	if (n <= 0)
		return (0);
	if (cc->source == NULL)
		return (n);	/* given up on: read to the end */
	if (event_reader_feed(&cc->reader, buf, (size_t)n) != 0)
		fatal("out of memory");
	while (event_reader_next(&cc->reader, &ev, &cause) == 1) {
		c->events++;
		if (c->stopped ||
		    store_source_event(cc->source, &ev, &cause) == 0)
			continue;
		if (!store_failed(c->store))
			break;
		collector_stop(c, cause);
		cause = NULL;
	}
	if (cause != NULL) {
		log_warn("%s; ignoring the rest of %s", cause, cc->name);
		free(cause);
		store_source_free(cc->source);
		cc->source = NULL;
	}
	return (n);
}

/*
 * Empty the signal pipe, passing on what is to be passed on while the
 * child (0 once reaped) runs; returns 1 when it was reaped just now, with
 * its wait status.
 */
static int
collector_signalled(pid_t child, int *status)
{
	unsigned char	msg[2];

	while (read(collector_pipe[0], msg, sizeof msg) == sizeof msg) {
		if (child != 0 && msg[0] != SIGCHLD && msg[1])
			kill(child, msg[0]);
	}
	return (child != 0 && waitpid(child, status, WNOHANG) == child);
}

/* How long poll() may wait: the flush period, less for a retry or the end. */
static int
collector_timeout(struct collector *c, uint64_t now, uint64_t end)
{
	uint64_t	t = c->flush_ms;

	if (c->listen_paused && t > COLLECTOR_RETRY_MS)
		t = COLLECTOR_RETRY_MS;
	if (end != 0 && t > (end > now ? end - now : 0))
		t = end > now ? end - now : 0;
	return ((int)t);
}

/*
 * The grace after the child is over: no process can connect from now on.
 * Take what the processes still connected (descendants that outlive the
 * command) sent already, all that waits in each socket now (and one read
 * more, to see it closed), say who they are and what it means, and close
 * every connection; those waiting in the backlog get the descriptors
 * that frees and are taken alike, pass after pass, until none is left
 * (collector_drain).
 */
static void
collector_leftovers(struct collector *c)
{
	size_t		 i, still = 0;
	ssize_t		 n;
	int		 queued;
	char		*pids = xstrdup(""), *t;

	/*
	 * Shut for reading, a listening socket refuses connect() (Linux),
	 * so that what its backlog holds now is all there is to take.
	 */
	unlink(c->path);
	shutdown(c->listen_fd, SHUT_RD);
	do {
		for (i = c->nconns; i-- > 0;) {
			if (ioctl(c->conns[i]->fd, FIONREAD, &queued) != 0)
				queued = 0;
			while ((n = collector_read(c, c->conns[i])) > 0 &&
			    queued > 0)
				queued -= (int)n;
			if (n != 0 && still++ < COLLECTOR_PIDS) {
				xasprintf(&t, "%s%s%ld", pids, still == 1 ?
				    "" : ", ", (long)c->conns[i]->pid);
				free(pids);
				pids = t;
			}
			collector_close(c, i);
		}
	} while (collector_drain(c) > 0);
	if (still > 0)
		log_warn("%zu process%s (pid %s%s) still connected %.1fs after "
		    "the command ended, descendants that outlive it: what they "
		    "sent until now is recorded, what they send later is not",
		    still, still == 1 ? "" : "es", pids,
		    still > COLLECTOR_PIDS ? ", ..." : "",
		    c->grace_ms / 1000.0);
	free(pids);
}

/*
 * Say at the end what processes the run lacks: those turned away, and
 * those lost uncounted at the end.  Returns COLLECTOR_LACKS when it lacks
 * any (or may), else 0.
 */
static int
collector_lacks(struct collector *c)
{
	char	end[80] = "";
	int	lacks = 0;

	if (c->refused_end > 0)
		snprintf(end, sizeof end, " (%u of them still waiting for one "
		    "when record ended)", c->refused_end);
	if (c->refused > 0) {
		log_warn("%u process%s turned away for want of file "
		    "descriptors%s: the run lacks their events and stays marked "
		    "unfinished", c->refused, c->refused == 1 ? " was" :
		    "es were", end);
		lacks = COLLECTOR_LACKS;
	}
	if (c->drain_error != 0) {
		log_warn("the processes still waiting to connect when record "
		    "ended could be neither taken nor turned away (%s): the run "
		    "lacks their events, how many is unknown, and stays marked "
		    "unfinished", strerror(c->drain_error));
		lacks = COLLECTOR_LACKS;
	}
	if (c->drained >= (size_t)c->backlog) {
		log_warn("%zu processes waited to connect when record ended, "
		    "as many as its socket holds: those that waited behind "
		    "them, if any, could not connect (each says so), the run "
		    "lacks their events and stays marked unfinished",
		    c->drained);
		lacks = COLLECTOR_LACKS;
	}
	return (lacks);
}

/*
 * Collect until the child has exited and its processes have hung up (for
 * the grace at most after it), committing every flush interval.
 * *status gets the child's wait status: the child is always reaped.
 * Returns 0 when everything every process sent until then is stored, else
 * what stops the run from being complete (said on stderr): the flags
 * COLLECTOR_STOPPED, the database failed and recording stopped (with what
 * was lost), and COLLECTOR_LACKS, processes were turned away, whose events
 * the run lacks.
 */
int
collector_run(struct collector *c, pid_t child, int *status)
{
	struct pollfd	*pfd = NULL;
	uint64_t	 now, end = 0;		/* end of the grace; 0: none */
	uint64_t	 lost;
	size_t		 i, n;
	int		 lacks;

	now = c->start_ms = c->commit_ms = collector_ms();
	for (;;) {
		pfd = xreallocarray(pfd, c->nconns + 2, sizeof *pfd);
		pfd[0].fd = collector_pipe[0];
		pfd[1].fd = c->listen_paused ? -1 : c->listen_fd;
		pfd[0].events = pfd[1].events = POLLIN;
		pfd[1].revents = 0;
		for (i = 0; i < c->nconns; i++) {
			pfd[i + 2].fd = c->conns[i]->fd;
			pfd[i + 2].events = POLLIN;
		}
		n = c->nconns;
		if (poll(pfd, n + 2, collector_timeout(c, now, end)) == -1 &&
		    errno != EINTR) {
			collector_stop(c, xstrerror_cause("poll"));
			if (end == 0) {
				while (waitpid(child, status, 0) == -1 &&
				    errno == EINTR)
					;
			}
			break;
		}
		now = collector_ms();
		if ((pfd[0].revents & POLLIN) &&
		    collector_signalled(end == 0 ? child : 0, status))
			end = now + c->grace_ms;
		/* Back to front: collector_close() moves the last one in. */
		for (i = n; i-- > 0;) {
			if ((pfd[i + 2].revents & (POLLIN | POLLHUP |
			    POLLERR)) == 0)
				continue;
			if (collector_read(c, c->conns[i]) == 0)
				collector_close(c, i);
		}
		if ((pfd[1].revents & POLLIN) || c->listen_paused || end != 0)
			collector_accept(c, now);
		if (now - c->commit_ms >= c->flush_ms)
			collector_commit(c, now);
		if (end != 0 && ((c->nconns == 0 && !c->listen_paused) ||
		    now >= end))
			break;
	}
	free(pfd);
	collector_leftovers(c);
	collector_commit(c, collector_ms());
	lacks = collector_lacks(c);
	if (!c->stopped)
		return (lacks);
	lost = c->events - store_events_committed(c->store);
	log_warn("%llu of the %llu events received are lost: all those not "
	    "committed by +%.1fs (the last commit)",
	    (unsigned long long)lost, (unsigned long long)c->events,
	    collector_since(c, c->commit_ms));
	return (lacks | COLLECTOR_STOPPED);
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
	if (c->reserve_fd != -1)
		close(c->reserve_fd);
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
