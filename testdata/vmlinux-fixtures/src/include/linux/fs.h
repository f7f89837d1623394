/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_FS_H
#define _LINUX_FS_H

#include <linux/types.h>
#include <linux/list.h>

#define FMODE_READ		((fmode_t)0x1)
#define FMODE_WRITE		((fmode_t)0x2)
#define FMODE_LSEEK		((fmode_t)0x4)
#define FMODE_PREAD		((fmode_t)0x8)
#define FMODE_CAN_READ		((fmode_t)0x20000)
#define FMODE_CAN_WRITE		((fmode_t)0x40000)
#define FMODE_STREAM		((fmode_t)0x200000)

#define MAX_RW_COUNT		(0x7ffff000UL)
#define DNAME_INLINE_LEN	32

struct qstr {
	union {
		struct {
			u32 hash;
			u32 len;
		};
		u64 hash_len;
	};
	const unsigned char *name;
};

struct super_block {
	unsigned long		s_blocksize;
	unsigned long		s_flags;
	const char		*s_id;
	struct list_head	s_inodes;
};

struct inode {
	umode_t			i_mode;
	unsigned short		i_opflags;
	unsigned int		i_flags;
	unsigned long		i_ino;
	loff_t			i_size;
	struct super_block	*i_sb;
	atomic_t		i_count;
	struct list_head	i_sb_list;
};

struct dentry {
	unsigned int		d_flags;
	struct dentry		*d_parent;
	struct qstr		d_name;
	struct inode		*d_inode;
	unsigned char		d_iname[DNAME_INLINE_LEN];
};

struct vfsmount {
	struct dentry		*mnt_root;
	struct super_block	*mnt_sb;
	int			mnt_flags;
};

struct path {
	struct vfsmount		*mnt;
	struct dentry		*dentry;
};

struct file;

struct kiocb {
	struct file		*ki_filp;
	loff_t			ki_pos;
	int			ki_flags;
};

struct iov_iter {
	u8			iter_type;
	bool			nofault;
	size_t			count;
	void __user		*ubuf;
};

struct file_operations {
	loff_t	(*llseek)(struct file *, loff_t, int);
	ssize_t	(*read)(struct file *, char __user *, size_t, loff_t *);
	ssize_t	(*write)(struct file *, const char __user *, size_t, loff_t *);
	ssize_t	(*read_iter)(struct kiocb *, struct iov_iter *);
	ssize_t	(*write_iter)(struct kiocb *, struct iov_iter *);
	int	(*open)(struct inode *, struct file *);
	int	(*release)(struct inode *, struct file *);
};

struct file {
	fmode_t				f_mode;
	struct path			f_path;
	struct inode			*f_inode;
	loff_t				f_pos;
	const struct file_operations	*f_op;
	unsigned int			f_flags;
	atomic_t			f_count;
	void				*private_data;
};

struct filename {
	const char		*name;
	const char __user	*uptr;
	int			refcnt;
	const char		iname[];
};

struct open_flags {
	int open_flag;
	umode_t mode;
	int acc_mode;
	int intent;
	int lookup_flags;
};

struct open_how {
	u64 flags;
	u64 mode;
	u64 resolve;
};

static inline struct inode *file_inode(const struct file *f)
{
	return f->f_inode;
}

static inline loff_t i_size_read(const struct inode *inode)
{
	return READ_ONCE(inode->i_size);
}

/* A header function with real code in it, inlined into several CUs. */
static inline unsigned int full_name_hash(const unsigned char *name, unsigned int len)
{
	unsigned long hash = 0;

	while (len--) {
		hash = (hash + (*name++ << 4)) + (hash >> 4);
		hash *= 11;
	}
	return (unsigned int)hash;
}

extern struct filename *getname(const char __user *filename);
extern void putname(struct filename *name);
extern struct file *do_filp_open(int dfd, struct filename *pathname,
				 const struct open_flags *op);
extern ssize_t vfs_read(struct file *file, char __user *buf, size_t count, loff_t *pos);
extern ssize_t vfs_write(struct file *file, const char __user *buf, size_t count, loff_t *pos);
extern struct file *fget(unsigned int fd);
extern void fput(struct file *file);
extern int get_unused_fd_flags(unsigned int flags);
extern void fd_install(unsigned int fd, struct file *file);
extern void put_unused_fd(unsigned int fd);

extern struct file *fd_table[64];

#endif /* _LINUX_FS_H */
