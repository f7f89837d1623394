/* An instruction with an immediate: magic() (noipa: called each time) is
 * "mov $0x12345678,%eax; ret" on x86-64. A uprobe at magic+1 (inside the mov) is accepted by the kernel
 * and never fires, and its breakpoint byte changes the immediate the
 * program loads while it is enabled: the absolute-address tests prove
 * with it why gprobe refuses such an offset. The program prints magic()'s
 * value ITERATIONS times (argv[1], default 20), 20 ms apart. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noipa)) unsigned magic(void)
{
	return 0x12345678;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20;

	for (int i = 0; i < n; i++) {
		printf("%x\n", magic());
		fflush(stdout);
		usleep(20000);
	}
	return 0;
}
