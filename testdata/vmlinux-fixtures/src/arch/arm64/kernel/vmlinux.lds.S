/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A kernel-shaped layout at arm64's 6.1 KIMAGE_VADDR (48-bit VA).
 */
#define LOAD_OFFSET	0xffff800008000000

OUTPUT_FORMAT("elf64-littleaarch64")
OUTPUT_ARCH(aarch64)
ENTRY(_start)

#include "../../../include/vmlinux.lds.h"
