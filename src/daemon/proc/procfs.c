// SPDX-License-Identifier: MIT
#include "ember/daemon/proc/procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ember/core/base/readall.h"

static const char *const file_names[] = {
	[PROCFS_STAT] = "stat",
	[PROCFS_STATUS] = "status",
	[PROCFS_CGROUP] = "cgroup",
	[PROCFS_MAPS] = "maps",
};

/* "ROOT/PID" then "/@name" when @name is not NULL. 0 or -ENAMETOOLONG. */
static int path_of(char *buf, size_t len, const char *proc_root, uint32_t pid, const char *name)
{
	int n = snprintf(buf, len, "%s/%u%s%s", proc_root ? proc_root : "/proc", pid,
			 name ? "/" : "", name ? name : "");

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int procfs_open(const char *proc_root, uint32_t pid, enum procfs_file file)
{
	char path[300];
	int fd, err;

	if ((unsigned)file >= sizeof(file_names) / sizeof(file_names[0]))
		return -EINVAL;
	err = path_of(path, sizeof(path), proc_root, pid, file_names[file]);
	if (err)
		return err;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	return fd < 0 ? -errno : fd;
}

int procfs_read(const char *proc_root, uint32_t pid, enum procfs_file file, char **buf, size_t *cap,
		size_t max, size_t *ret_len)
{
	int fd = procfs_open(proc_root, pid, file), err;

	*ret_len = 0;
	if (fd < 0)
		return fd;
	err = read_fd_all(fd, buf, cap, max, ret_len);
	close(fd);
	return err;
}

int procfs_exists(const char *proc_root, uint32_t pid)
{
	char path[300];
	struct stat st;
	int err = path_of(path, sizeof(path), proc_root, pid, NULL);

	if (err)
		return err;
	if (!stat(path, &st))
		return 1;
	return errno == ENOENT ? 0 : -errno;
}

int procfs_owner(const char *proc_root, uint32_t pid, uid_t *ret_uid)
{
	char path[300];
	struct stat st;
	int err = path_of(path, sizeof(path), proc_root, pid, NULL);

	if (err)
		return err;
	if (stat(path, &st))
		return -errno;
	*ret_uid = st.st_uid;
	return 0;
}

int procfs_exe_stat(const char *proc_root, uint32_t pid, struct stat *ret)
{
	char path[300];
	int err = path_of(path, sizeof(path), proc_root, pid, "exe");

	if (err)
		return err;
	return stat(path, ret) ? -errno : 0;
}

ssize_t procfs_exe_path(const char *proc_root, uint32_t pid, char *buf, size_t len)
{
	char path[300];
	ssize_t n;
	int err = path_of(path, sizeof(path), proc_root, pid, "exe");

	if (err)
		return err;
	if (len < 2)
		return -ENAMETOOLONG;
	n = readlink(path, buf, len - 1);
	if (n < 0)
		return -errno;
	if (!n)
		return -ENOENT;
	buf[n] = '\0';
	if (n > 10 && !strcmp(buf + n - 10, " (deleted)")) {
		n -= 10;
		buf[n] = '\0';
	}
	return n;
}

int procfs_open_exe(const char *proc_root, uint32_t pid)
{
	char path[300];
	struct stat st;
	int fd, err = path_of(path, sizeof(path), proc_root, pid, "exe");

	if (err)
		return err;
	/* a magic link: followed (no O_NOFOLLOW), to the kernel's own reference to the file */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int procfs_open_root(const char *proc_root, uint32_t pid)
{
	char path[300];
	int fd, err = path_of(path, sizeof(path), proc_root, pid, "root");

	if (err)
		return err;
	/* the root is a (magic) link in /proc: followed here, and only here */
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}
