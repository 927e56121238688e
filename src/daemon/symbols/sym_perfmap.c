// SPDX-License-Identifier: MIT
/* symbolizer: JIT frames from perf maps (/tmp/perf-PID.map), read incrementally. */
#include "symbolizer_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "ember/core/base/clock.h"
#include "ember/daemon/proc/procfs.h"
#include "ember/daemon/symbols/perfmap.h"

#define PERFMAP_RECHECK_NS (200 * NS_PER_MS) /* look at a perf map again on a miss */
#define PERFMAP_CHUNK (1u << 20)		     /* read a perf map a MiB at a time */

/* --- perf maps ------------------------------------------------------------------------------- */

static void pm_state(struct symbolizer *s, struct proc *p, enum pm_state st)
{
	if (p->pm_state == st)
		return;
	/* count each transition once, not every sample that meets it */
	switch (st) {
	case PM_ABSENT:
		s->stats.perfmap_skip_missing++;
		break;
	case PM_NOT_REGULAR:
		s->stats.perfmap_skip_not_regular++;
		break;
	case PM_TOO_BIG:
		s->stats.perfmap_skip_too_big++;
		break;
	case PM_OWNER:
		s->stats.perfmap_skip_owner++;
		break;
	case PM_ERROR:
		s->stats.perfmap_skip_error++;
		break;
	case PM_STALE:
		s->stats.perfmap_skip_stale++;
		break;
	default:
		break;
	}
	p->pm_state = st;
}

/*
 * Opens /tmp/perf-NSPID.map inside the process's root: no symbolic link on the way (a container's
 * /tmp may be one, to anywhere on the host), O_NONBLOCK. fd or -errno.
 */
static int open_perfmap(struct symbolizer *s, struct proc *p)
{
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	char path[64];
	int root, fd, err;

	root = procfs_open_root(s->proc_root, p->pid);
	if (root < 0)
		return root;
	snprintf(path, sizeof(path), "tmp/perf-%u.map", p->nspid);
	fd = (int)syscall(SYS_openat2, root, path, &how, sizeof(how));
	err = fd < 0 ? -errno : fd;
	close(root);
	return err;
}

/*
 * As perf decides (tools/perf/util/symbol.c): a perf map names a process's code only if the
 * process's user or root owns it, and nobody else may write it; else anyone could name a root
 * process's JIT frames. The process's user is the owner of /proc/PID (root for a non-dumpable
 * one: then only root's maps).
 */
static bool perfmap_owner_ok(struct symbolizer *s, struct proc *p, const struct stat *st)
{
	uid_t owner;

	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return false;
	if (st->st_uid == 0)
		return true;
	return !procfs_owner(s->proc_root, p->pid, &owner) && owner == st->st_uid;
}

/*
 * A map last written before the process began is an earlier process's with the same pid:
 * runtimes leave theirs in /tmp at exit (node --perf-basic-prof, python -X perf), root's are
 * accepted for anyone, and pids come round again. Its names would be guesses: it is skipped
 * until the process writes it (its mtime then moves past the start). PERFMAP_STALE_SLACK_NS
 * covers the start time's tick and a clock adjusted since.
 */
#define PERFMAP_STALE_SLACK_NS (2000 * NS_PER_MS)

static bool perfmap_stale(const struct proc *p, const struct stat *st)
{
	uint64_t born = p->start_time ? sym_start_to_mono(p->start_time) : p->born_ns;
	int64_t real_off = real_minus_mono_ns();
	int64_t written = (int64_t)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec -
			  real_off; /* CLOCK_MONOTONIC */

	return born && written + (int64_t)PERFMAP_STALE_SLACK_NS < (int64_t)born;
}

/* Reads what was appended to the process's perf map since the last look. Never blocks: the
 * file is opened O_NONBLOCK and O_NOFOLLOW, and must be a regular file of bounded size, owned
 * by the process's user or root. */
void sym_perfmap_refresh(struct symbolizer *s, struct proc *p)
{
	enum pm_state err_state = PM_OK;
	struct stat st;
	uint64_t want;
	size_t before, before_bytes;
	ssize_t r;
	int fd;

	p->pm_checked_ns = mono_ns();
	if (p->gone)
		return; /* its /tmp is gone with it; keep what was read */
	if (!p->nspid)
		p->nspid = sym_read_nspid(s, p->pid);
	fd = open_perfmap(s, p);
	if (fd < 0) {
		errno = -fd;
		if (errno == ENOENT)
			pm_state(s, p, PM_ABSENT);
		else if (errno == ELOOP || errno == EXDEV || errno == ENXIO || errno == ENODEV)
			pm_state(s, p, PM_NOT_REGULAR);
		else
			pm_state(s, p, PM_ERROR);
		return;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		pm_state(s, p, PM_NOT_REGULAR);
		goto out;
	}
	if (!perfmap_owner_ok(s, p, &st)) {
		pm_state(s, p, PM_OWNER);
		goto out;
	}
	if (perfmap_stale(p, &st)) {
		pm_state(s, p, PM_STALE);
		goto out;
	}
	if ((uint64_t)st.st_size > s->o.max_perfmap_bytes) {
		pm_state(s, p, PM_TOO_BIG);
		goto out;
	}
	if ((uint64_t)st.st_size < p->pm_used) {
		/* rewritten from scratch: start over */
		if (p->pm) {
			s->stats.perfmap_symbols -= perfmap__count(p->pm);
			s->stats.perfmap_bytes -= perfmap__data_bytes(p->pm);
		}
		perfmap__free(p->pm);
		p->pm = NULL;
		p->pm_used = 0;
		p->version = ++s->version_seq;
	}
	if (!p->pm && !(p->pm = perfmap__new())) {
		pm_state(s, p, PM_ERROR);
		goto out;
	}
	/*
	 * max_perfmap_entries bounds every process's perf maps together (a process sizes its own,
	 * and may start many): this one may grow by what the others leave.
	 */
	if (s->o.max_perfmap_entries) {
		uint64_t others = s->stats.perfmap_symbols - perfmap__count(p->pm);

		size_t n = perfmap__count(p->pm);

		/* all taken: no growth (0 would mean no bound: one entry then) */
		perfmap__set_max_entries(p->pm, others >= s->o.max_perfmap_entries
							? (n ? n : 1)
							: s->o.max_perfmap_entries - others);
	}
	/* the same in bytes, and one process at most half of them: the others keep room */
	if (s->o.max_perfmap_memory) {
		uint64_t mine = perfmap__data_bytes(p->pm), others = s->stats.perfmap_bytes - mine;
		uint64_t room = others >= s->o.max_perfmap_memory ? 0
								  : s->o.max_perfmap_memory - others;

		if (room > s->o.max_perfmap_memory / 2)
			room = s->o.max_perfmap_memory / 2;
		perfmap__set_max_bytes(p->pm, room > mine ? room : (mine ? mine : 1));
	}
	want = (uint64_t)st.st_size - p->pm_used;
	if (want == 0) {
		pm_state(s, p, PM_OK);
		goto out;
	}
	if (!s->buf_cap || s->buf_cap < PERFMAP_CHUNK + 1) {
		char *nb = realloc(s->buf, PERFMAP_CHUNK + 1);

		if (!nb) {
			pm_state(s, p, PM_ERROR);
			goto out;
		}
		s->buf = nb;
		s->buf_cap = PERFMAP_CHUNK + 1;
	}
	/*
	 * Read only what fstat promised (a file that keeps growing cannot hold us here), a chunk at
	 * a time: memory is the table's, never the file's size again in a buffer.
	 */
	before = perfmap__count(p->pm);
	before_bytes = perfmap__data_bytes(p->pm);
	perfmap__defer_sort(p->pm, true); /* one sort for every chunk */
	while (want) {
		size_t ask = want < PERFMAP_CHUNK ? (size_t)want : PERFMAP_CHUNK, used = 0;
		size_t consumed = 0;
		unsigned long bad = 0;
		int err;

		while (used < ask) {
			r = pread(fd, s->buf + used, ask - used, (off_t)(p->pm_used + used));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			used += (size_t)r;
		}
		if (used == 0) {
			if (perfmap__count(p->pm) == before)
				err_state = PM_ERROR;
			break;
		}
		err = perfmap__add_text(p->pm, s->buf, used, &consumed, &bad);
		s->stats.perfmap_bad_lines += bad;
		if (err == -E2BIG) {
			err_state = PM_TOO_BIG; /* max_perfmap_entries or max_perfmap_memory */
			/* the rest of what fstat promised is skipped unread: read, it would be skipped
			 * line by line at each look (12 maps of 63 MiB kept the worker busy) */
			p->pm_used = (uint64_t)st.st_size;
			break;
		}
		if (err < 0) {
			err_state = PM_ERROR;
			break;
		}
		if (!consumed && used == ask && ask == PERFMAP_CHUNK) {
			consumed = used; /* a chunk without a line end: malformed, skipped */
			s->stats.perfmap_bad_lines++;
		}
		p->pm_used += consumed;
		want -= consumed < want ? consumed : want;
		if (used < ask)
			break; /* shorter than fstat said: read the rest next time */
		if (consumed < used && ask < PERFMAP_CHUNK)
			break; /* a last line still being written */
	}
	perfmap__defer_sort(p->pm, false);
	if (perfmap__count(p->pm) != before || err_state == PM_TOO_BIG) {
		p->version = ++s->version_seq;
		s->stats.perfmap_symbols += perfmap__count(p->pm) - before;
		s->stats.perfmap_bytes += perfmap__data_bytes(p->pm) - before_bytes;
		s->stats.perfmap_loads++;
	}
	if (err_state != PM_OK) {
		pm_state(s, p, err_state);
		goto out;
	}
	pm_state(s, p, PM_OK);
out:
	close(fd);
}

/* The JIT frame for @addr, or -ENOENT. */
int sym_jit_frame(struct symbolizer *s, struct proc *p, uint64_t addr, bool refresh)
{
	int idx, id;
	uint32_t c;
	size_t len;
	const char *name;

	if (!s->o.perf_maps)
		return -ENOENT;
	idx = p->pm ? perfmap__lookup(p->pm, addr) : -ENOENT;
	if (idx < 0 && refresh && mono_ns() - p->pm_checked_ns >= PERFMAP_RECHECK_NS) {
		sym_perfmap_refresh(s, p);
		idx = p->pm ? perfmap__lookup(p->pm, addr) : -ENOENT;
	}
	if (idx < 0)
		return -ENOENT;
	c = perfmap__cookie(p->pm, idx);
	if (c)
		return (int)(c - 1);
	name = perfmap__name(p->pm, idx, &len);
	id = sym_intern(s, name, len, false, FRAME_JIT);
	if (id >= 0)
		perfmap__set_cookie(p->pm, idx, (uint32_t)id + 1);
	return id;
}
