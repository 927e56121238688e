/* SPDX-License-Identifier: MIT */
#ifndef EMBER_DAEMON_PROC_PROCFS_H
#define EMBER_DAEMON_PROC_PROCFS_H

/*
 * procfs: the one place a path under /proc/PID is built and opened (besides mapfile.c's files a
 * process maps). The files are the kernel's, but a process controls what some of them say (its
 * comm in stat, its cgroup's name), and a pid may be reused between two reads: so every open is
 * O_CLOEXEC | O_NONBLOCK, O_NOFOLLOW where the name is not one of /proc's magic links (exe,
 * root), every read is bounded by the caller's limit, and the caller decides what to trust of
 * the text. Nothing here keeps state; the stages that read a process's files call these from
 * their own threads (never the drain's).
 *
 * @proc_root is where procfs is mounted (tests use a fake tree); NULL means "/proc".
 * Thread-safe.
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* The per-process text files emberd reads (one name each, so no caller builds a path). */
enum procfs_file {
	PROCFS_STAT,   /* "stat": the start time (field 22) */
	PROCFS_STATUS, /* "status": NSpid */
	PROCFS_CGROUP, /* "cgroup": v2's "0::/path" and v1's hierarchies */
	PROCFS_MAPS,   /* "maps" */
};

/*
 * Reads /proc/PID/@file whole, up to @max bytes, into *@buf (grown as read_fd_all() does, NUL-
 * terminated; the caller frees it). 0; -EFBIG when it was longer (the first @max bytes are in
 * *@buf); -errno (-ENOENT: no such process).
 */
int procfs_read(const char *proc_root, uint32_t pid, enum procfs_file file, char **buf, size_t *cap,
		size_t max, size_t *ret_len);

/* Opens /proc/PID/@file for reading (O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW). fd (the
 * caller closes it) or -errno. */
int procfs_open(const char *proc_root, uint32_t pid, enum procfs_file file);

/* 1 while /proc/PID exists, 0 once it is gone (ENOENT), -errno when that cannot be told. */
int procfs_exists(const char *proc_root, uint32_t pid);

/* The owner of /proc/PID: the process's user (root for a non-dumpable process). 0 or -errno. */
int procfs_owner(const char *proc_root, uint32_t pid, uid_t *ret_uid);

/* stat() of the process's executable (/proc/PID/exe, followed): its device and inode. 0 or
 * -errno. */
int procfs_exe_stat(const char *proc_root, uint32_t pid, struct stat *ret);

/*
 * The path of the process's executable (readlink of /proc/PID/exe) into @buf (NUL-terminated,
 * cut to @len - 1), without the kernel's " (deleted)" for an unlinked file. Its length (> 0) or
 * -errno.
 */
ssize_t procfs_exe_path(const char *proc_root, uint32_t pid, char *buf, size_t len);

/* Opens the process's executable through /proc/PID/exe (the kernel's reference: no path of the
 * process's is followed) O_RDONLY | O_CLOEXEC | O_NONBLOCK; a regular file only. fd or -errno. */
int procfs_open_exe(const char *proc_root, uint32_t pid);

/* Opens the process's root directory (/proc/PID/root) O_PATH | O_DIRECTORY, for openat2()'s
 * RESOLVE_IN_ROOT. fd or -errno. */
int procfs_open_root(const char *proc_root, uint32_t pid);

#endif
