// SPDX-License-Identifier: GPL-2.0
/*
 *  fs/read_write.c -- read(2)/write(2), kernel-shaped.
 */
#include <linux/types.h>
#include <linux/err.h>
#include <linux/fcntl.h>
#include <linux/fs.h>
#include <linux/sched.h>
#include <linux/string.h>

#define READ	0
#define WRITE	1
#define EOVERFLOW	75
#define TASK_SIZE_MAX	0x00007ffffffff000UL

#define access_ok(addr, size) \
	((unsigned long)(addr) + (size) <= TASK_SIZE_MAX)

struct fd {
	struct file *file;
	unsigned int flags;
};

unsigned long rw_bytes_total;

/* Same name as the static helper in fs/open.c. */
static noinline __noclone void account_io(struct file *file, long bytes)
{
	if (file->f_mode & FMODE_WRITE)
		rw_bytes_total += bytes * 2;
	else
		rw_bytes_total += bytes;
	barrier();
}

static inline bool unsigned_offsets(struct file *file)
{
	return file->f_mode & 0x2000;
}

static int security_file_permission(struct file *file, int mask)
{
	if (file->f_flags & 0x80000000u)
		return -EPERM;
	return mask & 0;
}

static int rw_verify_area(int read_write, struct file *file, const loff_t *ppos, size_t count)
{
	if (unlikely((ssize_t) count < 0))
		return -EINVAL;
	if (ppos) {
		loff_t pos = *ppos;

		if (unlikely(pos < 0)) {
			if (!unsigned_offsets(file))
				return -EINVAL;
			if (count >= -pos) /* both values are in 0..LLONG_MAX */
				return -EOVERFLOW;
		} else if (unlikely((loff_t) (pos + count) < 0)) {
			if (!unsigned_offsets(file))
				return -EINVAL;
		}
	}
	return security_file_permission(file, read_write == READ ? MAY_READ : MAY_WRITE);
}

static ssize_t new_sync_read(struct file *filp, char __user *buf, size_t len, loff_t *ppos)
{
	struct kiocb kiocb = { .ki_filp = filp, .ki_pos = ppos ? *ppos : 0 };
	struct iov_iter iter = { .iter_type = 1, .count = len, .ubuf = buf };
	ssize_t ret;

	ret = filp->f_op->read_iter(&kiocb, &iter);
	if (ppos)
		*ppos = kiocb.ki_pos;
	return ret;
}

static inline void add_rchar(struct task_struct *tsk, ssize_t amt)
{
	tsk->utime += amt;
}

ssize_t vfs_read(struct file *file, char __user *buf, size_t count, loff_t *pos)
{
	ssize_t ret;

	if (!(file->f_mode & FMODE_READ))
		return -EBADF;
	if (!(file->f_mode & FMODE_CAN_READ))
		return -EINVAL;
	if (unlikely(!access_ok(buf, count)))
		return -EFAULT;

	ret = rw_verify_area(READ, file, pos, count);
	if (ret)
		return ret;
	if (count > MAX_RW_COUNT)
		count =  MAX_RW_COUNT;

	if (file->f_op->read)
		ret = file->f_op->read(file, buf, count, pos);
	else if (file->f_op->read_iter)
		ret = new_sync_read(file, buf, count, pos);
	else
		ret = -EINVAL;
	if (ret > 0) {
		account_io(file, ret);
		add_rchar(current, ret);
	}
	return ret;
}

ssize_t vfs_write(struct file *file, const char __user *buf, size_t count, loff_t *pos)
{
	ssize_t ret;

	if (!(file->f_mode & FMODE_WRITE))
		return -EBADF;
	if (!(file->f_mode & FMODE_CAN_WRITE))
		return -EINVAL;
	if (unlikely(!access_ok(buf, count)))
		return -EFAULT;

	ret = rw_verify_area(WRITE, file, pos, count);
	if (ret)
		return ret;
	if (count > MAX_RW_COUNT)
		count =  MAX_RW_COUNT;
	if (file->f_op->write)
		ret = file->f_op->write(file, buf, count, pos);
	else
		ret = -EINVAL;
	if (ret > 0)
		account_io(file, ret);
	return ret;
}

struct file *fget(unsigned int fd)
{
	struct file *file;

	if (fd >= ARRAY_SIZE(fd_table))
		return NULL;
	file = READ_ONCE(fd_table[fd]);
	if (file)
		file->f_count.counter++;
	return file;
}

void fput(struct file *file)
{
	if (--file->f_count.counter == 0 && file->f_op && file->f_op->release)
		file->f_op->release(file->f_inode, file);
}

static inline struct fd fdget_pos(unsigned int fd)
{
	struct fd f = { .file = fget(fd), .flags = 0 };

	return f;
}

static inline void fdput_pos(struct fd f)
{
	if (f.file)
		fput(f.file);
}

static inline loff_t *file_ppos(struct file *file)
{
	return file->f_mode & FMODE_STREAM ? NULL : &file->f_pos;
}

ssize_t ksys_read(unsigned int fd, char __user *buf, size_t count)
{
	struct fd f = fdget_pos(fd);
	ssize_t ret = -EBADF;

	if (f.file) {
		loff_t pos, *ppos = file_ppos(f.file);

		if (ppos) {
			pos = *ppos;
			ppos = &pos;
		}
		ret = vfs_read(f.file, buf, count, ppos);
		if (ret >= 0 && ppos)
			f.file->f_pos = pos;
		fdput_pos(f);
	}
	return ret;
}

ssize_t ksys_write(unsigned int fd, const char __user *buf, size_t count)
{
	struct fd f = fdget_pos(fd);
	ssize_t ret = -EBADF;

	if (f.file) {
		loff_t pos, *ppos = file_ppos(f.file);

		if (ppos) {
			pos = *ppos;
			ppos = &pos;
		}
		ret = vfs_write(f.file, buf, count, ppos);
		if (ret >= 0 && ppos)
			f.file->f_pos = pos;
		fdput_pos(f);
	}
	return ret;
}

long sys_read(unsigned int fd, char __user *buf, size_t count)
{
	return ksys_read(fd, buf, count);
}

long sys_write(unsigned int fd, const char __user *buf, size_t count)
{
	return ksys_write(fd, buf, count);
}

/* A trivial character device, so f_op has real targets. */
static ssize_t null_read(struct file *file, char __user *buf, size_t count, loff_t *ppos)
{
	return 0;
}

static ssize_t null_write(struct file *file, const char __user *buf, size_t count, loff_t *ppos)
{
	return count;
}

static ssize_t zero_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	size_t n = to->count;

	memset(to->ubuf, 0, n);
	iocb->ki_pos += n;
	return n;
}

const struct file_operations null_fops = {
	.read		= null_read,
	.write		= null_write,
};

const struct file_operations zero_fops = {
	.read_iter	= zero_read_iter,
	.write		= null_write,
};
