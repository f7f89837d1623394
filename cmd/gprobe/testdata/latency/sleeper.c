/*
 * sleeper: the workload of gprobe latency's guest tests.
 *
 *   sleeper CHILDREN ARG...
 *
 * forks CHILDREN children one after the other; each goes through the ARGs:
 * a number US calls work(US), one nanosleep of US microseconds; -N calls
 * nest(N), a recursion N calls deep. With GPROBE_COMM set, the children
 * take it as their comm.
 */
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) int work(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	return nanosleep(&ts, NULL);
}

__attribute__((noinline)) int nest(int depth)
{
	if (depth <= 1)
		return work(100);
	return nest(depth - 1) + 1;
}

int main(int argc, char **argv)
{
	int children = argc > 1 ? atoi(argv[1]) : 1;
	for (int c = 0; c < children; c++) {
		if (fork() == 0) {
			if (getenv("GPROBE_COMM"))
				prctl(PR_SET_NAME, getenv("GPROBE_COMM"));
			for (int i = 2; i < argc; i++) {
				long n = atol(argv[i]);
				if (n < 0)
					nest(-n);
				else
					work(n);
			}
			_exit(0);
		}
		wait(NULL);
	}
	return 0;
}
