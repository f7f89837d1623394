// SPDX-License-Identifier: GPL-2.0-only
/*
 *  kernel/exit.c -- exit and the task tree.
 */
#include <linux/types.h>
#include <linux/list.h>
#include <linux/sched.h>

extern int nr_threads;

/* Recursive: counts @p and everything below it in the task tree. */
int count_descendants(struct task_struct *p, int depth)
{
	struct list_head *pos;
	int n = 1;

	if (depth > 32)
		return 0;
	list_for_each(pos, &p->children) {
		struct task_struct *child = container_of(pos, struct task_struct, sibling);

		n += count_descendants(child, depth + 1);
	}
	return n;
}

static void forget_original_parent(struct task_struct *father)
{
	struct list_head *pos, *next;

	for (pos = father->children.next; pos != &father->children; pos = next) {
		struct task_struct *t = container_of(pos, struct task_struct, sibling);

		next = pos->next;
		t->real_parent = &init_task;
		t->parent = &init_task;
		list_del(&t->sibling);
		list_add_tail(&t->sibling, &init_task.children);
	}
}

/*
 * @unused and @reason are never read: at -O2 GCC keeps the symbol but
 * has no location for them (or drops them in an .isra clone).
 */
static noinline int exit_notify(struct task_struct *tsk, int group_dead, long unused, const char *reason)
{
	forget_original_parent(tsk);
	tsk->__state = EXIT_ZOMBIE;
	if (group_dead && tsk->real_parent)
		wake_up_process(tsk->real_parent);
	return tsk->exit_signal;
}

void __noreturn do_exit(long code)
{
	struct task_struct *tsk = current;
	int group_dead = 1;

	if (tsk->signal) {
		tsk->signal->live.counter--;
		group_dead = tsk->signal->live.counter == 0;
		if (group_dead)
			tsk->signal->group_exit_code = code;
	}
	tsk->exit.exit_code = code;
	exit_notify(tsk, group_dead, code, "exit");
	nr_threads--;
	WRITE_ONCE(tsk->__state, TASK_DEAD);
	for (;;)
		schedule();
}

long sys_exit(int error_code)
{
	do_exit((error_code & 0xff) << 8);
}

long sys_getppid(void)
{
	return current->real_parent ? current->real_parent->tgid : 0;
}
