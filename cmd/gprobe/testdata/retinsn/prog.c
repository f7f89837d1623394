/* A user program for the return-instruction probe tests: classify has
 * several return instructions, dispatch returns or tail-calls helper.
 * Usage: prog N; it calls each function N times and prints the sum. */
#include <stdio.h>
#include <stdlib.h>

volatile long sink;

__attribute__((noinline)) long classify(long x)
{
	if (x < 0) {
		sink += x;
		return -1;
	}
	if (x % 3 == 0)
		return x / 3;
	if (x % 5 == 0) {
		sink ^= x;
		return 5;
	}
	return x * 7;
}

__attribute__((noinline)) long helper(long x)
{
	sink += x;
	return x * 2 + 1;
}

__attribute__((noinline)) long dispatch(long x)
{
	if (x & 1)
		return helper(x + 1);
	return x - 1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10, sum = 0;

	for (long i = 0; i < n; i++)
		sum += classify(i - 10) + dispatch(i);
	printf("%ld\n", sum);
	return 0;
}
