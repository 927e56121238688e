/* SPDX-License-Identifier: MIT */
#ifndef EMBER_DAEMON_PROC_MAPFILE_H
#define EMBER_DAEMON_PROC_MAPFILE_H

/*
 * The one way emberd opens a file that a profiled process maps (its executable, its libraries):
 * the process controls the path, the directories on it and the file, so nothing here follows a
 * symbol link it made, blocks on a FIFO, opens a device or reads a file other than the one
 * mapped. docs/security.md.
 *
 *   1. /proc/PID/map_files/START-END: the kernel's own reference to the mapped file (needs
 *      CAP_CHECKPOINT_RESTORE, which emberd keeps); nothing on a path can be swapped under it.
 *   2. else the path /proc/PID/maps shows, resolved by openat2(RESOLVE_IN_ROOT |
 *      RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS) under /proc/PID/root: inside the process's
 *      root, no symbolic link anywhere on it.
 *   3. else, for an exec's executable the kernel told of (exec_path: the process gone before
 *      its /proc was read), the path exec was given, resolved the same way in emberd's own
 *      tree; the device and inode are the kernel's, so only that very file passes.
 * Either is first opened O_PATH (no open of the file itself: a FIFO, a device are never
 * opened), fstat'ed (a regular file, the device and inode the mapping names, the size and
 * mtime if the caller knows them), then reopened through /proc/self/fd with O_RDONLY |
 * O_NONBLOCK | O_NOCTTY | O_CLOEXEC and checked again. Every refusal is counted by reason.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* What the caller knows of the file: what /proc/PID/maps said, and maybe more. */
struct mapfile_want {
	uint32_t pid;
	uint64_t start, end;	/* the mapping, for map_files (0, 0: not known) */
	const char *path;	/* as maps shows it, need not be NUL-terminated; NULL: none */
	size_t path_len;
	bool deleted;		/* " (deleted)": the path names another file, if any */
	bool exec_path;		/* the path is the one exec was given, the device and inode
				   the kernel's (procmaps_entry.exec_image): tried last, in
				   emberd's own tree, when the process is gone */
	uint32_t dev_major, dev_minor; /* as maps shows them */
	uint64_t ino;		/* 0: refused (an anonymous mapping has no file) */
	uint64_t size;		/* 0: not known */
	int64_t mtime_ns;	/* 0: not known */
};

enum mapfile_refusal {
	MAPFILE_GONE,		/* neither way found it (the process exited, no such path) */
	MAPFILE_SYMLINK,	/* the path had a symbolic link or left the process's root */
	MAPFILE_NOT_REGULAR,	/* a FIFO, a device, a directory, a socket */
	MAPFILE_IDENTITY,	/* another device or inode than the mapping's */
	MAPFILE_CHANGED,	/* same inode, other size or mtime than expected */
	MAPFILE_ERROR,		/* anything else (EMFILE, ENOMEM, EACCES) */
	MAPFILE__NR
};

struct mapfile_stats {
	uint64_t opened;		/* files handed out */
	uint64_t via_map_files;		/* ... through /proc/PID/map_files */
	uint64_t via_root;		/* ... through the path under /proc/PID/root */
	uint64_t via_exec_path;		/* ... through an exec's path (the process gone) */
	uint64_t refused[MAPFILE__NR];	/* by reason */
};

/* "gone", "symlink", ...: the reason's name as /api/v1/stats and /metrics show it. */
const char *mapfile_refusal_name(enum mapfile_refusal r);

struct procmaps_entry;

/* What mapfile_open() and mapfile_stat() need of mapping @e of process @pid (size and mtime not
 * known). */
struct mapfile_want mapfile_want_of(uint32_t pid, const struct procmaps_entry *e);

/*
 * Opens the file of @w's mapping in process @w->pid, with /proc at @proc_root (NULL: "/proc";
 * tests point it at a fake tree). Returns an fd the caller closes, or -errno: -ENOENT (gone),
 * -ELOOP (symlink), -EINVAL (not regular), -ESTALE (identity or changed), others. Counts in @st
 * (may be NULL). *@ret_st (may be NULL) gets the file's fstat on success.
 */
int mapfile_open(const char *proc_root, const struct mapfile_want *w, struct mapfile_stats *st,
		 struct stat *ret_st);

/*
 * The fstat of @w's file, reached as mapfile_open() reaches it but never opened (O_PATH): a
 * regular file of the mapping's inode. 0 or -errno; not counted. For checking that what a cache
 * holds under the mapping's (device, inode) is still that file (tmpfs recycles inodes).
 */
int mapfile_stat(const char *proc_root, const struct mapfile_want *w, struct stat *ret_st);

/* Adds @b's counts to @a. */
void mapfile_stats_add(struct mapfile_stats *a, const struct mapfile_stats *b);

/*
 * Opens @path (absolute, NUL-terminated) of the host's own tree as a file emberd trusts only if
 * root owns it and every directory on the way, no component is a symbolic link, and it is a
 * regular file (debug files under the configured debug directories). O_RDONLY | O_NONBLOCK |
 * O_NOCTTY | O_CLOEXEC. fd or -errno (-EPERM: not root's, -ELOOP: a link, -EINVAL: not
 * regular). *@ret_st (may be NULL) gets its fstat.
 */
int mapfile_open_trusted(const char *path, struct stat *ret_st);

#endif
