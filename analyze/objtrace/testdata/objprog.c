/* objprog: objects with a known life for gprobe analyze --object,
 * --objects and --refcount.
 *
 *   objprog N
 *
 * Makes N objects, one after the other. Object i is made by obj_new();
 * its first reference is taken by hold() when i % 3 == 0, by
 * leak_open() when i % 3 == 1 and by leak_dup() when i % 3 == 2; then
 * main takes and drops i+1 more (obj_ref, obj_unref). The references
 * from leak_open() and leak_dup() are never dropped: those objects leak.
 * Once all are made, the held objects drop their first reference and
 * are freed (obj_free) from the last made to the first, so the first
 * object lives longest and later ones have more events.
 * The program prints each object's address, one a line.
 * Built -O0 -g: no call becomes a tail jump, so the return address at
 * a function's entry names its call site.
 */
#include <stdio.h>
#include <stdlib.h>

struct obj {
	long refs;
	long id;
};

__attribute__((noinline)) struct obj *obj_new(long id)
{
	struct obj *o = calloc(1, sizeof(*o));
	o->id = id;
	return o;
}
__attribute__((noinline)) void obj_ref(struct obj *o) { o->refs++; }
__attribute__((noinline)) void obj_unref(struct obj *o) { o->refs--; }
__attribute__((noinline)) void obj_free(struct obj *o) { free(o); }

__attribute__((noinline)) void hold(struct obj *o)
{
	obj_ref(o);
}

__attribute__((noinline)) void leak_open(struct obj *o)
{
	obj_ref(o);
}

__attribute__((noinline)) void leak_dup(struct obj *o)
{
	obj_ref(o);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: objprog N\n");
		return 2;
	}
	long n = atol(argv[1]);
	struct obj **objs = calloc(n, sizeof(*objs));
	for (long i = 0; i < n; i++) {
		struct obj *o = obj_new(i);
		objs[i] = o;
		if (i % 3 == 0)
			hold(o);
		else if (i % 3 == 1)
			leak_open(o);
		else
			leak_dup(o);
		for (long j = 0; j <= i; j++) {
			obj_ref(o);
			obj_unref(o);
		}
	}
	for (long i = n - 1; i >= 0; i--) {
		if (i % 3 == 0) {
			obj_unref(objs[i]);
			obj_free(objs[i]);
		}
	}
	for (long i = 0; i < n; i++)
		printf("%p\n", (void *)objs[i]);
	return 0;
}
