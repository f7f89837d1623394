// sdtprog: SDT markers of every operand form GCC writes, for gprobe's SDT
// tests (resolve/sdt): built for x86-64 and arm64 at -O0 and -O2 with
// sdtsem.c, whose marker has a semaphore.
//
//   sdtprog N   fires each marker N times and prints a checksum
#include <sys/sdt.h>
#include <stdio.h>
#include <stdlib.h>

struct item { long a; int b; char c; };

void sdt_tick(int n, struct item *p, char c); /* sdtsem.c */

volatile long counter;

__attribute__((noinline)) int work(int n, struct item *p, char c, short h, long *arr)
{
	sdt_tick(n, p, c);
	STAP_PROBE2(gprobe_test, consts, 42, -7);
	STAP_PROBE4(gprobe_test, mem, p->b, p->c, arr[3], h);
	STAP_PROBE1(gprobe_test, twice, n);
	STAP_PROBE1(gprobe_test, twice, n + 1);
	STAP_PROBE(gprobe_test, noargs);
	STAP_PROBE3(gprobe_test, global, counter, &counter, n);
	counter += n;
	return n + p->b;
}

int main(int argc, char **argv)
{
	struct item v = {1, 2, 3};
	long arr[4] = {1, 2, 3, 4};
	int k = argc > 1 ? atoi(argv[1]) : 1, t = 0;
	for (int i = 0; i < k; i++)
		t += work(i, &v, 'x', 7, arr);
	printf("%d\n", t);
	return 0;
}
