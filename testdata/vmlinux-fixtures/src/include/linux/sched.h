/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_SCHED_H
#define _LINUX_SCHED_H

#include <linux/types.h>
#include <linux/list.h>

#define TASK_COMM_LEN	16
#define RLIM_NLIMITS	16
#define NR_CPUS		4

enum task_state {
	TASK_RUNNING		= 0x0000,
	TASK_INTERRUPTIBLE	= 0x0001,
	TASK_UNINTERRUPTIBLE	= 0x0002,
	__TASK_STOPPED		= 0x0004,
	__TASK_TRACED		= 0x0008,
	EXIT_DEAD		= 0x0010,
	EXIT_ZOMBIE		= 0x0020,
	TASK_DEAD		= 0x0080,
};

enum sched_policy {
	SCHED_NORMAL,
	SCHED_FIFO,
	SCHED_RR,
	SCHED_BATCH,
	SCHED_IDLE = 5,
	SCHED_DEADLINE,
};

struct rlimit {
	unsigned long	rlim_cur;
	unsigned long	rlim_max;
};

struct mm_struct {
	unsigned long		start_code, end_code;
	unsigned long		start_stack;
	unsigned long		*pgd;
	atomic_t		mm_users;
	int			map_count;
};

struct signal_struct {
	atomic_t		live;
	int			nr_threads;
	int			group_exit_code;
	struct rlimit		rlim[RLIM_NLIMITS];
};

struct load_weight {
	unsigned long		weight;
	u32			inv_weight;
};

struct sched_entity {
	struct load_weight	load;
	u64			exec_start;
	u64			sum_exec_runtime;
	u64			vruntime;
	unsigned int		on_rq;
};

struct rcu_head {
	struct rcu_head *next;
	void (*func)(struct rcu_head *head);
};

struct task_struct {
	unsigned int			__state;
	int				on_cpu;
	unsigned int			flags;
	int				prio;
	int				static_prio;
	enum sched_policy		policy;
	struct sched_entity		se;
	const struct sched_class	*sched_class;

	/* Scheduler bits, serialized by scheduler locks: */
	unsigned			sched_reset_on_fork:1;
	unsigned			sched_contributes_to_load:1;
	unsigned			sched_migrated:1;
	/* Force alignment to the next boundary: */
	unsigned			:0;
	unsigned			in_execve:1;
	unsigned			in_iowait:1;
	unsigned			restore_sigmask:1;
	unsigned			brk_randomized:1;
	unsigned			nr_cpus_allowed:4;

	pid_t				pid;
	pid_t				tgid;
	struct task_struct		*real_parent;
	struct task_struct		*parent;
	struct list_head		children;
	struct list_head		sibling;
	struct mm_struct		*mm;
	struct signal_struct		*signal;
	char				comm[TASK_COMM_LEN];
	union {
		struct rcu_head		rcu;
		struct list_head	tasks;
	};
	union {
		int			exit_code;
		unsigned long		exit_state_word;
	} exit;
	int				exit_signal;
	u64				utime, stime;
};

struct sched_class {
	const char *name;
	void (*enqueue_task)(struct task_struct *p, int flags);
	void (*dequeue_task)(struct task_struct *p, int flags);
	struct task_struct *(*pick_next_task)(int cpu);
	int (*select_task_rq)(struct task_struct *p, int prev_cpu, int flags);
	const struct sched_class *next;
};

struct kernel_clone_args {
	u64 flags;
	int __user *pidfd;
	int __user *child_tid;
	int __user *parent_tid;
	int exit_signal;
	unsigned long stack;
	unsigned long stack_size;
	unsigned long tls;
};

struct rq {
	unsigned int		nr_running;
	u64			clock;
	struct task_struct	*curr;
	struct task_struct	*idle;
	struct list_head	queue;
	unsigned long		nr_switches;
	int			cpu;
};

extern struct task_struct init_task;
extern struct task_struct *current_task;
extern struct rq runqueues[NR_CPUS];
extern unsigned long volatile jiffies;
extern const struct sched_class fair_sched_class;

static __always_inline struct task_struct *get_current(void)
{
	return READ_ONCE(current_task);
}
#define current get_current()

static inline int task_pid_nr(struct task_struct *tsk)
{
	return tsk->pid;
}

static inline bool task_is_running(struct task_struct *p)
{
	return READ_ONCE(p->__state) == TASK_RUNNING;
}

extern int wake_up_process(struct task_struct *p);
extern void schedule(void);
extern long kernel_clone(struct kernel_clone_args *args);
extern void __noreturn do_exit(long code);
extern void __cold warn_slowpath_fmt(const char *file, int line, const char *fmt);

#endif /* _LINUX_SCHED_H */
