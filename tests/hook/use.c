/*
 * use.c: for tests/hook-host.c, built twice: libhook-use.so, an object
 * whose hook_probe() is another library's (libhook-other.so), and
 * libhook-late.so, bound to the host's (libhook-def.so), loaded after
 * the first redirection.
 */
int	hook_probe(int);
int	hook_use(int);

int
hook_use(int x)
{
	return (hook_probe(x));
}
