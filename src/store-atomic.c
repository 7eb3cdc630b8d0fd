/*
 * store-atomic.c: what makes a store opened with STORE_ATOMIC all or
 * nothing when the process is stopped: the temporary file of a new
 * database, and the one transaction of a run appended to an existing one.
 *
 * A new database is written as PATH.tmp-XXXXXX beside PATH and renamed
 * over it when it is whole (store.c).  That file is made here, and held
 * with an exclusive flock() from the moment it exists until it is renamed
 * or removed, so that a lock that can be taken proves the file abandoned:
 * a later store_atomic_create() for the same PATH removes such files (and
 * their -wal, -shm and -journal) that a SIGKILL, a crash or a power cut
 * left, and only those: the name must be PATH's own pattern, the file a
 * regular one of ours, empty or an SQLite file, unlocked (an empty one,
 * which a live writer has for the instant between creating and locking
 * it, only when older than STORE_ATOMIC_EMPTY_AGE).
 *
 * SIGINT, SIGTERM and SIGHUP, while an atomic store is open, go through
 * store_atomic_signal(): it removes the temporary files at once (unlink
 * is async-signal-safe; the names are made when the store registers) and
 * ends the process with the same signal; a store appending to an existing
 * file instead has its SQLite work interrupted (sqlite3_interrupt, which
 * SQLite's own shell calls from its handler), so that the writer fails
 * with "interrupted", rolls the transaction back and closes; then
 * store_abort() raises the signal again.  A second signal ends the process
 * at once (SQLite's WAL or journal still keeps the file whole).  A
 * signal ignored when the store opened (nohup) stays ignored.  The
 * store's flag `interrupted` makes the writers fail too when the signal
 * came between two statements (sqlite3_interrupt stops only a running
 * one).  fatal()
 * exits through exit(), and the temporary files go with an atexit hook.
 *
 * The registry is a few fixed slots: each slot's names and handle are set
 * before `used` is, and `used` is cleared before they are freed, so the
 * handler sees whole slots only.
 */
#include "config.h"

#include "store-int.h"

#include <sys/file.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Stores open at once that the handler knows; more are not watched. */
#define STORE_ATOMIC_SLOTS	4

/* An empty, unlocked temporary file is abandoned past this age, in s. */
#define STORE_ATOMIC_EMPTY_AGE	60

/* The files of a temporary database: itself and SQLite's beside it. */
static const char *const atomic_suffix[] = { "", "-wal", "-shm", "-journal" };
#define ATOMIC_FILES	(sizeof atomic_suffix / sizeof atomic_suffix[0])

struct atomic_slot {
	volatile sig_atomic_t	 used;
	char			*files[ATOMIC_FILES];	/* NULL: appending */
	sqlite3			*db;
	volatile sig_atomic_t	*interrupted;	/* the store's flag */
};

static struct atomic_slot	 atomic_slots[STORE_ATOMIC_SLOTS];
static volatile sig_atomic_t	 atomic_signal;	/* the signal that came */
static int			 atomic_installed;
static const int		 atomic_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define ATOMIC_SIGNALS	(sizeof atomic_signals / sizeof atomic_signals[0])
static struct sigaction		 atomic_old[ATOMIC_SIGNALS];

static void
atomic_handler(int sig)
{
	size_t	i, j;
	int	saved = errno, appending = 0;

	atomic_signal = sig;
	for (i = 0; i < STORE_ATOMIC_SLOTS; i++) {
		if (!atomic_slots[i].used)
			continue;
		if (atomic_slots[i].files[0] == NULL) {
			*atomic_slots[i].interrupted = 1;
			sqlite3_interrupt(atomic_slots[i].db);
			appending = 1;
			continue;
		}
		for (j = 0; j < ATOMIC_FILES; j++)
			unlink(atomic_slots[i].files[j]);
	}
	errno = saved;
	if (!appending)
		raise(sig);	/* SA_RESETHAND made it the default */
}

static void
atomic_exit(void)
{
	size_t	i, j;

	for (i = 0; i < STORE_ATOMIC_SLOTS; i++) {
		if (!atomic_slots[i].used || atomic_slots[i].files[0] == NULL)
			continue;
		for (j = 0; j < ATOMIC_FILES; j++)
			unlink(atomic_slots[i].files[j]);
	}
}

/* Catch the signals (those not ignored) while a slot is used. */
static void
atomic_install(void)
{
	struct sigaction	sa;
	size_t			i;

	if (atomic_installed++ > 0)
		return;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = atomic_handler;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < ATOMIC_SIGNALS; i++) {
		sigaction(atomic_signals[i], NULL, &atomic_old[i]);
		if (atomic_old[i].sa_handler != SIG_IGN)
			sigaction(atomic_signals[i], &sa, NULL);
	}
}

static void
atomic_uninstall(void)
{
	size_t	i;

	if (--atomic_installed > 0)
		return;
	for (i = 0; i < ATOMIC_SIGNALS; i++)
		sigaction(atomic_signals[i], &atomic_old[i], NULL);
}

/* Take a free slot for s (its temporary names, or its handle). */
static void
atomic_register(struct store *s)
{
	static int	 atexit_done;
	struct atomic_slot *slot;
	size_t		 i, j;

	for (i = 0; i < STORE_ATOMIC_SLOTS; i++) {
		if (!atomic_slots[i].used)
			break;
	}
	if (i == STORE_ATOMIC_SLOTS)
		return;		/* left to SQLite's journal and the sweep */
	slot = &atomic_slots[i];
	for (j = 0; j < ATOMIC_FILES; j++) {
		if (s->tmp_path != NULL)
			xasprintf(&slot->files[j], "%s%s", s->tmp_path,
			    atomic_suffix[j]);
	}
	slot->db = s->db;
	slot->interrupted = &s->interrupted;
	if (!atexit_done++)
		atexit(atomic_exit);
	atomic_install();
	slot->used = 1;
	s->atomic_slot = (int)i + 1;
}

/*
 * Is dir/name a database that store_atomic_create() made (or, with
 * finished, one it renamed into place) and that no process holds?  A
 * regular file of ours, unlocked, empty or an SQLite file; an empty one (a
 * live writer's for the instant between creating and locking it) or a
 * finished one (its reader's between the rename and its lock) only when
 * older than STORE_ATOMIC_EMPTY_AGE.
 */
static int
atomic_abandoned(int dirfd, const char *name, int finished)
{
	struct stat	 sb;
	char		 head[16];
	int		 fd, rc = 0, old;
	ssize_t		 n;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC);
	if (fd == -1)
		return (0);
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    sb.st_uid != geteuid() || flock(fd, LOCK_EX | LOCK_NB) != 0)
		goto out;
	old = time(NULL) - sb.st_mtime > STORE_ATOMIC_EMPTY_AGE;
	n = read(fd, head, sizeof head);
	if (n == 0)
		rc = old;
	else
		rc = n == sizeof head && memcmp(head, "SQLite format 3", 16) ==
		    0 && (!finished || old);
out:
	close(fd);
	return (rc);
}

/* Are the n characters at s letters or digits, as util_mkstemp() makes? */
static int
atomic_random(const char *s, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' &&
		    s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')))
			return (0);
	}
	return (1);
}

/*
 * Is name base, then stem random characters, then ".tmp-" and six random
 * characters (a temporary database), or with tmp 0 nothing more?
 */
static int
atomic_ours(const char *name, const char *base, size_t stem, int tmp)
{
	size_t	len = strlen(base);

	if (strncmp(name, base, len) != 0 || !atomic_random(name + len, stem))
		return (0);
	name += len + stem;
	if (!tmp)
		return (*name == '\0');
	return (strncmp(name, ".tmp-", 5) == 0 && atomic_random(name + 5, 6) &&
	    name[11] == '\0');
}

/*
 * Remove from dir the databases named base and stem random characters
 * that stopped processes left (see the top of the file): their temporary
 * files, and with finished the databases themselves, each with SQLite's
 * files beside it, saying so for each.
 */
static void
atomic_sweep_dir(const char *dir, const char *base, size_t stem,
    int finished)
{
	struct dirent	*de;
	DIR		*d;
	char		*p;
	size_t		 j;
	int		 tmp;

	if ((d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		tmp = atomic_ours(de->d_name, base, stem, 1);
		if (!(tmp || (finished && atomic_ours(de->d_name, base, stem,
		    0))) || !atomic_abandoned(dirfd(d), de->d_name, !tmp))
			continue;
		for (j = ATOMIC_FILES; j-- > 0;) {
			xasprintf(&p, "%s/%s%s", dir, de->d_name,
			    atomic_suffix[j]);
			unlink(p);
			free(p);
		}
		log_warn("removed %s/%s and its journal, left by a vramtrace "
		    "that was stopped", dir, de->d_name);
	}
	closedir(d);
}

/* Remove the temporary files of path that an interrupted writer left. */
static void
atomic_sweep(const char *path)
{
	const char	*slash = strrchr(path, '/');
	char		*dir;

	dir = slash == NULL ? xstrdup(".") : slash == path ? xstrdup("/") :
	    xstrndup(path, (size_t)(slash - path));
	atomic_sweep_dir(dir, slash != NULL ? slash + 1 : path, 0, 0);
	free(dir);
}

/*
 * Remove from dir what stopped processes left of the databases named
 * prefix and six random characters (util_mkstemp()'s): the temporary files
 * of those being written, and those written whose reader was killed (a
 * reader holds a shared flock() on its database while it runs).
 */
void
store_atomic_sweep_named(const char *dir, const char *prefix)
{
	atomic_sweep_dir(dir, prefix, 6, 1);
}

/*
 * Make s's temporary file PATH.tmp-XXXXXX (s->tmp_path, locked, held open
 * as s->tmp_fd) after removing those an interrupted writer left, and
 * remove it if a signal comes (store_atomic_watch).  0, or -1 with
 * *cause.
 */
int
store_atomic_create(struct store *s, char **cause)
{
	atomic_sweep(s->path);
	xasprintf(&s->tmp_path, "%s.tmp-XXXXXX", s->path);
	if ((s->tmp_fd = util_mkstemp(s->tmp_path)) == -1 ||
	    flock(s->tmp_fd, LOCK_EX) != 0) {
		if (cause != NULL)
			*cause = xstrerror_cause("%s: cannot create a "
			    "temporary file", s->path);
		if (s->tmp_fd != -1)
			store_atomic_remove(s);
		return (-1);
	}
	return (0);
}

/*
 * Watch the open store s for signals: its temporary file is removed, or
 * its work interrupted, when one comes (see the top of the file).
 */
void
store_atomic_watch(struct store *s)
{
	if (s->atomic_slot == 0)
		atomic_register(s);
}

/* Stop watching s; its files stay as they are. */
void
store_atomic_forget(struct store *s)
{
	struct atomic_slot	*slot;
	size_t			 j;

	if (s->atomic_slot == 0)
		return;
	slot = &atomic_slots[s->atomic_slot - 1];
	slot->used = 0;
	for (j = 0; j < ATOMIC_FILES; j++) {
		free(slot->files[j]);
		slot->files[j] = NULL;
	}
	slot->db = NULL;
	slot->interrupted = NULL;
	s->atomic_slot = 0;
	atomic_uninstall();
}

/*
 * Remove s's temporary file and SQLite's files beside it, and let go of
 * its lock.  Nothing when s has none.
 */
void
store_atomic_remove(struct store *s)
{
	char	*p;
	size_t	 j;

	if (s->tmp_path == NULL)
		return;
	for (j = 0; j < ATOMIC_FILES; j++) {
		xasprintf(&p, "%s%s", s->tmp_path, atomic_suffix[j]);
		unlink(p);
		free(p);
	}
	store_atomic_release(s);
}

/* Close s's hold on its temporary file (after the rename, or removal). */
void
store_atomic_release(struct store *s)
{
	if (s->tmp_fd != -1)
		close(s->tmp_fd);
	s->tmp_fd = -1;
}

/*
 * After an interrupted store was rolled back and closed: end the process
 * with the signal that interrupted it, as it asked.  Nothing when none
 * came.
 */
void
store_atomic_reraise(void)
{
	int	sig = atomic_signal;

	if (sig == 0)
		return;
	signal(sig, SIG_DFL);
	raise(sig);
}
