/* Workload for the record tests: each of THREADS threads calls probed()
 * N/THREADS times with (thread, i). N < 0 calls it forever, one call per
 * 100 us, for the signal test. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

volatile long sink;

__attribute__((noinline)) void probed(int thread, long i)
{
	sink += thread + i;
	__asm__ volatile("" ::: "memory");
}

struct arg {
	int thread;
	long n;
};

static void *worker(void *p)
{
	struct arg *a = p;

	for (long i = 0; a->n < 0 || i < a->n; i++) {
		probed(a->thread, i);
		if (a->n < 0)
			usleep(100);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10;
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	pthread_t tid[64];
	struct arg args[64];

	if (threads < 1 || threads > 64)
		return 2;
	for (int t = 0; t < threads; t++) {
		args[t].thread = t;
		args[t].n = n < 0 ? -1 : n / threads + (t < n % threads);
		pthread_create(&tid[t], NULL, worker, &args[t]);
	}
	for (int t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	return 3; /* a distinctive exit code for the exit-status test */
}
