// SPDX-License-Identifier: MIT
/* symbolizer: JIT frames from perf maps (/tmp/perf-PID.map), read incrementally. */
#include "symbolizer_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ember/core/base/clock.h"
#include "ember/daemon/symbols/perfmap.h"

#define PERFMAP_RECHECK_NS (200 * NS_PER_MS) /* look at a perf map again on a miss */

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
	case PM_ERROR:
		s->stats.perfmap_skip_error++;
		break;
	default:
		break;
	}
	p->pm_state = st;
}

/* Reads what was appended to the process's perf map since the last look. Never blocks: the
 * file is opened O_NONBLOCK and O_NOFOLLOW, and must be a regular file of bounded size. */
void sym_perfmap_refresh(struct symbolizer *s, struct proc *p)
{
	char path[PATH_MAX];
	struct stat st;
	uint64_t want;
	size_t used;
	ssize_t r;
	int fd;

	p->pm_checked_ns = mono_ns();
	if (p->gone)
		return; /* its /tmp is gone with it; keep what was read */
	if (!p->nspid)
		p->nspid = sym_read_nspid(s, p->pid);
	snprintf(path, sizeof(path), "%s/%u/root/tmp/perf-%u.map", s->proc_root, p->pid, p->nspid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0) {
		if (errno == ENOENT)
			pm_state(s, p, PM_ABSENT);
		else if (errno == ELOOP || errno == ENXIO || errno == ENODEV)
			pm_state(s, p, PM_NOT_REGULAR);
		else
			pm_state(s, p, PM_ERROR);
		return;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		pm_state(s, p, PM_NOT_REGULAR);
		goto out;
	}
	if ((uint64_t)st.st_size > s->o.max_perfmap_bytes) {
		pm_state(s, p, PM_TOO_BIG);
		goto out;
	}
	if ((uint64_t)st.st_size < p->pm_used) {
		/* rewritten from scratch: start over */
		if (p->pm)
			s->stats.perfmap_symbols -= perfmap__count(p->pm);
		perfmap__free(p->pm);
		p->pm = NULL;
		p->pm_used = 0;
		p->version = ++s->version_seq;
	}
	if (!p->pm && !(p->pm = perfmap__new())) {
		pm_state(s, p, PM_ERROR);
		goto out;
	}
	want = (uint64_t)st.st_size - p->pm_used;
	if (want == 0) {
		pm_state(s, p, PM_OK);
		goto out;
	}
	if (want + 1 > s->buf_cap) {
		char *nb = realloc(s->buf, want + 1);

		if (!nb) {
			pm_state(s, p, PM_ERROR);
			goto out;
		}
		s->buf = nb;
		s->buf_cap = want + 1;
	}
	/* read only what fstat promised: a file that keeps growing cannot hold us here */
	used = 0;
	while (used < want) {
		r = pread(fd, s->buf + used, want - used, (off_t)(p->pm_used + used));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		used += (size_t)r;
	}
	if (used == 0 && want) {
		pm_state(s, p, PM_ERROR);
		goto out;
	}
	{
		size_t consumed = 0, before = perfmap__count(p->pm);

		unsigned long bad = 0;
		int err = perfmap__add_text(p->pm, s->buf, used, &consumed, &bad);

		s->stats.perfmap_bad_lines += bad;
		if (err < 0) {
			pm_state(s, p, PM_ERROR);
			goto out;
		}
		p->pm_used += consumed;
		p->version = ++s->version_seq;
		s->stats.perfmap_symbols += perfmap__count(p->pm) - before;
		s->stats.perfmap_loads++;
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
	id = sym_intern(s, name, len, false, "_[j]");
	if (id >= 0)
		perfmap__set_cookie(p->pm, idx, (uint32_t)id + 1);
	return id;
}
