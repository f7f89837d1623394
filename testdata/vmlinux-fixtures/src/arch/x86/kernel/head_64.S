/* SPDX-License-Identifier: GPL-2.0 */
/* Entry point and the ftrace trampoline target. */
	.section .head.text, "ax"
	.globl	_start
	.type	_start, @function
_start:
	call	start_kernel
1:	hlt
	jmp	1b
	.size	_start, . - _start

	.text
	.globl	__fentry__
	.type	__fentry__, @function
__fentry__:
	ret
	.size	__fentry__, . - __fentry__

	.section .note.GNU-stack, "", @progbits
