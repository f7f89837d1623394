// sdtsem: a marker guarded by a semaphore (part of sdtprog). The marker's
// code runs only while the semaphore is not 0: the kernel counts it up
// while a uprobe with the semaphore as its reference counter exists.
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

struct item { long a; int b; char c; };

unsigned short gprobe_test_tick_semaphore __attribute__((unused)) __attribute__((section(".probes")));

void sdt_tick(int n, struct item *p, char c)
{
	if (__builtin_expect(gprobe_test_tick_semaphore, 0))
		STAP_PROBE3(gprobe_test, tick, n, p->a, (long)c);
}
