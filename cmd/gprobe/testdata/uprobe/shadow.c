/* Two functions of one shape: in sum_a a block variable shadows the
 * parameter, so $vars inside the block sees two variables named n. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int sum_a(int n)
{
	int r = n * 2;
	{
		int n = r + 3;
		r += n * n;
	}
	return r;
}

__attribute__((noinline)) int sum_b(int n)
{
	int r = n * 2;
	{
		int m = r + 3;
		r += m * m;
	}
	return r;
}

int main(int argc, char **argv)
{
	int k = argc > 1 ? atoi(argv[1]) : 1;
	printf("%d\n", sum_a(k) + sum_b(k));
	return 0;
}
