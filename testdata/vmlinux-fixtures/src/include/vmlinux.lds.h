/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by arch/{x86,arm64}/kernel/vmlinux.lds.S; LOAD_OFFSET comes from there. */
SECTIONS
{
	. = LOAD_OFFSET;
	_text = .;
	.text : {
		_stext = .;
		*(.head.text)
		*(.text.hot .text.hot.*)
		*(.text .text.fixup)
		*(.text.unlikely .text.unlikely.*)
		*(.text.*)
		_etext = .;
	}

	. = ALIGN(0x1000);
	__start_rodata = .;
	.rodata : { *(.rodata .rodata.*) }
	.notes : { *(.note.gnu.build-id) }
	__end_rodata = .;

	. = ALIGN(0x1000);
	.init.data : {
		__start_mcount_loc = .;
		*(__mcount_loc)
		*(__patchable_function_entries)
		__stop_mcount_loc = .;
	}

	. = ALIGN(0x1000);
	_sdata = .;
	.data : { *(.data .data.*) }
	_edata = .;

	. = ALIGN(0x1000);
	.bss : {
		__bss_start = .;
		*(.bss .bss.*)
		*(COMMON)
		__bss_stop = .;
	}
	_end = .;

	/DISCARD/ : {
		*(.eh_frame)
		*(.note.GNU-stack)
		*(.note.gnu.property)
	}
}
