// SPDX-License-Identifier: GPL-2.0-only
/*
 *  kernel/sched/core.c -- a round-robin toy with the kernel's shapes.
 */
#include <linux/types.h>
#include <linux/list.h>
#include <linux/sched.h>
#include <linux/string.h>

struct rq runqueues[NR_CPUS];
struct task_struct *current_task = &init_task;
unsigned int sysctl_sched_latency = 6000000;
unsigned long volatile jiffies;

static const int sched_prio_to_weight[40] = {
 /* -20 */     88761,     71755,     56483,     46273,     36291,
 /* -15 */     29154,     23254,     18705,     14949,     11916,
 /* -10 */      9548,      7620,      6100,      4904,      3906,
 /*  -5 */      3121,      2501,      1991,      1586,      1277,
 /*   0 */      1024,       820,       655,       526,       423,
 /*   5 */       335,       272,       215,       172,       137,
 /*  10 */       110,        87,        70,        56,        45,
 /*  15 */        36,        29,        23,        18,        15,
};

static inline struct rq *cpu_rq(int cpu)
{
	return &runqueues[cpu];
}

static void set_load_weight(struct task_struct *p)
{
	int prio = p->static_prio - 100;

	if (p->policy == SCHED_IDLE) {
		p->se.load.weight = 3;
		p->se.load.inv_weight = 1431655765;
		return;
	}
	p->se.load.weight = sched_prio_to_weight[prio];
	p->se.load.inv_weight = 4194304 / sched_prio_to_weight[prio];
}

static void enqueue_task_fair(struct task_struct *p, int flags)
{
	struct rq *rq = cpu_rq(p->on_cpu);

	list_add_tail(&p->tasks, &rq->queue);
	rq->nr_running++;
	p->se.on_rq = 1;
}

static void dequeue_task_fair(struct task_struct *p, int flags)
{
	struct rq *rq = cpu_rq(p->on_cpu);

	list_del(&p->tasks);
	rq->nr_running--;
	p->se.on_rq = 0;
}

static struct task_struct *pick_next_task_fair(int cpu)
{
	struct rq *rq = cpu_rq(cpu);
	struct list_head *pos;
	struct task_struct *best = NULL;

	list_for_each(pos, &rq->queue) {
		struct task_struct *p = container_of(pos, struct task_struct, tasks);

		if (!best || p->se.vruntime < best->se.vruntime)
			best = p;
	}
	return best;
}

/*
 * Called directly from try_to_wake_up() (and inlined there at -O2) and
 * also through fair_sched_class.select_task_rq, so it has an out-of-line
 * copy as well.
 */
static int select_task_rq_fair(struct task_struct *p, int prev_cpu, int flags)
{
	int cpu, best = prev_cpu;
	unsigned int min = cpu_rq(prev_cpu)->nr_running;

	for (cpu = 0; cpu < p->nr_cpus_allowed && cpu < NR_CPUS; cpu++) {
		if (cpu_rq(cpu)->nr_running < min) {
			min = cpu_rq(cpu)->nr_running;
			best = cpu;
		}
	}
	return best;
}

const struct sched_class fair_sched_class = {
	.name			= "fair",
	.enqueue_task		= enqueue_task_fair,
	.dequeue_task		= dequeue_task_fair,
	.pick_next_task		= pick_next_task_fair,
	.select_task_rq		= select_task_rq_fair,
};

/* Always called with the same @wake_flags, so GCC may clone it (.constprop). */
static noinline int ttwu_do_activate(struct rq *rq, struct task_struct *p, int wake_flags)
{
	p->sched_class->enqueue_task(p, wake_flags);
	WRITE_ONCE(p->__state, TASK_RUNNING);
	if (wake_flags & 0x4)
		p->sched_migrated = 1;
	return rq->nr_running;
}

static int try_to_wake_up(struct task_struct *p, unsigned int state, int wake_flags)
{
	int cpu;

	if (!(READ_ONCE(p->__state) & state))
		return 0;
	if (p->se.on_rq)
		return 0;
	cpu = select_task_rq_fair(p, p->on_cpu, wake_flags);
	p->on_cpu = cpu;
	p->sched_contributes_to_load = !!(state & TASK_UNINTERRUPTIBLE);
	ttwu_do_activate(cpu_rq(cpu), p, 0x8);
	return 1;
}

int wake_up_process(struct task_struct *p)
{
	return try_to_wake_up(p, TASK_INTERRUPTIBLE | TASK_UNINTERRUPTIBLE, 0);
}

int wake_up_state(struct task_struct *p, unsigned int state)
{
	return try_to_wake_up(p, state, 0);
}

int sched_fork(unsigned long clone_flags, struct task_struct *p)
{
	p->__state = TASK_RUNNING;
	p->prio = current->prio;
	p->se.on_rq = 0;
	p->se.exec_start = 0;
	p->se.sum_exec_runtime = 0;
	p->se.vruntime = 0;

	if (unlikely(p->sched_reset_on_fork)) {
		if (p->policy == SCHED_FIFO || p->policy == SCHED_RR) {
			p->policy = SCHED_NORMAL;
			p->static_prio = 120;
		}
		p->prio = p->static_prio;
		set_load_weight(p);
		p->sched_reset_on_fork = 0;
	}
	p->sched_class = &fair_sched_class;
	p->on_cpu = 0;
	return 0;
}

static noinline void update_curr(struct rq *rq, struct task_struct *curr, u64 now)
{
	u64 delta = now - curr->se.exec_start;

	if ((s64)delta <= 0)
		return;
	curr->se.exec_start = now;
	curr->se.sum_exec_runtime += delta;
	curr->se.vruntime += delta * 1024 / curr->se.load.weight;
}

/*
 * The long one: a toy __schedule() with loops, a switch on the
 * previous task's state and a few early exits.
 */
void __schedule(unsigned int sched_mode)
{
	struct task_struct *prev, *next;
	struct rq *rq;
	int cpu, i, nr_idle = 0;
	unsigned long switch_count = 0;
	unsigned int prev_state;

	cpu = 0;
	rq = cpu_rq(cpu);
	prev = rq->curr;
	if (!prev)
		prev = &init_task;

	rq->clock += 1000;
	update_curr(rq, prev, rq->clock);

	prev_state = READ_ONCE(prev->__state);
	if (!(sched_mode & 1) && prev_state) {
		switch (prev_state) {
		case TASK_INTERRUPTIBLE:
			if (prev->exit_signal > 0) {
				WRITE_ONCE(prev->__state, TASK_RUNNING);
				break;
			}
			/* fall through */
		case TASK_UNINTERRUPTIBLE:
			prev->sched_contributes_to_load = 1;
			if (prev->se.on_rq)
				prev->sched_class->dequeue_task(prev, 0);
			break;
		case EXIT_DEAD:
		case TASK_DEAD:
			if (prev->se.on_rq)
				prev->sched_class->dequeue_task(prev, 0);
			prev->exit.exit_code = 0;
			break;
		default:
			break;
		}
		switch_count++;
	}

	next = NULL;
	for (i = 0; i < NR_CPUS && !next; i++) {
		struct rq *other = cpu_rq((cpu + i) % NR_CPUS);

		if (!other->nr_running) {
			nr_idle++;
			continue;
		}
		next = fair_sched_class.pick_next_task((cpu + i) % NR_CPUS);
	}
	if (!next)
		next = rq->idle ? rq->idle : &init_task;

	if (likely(prev != next)) {
		rq->nr_switches++;
		rq->curr = next;
		next->se.exec_start = rq->clock;
		WRITE_ONCE(current_task, next);
		switch_count += nr_idle;
	}

	while (switch_count--) {
		if (jiffies & 1)
			break;
		barrier();
	}
}

void schedule(void)
{
	do {
		__schedule(0);
	} while (READ_ONCE(current_task)->flags & 0x8);
}

int task_prio(const struct task_struct *p)
{
	return p->prio - 100;
}
