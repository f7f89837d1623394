// SPDX-License-Identifier: GPL-2.0-only
/*
 *  fs/open.c -- a tiny, kernel-shaped model of the open(2) path.
 */
#include <linux/types.h>
#include <linux/err.h>
#include <linux/fcntl.h>
#include <linux/fs.h>
#include <linux/sched.h>
#include <linux/string.h>

#define O_PATH_FLAGS	(O_DIRECTORY | O_NOFOLLOW | O_PATH | O_CLOEXEC)
#define WILL_CREATE(flags)	(flags & (O_CREAT | __O_TMPFILE))
#define ACC_MODE(x)	("\004\002\006\006"[(x)&O_ACCMODE])

struct file *fd_table[64];
unsigned long open_files_count;

/* Same name as the static helper in fs/read_write.c. */
static noinline __noclone void account_io(struct file *file, long bytes)
{
	if (bytes > 0)
		open_files_count += bytes;
	barrier();
}

int get_unused_fd_flags(unsigned int flags)
{
	unsigned int fd;

	for (fd = 3; fd < ARRAY_SIZE(fd_table); fd++) {
		if (!fd_table[fd])
			return fd;
	}
	if (flags & O_CLOEXEC)
		return -EMFILE;
	return -EMFILE;
}

void put_unused_fd(unsigned int fd)
{
	if (fd < ARRAY_SIZE(fd_table))
		fd_table[fd] = NULL;
}

void fd_install(unsigned int fd, struct file *file)
{
	if (unlikely(fd >= ARRAY_SIZE(fd_table))) {
		warn_slowpath_fmt("fs/open.c", __LINE__, "bad fd");
		return;
	}
	WRITE_ONCE(fd_table[fd], file);
	account_io(file, 1);
}

struct open_how build_open_how(int flags, umode_t mode)
{
	struct open_how how = {
		.flags = flags & VALID_OPEN_FLAGS,
		.mode = mode & S_IALLUGO,
	};

	/* O_PATH beats everything else. */
	if (how.flags & O_PATH)
		how.flags &= O_PATH_FLAGS;
	/* Modes should only be set for create-like flags. */
	if (!WILL_CREATE(how.flags))
		how.mode = 0;
	return how;
}

int build_open_flags(const struct open_how *how, struct open_flags *op)
{
	u64 flags = how->flags;
	int lookup_flags = 0;
	int acc_mode = ACC_MODE(flags);

	if (flags & ~VALID_OPEN_FLAGS)
		return -EINVAL;

	if (WILL_CREATE(flags)) {
		if (how->mode & ~S_IALLUGO)
			return -EINVAL;
		op->mode = how->mode | 0100000;
	} else {
		op->mode = 0;
	}

	switch (flags & O_ACCMODE) {
	case O_RDONLY:
		if (flags & O_TRUNC)
			acc_mode |= MAY_WRITE;
		break;
	case O_WRONLY:
		acc_mode = MAY_WRITE;
		break;
	case O_RDWR:
		acc_mode = MAY_READ | MAY_WRITE;
		break;
	default:
		return -EINVAL;
	}

	if (flags & O_APPEND)
		acc_mode |= MAY_APPEND;
	op->open_flag = flags;
	op->acc_mode = acc_mode;
	op->intent = flags & O_PATH ? 0 : LOOKUP_OPEN;

	if (flags & O_CREAT) {
		op->intent |= LOOKUP_CREATE;
		if (flags & O_EXCL)
			op->intent |= LOOKUP_EXCL;
	}
	if (flags & O_DIRECTORY)
		lookup_flags |= LOOKUP_DIRECTORY;
	if (!(flags & O_NOFOLLOW))
		lookup_flags |= LOOKUP_FOLLOW;
	op->lookup_flags = lookup_flags;
	return 0;
}

static long do_sys_openat2(int dfd, const char __user *filename,
			   struct open_how *how)
{
	struct open_flags op;
	int fd = build_open_flags(how, &op);
	struct filename *tmp;

	if (fd)
		return fd;

	tmp = getname(filename);
	if (IS_ERR(tmp))
		return PTR_ERR(tmp);

	fd = get_unused_fd_flags(how->flags);
	if (fd >= 0) {
		struct file *f = do_filp_open(dfd, tmp, &op);
		if (IS_ERR(f)) {
			put_unused_fd(fd);
			fd = PTR_ERR(f);
		} else {
			fd_install(fd, f);
		}
	}
	putname(tmp);
	return fd;
}

long do_sys_open(int dfd, const char __user *filename, int flags, umode_t mode)
{
	struct open_how how = build_open_how(flags, mode);
	return do_sys_openat2(dfd, filename, &how);
}

long sys_open(const char __user *filename, int flags, umode_t mode)
{
	return do_sys_open(AT_FDCWD, filename, flags | O_LARGEFILE, mode);
}

long sys_openat(int dfd, const char __user *filename, int flags, umode_t mode)
{
	return do_sys_open(dfd, filename, flags | O_LARGEFILE, mode);
}

long sys_openat2(int dfd, const char __user *filename,
		 struct open_how __user *how, size_t usize)
{
	struct open_how tmp;

	if (usize < sizeof(tmp))
		return -EINVAL;
	memcpy(&tmp, how, sizeof(tmp));
	if (tmp.flags & O_PATH)
		tmp.mode = 0;
	return do_sys_openat2(dfd, filename, &tmp);
}

int close_fd(unsigned int fd)
{
	struct file *file;

	if (fd >= ARRAY_SIZE(fd_table))
		return -EBADF;
	file = fd_table[fd];
	if (!file)
		return -EBADF;
	fd_table[fd] = NULL;
	fput(file);
	return 0;
}
