// SPDX-License-Identifier: MIT
#include "ember/daemon/proc/mapfile.h"
#include "ember/daemon/proc/procfs.h"
#include "ember/daemon/proc/procmaps.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/openat2.h>

/* What the reopened file is opened with: never blocks (FIFO), never becomes a terminal. */
#define REOPEN_FLAGS (O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

static const char *const names[MAPFILE__NR] = {
	[MAPFILE_GONE] = "gone",	   [MAPFILE_SYMLINK] = "symlink",
	[MAPFILE_NOT_REGULAR] = "not_regular", [MAPFILE_IDENTITY] = "identity",
	[MAPFILE_CHANGED] = "changed",	   [MAPFILE_ERROR] = "error",
};

struct mapfile_want mapfile_want_of(uint32_t pid, const struct procmaps_entry *e)
{
	return (struct mapfile_want){ .pid = pid, .start = e->start, .end = e->end,
				      .path = e->path, .path_len = e->path_len,
				      .deleted = e->deleted, .exec_path = e->exec_image,
				      .dev_major = e->dev_major,
				      .dev_minor = e->dev_minor, .ino = e->inode };
}

const char *mapfile_refusal_name(enum mapfile_refusal r)
{
	return (unsigned int)r < MAPFILE__NR ? names[r] : "?";
}

void mapfile_stats_add(struct mapfile_stats *a, const struct mapfile_stats *b)
{
	int i;

	a->opened += b->opened;
	a->via_map_files += b->via_map_files;
	a->via_root += b->via_root;
	a->via_exec_path += b->via_exec_path;
	for (i = 0; i < MAPFILE__NR; i++)
		a->refused[i] += b->refused[i];
}

static int refuse(struct mapfile_stats *st, enum mapfile_refusal r, int err)
{
	if (st)
		st->refused[r]++;
	return err;
}

/*
 * Opens the file an O_PATH descriptor names, for reading: the open goes to the inode @pfd holds,
 * whatever has been renamed since. The magic link cannot take O_NOFOLLOW (ELOOP); it is the
 * kernel's, not the process's.
 */
static int reopen(int pfd)
{
	char p[64];
	int fd;

	snprintf(p, sizeof(p), "/proc/self/fd/%d", pfd);
	fd = open(p, REOPEN_FLAGS);
	return fd < 0 ? -errno : fd;
}

static int64_t mtime_ns(const struct stat *sb)
{
	return (int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec;
}

/* 0, or the refusal @sb earns against @w. @strict_dev: compare the device too. */
static int check(const struct mapfile_want *w, const struct stat *sb, bool strict_dev,
		 enum mapfile_refusal *ret_why)
{
	if (S_ISLNK(sb->st_mode)) { /* O_PATH | O_NOFOLLOW: the last component is a link */
		*ret_why = MAPFILE_SYMLINK;
		return -ELOOP;
	}
	if (!S_ISREG(sb->st_mode)) {
		*ret_why = MAPFILE_NOT_REGULAR;
		return -EINVAL;
	}
	if ((uint64_t)sb->st_ino != w->ino ||
	    (strict_dev && sb->st_dev != makedev(w->dev_major, w->dev_minor))) {
		*ret_why = MAPFILE_IDENTITY;
		return -ESTALE;
	}
	if ((w->size && (uint64_t)sb->st_size != w->size) ||
	    (w->mtime_ns && mtime_ns(sb) != w->mtime_ns)) {
		*ret_why = MAPFILE_CHANGED;
		return -ESTALE;
	}
	return 0;
}

/* An O_PATH fd of the path under the process's root (@own_tree: emberd's own, for an exec's
 * path), no symbolic link on the way. */
static int open_in_root(const char *proc_root, const struct mapfile_want *w, bool own_tree)
{
	char rel[PATH_MAX];
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int root, fd, err;

	if (!w->path || w->deleted || !w->path_len || w->path[0] != '/' ||
	    w->path_len >= sizeof(rel) || memchr(w->path, '\0', w->path_len))
		return -ENOENT;
	memcpy(rel, w->path, w->path_len);
	rel[w->path_len] = '\0';
	if (own_tree) {
		how.resolve &= ~(uint64_t)RESOLVE_IN_ROOT;
		fd = (int)syscall(SYS_openat2, AT_FDCWD, rel, &how, sizeof(how));
		return fd < 0 ? -errno : fd;
	}
	root = procfs_open_root(proc_root, w->pid);
	if (root < 0)
		return root;
	fd = (int)syscall(SYS_openat2, root, rel, &how, sizeof(how));
	err = fd < 0 ? -errno : fd;
	close(root);
	return err;
}

/* An O_PATH fd of the mapped file: map_files (*@ret_via 0), else the path in the root (1), else
 * an exec's path in emberd's own tree (2, w->exec_path only). */
static int open_opath(const char *proc_root, const struct mapfile_want *w, int *ret_via)
{
	char buf[PATH_MAX];
	int pfd = -ENOENT, via;

	for (via = 0; via < (w->exec_path ? 3 : 2); via++) {
		if (via == 0) {
			if (!w->start && !w->end)
				continue;
			snprintf(buf, sizeof(buf), "%s/%u/map_files/%llx-%llx", proc_root, w->pid,
				 (unsigned long long)w->start, (unsigned long long)w->end);
			pfd = open(buf, O_PATH | O_CLOEXEC);
			if (pfd < 0)
				pfd = -errno;
		} else {
			pfd = open_in_root(proc_root, w, via == 2);
		}
		if (pfd >= 0)
			break;
		if (pfd == -ELOOP || pfd == -EXDEV) /* a link on the path, or out of the root */
			return -ELOOP;
	}
	*ret_via = via;
	return pfd;
}

int mapfile_stat(const char *proc_root, const struct mapfile_want *w, struct stat *ret_st)
{
	enum mapfile_refusal why;
	char buf[PATH_MAX];
	int pfd, err;

	if (!w->ino)
		return -EINVAL;
	if (!proc_root)
		proc_root = "/proc";
	/* map_files: one stat() through the kernel's link (what an O_PATH open and fstat() see,
	 * in one system call instead of three) */
	if (w->start || w->end) {
		snprintf(buf, sizeof(buf), "%s/%u/map_files/%llx-%llx", proc_root, w->pid,
			 (unsigned long long)w->start, (unsigned long long)w->end);
		if (!stat(buf, ret_st))
			return check(w, ret_st, false, &why);
		if (errno == ELOOP || errno == EXDEV)
			return -ELOOP;
	}
	pfd = open_in_root(proc_root, w, false);
	if (pfd == -ELOOP || pfd == -EXDEV)
		return -ELOOP;
	if (pfd < 0)
		return pfd;
	err = fstat(pfd, ret_st) ? -errno : check(w, ret_st, true, &why);
	close(pfd);
	return err;
}

int mapfile_open(const char *proc_root, const struct mapfile_want *w, struct mapfile_stats *st,
		 struct stat *ret_st)
{
	enum mapfile_refusal why = MAPFILE_GONE;
	struct stat sb, sb2;
	int pfd, fd, err, via = 0;

	if (!proc_root)
		proc_root = "/proc";
	if (!w->ino)
		return refuse(st, MAPFILE_NOT_REGULAR, -EINVAL);
	pfd = open_opath(proc_root, w, &via);
	if (pfd == -ELOOP)
		return refuse(st, MAPFILE_SYMLINK, -ELOOP);
	if (pfd < 0)
		return refuse(st, pfd == -ENOENT || pfd == -ESRCH ? MAPFILE_GONE : MAPFILE_ERROR, pfd);
	/*
	 * map_files is the mapped file itself: its inode is checked, not its device, which
	 * /proc/PID/maps and stat name differently on btrfs and overlayfs. A path may name
	 * anything: both must match.
	 */
	if (fstat(pfd, &sb)) {
		err = -errno;
		close(pfd);
		return refuse(st, MAPFILE_ERROR, err);
	}
	err = check(w, &sb, via >= 1, &why);
	if (err) {
		close(pfd);
		return refuse(st, why, err);
	}
	fd = reopen(pfd);
	close(pfd);
	if (fd < 0)
		return refuse(st, fd == -ENOENT ? MAPFILE_GONE : MAPFILE_ERROR, fd);
	if (fstat(fd, &sb2) || sb2.st_ino != sb.st_ino || sb2.st_dev != sb.st_dev ||
	    !S_ISREG(sb2.st_mode)) {
		close(fd);
		return refuse(st, MAPFILE_IDENTITY, -ESTALE);
	}
	if (st) {
		st->opened++;
		if (via == 0)
			st->via_map_files++;
		else if (via == 1)
			st->via_root++;
		else
			st->via_exec_path++;
	}
	if (ret_st)
		*ret_st = sb2;
	return fd;
}

/*
 * Root's, and nobody else may write it: what a trusted directory or file must be. A sticky
 * directory (/tmp) is trusted too: others may add names there, not replace root's, and what they
 * add is theirs, refused at the next step.
 */
static bool trusted(const struct stat *sb)
{
	return sb->st_uid == 0 &&
	       (!(sb->st_mode & (S_IWGRP | S_IWOTH)) || (S_ISDIR(sb->st_mode) && (sb->st_mode & S_ISVTX)));
}

int mapfile_open_trusted(const char *path, struct stat *ret_st)
{
	char comp[NAME_MAX + 1];
	const char *p = path, *q;
	struct stat sb;
	int dir, next, fd, err;

	if (!path || path[0] != '/')
		return -EINVAL;
	dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	for (;;) {
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		q = strchr(p, '/');
		n = q ? (size_t)(q - p) : strlen(p);
		if (n > NAME_MAX || (n == 2 && p[0] == '.' && p[1] == '.')) {
			err = -EINVAL;
			goto out;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n;
		next = openat(dir, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			err = -errno;
			goto out;
		}
		close(dir);
		dir = next;
		if (fstat(dir, &sb)) {
			err = -errno;
			goto out;
		}
		if (S_ISLNK(sb.st_mode)) {
			err = -ELOOP;
			goto out;
		}
		if (!trusted(&sb)) {
			err = -EPERM;
			goto out;
		}
		if (*p && !S_ISDIR(sb.st_mode)) {
			err = -ENOTDIR;
			goto out;
		}
	}
	if (fstat(dir, &sb)) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		err = -EINVAL;
		goto out;
	}
	fd = reopen(dir);
	if (fd < 0) {
		err = fd;
		goto out;
	}
	if (ret_st && fstat(fd, ret_st)) {
		err = -errno;
		close(fd);
		goto out;
	}
	close(dir);
	return fd;
out:
	close(dir);
	return err;
}
