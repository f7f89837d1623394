// SPDX-License-Identifier: GPL-2.0-only
/*
 *  init/main.c -- start_kernel() pokes every subsystem once.
 */
#include <linux/types.h>
#include <linux/fcntl.h>
#include <linux/fs.h>
#include <linux/sched.h>
#include <linux/string.h>

extern long sys_open(const char __user *filename, int flags, umode_t mode);
extern long sys_read(unsigned int fd, char __user *buf, size_t count);
extern long sys_write(unsigned int fd, const char __user *buf, size_t count);
extern long sys_fork(void);
extern long sys_execve(const char __user *filename,
		       const char __user *const __user *argv,
		       const char __user *const __user *envp);
extern unsigned long ksys_mmap_pgoff(unsigned long addr, unsigned long len,
				     unsigned long prot, unsigned long flags,
				     unsigned long fd, unsigned long pgoff);
extern int close_fd(unsigned int fd);
extern const struct file_operations null_fops;

char boot_command_line[256] = "console=ttyS0 root=/dev/vda";
static char init_buf[64];
static const char *const argv_init[] = { "/sbin/init", NULL };
static const char *const envp_init[] = { "HOME=/", "TERM=linux", NULL };

void start_kernel(void)
{
	long fd;
	int i;

	for (i = 0; i < NR_CPUS; i++) {
		INIT_LIST_HEAD(&runqueues[i].queue);
		runqueues[i].cpu = i;
		runqueues[i].idle = &init_task;
	}
	init_task.sched_class = &fair_sched_class;

	fd = sys_open("/dev/console", O_RDWR, 0);
	if (fd >= 0) {
		sys_write(fd, boot_command_line, strlen(boot_command_line));
		sys_read(fd, init_buf, sizeof(init_buf));
		close_fd(fd);
	}
	ksys_mmap_pgoff(0, 4096, 3, 0x22, -1, 0);
	if (sys_fork() == 0)
		sys_execve(argv_init[0], argv_init, envp_init);
	for (;;)
		schedule();
}
