/*
 * use.c: libhook-use.so, an object whose hook_probe() is another
 * library's (libhook-other.so), for tests/hook-host.c.
 */
int	hook_probe(int);
int	hook_use(int);

int
hook_use(int x)
{
	return (hook_probe(x));
}
