// SPDX-License-Identifier: GPL-2.0-only
/*
 *  mm/mmap.c -- do_mmap() has nine arguments, so some go on the stack.
 */
#include <linux/types.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/sched.h>

#define PAGE_SHIFT	12
#define PAGE_SIZE	(1UL << PAGE_SHIFT)
#define PAGE_MASK	(~(PAGE_SIZE - 1))
#define PROT_READ	0x1
#define PROT_WRITE	0x2
#define PROT_EXEC	0x4
#define MAP_SHARED	0x01
#define MAP_PRIVATE	0x02
#define MAP_FIXED	0x10
#define MAP_ANONYMOUS	0x20
#define MAP_POPULATE	0x8000
#define VM_READ		0x00000001
#define VM_WRITE	0x00000002
#define VM_EXEC		0x00000004
#define VM_SHARED	0x00000008
#define TASK_SIZE	0x00007ffffffff000UL

typedef unsigned long vm_flags_t;

unsigned long mmap_min_addr = 65536;
unsigned long mmap_base_addr = 0x7f0000000000UL;

static inline unsigned long calc_vm_prot_bits(unsigned long prot)
{
	return (prot & PROT_READ ? VM_READ : 0) |
	       (prot & PROT_WRITE ? VM_WRITE : 0) |
	       (prot & PROT_EXEC ? VM_EXEC : 0);
}

static noinline unsigned long get_unmapped_area(struct file *file, unsigned long addr,
						unsigned long len, unsigned long pgoff,
						unsigned long flags)
{
	if (flags & MAP_FIXED)
		return addr;
	if (addr && addr >= mmap_min_addr && addr + len <= TASK_SIZE)
		return addr;
	mmap_base_addr -= len;
	return mmap_base_addr;
}

unsigned long do_mmap(struct file *file, unsigned long addr,
		      unsigned long len, unsigned long prot,
		      unsigned long flags, vm_flags_t vm_flags,
		      unsigned long pgoff, unsigned long *populate,
		      struct list_head *uf)
{
	struct mm_struct *mm = current->mm;

	*populate = 0;
	if (!len)
		return -EINVAL;
	len = (len + PAGE_SIZE - 1) & PAGE_MASK;
	if (!len || len > TASK_SIZE)
		return -ENOMEM;
	if ((pgoff + (len >> PAGE_SHIFT)) < pgoff)
		return -EINVAL;
	if (mm && mm->map_count > 65530)
		return -ENOMEM;

	addr = get_unmapped_area(file, addr, len, pgoff, flags);
	if (IS_ERR_VALUE(addr))
		return addr;

	vm_flags |= calc_vm_prot_bits(prot);
	if (file) {
		switch (flags & 0x3) {
		case MAP_SHARED:
			vm_flags |= VM_SHARED;
			break;
		case MAP_PRIVATE:
			break;
		default:
			return -EINVAL;
		}
	}
	if (mm)
		mm->map_count++;
	if ((flags & MAP_POPULATE) && (vm_flags & VM_READ))
		*populate = len;
	if (uf)
		INIT_LIST_HEAD(uf);
	return addr;
}

unsigned long ksys_mmap_pgoff(unsigned long addr, unsigned long len,
			      unsigned long prot, unsigned long flags,
			      unsigned long fd, unsigned long pgoff)
{
	struct file *file = NULL;
	unsigned long populate, ret;

	if (!(flags & MAP_ANONYMOUS)) {
		file = fget(fd);
		if (!file)
			return -EBADF;
	}
	ret = do_mmap(file, addr, len, prot, flags, 0, pgoff, &populate, NULL);
	if (file)
		fput(file);
	return ret;
}
