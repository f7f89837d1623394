/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_TYPES_H
#define _LINUX_TYPES_H

#include <linux/compiler.h>

typedef unsigned char		u8;
typedef unsigned short		u16;
typedef unsigned int		u32;
typedef unsigned long long	u64;
typedef signed char		s8;
typedef short			s16;
typedef int			s32;
typedef long long		s64;

typedef unsigned long		size_t;
typedef long			ssize_t;
typedef long long		loff_t;
typedef unsigned short		umode_t;
typedef unsigned int		fmode_t;
typedef int			pid_t;
typedef unsigned int		gfp_t;
typedef _Bool			bool;

#define true	1
#define false	0

struct list_head {
	struct list_head *next, *prev;
};

typedef struct {
	int counter;
} atomic_t;

#endif /* _LINUX_TYPES_H */
