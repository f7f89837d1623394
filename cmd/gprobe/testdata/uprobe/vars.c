/* A user program for the fetch-argument differential tests: structs,
 * unions (named and anonymous), bitfields, arrays, char buffers, nested
 * pointers, enums, a function pointer, a 128-bit value and variables that
 * the optimizer removes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum color { RED, GREEN = 5, BLUE };

struct flags {
	unsigned int ready : 1;
	unsigned int mode : 3;
	signed int delta : 5;
	unsigned int big : 20;
	unsigned char tail : 2;
};

struct inner {
	long id;
	char label[8];
	const char *owner;
};

struct node {
	int key;
	struct flags fl;
	union {
		int ival;
		float fval;
	};
	union {
		long raw;
		struct inner *ip;
	} u;
	struct inner in;
	struct inner *ptr;
	struct node **children;
	short hist[4];
	enum color color;
	int (*cb)(int);
	unsigned __int128 wide;
	char name[24];
};

struct node *global_root;
static int counter;
const char *banner = "vars";

static int square(int x) { return x * x; }

__attribute__((noinline)) long visit(struct node *n, int depth, const char *tag)
{
	long sum = n->key + depth;
	char local[12];

	strncpy(local, tag, sizeof(local) - 1);
	local[sizeof(local) - 1] = 0;
	if (n->fl.ready && n->ptr)
		sum += n->ptr->id + n->ptr->label[0];
	if (n->children && n->children[0] && depth < 3)
		sum += visit(n->children[0], depth + 1, local);
	sum += n->hist[depth & 3] + n->color + n->cb(depth);
	counter++;
	return sum + (long)n->wide;
}

__attribute__((noinline)) int by_value(struct inner in, struct flags fl, unsigned char c)
{
	int unused = in.label[1] * 3; /* optimized out at -O2 */

	(void)unused;
	return (int)in.id + fl.mode + fl.delta + c;
}

__attribute__((noinline)) void fill(struct node *n, int key, struct inner *ip)
{
	memset(n, 0, sizeof(*n));
	n->key = key;
	n->fl.ready = 1;
	n->fl.mode = key & 7;
	n->fl.delta = -3;
	n->fl.big = key * 1000;
	n->ival = key;
	n->u.ip = ip;
	n->ptr = ip;
	n->hist[key & 3] = (short)key;
	n->color = BLUE;
	n->cb = square;
	n->wide = (unsigned __int128)key << 70;
	snprintf(n->name, sizeof(n->name), "node-%d", key);
}

int main(int argc, char **argv)
{
	struct inner in = { .id = 7, .label = "lbl", .owner = "me" };
	struct node a, b;
	struct node *kids[1] = { &b };
	long r;

	fill(&a, argc, &in);
	fill(&b, argc + 1, &in);
	a.children = kids;
	global_root = &a;
	r = visit(&a, 0, argc > 1 ? argv[1] : banner);
	r += by_value(in, a.fl, (unsigned char)argc);
	printf("%ld %d\n", r, counter);
	return 0;
}
