// SPDX-License-Identifier: GPL-2.0
/*
 *  fs/namei.c -- path name lookup, cut down to a toy.
 */
#include <linux/types.h>
#include <linux/err.h>
#include <linux/fcntl.h>
#include <linux/fs.h>
#include <linux/sched.h>
#include <linux/string.h>

#define PATH_MAX	256
#define NR_NAMES	8
#define NR_DENTRIES	32
#define NR_FILES	16

enum last_type {
	LAST_NORM,
	LAST_ROOT,
	LAST_DOT,
	LAST_DOTDOT,
};

struct nameidata {
	struct path	path;
	struct qstr	last;
	struct path	root;
	struct inode	*inode;
	unsigned int	flags;
	unsigned int	depth;
	enum last_type	last_type;
	const char	*name;
};

static char names_cache[NR_NAMES][sizeof(struct filename) + PATH_MAX];
static unsigned char names_used[NR_NAMES];
static struct dentry dentry_cache[NR_DENTRIES];
static struct file file_pool[NR_FILES];
struct dentry root_dentry;
struct vfsmount root_mnt = { .mnt_root = &root_dentry };

struct filename *getname(const char __user *filename)
{
	struct filename *result;
	long len;
	int i;

	for (i = 0; i < NR_NAMES; i++)
		if (!names_used[i])
			break;
	if (i == NR_NAMES)
		return ERR_PTR(-ENOMEM);
	names_used[i] = 1;
	result = (struct filename *)names_cache[i];
	result->name = (char *)result->iname;
	len = strncpy_from_user((char *)result->iname, filename, PATH_MAX);
	if (unlikely(len < 0)) {
		putname(result);
		return ERR_PTR(len);
	}
	if (unlikely(!len)) {
		putname(result);
		return ERR_PTR(-ENOENT);
	}
	if (unlikely(len == PATH_MAX)) {
		putname(result);
		return ERR_PTR(-ENAMETOOLONG);
	}
	result->refcnt = 1;
	result->uptr = filename;
	return result;
}

void putname(struct filename *name)
{
	int i = ((char *)name - (char *)names_cache) / sizeof(names_cache[0]);

	if (IS_ERR_OR_NULL(name))
		return;
	if (--name->refcnt > 0)
		return;
	names_used[i] = 0;
}

static struct dentry *d_lookup(const struct dentry *parent, const struct qstr *name)
{
	unsigned int i;

	for (i = 0; i < NR_DENTRIES; i++) {
		struct dentry *d = &dentry_cache[i];

		if (d->d_parent != parent || d->d_name.hash != name->hash)
			continue;
		if (d->d_name.len == name->len)
			return d;
	}
	return NULL;
}

static int walk_component(struct nameidata *nd)
{
	struct dentry *d;

	switch (nd->last_type) {
	case LAST_DOT:
		return 0;
	case LAST_DOTDOT:
		nd->path.dentry = nd->path.dentry->d_parent;
		return 0;
	case LAST_ROOT:
		nd->path = nd->root;
		return 0;
	case LAST_NORM:
	default:
		break;
	}
	d = d_lookup(nd->path.dentry, &nd->last);
	if (!d)
		return -ENOENT;
	nd->path.dentry = d;
	nd->inode = d->d_inode;
	return 0;
}

static int link_path_walk(const char *name, struct nameidata *nd)
{
	int err;

	while (*name == '/')
		name++;
	if (!*name)
		return 0;

	for (;;) {
		const unsigned char *s = (const unsigned char *)name;
		unsigned int len = 0;

		while (s[len] && s[len] != '/')
			len++;
		nd->last.name = s;
		nd->last.len = len;
		nd->last.hash = full_name_hash(s, len);
		nd->last_type = LAST_NORM;
		if (len == 1 && s[0] == '.')
			nd->last_type = LAST_DOT;
		else if (len == 2 && s[0] == '.' && s[1] == '.')
			nd->last_type = LAST_DOTDOT;

		name += len;
		while (*name == '/')
			name++;
		if (!*name)
			return 0;
		err = walk_component(nd);
		if (err)
			return err;
		nd->depth++;
	}
}

static int may_open(const struct path *path, int acc_mode, int flag)
{
	struct dentry *dentry = path->dentry;
	struct inode *inode = dentry->d_inode;

	if (!inode)
		return -ENOENT;

	switch (inode->i_mode & 0170000) {
	case 0120000:	/* S_IFLNK */
		return -EINVAL;
	case 0040000:	/* S_IFDIR */
		if (acc_mode & MAY_WRITE)
			return -EINVAL;
		break;
	case 0060000:	/* S_IFBLK */
	case 0020000:	/* S_IFCHR */
		if (flag & O_TRUNC)
			return -EPERM;
		break;
	}
	return 0;
}

static struct file *alloc_empty_file(int flags)
{
	int i;

	for (i = 0; i < NR_FILES; i++) {
		struct file *f = &file_pool[i];

		if (!f->f_count.counter) {
			f->f_count.counter = 1;
			f->f_flags = flags;
			return f;
		}
	}
	return ERR_PTR(-ENOMEM);
}

static struct file *path_openat(struct nameidata *nd, const struct open_flags *op,
				unsigned int flags)
{
	struct file *file;
	int error;

	file = alloc_empty_file(op->open_flag);
	if (IS_ERR(file))
		return file;

	error = link_path_walk(nd->name, nd);
	if (!error)
		error = walk_component(nd);
	if (!error)
		error = may_open(&nd->path, op->acc_mode, op->open_flag);
	if (error) {
		file->f_count.counter = 0;
		return ERR_PTR(error);
	}
	file->f_path = nd->path;
	file->f_inode = nd->inode;
	file->f_mode = FMODE_READ | FMODE_CAN_READ | FMODE_LSEEK;
	if (op->acc_mode & MAY_WRITE)
		file->f_mode |= FMODE_WRITE | FMODE_CAN_WRITE;
	return file;
}

struct file *do_filp_open(int dfd, struct filename *pathname,
			  const struct open_flags *op)
{
	struct nameidata nd;
	int flags = op->lookup_flags;
	struct file *filp;

	nd.name = pathname->name;
	nd.root.mnt = &root_mnt;
	nd.root.dentry = &root_dentry;
	nd.path = nd.root;
	nd.inode = root_dentry.d_inode;
	nd.depth = 0;
	nd.flags = flags;
	if (dfd != AT_FDCWD && pathname->name[0] != '/') {
		struct file *dir = fget(dfd);

		if (!dir)
			return ERR_PTR(-EBADF);
		nd.path = dir->f_path;
	}
	filp = path_openat(&nd, op, flags);
	if (unlikely(filp == ERR_PTR(-EAGAIN)))
		filp = path_openat(&nd, op, flags | LOOKUP_FOLLOW);
	return filp;
}
