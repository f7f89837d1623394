// SPDX-License-Identifier: GPL-2.0-only
/*
 *  fs/exec.c -- execve(2) bookkeeping only.
 */
#include <linux/types.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/sched.h>
#include <linux/string.h>

#define MAX_ARG_STRINGS	0x7FFFFFFF
#define E2BIG		7

struct linux_binprm {
	struct file *file;
	const char *filename;
	int argc, envc;
	unsigned long p;
	unsigned int comm_hash;
	char buf[128];
};

static int count(const char __user *const __user *argv, int max)
{
	int i = 0;

	if (argv != NULL) {
		for (;;) {
			const char __user *p = argv[i];

			if (!p)
				break;
			if (i >= max)
				return -E2BIG;
			++i;
		}
	}
	return i;
}

void __set_task_comm(struct task_struct *tsk, const char *buf, bool exec)
{
	strscpy_comm(tsk->comm, buf);
}

static int bprm_execve(struct linux_binprm *bprm, struct filename *filename)
{
	struct task_struct *tsk = current;
	const char *base = filename->name;
	const char *s;

	for (s = base; *s; s++)
		if (*s == '/')
			base = s + 1;
	tsk->in_execve = 1;
	__set_task_comm(tsk, base, true);
	bprm->comm_hash = full_name_hash((const unsigned char *)tsk->comm,
					 strnlen(tsk->comm, TASK_COMM_LEN));
	tsk->in_execve = 0;
	return 0;
}

int do_execve(struct filename *filename,
	      const char __user *const __user *__argv,
	      const char __user *const __user *__envp)
{
	struct linux_binprm bprm = { .filename = filename->name };
	int retval;

	if (IS_ERR(filename))
		return PTR_ERR(filename);
	bprm.argc = count(__argv, MAX_ARG_STRINGS);
	if (bprm.argc < 0)
		return bprm.argc;
	bprm.envc = count(__envp, MAX_ARG_STRINGS);
	if (bprm.envc < 0)
		return bprm.envc;
	retval = bprm_execve(&bprm, filename);
	putname(filename);
	return retval;
}

long sys_execve(const char __user *filename,
		const char __user *const __user *argv,
		const char __user *const __user *envp)
{
	return do_execve(getname(filename), argv, envp);
}
