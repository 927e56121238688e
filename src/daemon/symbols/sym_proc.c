// SPDX-License-Identifier: MIT
/* symbolizer: the /proc readers and the process cache (live, then retired after exec or
 * pid reuse). */
#include "symbolizer_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "ember/core/base/clock.h"
#include "ember/core/base/hash.h"
#include "ember/daemon/symbols/perfmap.h"
#include "ember/daemon/proc/procfs.h"
#include "ember/daemon/proc/procmaps.h"

#define VALIDATE_NS (1000 * NS_PER_MS)	    /* note_pid re-checks a cached pid's start time */
/* Keep a replaced state (exec, pid reuse) so long: samples reach the symbolizer 1-2 ticks after
 * they are taken (sampling.tick_ms, 1 s by default, at most 10 s). Bounded in number: in an exec
 * storm the oldest go first (each holds its mappings, a few KB). */
#define RETIRED_GRACE_NS (25000 * NS_PER_MS)
#define MAX_RETIRED 1024
/* /proc's start time (USER_HZ ticks, 10 ms) against a fork event's (CLOCK_MONOTONIC): a tick's
 * truncation and the two clocks' readings apart */
#define BORN_SLACK_NS (20 * NS_PER_MS)

/* --- /proc readers --------------------------------------------------------------------------- */

/* Reads a whole /proc/PID file into s->buf (NUL-terminated). Length or -errno. */
static ssize_t read_file(struct symbolizer *s, uint32_t pid, enum procfs_file file, size_t max)
{
	size_t len;
	int err;

	err = procfs_read(s->proc_root, pid, file, &s->buf, &s->buf_cap, max, &len);
	if (err && err != -EFBIG) /* a longer file is read cut at @max */
		return err;
	return (ssize_t)len;
}

/* Start time (field 22 of /proc/PID/stat), 0 or -errno. */
static int read_start_time(struct symbolizer *s, uint32_t pid, uint64_t *ret)
{
	const char *p;
	ssize_t n;
	int field;

	if (proc_tracker__gone(s->procs, pid))
		return -ESRCH; /* its exit was told: no /proc read */
	n = read_file(s, pid, PROCFS_STAT, 65536);
	if (n < 0)
		return (int)n;
	p = strrchr(s->buf, ')'); /* comm may hold spaces and parentheses */
	if (!p)
		return -EINVAL;
	p++;
	/* p is at the space before field 3 (state); count spaces up to field 22 */
	for (field = 2; field < 22 && *p; p++)
		if (*p == ' ')
			field++;
	if (field != 22)
		return -EINVAL;
	*ret = strtoull(p, NULL, 10);
	return 0;
}

/* The innermost pid of the process (the one its own pid namespace sees), from NSpid. */
uint32_t sym_read_nspid(struct symbolizer *s, uint32_t pid)
{
	const char *p, *eol;
	uint32_t ns = pid;

	if (read_file(s, pid, PROCFS_STATUS, 1 << 20) < 0)
		return pid;
	p = strstr(s->buf, "\nNSpid:");
	if (!p)
		return pid;
	p += 7;
	eol = strchr(p, '\n');
	if (!eol)
		eol = p + strlen(p);
	while (p < eol) {
		char *end;
		unsigned long v;

		while (p < eol && (*p == ' ' || *p == '\t'))
			p++;
		if (p >= eol)
			break;
		v = strtoul(p, &end, 10);
		if (end == p)
			break;
		ns = (uint32_t)v;
		p = end;
	}
	return ns;
}

/* /proc/PID/exe's identity, as the tracker last saw it within VALIDATE_NS (one stat for the
 * symbolizer and the runtime readers that look at a new process), else stat'ed now; 0s when
 * it cannot be read */
static void read_exe_id(struct symbolizer *s, uint32_t pid, uint64_t *dev, uint64_t *ino)
{
	if (proc_tracker__exe_id(s->procs, pid, VALIDATE_NS, dev, ino))
		*dev = *ino = 0;
}

struct maps_ctx {
	struct mapping *maps;
	size_t n, cap;
	char *paths;
	size_t paths_len, paths_cap;
	int err;
};

static int add_path(struct maps_ctx *c, const char *p, size_t len, uint32_t *ret_off)
{
	if (c->paths_len + len + 1 > c->paths_cap) {
		size_t ncap = c->paths_cap ? c->paths_cap * 2 : 4096;
		char *np;

		while (ncap < c->paths_len + len + 1)
			ncap *= 2;
		if (ncap > UINT32_MAX)
			return -ENOMEM;
		np = realloc(c->paths, ncap);
		if (!np)
			return -ENOMEM;
		c->paths = np;
		c->paths_cap = ncap;
	}
	*ret_off = (uint32_t)c->paths_len;
	memcpy(c->paths + c->paths_len, p, len);
	c->paths_len += len;
	c->paths[c->paths_len++] = '\0';
	return 0;
}

static int collect_mapping(const struct procmaps_entry *e, void *ctx)
{
	struct maps_ctx *c = ctx;
	struct mapping *m;
	const char *base;
	size_t blen;

	if (!e->x)
		return 0;
	if (c->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 64;
		struct mapping *nm = realloc(c->maps, ncap * sizeof(*nm));

		if (!nm)
			return c->err = -ENOMEM;
		c->maps = nm;
		c->cap = ncap;
	}
	m = &c->maps[c->n];
	*m = (struct mapping){ .start = e->start, .end = e->end, .pgoff = e->pgoff,
			       .dev = makedev(e->dev_major, e->dev_minor), .ino = e->inode,
			       .kind = e->kind, .deleted = e->deleted, .unknown_id = -1,
			       .snap_e = e };
	if (add_path(c, e->path, e->path_len, &m->path_off))
		return c->err = -ENOMEM;
	m->path_len = (uint32_t)e->path_len;
	base = procmaps_basename(e, &blen);
	m->base_off = m->path_off + (uint32_t)(base - e->path);
	m->base_len = (uint32_t)blen;
	c->n++;
	return 0;
}


static int cmp_mapping(const void *a, const void *b)
{
	const struct mapping *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/* @p's mappings from @pm (NULL: the error @n), which it keeps (p->snap, for the mappings'
 * identities) or releases. 0 or -errno. */
static int take_maps(struct symbolizer *s, struct proc *p, struct proc_maps *pm, int n)
{
	struct maps_ctx c = { 0 };
	size_t i, j;

	if (n < 0) {
		s->stats.maps_errors++;
		if (n == -ENOENT || n == -ESRCH) {
			if (!p->gone) {
				p->gone = true;
				p->gone_ns = p->maps_read_ns;
				s->stats.pid_gone++;
			}
		}
		return (int)n;
	}
	(void)proc_maps__for_each(pm, collect_mapping, &c);
	if (c.err) {
		proc_maps__put(pm);
		free(c.maps);
		free(c.paths);
		s->stats.maps_errors++;
		return c.err;
	}
	/* the kernel lists them in order; sort only if not (the lookup depends on it) */
	for (i = 1; i < c.n; i++) {
		if (c.maps[i - 1].start > c.maps[i].start) {
			qsort(c.maps, c.n, sizeof(*c.maps), cmp_mapping);
			break;
		}
	}
	/* keep the frame ids of "[base]" names: they do not change (both lists sorted: merge) */
	for (i = 0, j = 0; i < c.n && j < p->nmaps;) {
		struct mapping *m = &c.maps[i], *o = &p->maps[j];

		if (o->start < m->start) {
			j++;
		} else if (o->start > m->start) {
			i++;
		} else {
			if (o->dev == m->dev && o->ino == m->ino)
				m->unknown_id = o->unknown_id;
			i++;
			j++;
		}
	}
	free(p->maps);
	free(p->paths);
	proc_maps__put(p->snap); /* held for its mappings' identities (c.maps[i].snap_e) */
	p->snap = pm;
	p->maps = c.maps;
	p->nmaps = c.n;
	p->paths = c.paths;
	p->paths_len = c.paths_len;
	p->mem_bytes = c.cap * sizeof(*c.maps) + c.paths_cap;
	return 0;
}

int sym_read_maps(struct symbolizer *s, struct proc *p, uint64_t min_read_ns)
{
	struct proc_maps *pm;

	p->maps_read_ns = mono_ns();
	p->version = ++s->version_seq;
	s->stats.maps_reads++;
	/* the tracker's read of this event: the unwinder and the CPython reader share it */
	pm = proc_tracker__maps(s->procs, p->pid, min_read_ns);
	/* as old as the snapshot (a fork's copy of its parent's last read may be older): a miss
	 * reads again once that is MAPS_FIRST_REFRESH_NS old, not that long after this call */
	if (pm && proc_maps__read_ns(pm) < p->maps_read_ns)
		p->maps_read_ns = proc_maps__read_ns(pm);
	return take_maps(s, p, pm, pm ? 0 : -errno);
}

/* --- process cache --------------------------------------------------------------------------- */

/*
 * A process image's state is the process tracker's extension (proc_tracker__ext_register()):
 * current while it is the image /proc shows, on the symbolizer's LRU list (max_pids, the prune's
 * order); ended ("retired") when an exec or a pid reuse replaced it, kept RETIRED_GRACE_NS (at
 * most MAX_RETIRED) for the samples taken before and named after. An exit does not end it
 * (keep_at_exit): a gone process stays current, checked at each note, until GONE_GRACE_NS.
 */

static void lru_unlink_p(struct proc *p)
{
	p->lru_prev->lru_next = p->lru_next;
	p->lru_next->lru_prev = p->lru_prev;
	p->lru_prev = p->lru_next = NULL;
}

static void lru_front_p(struct symbolizer *s, struct proc *p)
{
	p->lru_next = s->lru_p.lru_next;
	p->lru_prev = &s->lru_p;
	s->lru_p.lru_next->lru_prev = p;
	s->lru_p.lru_next = p;
}

/* What @p holds (not @p: the tracker's); the JIT symbols leave the gauge (and the budget of
 * every perf map). */
static void proc_release(struct symbolizer *s, struct proc *p)
{
	if (p->pm) {
		s->stats.perfmap_symbols -= perfmap__count(p->pm);
		s->stats.perfmap_bytes -= perfmap__data_bytes(p->pm);
	}
	proc_maps__put(p->snap);
	free(p->maps);
	free(p->paths);
	perfmap__free(p->pm);
	p->snap = NULL;
	p->maps = NULL;
	p->paths = NULL;
	p->pm = NULL;
}

/* The tracker lets a state go (evicted, dropped, expired, or at the end). */
static void ext_release(void *ctx, uint32_t pid, void *state)
{
	struct symbolizer *s = ctx;
	struct proc *p = state;

	(void)pid;
	if (p->lru_next) { /* current (the tracker's end: symbolizer__free) */
		lru_unlink_p(p);
		s->nprocs--;
	}
	if (p->retired)
		s->nretired--;
	proc_release(s, p);
}

/* @p is kept as an image that ended: /proc/PID is another image's now, never read for it
 * again (no maps re-read, no perf map refresh; its files only as pinned or cached, never by a
 * path). */
static void mark_retired(struct symbolizer *s, struct proc *p)
{
	p->retired = true;
	s->nretired++;
	s->stats.pid_retired++;
	if (!p->gone) {
		p->gone = true;
		p->gone_ns = mono_ns();
	}
}

/* The tracker ended @pid's image (its exec, the sweep) or the symbolizer did (proc_retire()). */
static void ext_ended(void *ctx, uint32_t pid, void *state, uint64_t event_ns)
{
	struct symbolizer *s = ctx;
	struct proc *p = state;

	(void)pid;
	(void)event_ns;
	if (p->lru_next) {
		lru_unlink_p(p);
		s->nprocs--;
	}
	if (!p->retired)
		mark_retired(s, p);
}

int sym_proc_cache_init(struct symbolizer *s)
{
	s->ext = proc_tracker__ext_register(s->procs,
					    &(struct proc_ext_ops){ .name = "symbolizer",
								    .size = sizeof(struct proc),
								    .keep_ns = RETIRED_GRACE_NS,
								    .ended = ext_ended,
								    .release = ext_release,
								    .ctx = s,
								    .keep_at_exit = true });
	return s->ext < 0 ? s->ext : 0;
}

/* Releases the cached and retired processes. */
void sym_proc_cache_fini(struct symbolizer *s)
{
	if (s->procs && s->ext >= 0)
		proc_tracker__ext_unregister(s->procs, s->ext);
	s->ext = -1;
}

static struct proc *proc_find(struct symbolizer *s, uint32_t pid)
{
	return s->ext >= 0 ? proc_tracker__ext(s->procs, s->ext, pid, false) : NULL;
}

struct proc *sym_proc_find(struct symbolizer *s, uint32_t pid)
{
	return proc_find(s, pid);
}

/* Lets @p (current) go now, not kept. */
static void proc_remove(struct symbolizer *s, struct proc *p)
{
	proc_tracker__ext_drop(s->procs, s->ext, p->pid); /* ext_release() */
}

/* Ends @p (current) as of @until_ns, kept for the samples taken before (0: let go now). */
static void proc_retire(struct symbolizer *s, struct proc *p, uint64_t until_ns)
{
	if (!until_ns) {
		proc_remove(s, p);
		return;
	}
	proc_tracker__ext_end(s->procs, s->ext, p->pid, until_ns); /* ext_ended() */
	proc_tracker__ext_trim(s->procs, s->ext, MAX_RETIRED);
}

/* The retired state of @pid that was current at @time_ns, or NULL. */
struct proc *sym_retired_find(struct symbolizer *s, uint32_t pid, uint64_t time_ns)
{
	if (!s->nretired)
		return NULL;
	return proc_tracker__ext_ended_at(s->procs, s->ext, pid, time_ns);
}

uint64_t symbolizer__pid_version(const struct symbolizer *s, uint32_t pid)
{
	const struct proc *p = s->ext >= 0 ? proc_tracker__ext(s->procs, s->ext, pid, false) : NULL;

	return p && !p->gone ? p->version : 0;
}

uint64_t symbolizer__user_unresolved(const struct symbolizer *s)
{
	return s->stats.user_unresolved;
}

uint64_t symbolizer__user_retryable(const struct symbolizer *s)
{
	return s->user_retryable;
}

bool symbolizer__has_retired(const struct symbolizer *s, uint32_t pid)
{
	return s->nretired && proc_tracker__ext_has_ended(s->procs, s->ext, pid);
}

/* Clock ticks since boot (a /proc/PID/stat start time) as CLOCK_MONOTONIC ns; 0 if unknown. */
uint64_t sym_start_to_mono(uint64_t ticks)
{
	long hz = sysconf(_SC_CLK_TCK);
	struct timespec b, m;
	int64_t boot_ns, off;

	if (hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &b) || clock_gettime(CLOCK_MONOTONIC, &m))
		return 0;
	boot_ns = (int64_t)(ticks * (1000000000ull / (uint64_t)hz));
	/* the time suspended: 0 on a host that never slept, and then the two readings above
	 * differ by the time between them, either way (it was unsigned: every start time
	 * came out 0, "unknown") */
	off = ((int64_t)b.tv_sec * 1000000000LL + b.tv_nsec) - ((int64_t)m.tv_sec * 1000000000LL + m.tv_nsec);
	if (off < 0)
		off = 0;
	return boot_ns > off ? (uint64_t)(boot_ns - off) : 0;
}

static bool has_anon_code(const struct proc *p)
{
	size_t i;

	for (i = 0; i < p->nmaps; i++)
		if (p->maps[i].kind == PROCMAPS_ANON)
			return true;
	return false;
}

struct image_probe {
	uint64_t start, dev, ino;
	bool found;
};

static int probe_mapping(const struct procmaps_entry *e, void *ctx)
{
	struct image_probe *ip = ctx;

	if (e->x && e->start == ip->start && e->inode == ip->ino &&
	    makedev(e->dev_major, e->dev_minor) == ip->dev)
		ip->found = true;
	return 0;
}

/*
 * Whether @p's mappings are of the image in @fork_copy: its first file mapping (the executable,
 * where ASLR put it) is there too. A read in the middle of an exec shows the new image already
 * (the kernel switches the address space and maps the new file well before the exec tracepoint
 * fires, ~100 us later here; under load much more), with a time before the exec event's.
 */
static bool same_image(const struct proc *p, const struct proc_maps *fork_copy)
{
	struct image_probe ip = { 0 };
	size_t i;

	for (i = 0; i < p->nmaps; i++) {
		if (p->maps[i].kind == PROCMAPS_FILE) {
			ip = (struct image_probe){ .start = p->maps[i].start, .dev = p->maps[i].dev,
						   .ino = p->maps[i].ino };
			(void)proc_maps__for_each(fork_copy, probe_mapping, &ip);
			return ip.found;
		}
	}
	return false; /* no file mapped: nothing the fork's copy would not name better */
}

/*
 * A process first named after an exec whose state the symbolizer did not hold then (a shell's
 * fork, listed by its fork and never noted, sampled in the shell's code before its exec and
 * named at the next tick, after the exec): what ran before it, as the tracker kept it, for the
 * samples before the exec (without: a 115-frame bash stack named with cat's mappings, all
 * "[unknown]", test_exec's deep shells under load). None if a state is kept for that time.
 */
static void retire_before_exec(struct symbolizer *s, uint32_t pid)
{
	struct proc_maps *pm;
	struct proc q = { 0 }, *r;
	uint64_t until = 0;

	pm = proc_tracker__before_exec(s->procs, pid, &until);
	if (!pm)
		return;
	if (!until || sym_retired_find(s, pid, until - 1)) {
		proc_maps__put(pm);
		return;
	}
	q.pid = pid;
	q.gone = true; /* /proc/PID is the new image's: never read for this one */
	q.maps_read_ns = q.validated_ns = q.gone_ns = mono_ns();
	q.version = ++s->version_seq;
	if (take_maps(s, &q, pm, 0) ||
	    !(r = proc_tracker__ext_add_ended(s->procs, s->ext, pid, until))) {
		proc_release(s, &q);
		return;
	}
	*r = q;
	mark_retired(s, r);
	s->stats.pid_before_exec++;
	proc_tracker__ext_trim(s->procs, s->ext, MAX_RETIRED);
}

/* A new state for @pid, its mappings read now (or, @held, the tracker's snapshot only). */
static struct proc *proc_create_as(struct symbolizer *s, uint32_t pid, bool held)
{
	struct proc *p;

	while (s->nprocs >= s->o.max_pids && s->lru_p.lru_prev != &s->lru_p) {
		proc_remove(s, s->lru_p.lru_prev);
		s->stats.pid_evictions++;
	}
	p = proc_tracker__ext(s->procs, s->ext, pid, true); /* zeroed: none was current */
	if (!p)
		return NULL;
	p->pid = pid;
	p->validated_ns = mono_ns();
	/* a process whose fork the tracker saw: its start is the fork's (proc_stale() checks it
	 * against /proc's at the next validation); else /proc's now */
	if (!held && !proc_tracker__born(s->procs, pid, &p->born_ns))
		s->stats.pid_born_from_fork++;
	if (!p->born_ns && read_start_time(s, pid, &p->start_time) < 0) {
		p->gone = true;
		p->gone_ns = p->validated_ns;
		s->stats.pid_gone++;
		/* gone before its first look (a shell's fork that lived a few ms, under load): the
		 * tracker's last snapshot of it (its fork copy, its read at exec) names its samples,
		 * which would all be "[unknown]" without; none if the tracker had none */
		if (!held)
			(void)sym_read_maps(s, p, 0);
	} else if (!held) {
		struct proc_maps *pm;

		/* the namespaced pid (NSpid) is read when a perf map is first looked for */
		read_exe_id(s, pid, &p->exe_dev, &p->exe_ino);
		(void)sym_read_maps(s, p, 0);
		/*
		 * A fork whose exec the events have not told yet (the tracker keeps its copy of
		 * its parent's until then) that shows another image: it exec'd after the samples
		 * being named were taken (their batch holds no exec of it: an exec's record comes
		 * before the new image's samples). The fork's copy names them (a shell's fork
		 * sampled before its exec and read after: a 108-frame bash stack all "[unknown]",
		 * test_exec's deep shells in a fresh-clone run); the exec retires this state and
		 * the new image's first sample reads again.
		 */
		pm = proc_tracker__forked(s->procs, pid);
		if (pm && !same_image(p, pm)) {
			size_t i;

			if (!take_maps(s, p, pm, 0))
				s->stats.pid_before_exec++;
			/* its executable the fork's (its first file mapping): the next check
			 * of /proc's retires this state even if the exec's event was lost */
			p->exe_dev = p->exe_ino = 0;
			for (i = 0; i < p->nmaps; i++)
				if (p->maps[i].kind == PROCMAPS_FILE) {
					p->exe_dev = p->maps[i].dev;
					p->exe_ino = p->maps[i].ino;
					break;
				}
		} else {
			proc_maps__put(pm);
		}
	}
	if (held) {
		/* no executable noted (0: not compared): /proc's is the new image's */
		struct proc_maps *pm = proc_tracker__forked(s->procs, pid);

		p->maps_read_ns = mono_ns();
		p->version = ++s->version_seq;
		if (!take_maps(s, p, pm, pm ? 0 : -errno))
			s->stats.pid_before_exec++;
	}
	if (!held)
		retire_before_exec(s, pid);
	lru_front_p(s, p);
	s->nprocs++;
	return p;
}

static struct proc *proc_create(struct symbolizer *s, uint32_t pid)
{
	return proc_create_as(s, pid, false);
}

struct proc *sym_proc_get(struct symbolizer *s, uint32_t pid)
{
	struct proc *p = proc_find(s, pid);

	if (p) {
		s->stats.pid_hits++;
		if (s->lru_p.lru_next != p) {
			lru_unlink_p(p);
			lru_front_p(s, p);
		}
		return p;
	}
	s->stats.pid_misses++;
	return proc_create(s, pid);
}

void symbolizer__retire_pid(struct symbolizer *s, uint32_t pid, uint64_t until_ns)
{
	struct proc *p = proc_find(s, pid);
	struct proc_maps *pm;

	/*
	 * Read after the exec began (a fork's first sample, drained late, or a read in the exec's
	 * own window): the new image's mappings, not those of the samples this state is kept for.
	 * Until its first exec a fork runs its parent's image, so the fork's copy of its parent's
	 * names them, unless this read shows that image too (a read before the exec: it may know
	 * more, e.g. a library the child loaded).
	 */
	if (p && until_ns) {
		pm = proc_tracker__forked(s->procs, pid);
		if (pm && pm != p->snap && (p->maps_read_ns > until_ns || !same_image(p, pm))) {
			if (!take_maps(s, p, pm, 0))
				s->stats.pid_before_exec++;
		} else {
			proc_maps__put(pm);
		}
	}
	if (p)
		proc_retire(s, p, until_ns);
	/* a tracker of its own hears of no exec: the old image's snapshot goes here (emberd's
	 * shared tracker drops it at the exec event) */
	if (s->own_procs)
		proc_tracker__exit(s->own_procs, pid);
}

void symbolizer__forget_pid(struct symbolizer *s, uint32_t pid)
{
	symbolizer__retire_pid(s, pid, 0);
}

/*
 * 1 when the cached @p no longer describes the live process @pid (reuse, exec), else 0; then
 * *@until is when the new one began (CLOCK_MONOTONIC), as far as /proc tells.
 */
static int proc_stale(struct symbolizer *s, struct proc *p, uint64_t *until)
{
	uint64_t st, dev, ino, born;

	*until = mono_ns();
	if (read_start_time(s, p->pid, &st) < 0) {
		if (!p->gone) {
			p->gone = true;
			p->gone_ns = mono_ns();
			s->stats.pid_gone++;
		}
		return 0;
	}
	born = sym_start_to_mono(st);
	/* its start known from its fork's event: /proc's (10 ms ticks) is the same process's when
	 * it falls within a tick or two of it */
	if (!p->gone && !p->start_time && p->born_ns && born + 2 * BORN_SLACK_NS >= p->born_ns &&
	    born <= p->born_ns + BORN_SLACK_NS)
		p->start_time = st;
	if (p->gone || st != p->start_time) {
		if (born && born < *until)
			*until = born;
		s->stats.pid_reuses++;
		return 1;
	}
	read_exe_id(s, p->pid, &dev, &ino);
	if (ino && p->exe_ino && (dev != p->exe_dev || ino != p->exe_ino)) {
		s->stats.pid_execs++;
		return 1;
	}
	return 0;
}

void symbolizer__note_pid(struct symbolizer *s, uint32_t pid)
{
	struct proc *p = proc_find(s, pid);
	uint64_t t = mono_ns(), until;
	size_t i;

	if (p) {
		/* a gone process is checked every time: its pid may be in use again already, and
		 * the new process must not be symbolized with the old one's mappings */
		if (t - p->validated_ns < VALIDATE_NS && !p->gone)
			return;
		p->validated_ns = t;
		if (!proc_stale(s, p, &until))
			return;
		proc_retire(s, p, until);
	}
	p = sym_proc_get(s, pid);
	if (!p)
		return;
	/*
	 * Open its images while the files are reachable, so that a short-lived process still
	 * resolves; read their symbols only when a stack needs them (most of a process's libraries
	 * never appear in its samples).
	 */
	for (i = 0; i < p->nmaps; i++)
		if (p->maps[i].kind == PROCMAPS_FILE)
			sym_elf_pin(s, p, &p->maps[i]);
	/* and its JIT symbols, which runtimes often remove at exit */
	if (s->o.perf_maps && has_anon_code(p))
		sym_perfmap_refresh(s, p);
}

void symbolizer__note_pid_before_exec(struct symbolizer *s, uint32_t pid)
{
	struct proc *p = proc_find(s, pid);

	if (p && !p->gone)
		return; /* captured before its exec: the state the exec retires */
	if (p)
		proc_remove(s, p); /* an earlier process's, gone */
	(void)proc_create_as(s, pid, true); /* counted there (pid_before_exec) */
}

/* Expiry, and with @check each live process's start time and executable read again. */
static int prune(struct symbolizer *s, bool check)
{
	struct proc *p, *prev;
	uint64_t t = mono_ns(), until;
	int n = 0;

	proc_tracker__ext_prune(s->procs, s->ext); /* retired states past RETIRED_GRACE_NS */
	sym_elf_unpin_old(s, t);
	for (p = s->lru_p.lru_prev; p != &s->lru_p; p = prev) {
		prev = p->lru_prev;
		if (check && !p->gone && proc_stale(s, p, &until)) {
			proc_retire(s, p, until);
			n++;
		} else if (p->gone && t >= p->gone_ns + GONE_GRACE_NS) {
			proc_remove(s, p);
			n++;
		} else if (!p->gone && s->o.perf_maps && has_anon_code(p)) {
			/* read what JITs appended while it is there to read: a process may exit
			 * before its samples are symbolized */
			sym_perfmap_refresh(s, p);
		}
	}
	return n;
}

int symbolizer__prune(struct symbolizer *s)
{
	return prune(s, true);
}

int symbolizer__prune_gone(struct symbolizer *s)
{
	return prune(s, false);
}

void symbolizer__trim_retired(struct symbolizer *s)
{
	if (s->ext >= 0)
		proc_tracker__ext_trim(s->procs, s->ext, MAX_RETIRED);
}

void symbolizer__check_pid(struct symbolizer *s, uint32_t pid)
{
	struct proc *p = proc_find(s, pid);
	uint64_t until;

	if (p && !p->gone && proc_stale(s, p, &until))
		proc_retire(s, p, until);
}
