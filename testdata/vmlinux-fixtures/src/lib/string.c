// SPDX-License-Identifier: GPL-2.0
/*
 *  lib/string.c -- the few string routines GCC and the toy kernel need.
 */
#include <linux/types.h>
#include <linux/sched.h>
#include <linux/string.h>

void *memcpy(void *dest, const void *src, size_t count)
{
	char *tmp = dest;
	const char *s = src;

	while (count--) {
		*tmp++ = *s++;
		barrier();
	}
	return dest;
}

void *memset(void *s, int c, size_t count)
{
	char *xs = s;

	while (count--) {
		*xs++ = c;
		barrier();
	}
	return s;
}

size_t strlen(const char *s)
{
	const char *sc;

	for (sc = s; *sc != '\0'; ++sc)
		/* nothing */;
	return sc - s;
}

size_t strnlen(const char *s, size_t count)
{
	const char *sc;

	for (sc = s; count-- && *sc != '\0'; ++sc)
		/* nothing */;
	return sc - s;
}

long strncpy_from_user(char *dst, const char __user *src, long count)
{
	long res = 0;

	if (count <= 0)
		return 0;
	while (res < count) {
		char c = src[res];

		dst[res] = c;
		if (!c)
			return res;
		res++;
	}
	return res;
}

char *strscpy_comm(char *dst, const char *src)
{
	int i;

	for (i = 0; i < TASK_COMM_LEN - 1 && src[i]; i++)
		dst[i] = src[i];
	for (; i < TASK_COMM_LEN; i++)
		dst[i] = '\0';
	return dst;
}
