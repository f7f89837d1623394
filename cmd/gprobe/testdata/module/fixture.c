/*
 * A kernel-module-shaped object for the -m differential tests: code in
 * .text, .text.unlikely (cold), .init.text and .exit.text, an inlined
 * helper, a static clone candidate, and the struct module name perf reads
 * from .gnu.linkonce.this_module. Compiled during the test as an ET_REL
 * object (what a .ko is), never linked.
 */
struct module_name {
	char pad[24];
	char name[56];
};
__attribute__((section(".gnu.linkonce.this_module"), used))
static struct module_name this_module = { .name = "fixture_mod" };

struct item {
	int id;
	long weight;
	struct item *next;
};

static struct item *head;
static int counter;

static inline int weigh(const struct item *it)
{
	int w = it->weight * 3;
	if (w > 100)
		w = 100;
	return w;
}

__attribute__((noinline)) int walk(int limit)
{
	int total = 0;
	for (struct item *it = head; it && limit > 0; it = it->next) {
		total += weigh(it);
		limit--;
	}
	return total + counter;
}

__attribute__((noinline, cold)) int report_error(int code)
{
	counter -= code;
	return -code;
}

__attribute__((noinline)) int add_item(struct item *it)
{
	if (!it)
		return report_error(22);
	it->next = head;
	head = it;
	counter++;
	return weigh(it);
}

__attribute__((section(".init.text"), noinline)) int fixture_init(void)
{
	counter = 1;
	return walk(10);
}

__attribute__((section(".exit.text"), noinline)) void fixture_exit(void)
{
	head = 0;
	counter = 0;
}

int init_module(void) __attribute__((alias("fixture_init")));
void cleanup_module(void) __attribute__((alias("fixture_exit")));
