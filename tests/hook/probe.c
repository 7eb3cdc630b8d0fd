/*
 * probe.c: hook_probe() for tests/hook-host.c, built twice: libhook-def.so
 * (x + 1), the definition the host imports, and libhook-other.so
 * (x + HOOK_PROBE_ADD), a second definition that libhook-use.so binds to;
 * libhook-def.so exports hook_table too.
 */
int	hook_probe(int);

/* A pointer to it kept in writable data (got_replace leaves it alone). */
int	(*hook_table)(int) = hook_probe;

int
hook_probe(int x)
{
	return (x + HOOK_PROBE_ADD);
}
