/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_COMPILER_H
#define _LINUX_COMPILER_H

#define __user
#define __init
#define __always_inline	inline __attribute__((__always_inline__))
#define noinline	__attribute__((__noinline__))
#define __noclone	__attribute__((__noclone__))
#define __cold		__attribute__((__cold__))
#define __noreturn	__attribute__((__noreturn__))
#define __must_check	__attribute__((__warn_unused_result__))
#define __maybe_unused	__attribute__((__unused__))
#define __packed	__attribute__((__packed__))

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

#define barrier()	__asm__ __volatile__("" : : : "memory")
#define READ_ONCE(x)	(*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, val)	(*(volatile __typeof__(x) *)&(x) = (val))

#define ARRAY_SIZE(arr)	(sizeof(arr) / sizeof((arr)[0]))
#define NULL		((void *)0)

#endif /* _LINUX_COMPILER_H */
