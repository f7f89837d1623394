/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A kernel-shaped layout: text at the usual x86-64 kernel address, with
 * _text/_stext/_etext, .text.unlikely (GCC's .cold parts) after the main
 * text, and the debug sections left where ld puts them.
 */
#define LOAD_OFFSET	0xffffffff81000000

OUTPUT_FORMAT("elf64-x86-64")
OUTPUT_ARCH(i386:x86-64)
ENTRY(_start)

#include "../../../include/vmlinux.lds.h"
