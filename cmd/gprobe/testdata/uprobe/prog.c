/* A user program for the uprobe differential tests: loops, an inlined
 * helper, a noinline worker, a linked list, and a recursive walk. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct item {
	int key;
	char name[16];
	struct item *next;
};

static struct item *head;

__attribute__((noinline)) int work(int n, const char *s)
{
	int total = 0;

	for (int i = 0; i < n; i++) {
		total += s[i % 4];
		if (total > 1000)
			total -= 7;
	}
	return total;
}

static inline int twice(int x)
{
	return x * 2;
}

int add_item(int key)
{
	struct item *it = malloc(sizeof(*it));

	if (!it)
		return -1;
	it->key = twice(key);
	snprintf(it->name, sizeof(it->name), "item%d", key);
	it->next = head;
	head = it;
	return it->key;
}

__attribute__((noinline)) int drop_item(void)
{
	struct item *it = head;

	if (!it)
		return 0;
	head = it->next;
	free(it);
	return 1;
}

__attribute__((noinline)) int walk(struct item *it, int depth)
{
	if (!it)
		return depth;
	return walk(it->next, depth + 1);
}

int main(int argc, char **argv)
{
	int r = 0;

	for (int i = 0; i < argc * 3; i++)
		r += work(i, "abcd") + add_item(i);
	r += walk(head, 0);
	while (drop_item())
		r--;
	printf("%d\n", r);
	return 0;
}
