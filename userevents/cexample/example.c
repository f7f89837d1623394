/*
 * example.c: a user event from C, as Documentation/trace/user_events.rst
 * describes it: register "c_request u32 id; char[16] tag" through
 * user_events_data with DIAG_IOCSREG, naming a word whose bit 0 the kernel
 * sets while a tracer has the event enabled; write the payload with
 * writev (the write index first) only while it is set.
 *
 *   gcc -O2 -o example-c example.c   (the program in userevents/example is the Go half)
 *   gprobe record -e 'user_events:*' -o trace.out -- ./example-c 100
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#if __has_include(<linux/user_events.h>)
#include <linux/user_events.h>
#else
/* include/uapi/linux/user_events.h (Linux 6.4), for older kernel headers
 * (Debian 12's are 6.1's). */
#include <linux/ioctl.h>
#include <linux/types.h>
struct user_reg {
	__u32 size;
	__u8 enable_bit;
	__u8 enable_size;
	__u16 flags;
	__u64 enable_addr;
	__u64 name_args;
	__u32 write_index;
} __attribute__((__packed__));
struct user_unreg {
	__u32 size;
	__u8 disable_bit;
	__u8 __reserved;
	__u16 __reserved2;
	__u64 disable_addr;
} __attribute__((__packed__));
#define DIAG_IOC_MAGIC '*'
#define DIAG_IOCSREG _IOWR(DIAG_IOC_MAGIC, 0, struct user_reg *)
#define DIAG_IOCSUNREG _IOW(DIAG_IOC_MAGIC, 2, struct user_unreg *)
#endif

static volatile uint32_t enabled; /* bit 0: a tracer has the event enabled */

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	const char *data = "/sys/kernel/tracing/user_events_data";
	int fd = open(data, O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "open %s: %s\n", data, strerror(errno));
		return 1;
	}
	struct user_reg reg = {0};
	reg.size = sizeof(reg);
	reg.enable_bit = 0;
	reg.enable_size = sizeof(enabled);
	reg.enable_addr = (uint64_t)(uintptr_t)&enabled;
	reg.name_args = (uint64_t)(uintptr_t)"c_request u32 id; char[16] tag";
	if (ioctl(fd, DIAG_IOCSREG, &reg) < 0) {
		fprintf(stderr, "DIAG_IOCSREG: %s\n", strerror(errno));
		return 1;
	}
	/* Wait (10 s at most) for a tracer. */
	for (int i = 0; !(enabled & 1) && i < 10000; i++)
		usleep(1000);
	int written = 0;
	for (uint32_t id = 0; id < (uint32_t)n; id++) {
		char tag[16] = {0};
		snprintf(tag, sizeof(tag), "c-%u", id);
		struct iovec io[3] = {
			{&reg.write_index, sizeof(reg.write_index)},
			{&id, sizeof(id)},
			{tag, sizeof(tag)},
		};
		if (!(enabled & 1))
			continue;
		if (writev(fd, io, 3) < 0) {
			fprintf(stderr, "writev: %s\n", strerror(errno));
			return 1;
		}
		written++;
	}
	printf("wrote %d events\n", written);
	struct user_unreg unreg = {0};
	unreg.size = sizeof(unreg);
	unreg.disable_bit = 0;
	unreg.disable_addr = (uint64_t)(uintptr_t)&enabled;
	ioctl(fd, DIAG_IOCSUNREG, &unreg);
	close(fd);
	return 0;
}
