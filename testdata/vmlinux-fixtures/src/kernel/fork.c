// SPDX-License-Identifier: GPL-2.0-only
/*
 *  kernel/fork.c -- copy_process() and friends, reduced.
 */
#include <linux/types.h>
#include <linux/err.h>
#include <linux/list.h>
#include <linux/sched.h>
#include <linux/string.h>

#define CLONE_VM	0x00000100
#define CLONE_FS	0x00000200
#define CLONE_FILES	0x00000400
#define CLONE_SIGHAND	0x00000800
#define CLONE_PARENT	0x00008000
#define CLONE_THREAD	0x00010000
#define CSIGNAL		0x000000ff
#define SIGCHLD		17
#define MAX_THREADS	64

struct task_struct init_task = {
	.__state	= TASK_RUNNING,
	.prio		= 120,
	.static_prio	= 120,
	.policy		= SCHED_NORMAL,
	.nr_cpus_allowed = NR_CPUS,
	.comm		= "swapper",
	.children	= LIST_HEAD_INIT(init_task.children),
	.sibling	= LIST_HEAD_INIT(init_task.sibling),
};

int nr_threads;
int max_threads = MAX_THREADS;
unsigned long total_forks;
static int last_pid;
static struct task_struct task_pool[MAX_THREADS];
static struct signal_struct signal_pool[MAX_THREADS];

extern int sched_fork(unsigned long clone_flags, struct task_struct *p);

static struct task_struct *dup_task_struct(struct task_struct *orig)
{
	int i;

	for (i = 0; i < MAX_THREADS; i++) {
		struct task_struct *tsk = &task_pool[i];

		if (tsk->pid == 0) {
			memcpy(tsk, orig, sizeof(*tsk));
			INIT_LIST_HEAD(&tsk->children);
			INIT_LIST_HEAD(&tsk->sibling);
			return tsk;
		}
	}
	return NULL;
}

static int copy_signal(unsigned long clone_flags, struct task_struct *tsk)
{
	struct signal_struct *sig;
	int i;

	if (clone_flags & CLONE_THREAD)
		return 0;
	sig = &signal_pool[tsk - task_pool];
	sig->nr_threads = 1;
	sig->live.counter = 1;
	for (i = 0; i < RLIM_NLIMITS; i++) {
		if (current->signal)
			sig->rlim[i] = current->signal->rlim[i];
		else
			sig->rlim[i].rlim_cur = sig->rlim[i].rlim_max = ~0UL;
	}
	tsk->signal = sig;
	return 0;
}

static noinline pid_t alloc_pid(void)
{
	if (++last_pid >= 32768)
		last_pid = 300;
	return last_pid;
}

static struct task_struct *copy_process(int trace, int node, struct kernel_clone_args *args)
{
	u64 clone_flags = args->flags;
	struct task_struct *p;
	int retval;

	if ((clone_flags & (CLONE_THREAD | CLONE_SIGHAND)) == CLONE_THREAD)
		return ERR_PTR(-EINVAL);
	if ((clone_flags & CLONE_SIGHAND) && !(clone_flags & CLONE_VM))
		return ERR_PTR(-EINVAL);

	p = dup_task_struct(current);
	if (!p)
		return ERR_PTR(-ENOMEM);

	if (unlikely(nr_threads >= max_threads)) {
		warn_slowpath_fmt("kernel/fork.c", __LINE__, "too many threads");
		retval = -EAGAIN;
		goto bad_fork_free;
	}

	p->flags &= ~0x20;
	p->flags |= 0x40;
	p->utime = p->stime = 0;
	p->in_execve = 0;
	p->in_iowait = 0;

	retval = sched_fork(clone_flags, p);
	if (retval)
		goto bad_fork_free;
	retval = copy_signal(clone_flags, p);
	if (retval)
		goto bad_fork_free;
	if (!(clone_flags & CLONE_VM))
		p->mm = current->mm;

	p->pid = alloc_pid();
	if (clone_flags & CLONE_THREAD) {
		p->exit_signal = -1;
		p->tgid = current->tgid;
	} else {
		p->exit_signal = args->exit_signal;
		p->tgid = p->pid;
	}
	if (clone_flags & (CLONE_PARENT | CLONE_THREAD))
		p->real_parent = current->real_parent;
	else
		p->real_parent = current;
	p->parent = p->real_parent;
	list_add_tail(&p->sibling, &p->real_parent->children);
	nr_threads++;
	total_forks++;
	return p;

bad_fork_free:
	p->pid = 0;
	return ERR_PTR(retval);
}

long kernel_clone(struct kernel_clone_args *args)
{
	u64 clone_flags = args->flags;
	struct task_struct *p;
	int trace = 0;
	pid_t nr;

	if (!(clone_flags & CSIGNAL) && args->exit_signal == SIGCHLD)
		trace = 1;

	p = copy_process(trace, -1, args);
	if (IS_ERR(p))
		return PTR_ERR(p);

	nr = task_pid_nr(p);
	if (args->parent_tid)
		*args->parent_tid = nr;
	wake_up_process(p);
	return nr;
}

long sys_clone(unsigned long clone_flags, unsigned long newsp,
	       int __user *parent_tidptr, int __user *child_tidptr,
	       unsigned long tls)
{
	struct kernel_clone_args args = {
		.flags		= (clone_flags & ~CSIGNAL),
		.pidfd		= parent_tidptr,
		.child_tid	= child_tidptr,
		.parent_tid	= parent_tidptr,
		.exit_signal	= (clone_flags & CSIGNAL),
		.stack		= newsp,
		.tls		= tls,
	};

	return kernel_clone(&args);
}

long sys_fork(void)
{
	struct kernel_clone_args args = {
		.exit_signal = SIGCHLD,
	};

	return kernel_clone(&args);
}
