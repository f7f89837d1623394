/* refprog: a program with known behaviour for gprobe analyze's tests.
 *
 *   refprog CALLS OBJECTS LEAKED DOUBLE
 *
 * work() is called CALLS times from main with recursion depth i%3, so it
 * runs sum((i%3)+1) times in all. OBJECTS objects each take references
 * with obj_get() and drop them with obj_put():
 *   - the first LEAKED keep one reference (first reference taken in
 *     take_a() for even i, take_b() for odd i: two leak sites);
 *   - the next DOUBLE are released twice (one underflow each);
 *   - the rest are balanced.
 * Objects are never freed, so no address is reused. Built -O0 so that no
 * call becomes a tail jump and the return address names the call site.
 */
#include <stdio.h>
#include <stdlib.h>

struct obj {
	long refs;
	long id;
};

__attribute__((noinline)) void obj_get(struct obj *o) { o->refs++; }
__attribute__((noinline)) void obj_put(struct obj *o) { o->refs--; }
__attribute__((noinline)) void take_a(struct obj *o) { obj_get(o); }
__attribute__((noinline)) void take_b(struct obj *o) { obj_get(o); }

__attribute__((noinline)) long work(int depth)
{
	volatile long x = 0;
	for (int i = 0; i < 20 * (depth + 1); i++)
		x += i;
	if (depth > 0)
		x += work(depth - 1);
	return x;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: refprog CALLS OBJECTS LEAKED DOUBLE\n");
		return 2;
	}
	long calls = atol(argv[1]), objs = atol(argv[2]), leaked = atol(argv[3]), dbl = atol(argv[4]);
	long sum = 0;
	for (long i = 0; i < calls; i++)
		sum += work(i % 3);
	for (long i = 0; i < objs; i++) {
		struct obj *o = calloc(1, sizeof(*o));
		o->id = i;
		if (i < leaked) {
			if (i % 2 == 0)
				take_a(o);
			else
				take_b(o);
			obj_get(o);
			obj_put(o);
		} else if (i < leaked + dbl) {
			take_a(o);
			obj_put(o);
			obj_put(o);
		} else {
			take_a(o);
			obj_get(o);
			obj_put(o);
			obj_put(o);
		}
	}
	printf("%ld\n", sum);
	return 0;
}
