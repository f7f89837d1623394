/* objprog: objects with a known life for gprobe analyze --object,
 * --objects and --refcount.
 *
 *   objprog N
 *
 * Makes N objects one after the other. Object i is created with
 * obj_new(), referenced with obj_ref() and dropped with obj_unref() as
 * many times as its index says (i+1 pairs, so later objects have more
 * events); then every object but the leaked ones is released by
 * obj_unref() to zero and freed in reverse order of creation (the first
 * object lives longest). Objects with i % 3 == 1 keep one reference
 * taken in leak_open() (leaked), objects with i % 3 == 2 one taken and
 * dropped again in keep_open(). Built -O0 -g: no call becomes a tail
 * jump, so the return address at entry names the call site.
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
	o->refs = 1;
	return o;
}
__attribute__((noinline)) void obj_ref(struct obj *o) { o->refs++; }
__attribute__((noinline)) void obj_unref(struct obj *o) { o->refs--; }
__attribute__((noinline)) void obj_free(struct obj *o) { free(o); }

__attribute__((noinline)) void leak_open(struct obj *o)
{
	obj_ref(o); /* never dropped */
}

__attribute__((noinline)) void keep_open(struct obj *o)
{
	obj_ref(o);
	obj_unref(o);
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
		objs[i] = obj_new(i);
		for (long j = 0; j <= i; j++) {
			obj_ref(objs[i]);
			obj_unref(objs[i]);
		}
		if (i % 3 == 1)
			leak_open(objs[i]);
		else if (i % 3 == 2)
			keep_open(objs[i]);
	}
	for (long i = n - 1; i >= 0; i--) {
		obj_unref(objs[i]);
		if (i % 3 != 1)
			obj_free(objs[i]);
	}
	for (long i = 0; i < n; i++)
		printf("%p\n", (void *)objs[i]);
	return 0;
}
