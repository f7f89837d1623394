/* Global and static variables read by uprobes at file offsets: tick(n)
 * changes them on each call, so that the values a probe at tick's entry
 * fetches are known: before tick(k) (k = 1, 2, ...), gcount is
 * (k-1)k/2, gstat is 3+k-1, gpt.y is 2+(k-1)k/2, gptr->x is 1 and gname
 * is "hello". main calls tick ITERATIONS times (argv[1], default 5). */
#include <stdio.h>
#include <stdlib.h>

int gcount;			/* .bss */
long gtotal = 5;		/* .data */
static short gstat = 3;		/* a file-local static */
struct pt {
	int x;
	int y;
} gpt = { 1, 2 };
struct pt *gptr = &gpt;
char gname[16] = "hello";

__attribute__((noipa)) int tick(int n)
{
	gcount += n;
	gtotal += gcount;
	gstat++;
	gpt.y += n;
	return gcount;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 5;

	for (int i = 0; i < n; i++)
		tick(i + 1);
	printf("%d %ld %d\n", gcount, gtotal, gstat);
	return 0;
}
