/* SPDX-License-Identifier: GPL-2.0-only */
/* Entry point. */
	.section .head.text, "ax"
	.globl	_start
	.type	_start, %function
_start:
	bl	start_kernel
1:	wfi
	b	1b
	.size	_start, . - _start

	.section .note.GNU-stack, "", %progbits
