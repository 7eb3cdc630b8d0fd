/*
 * git.c: the commit a working directory is at, for a run's git_commit.
 */
#include "config.h"

#include "vramtrace.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * The commit HEAD of the git working tree that holds dir names (40 or 64
 * hex digits, from `git -C dir rev-parse --verify HEAD`), or NULL when dir
 * is NULL, not in a repository, has no commit yet, or git is missing.  The
 * caller frees the result.  Says nothing on failure: a run outside a
 * repository is normal.
 */
char *
git_head(const char *dir)
{
	char	 buf[80];
	size_t	 n = 0, i;
	ssize_t	 got;
	pid_t	 pid;
	int	 fd[2], status, null;

	if (dir == NULL || pipe(fd) != 0)
		return (NULL);
	if ((pid = fork()) == -1) {
		close(fd[0]);
		close(fd[1]);
		return (NULL);
	}
	if (pid == 0) {
		null = open("/dev/null", O_RDWR);
		dup2(null, STDIN_FILENO);
		dup2(null, STDERR_FILENO);
		dup2(fd[1], STDOUT_FILENO);
		close(fd[0]);
		execlp("git", "git", "-C", dir, "rev-parse", "--verify", "-q",
		    "HEAD", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	while (n < sizeof buf - 1 && ((got = read(fd[0], buf + n,
	    sizeof buf - 1 - n)) > 0 || (got < 0 && errno == EINTR)))
		n += got > 0 ? (size_t)got : 0;
	close(fd[0]);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return (NULL);
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		n--;
	if (n != 40 && n != 64)
		return (NULL);
	for (i = 0; i < n; i++) {
		if (!isxdigit((unsigned char)buf[i]))
			return (NULL);
	}
	return (xstrndup(buf, n));
}
