/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_ERR_H
#define _LINUX_ERR_H

#include <linux/types.h>

#define MAX_ERRNO	4095

#define EPERM		1
#define ENOENT		2
#define ESRCH		3
#define EINTR		4
#define EBADF		9
#define EAGAIN		11
#define ENOMEM		12
#define EFAULT		14
#define EINVAL		22
#define EMFILE		24
#define ENAMETOOLONG	36

#define IS_ERR_VALUE(x) unlikely((unsigned long)(void *)(x) >= (unsigned long)-MAX_ERRNO)

static inline void * __must_check ERR_PTR(long error)
{
	return (void *) error;
}

static inline long __must_check PTR_ERR(const void *ptr)
{
	return (long) ptr;
}

static inline bool __must_check IS_ERR(const void *ptr)
{
	return IS_ERR_VALUE((unsigned long)ptr);
}

static inline bool __must_check IS_ERR_OR_NULL(const void *ptr)
{
	return unlikely(!ptr) || IS_ERR_VALUE((unsigned long)ptr);
}

#endif /* _LINUX_ERR_H */
