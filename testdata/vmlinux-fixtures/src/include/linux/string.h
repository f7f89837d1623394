/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_STRING_H
#define _LINUX_STRING_H

#include <linux/types.h>

extern void *memcpy(void *dest, const void *src, size_t n);
extern void *memset(void *s, int c, size_t n);
extern size_t strlen(const char *s);
extern size_t strnlen(const char *s, size_t count);
extern long strncpy_from_user(char *dst, const char __user *src, long count);
extern char *strscpy_comm(char *dst, const char *src);

#endif /* _LINUX_STRING_H */
