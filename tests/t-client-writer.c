/*
 * t-client-writer.c: a stand-in for a traced process, for the record tests.
 *
 * It sends a known set of events through client.c to wherever the
 * environment says (VRAMTRACE_SOCKET or VRAMTRACE_OUTPUT):
 *
 *	t-client-writer send		the set once, then exit cleanly
 *	t-client-writer fork N		N child processes send the set each
 *	t-client-writer kill		send the set, flush, then SIGKILL itself
 *	t-client-writer torn		write one whole frame and half of the
 *					next straight to the socket, then die
 *	t-client-writer hold N DIR	N child processes send the set each,
 *					touch DIR/ready.PID and stay until
 *					DIR/stop exists
 *	t-client-writer stream DIR	write DIR/pid, then send a pair of
 *					events every 20 ms until DIR/stop
 *					exists; then DIR/done, holding the
 *					number of pairs sent
 *	t-client-writer nosteps		the set with marks named "no step" in
 *					place of its step ends
 *	t-client-writer bulk N		N batches of 1000 allocations (half
 *					of them freed), one every 20 ms, on
 *					the real clock (the collector applies
 *					events 2 s older than the newest)
 *
 * The set, per process: stream 13 created; ten pool allocations of 1, 2,
 * ... 10 KiB on stream 13 at addresses 0x10000 * (i + 1), the even ones
 * freed again; three step ends; one mark named "hello".
 */

#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "event.h"

static uint64_t	writer_t = 1700000000000000000ull;
static int	writer_steps = 1;	/* 0: marks in place of step ends */

static void
writer_event(struct event *ev, int type)
{
	memset(ev, 0, sizeof *ev);
	ev->type = (uint8_t)type;
	ev->time_ns = writer_t += 1000;
}

/* Fill ev with the n-th event of the set; returns 0 past the end. */
static int
writer_nth(struct event *ev, int n)
{
	int	i = n - 1;

	if (n == 0) {
		writer_event(ev, EVENT_STREAM_CREATE);
		ev->u.stream.stream = 13;
		ev->u.stream.handle = 0x5000;
		ev->u.stream.context = 1;
		ev->u.stream.flags = 2;
		return (1);
	}
	if (i < 20) {
		writer_event(ev, i % 2 == 0 ? EVENT_ALLOC : EVENT_FREE);
		if (ev->type == EVENT_FREE && (i / 2) % 2 == 1) {
			ev->type = EVENT_MARK;	/* odd blocks stay live */
			ev->u.step.step = -1;
			ev->u.step.name = client_string("kept");
			return (1);
		}
		ev->u.alloc.address = 0x10000ull * (uint64_t)(i / 2 + 1);
		ev->u.alloc.bytes = 1024ull * (uint64_t)(i / 2 + 1);
		ev->u.alloc.requested = EVENT_NONE;
		ev->u.alloc.stream = 13;
		ev->u.alloc.correlation = (uint64_t)n;
		ev->u.alloc.layer = EVENT_LAYER_POOL;
		return (1);
	}
	if (i < 23) {
		writer_event(ev, writer_steps ? EVENT_STEP_END : EVENT_MARK);
		ev->u.step.step = -1;
		if (!writer_steps)
			ev->u.step.name = client_string("no step");
		return (1);
	}
	if (i == 23) {
		writer_event(ev, EVENT_MARK);
		ev->u.step.step = -1;
		ev->u.step.name = client_string("hello");
		return (1);
	}
	return (0);
}

static int
writer_send(void)
{
	struct event	ev;
	int		n;

	if (!client_start("writer")) {
		fprintf(stderr, "t-client-writer: the client is off\n");
		return (1);
	}
	for (n = 0; writer_nth(&ev, n); n++)
		client_emit(&ev);
	client_flush();
	return (0);
}

static int
writer_fork(int count)
{
	pid_t	pid;
	int	i, status, failed = 0;

	for (i = 0; i < count; i++) {
		if ((pid = fork()) == -1)
			return (1);
		if (pid == 0)
			_exit(writer_send());
	}
	while (wait(&status) > 0) {
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed = 1;
	}
	return (failed);
}

/* One whole frame of the set and half of a second frame, then die. */
static int
writer_torn(void)
{
	struct sockaddr_un	 sa;
	struct event_buffer	 eb;
	struct event		 ev;
	const char		*path = getenv("VRAMTRACE_SOCKET");
	size_t			 whole = 0;
	int			 fd, n;

	if (path == NULL || strlen(path) >= sizeof sa.sun_path)
		return (1);
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
		return (1);
	event_buffer_init(&eb);
	event_buffer_header(&eb);
	writer_event(&ev, EVENT_PROCESS_START);
	ev.u.process.pid = (uint32_t)getpid();
	ev.u.process.rank = ev.u.process.local_rank = -1;
	event_buffer_add(&eb, &ev);
	for (n = 0; n < 10; n++) {
		writer_event(&ev, EVENT_ALLOC);
		ev.u.alloc.address = 0x100000ull * (uint64_t)(n + 1);
		ev.u.alloc.bytes = 4096;
		ev.u.alloc.requested = ev.u.alloc.correlation = EVENT_NONE;
		ev.u.alloc.stream = EVENT_NONE;
		event_buffer_add(&eb, &ev);
		if (n == 4) {
			event_buffer_close_frame(&eb);
			whole = eb.size;
		}
	}
	event_buffer_close_frame(&eb);
	if (write(fd, eb.data, whole + (eb.size - whole) / 2) == -1)
		return (1);
	raise(SIGKILL);
	return (1);
}

/*
 * Write value into DIR/NAME (".PID" appended when pid), whole as soon as
 * it exists: written under a hidden name of its own and renamed, since the
 * tests wait for the name (or count names) and then read it.  0 or -1.
 */
static int
writer_touch(const char *dir, const char *name, int pid, long value)
{
	char	path[4096], tmp[4096];
	int	fd;

	snprintf(path, sizeof path, pid ? "%s/%s.%ld" : "%s/%s", dir, name,
	    (long)getpid());
	snprintf(tmp, sizeof tmp, "%s/.writing.%ld", dir, (long)getpid());
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644)) == -1)
		return (-1);
	dprintf(fd, "%ld\n", value);
	if (close(fd) != 0)
		return (-1);
	return (rename(tmp, path));
}

/*
 * Wait until DIR/stop exists (at most 30 s, so that a test that fails
 * leaves nothing behind for long), calling tick every 20 ms if not NULL.
 */
static void
writer_wait(const char *dir, void (*tick)(void))
{
	struct timespec	 ts = { 0, 20 * 1000 * 1000 };
	char		 path[4096];
	int		 i;

	snprintf(path, sizeof path, "%s/stop", dir);
	for (i = 0; i < 1500 && access(path, F_OK) != 0; i++) {
		if (tick != NULL)
			tick();
		nanosleep(&ts, NULL);
	}
}

static int
writer_hold(int count, const char *dir)
{
	pid_t	pid;
	int	i, status, failed = 0;

	for (i = 0; i < count; i++) {
		if ((pid = fork()) == -1)
			return (1);
		if (pid == 0) {
			if (writer_send() != 0 ||
			    writer_touch(dir, "ready", 1, (long)getpid()) != 0)
				_exit(1);
			writer_wait(dir, NULL);
			_exit(0);
		}
	}
	while (wait(&status) > 0) {
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed = 1;
	}
	return (failed);
}

/* A pool allocation (or its free) of 4 KiB at address on stream 13. */
static void
writer_page(int type, uint64_t address)
{
	struct event	ev;

	writer_event(&ev, type);
	ev.u.alloc.address = address;
	ev.u.alloc.bytes = 4096;
	ev.u.alloc.requested = ev.u.alloc.correlation = EVENT_NONE;
	ev.u.alloc.stream = 13;
	ev.u.alloc.layer = EVENT_LAYER_POOL;
	client_emit(&ev);
}

static long	writer_pairs;		/* sent by writer_pair */

/* One allocation and its free, sent now. */
static void
writer_pair(void)
{
	static uint64_t	address = 0x40000000;

	writer_pairs++;
	address += 0x1000;
	writer_page(EVENT_ALLOC, address);
	writer_page(EVENT_FREE, address);
	client_flush();
}

static int
writer_stream(const char *dir)
{
	if (writer_send() != 0 ||
	    writer_touch(dir, "pid", 0, (long)getpid()) != 0)
		return (1);
	writer_wait(dir, writer_pair);
	return (writer_touch(dir, "done", 0, writer_pairs) != 0);
}

static int
writer_bulk(int batches)
{
	struct timespec	 ts = { 0, 20 * 1000 * 1000 }, now;
	uint64_t	 address;
	int		 b, i;

	if (writer_send() != 0)
		return (1);
	for (b = 0; b < batches; b++) {
		clock_gettime(CLOCK_REALTIME, &now);
		writer_t = (uint64_t)now.tv_sec * 1000000000u +
		    (uint64_t)now.tv_nsec;
		for (i = 0; i < 1000; i++) {
			address = 0x100000000ull +
			    0x1000ull * (uint64_t)(b * 1000 + i);
			writer_page(EVENT_ALLOC, address);
			if (i % 2 == 0)
				writer_page(EVENT_FREE, address);
		}
		client_flush();
		nanosleep(&ts, NULL);
	}
	return (0);
}

int
main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "send") == 0)
		return (writer_send());
	if (argc >= 2 && strcmp(argv[1], "nosteps") == 0) {
		writer_steps = 0;
		return (writer_send());
	}
	if (argc >= 3 && strcmp(argv[1], "fork") == 0)
		return (writer_fork(atoi(argv[2])));
	if (argc >= 2 && strcmp(argv[1], "kill") == 0) {
		if (writer_send() != 0)
			return (1);
		raise(SIGKILL);
	}
	if (argc >= 2 && strcmp(argv[1], "torn") == 0)
		return (writer_torn());
	if (argc >= 4 && strcmp(argv[1], "hold") == 0)
		return (writer_hold(atoi(argv[2]), argv[3]));
	if (argc >= 3 && strcmp(argv[1], "stream") == 0)
		return (writer_stream(argv[2]));
	if (argc >= 3 && strcmp(argv[1], "bulk") == 0)
		return (writer_bulk(atoi(argv[2])));
	fprintf(stderr, "usage: t-client-writer send|nosteps|fork N|kill|torn|"
	    "hold N DIR|stream DIR|bulk N\n");
	return (2);
}
