// SPDX-License-Identifier: GPL-2.0-only
/*
 *  kernel/panic.c -- the cold paths.
 */
#include <linux/types.h>
#include <linux/sched.h>
#include <linux/string.h>

int panic_on_warn;
unsigned long taint_mask;
const char *last_warn_file;
int last_warn_line;

void __noreturn __cold panic(const char *fmt)
{
	for (;;)
		barrier();
}

void __cold warn_slowpath_fmt(const char *file, int line, const char *fmt)
{
	last_warn_file = file;
	last_warn_line = line;
	taint_mask |= 1UL << 9;
	if (panic_on_warn)
		panic(fmt);
}
