// SPDX-License-Identifier: MIT
#include "ember/daemon/proc/proctrack.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ember/core/base/array.h"
#include "ember/core/base/clock.h"
#include "ember/core/base/hash.h"
#include "ember/core/base/readall.h"
#include "ember/core/base/strtab.h"
#include "ember/daemon/proc/mapfile.h"
#include "ember/daemon/proc/procfs.h"

/*
 * PROCMAP_QUERY (linux/fs.h since 6.11; Debian 12's headers are 6.1's): the UAPI struct, whose
 * layout is fixed by its size field (104 bytes here, the first version).
 */
#ifndef PROCMAP_QUERY
struct procmap_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start;
	uint64_t vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t vma_name_size;
	uint32_t build_id_size;
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};
#define PROCMAP_QUERY _IOWR('f', 17, struct procmap_query)
#define PROCMAP_QUERY_VMA_READABLE 0x01
#define PROCMAP_QUERY_VMA_WRITABLE 0x02
#define PROCMAP_QUERY_VMA_EXECUTABLE 0x04
#define PROCMAP_QUERY_VMA_SHARED 0x08
#define PROCMAP_QUERY_COVERING_OR_NEXT_VMA 0x10
#endif

#define SLOTS		4096		/* hash buckets of processes (chained) */
#define MAPS_MAX_BYTES	(64u << 20)	/* a maps text beyond this: an error, counted */
#define MAX_MAPPINGS	65536		/* kept per process; the kernel's default limit is 65530 */
#define NAME_MAX_BYTES	4096

/*
 * A mapping's identity as mapfile_stat() found it, once per snapshot: what the
 * readers need of the fstat (struct filecache_id's fields, the type). Written once under the
 * snapshot's lock, then read-only.
 */
struct ident {
	bool checked;			/* a check succeeded: the fields below */
	uint32_t uid, mode;
	uint64_t dev, ino, size;
	int64_t mtime_ns;
};

struct proc_maps {
	int refs;			/* atomic */
	uint64_t read_ns;
	size_t n;
	size_t bytes;
	bool loading;			/* the loader mapped and no other shared object: read
					   before ld.so mapped the libraries (maps_loading()) */
	pthread_mutex_t ident_lock;	/* the idents: a memo in a snapshot readers share */
	struct ident *ident;		/* n of them after the entries; NULL: none checked yet */
	struct procmaps_entry e[];	/* then the idents, then the paths, NUL-terminated */
};

/* How long what ran before an exec is kept for samples named late (proc_tracker__before_exec):
 * longer than the symbolizer keeps a retired state (25 s), far longer than a loaded worker's
 * lag; then the sweep lets it go (a long-lived process would hold its parent's old snapshot). */
#define PRE_EXEC_KEEP_NS (30ull * 1000000000ull)

struct tproc {
	struct tproc *hnext;
	uint32_t pid;
	bool stale;			/* an event since the read: read again when asked */
	struct proc_maps *m;		/* NULL: not read yet */
	/* a forked process's copy of its parent's snapshot, kept past later reads until its
	 * exec or exit: what names its samples from before an exec that a read saw first
	 * (shared with the parent's entry, counted there) */
	struct proc_maps *fork_m;
	bool kernel_m;			/* m is the exec's image as the kernel told it, not a read */
	/* the image before its last exec (fork_m, else m), and the exec's time: for samples
	 * taken before the exec and named after it (proc_tracker__before_exec()) */
	struct proc_maps *pre_m;
	uint64_t pre_until_ns;
	uint64_t gone_seen_ns;		/* a sweep found it gone (0: not yet) */
	uint64_t names_gen;		/* proc_tracker__admit_names(): the names' generation... */
	size_t names_bytes;		/* ... and what the process brought into it */
	uint64_t exe_ns;		/* proc_tracker__exe_id(): when /proc/PID/exe was stat'ed
					   (0: not since this image began)... */
	uint64_t exe_dev, exe_ino;	/* ... and what it was */
	uint64_t born_ns;		/* its fork's time (CLOCK_MONOTONIC), kept through its
					   execs; 0: not known */
	uint32_t ppid;			/* fork_m's process: its parent at the fork (0: none) */
	uint32_t pre_ppid;		/* pre_m is a fork's copy of this process's (0: not) */
};

/* Exits remembered (proc_tracker__gone()): direct-mapped by pid, a collision forgets the older
 * one (its pid is then asked of /proc, as before); kept this long, or until a fork or exec of
 * the pid says it is in use again */
#define GONE_SLOTS 4096
#define GONE_KEEP_NS (30ull * 1000000000ull)

struct gone_pid {
	uint32_t pid;
	uint64_t ns;			/* mono time of the exit's handling */
};

/*
 * An extension's state for one process image (proc_tracker__ext_register()): current until
 * the image ends (exec, exit, swept), then "ended", kept ops.keep_ns for the samples taken
 * before and named after. The stage's bytes follow the header.
 */
#define EXT_SLOTS 256
struct pext {
	struct pext *next;		/* hash chain: current, or ended (a pid's newest first) */
	struct pext *lnext;		/* ended: the list of all, newest first */
	uint32_t pid;
	uint64_t ended_ns;		/* mono time it was ended (handled); 0: current */
	uint64_t until_ns;		/* ended: its image's end (the event's time, mono) */
	max_align_t data[];
};

struct ext {
	bool used;
	struct proc_ext_ops ops;
	struct pext *cur[EXT_SLOTS];	/* current states by pid */
	struct pext *gone[EXT_SLOTS];	/* ended ones by pid, a pid's newest first */
	struct pext *ended;		/* ended ones, newest first (lnext) */
	size_t nr_cur, nr_ended;
};

struct proc_tracker {
	struct proc_tracker_opts o;
	struct ext ext[PROC_EXT_MAX];	/* stages' per-process states (under lock) */
	struct gone_pid gone[GONE_SLOTS];
	char proc_root[256];
	pthread_mutex_t lock;		/* the table and the counters */
	pthread_mutex_t read_lock;	/* the scratch below */
	struct tproc *slots[SLOTS];
	bool query_off;			/* the kernel said ENOTTY/EINVAL: text from now on */
	uint64_t names_gen;		/* the generation st.names_share_max is of */
	struct proc_tracker_stats st;
	/* scratch of a read (under read_lock) */
	char *text;
	size_t text_cap;
	struct procmaps_entry *ents;
	size_t nents, ents_cap;
	char *names;
	size_t names_len, names_cap;
	char name[NAME_MAX_BYTES];	/* a PROCMAP_QUERY answer's name */
};

/* --- snapshots ------------------------------------------------------------------------------- */

int proc_maps__for_each(const struct proc_maps *m, procmaps_entry_fn fn, void *ctx)
{
	size_t i;
	int r;

	for (i = 0; m && i < m->n; i++) {
		r = fn(&m->e[i], ctx);
		if (r)
			return r;
	}
	return 0;
}

size_t proc_maps__count(const struct proc_maps *m)
{
	return m ? m->n : 0;
}

uint64_t proc_maps__read_ns(const struct proc_maps *m)
{
	return m ? m->read_ns : 0;
}

static struct proc_maps *maps_get(struct proc_maps *m)
{
	__atomic_fetch_add(&m->refs, 1, __ATOMIC_RELAXED);
	return m;
}

/*
 * The bytes of every snapshot alive in this process, wherever it is held: the tracker's table,
 * a reader's (the symbolizer's, the unwinder's, a retired image's), a fork's copy. Counted once
 * each, from its making to its last put (mem_bytes counted them per holder of the table before,
 * and not those only readers still held: 0.75 MB of 0.8 in a soak under massif).
 */
static uint64_t snapshot_bytes;

static void snapshot_made(struct proc_maps *m)
{
	__atomic_add_fetch(&snapshot_bytes, m->bytes, __ATOMIC_RELAXED);
}

void proc_maps__put(struct proc_maps *m)
{
	if (m && __atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		__atomic_sub_fetch(&snapshot_bytes, m->bytes, __ATOMIC_RELAXED);
		pthread_mutex_destroy(&m->ident_lock);
		free(m);
	}
}

/* --- reading --------------------------------------------------------------------------------- */

/* What is kept: files (a table, symbols, an interpreter), the vDSO, executable anonymous memory. */
static bool keep(const struct procmaps_entry *e)
{
	return e->kind == PROCMAPS_FILE || e->kind == PROCMAPS_VDSO ||
	       (e->kind == PROCMAPS_ANON && e->x);
}

/* Adds @e to the scratch, its path copied. 0 or -ENOMEM. */
static int add(struct proc_tracker *pt, const struct procmaps_entry *e)
{
	struct procmaps_entry *x;

	if (pt->nents >= MAX_MAPPINGS)
		return 0;
	if (array_grow((void **)&pt->ents, &pt->ents_cap, pt->nents + 1, sizeof(*pt->ents), 64) ||
	    array_grow((void **)&pt->names, &pt->names_cap, pt->names_len + e->path_len + 1, 1,
		       4096))
		return -ENOMEM;
	x = &pt->ents[pt->nents++];
	*x = *e;
	memcpy(pt->names + pt->names_len, e->path, e->path_len);
	pt->names[pt->names_len + e->path_len] = '\0';
	x->path = (const char *)(uintptr_t)pt->names_len; /* an offset until the snapshot is made */
	pt->names_len += e->path_len + 1;
	return 0;
}

static int on_line(const struct procmaps_entry *e, void *ctx)
{
	return keep(e) ? add(ctx, e) : 0;
}

/* One /proc/PID/maps read. 0 or -errno. */
static int read_text(struct proc_tracker *pt, uint32_t pid)
{
	size_t len = 0;
	int r;

	r = procfs_read(pt->proc_root, pid, PROCFS_MAPS, &pt->text, &pt->text_cap, MAPS_MAX_BYTES,
			&len);
	if (r)
		return r;
	/* an exited (zombie) process reads as empty */
	if (!len)
		return -ESRCH;
	return procmaps_parse(pt->text, len, on_line, pt, NULL);
}

/*
 * PROCMAP_QUERY, one ioctl per mapping from address 0 up. 0, -ENOTTY (the kernel has no such
 * ioctl: the caller reads the text), or -errno.
 */
static int read_query(struct proc_tracker *pt, int fd, uint64_t *ret_ioctls)
{
	char *name = pt->name;
	uint64_t addr = 0;
	int r;

	for (;;) {
		struct procmap_query q = { .size = sizeof(q),
					   .query_flags = PROCMAP_QUERY_COVERING_OR_NEXT_VMA,
					   .query_addr = addr,
					   .vma_name_addr = (uint64_t)(uintptr_t)name,
					   .vma_name_size = NAME_MAX_BYTES };
		struct procmaps_entry e = { 0 };

		(*ret_ioctls)++;
		if (ioctl(fd, PROCMAP_QUERY, &q)) {
			r = -errno;
			if (r == -ENOENT)
				return 0; /* no mapping at or above addr: done */
			if (r == -EINVAL && addr == 0)
				return -ENOTTY; /* an older layout the kernel refuses: the text */
			return r;
		}
		if (q.vma_end <= addr)
			return -EIO; /* cannot happen: the kernel moves forward */
		addr = q.vma_end;
		e.start = q.vma_start;
		e.end = q.vma_end;
		e.pgoff = q.vma_offset;
		e.inode = q.inode;
		e.dev_major = q.dev_major;
		e.dev_minor = q.dev_minor;
		e.r = q.vma_flags & PROCMAP_QUERY_VMA_READABLE;
		e.w = q.vma_flags & PROCMAP_QUERY_VMA_WRITABLE;
		e.x = q.vma_flags & PROCMAP_QUERY_VMA_EXECUTABLE;
		e.shared = q.vma_flags & PROCMAP_QUERY_VMA_SHARED;
		/* vma_name_size counts the NUL; 0: no name (anonymous) */
		procmaps_classify(name, q.vma_name_size ? q.vma_name_size - 1 : 0, &e);
		if (keep(&e) && add(pt, &e))
			return -ENOMEM;
	}
}

/* Whether @m was read while the loader was still mapping the libraries: the loader mapped and
 * no other shared object (a dynamically linked program's image just after its exec). */
static bool maps_loading(const struct proc_maps *m)
{
	bool loader = false;

	for (size_t i = 0; i < m->n; i++) {
		if (m->e[i].kind != PROCMAPS_FILE)
			continue;
		if (procmaps_is_shared_object(&m->e[i]))
			return false;
		loader |= procmaps_is_loader(&m->e[i]);
	}
	return loader;
}

/* Reads @pid's mappings into a new snapshot. NULL + errno. */
static struct proc_maps *read_maps(struct proc_tracker *pt, uint32_t pid)
{
	struct proc_maps *m = NULL;
	uint64_t ioctls = 0;
	bool query = false;
	size_t i;
	int fd, r = 0;

	pthread_mutex_lock(&pt->read_lock);
	pt->nents = 0;
	pt->names_len = 0;
	if (!pt->o.force_maps_read && !__atomic_load_n(&pt->query_off, __ATOMIC_RELAXED)) {
		fd = procfs_open(pt->proc_root, pid, PROCFS_MAPS);
		if (fd < 0) {
			r = fd;
		} else {
			r = read_query(pt, fd, &ioctls);
			close(fd);
			if (r == -ENOTTY) { /* no PROCMAP_QUERY here (before 6.11): the text */
				__atomic_store_n(&pt->query_off, true, __ATOMIC_RELAXED);
				pt->nents = 0;
				pt->names_len = 0;
				r = 0;
			} else {
				query = true;
			}
		}
	}
	if (!query && !r)
		r = read_text(pt, pid);
	else if (query && !r && !pt->nents)
		r = -ESRCH; /* a zombie has no mappings */
	if (!r) {
		m = malloc(sizeof(*m) + pt->nents * (sizeof(m->e[0]) + sizeof(m->ident[0])) +
			   pt->names_len);
		if (!m)
			r = -ENOMEM;
	}
	if (m) {
		char *names;

		m->refs = 1;
		m->read_ns = mono_ns();
		m->n = pt->nents;
		m->bytes = sizeof(*m) + pt->nents * (sizeof(m->e[0]) + sizeof(m->ident[0])) +
			   pt->names_len;
		pthread_mutex_init(&m->ident_lock, NULL);
		m->ident = (struct ident *)&m->e[pt->nents];
		memset(m->ident, 0, pt->nents * sizeof(m->ident[0]));
		snapshot_made(m);
		names = (char *)&m->ident[pt->nents];
		memcpy(names, pt->names, pt->names_len);
		for (i = 0; i < pt->nents; i++) {
			m->e[i] = pt->ents[i];
			m->e[i].path = names + (uintptr_t)pt->ents[i].path;
		}
		m->loading = maps_loading(m);
	}
	pthread_mutex_unlock(&pt->read_lock);
	pthread_mutex_lock(&pt->lock);
	pt->st.query_ioctls += ioctls;
	if (m) {
		pt->st.reads++;
		if (query)
			pt->st.query_reads++;
		else
			pt->st.text_reads++;
	} else {
		pt->st.read_errors++;
	}
	pthread_mutex_unlock(&pt->lock);
	if (!m)
		errno = -r;
	return m;
}

/* --- the processes --------------------------------------------------------------------------- */

static struct tproc **find(struct proc_tracker *pt, uint32_t pid)
{
	struct tproc **pp;

	for (pp = &pt->slots[hash_mix64(pid) & (SLOTS - 1)]; *pp; pp = &(*pp)->hnext)
		if ((*pp)->pid == pid)
			return pp;
	return pp;
}

/* Under the lock: unlinks and frees *@pp. */
static void drop(struct proc_tracker *pt, struct tproc **pp)
{
	struct tproc *p = *pp;

	*pp = p->hnext;
	if (p->m) {
		pt->st.mappings -= p->m->n;
		proc_maps__put(p->m);
	}
	proc_maps__put(p->fork_m);
	proc_maps__put(p->pre_m);
	pt->st.mem_bytes -= sizeof(*p);
	pt->st.procs--;
	free(p);
}

/* A new entry for @pid at *@pp (where find() said it belongs), under pt->lock; NULL when
 * max_procs is reached or without memory (not kept: counted by the caller). */
static struct tproc *entry_new(struct proc_tracker *pt, struct tproc **pp, uint32_t pid)
{
	struct tproc *p;

	if (pt->st.procs >= pt->o.max_procs || !(p = calloc(1, sizeof(*p))))
		return NULL;
	p->pid = pid;
	p->hnext = *pp;
	*pp = p;
	pt->st.procs++;
	pt->st.mem_bytes += sizeof(*p);
	return p;
}

bool proc_tracker__first_sample(struct proc_tracker *pt, uint32_t pid)
{
	struct tproc *p;
	bool kept = false;

	if (!pt)
		return false;
	pthread_mutex_lock(&pt->lock);
	pt->st.events++;
	p = *find(pt, pid);
	if (p && p->fork_m && p->m == p->fork_m && !p->stale) {
		kept = true; /* as it was at the fork: its parent's last read */
		pt->st.first_sample_forked++;
	} else if (p) {
		p->stale = true;
	}
	pthread_mutex_unlock(&pt->lock);
	return kept;
}

int proc_tracker__born(struct proc_tracker *pt, uint32_t pid, uint64_t *ret_ns)
{
	struct tproc *p;
	int r = -ENOENT;

	if (!pt)
		return -EINVAL;
	pthread_mutex_lock(&pt->lock);
	p = *find(pt, pid);
	if (p && p->born_ns) {
		*ret_ns = p->born_ns;
		r = 0;
	}
	pthread_mutex_unlock(&pt->lock);
	return r;
}

/* @pid's exit was told and no fork or exec of it since (under pt->lock) */
static bool is_gone(const struct proc_tracker *pt, uint32_t pid, uint64_t now)
{
	const struct gone_pid *g = &pt->gone[pid & (GONE_SLOTS - 1)];

	return pid && g->pid == pid && now - g->ns < GONE_KEEP_NS;
}

/* @pid's leader exited (under pt->lock) */
static void set_gone(struct proc_tracker *pt, uint32_t pid)
{
	struct gone_pid *g = &pt->gone[pid & (GONE_SLOTS - 1)];

	g->pid = pid;
	g->ns = mono_ns();
}

/* @pid in use (a fork or exec of it): no longer gone (under pt->lock) */
static void not_gone(struct proc_tracker *pt, uint32_t pid)
{
	struct gone_pid *g = &pt->gone[pid & (GONE_SLOTS - 1)];

	if (g->pid == pid)
		g->pid = 0;
}

bool proc_tracker__gone(struct proc_tracker *pt, uint32_t pid)
{
	bool r;

	if (!pt)
		return false;
	pthread_mutex_lock(&pt->lock);
	r = is_gone(pt, pid, mono_ns());
	if (r)
		pt->st.gone_known++;
	pthread_mutex_unlock(&pt->lock);
	return r;
}

void proc_tracker__invalidate(struct proc_tracker *pt, uint32_t pid)
{
	struct tproc *p;

	if (!pt)
		return;
	pthread_mutex_lock(&pt->lock);
	pt->st.events++;
	p = *find(pt, pid);
	if (p)
		p->stale = true;
	pthread_mutex_unlock(&pt->lock);
}

/* A snapshot of the one mapping @e (its path copied), as a read makes them. NULL: no memory. */
static struct proc_maps *maps_of_entry(const struct procmaps_entry *e)
{
	size_t bytes = sizeof(struct proc_maps) + sizeof(e[0]) + sizeof(struct ident) +
		       e->path_len + 1;
	struct proc_maps *m = malloc(bytes);
	char *name;

	if (!m)
		return NULL;
	m->refs = 1;
	m->read_ns = mono_ns();
	m->n = 1;
	m->bytes = bytes;
	m->loading = false; /* the executable alone: the kernel's word, not a read */
	snapshot_made(m);
	pthread_mutex_init(&m->ident_lock, NULL);
	m->ident = (struct ident *)&m->e[1];
	memset(m->ident, 0, sizeof(m->ident[0]));
	name = (char *)&m->ident[1];
	memcpy(name, e->path, e->path_len);
	name[e->path_len] = '\0';
	m->e[0] = *e;
	m->e[0].path = name;
	return m;
}

/* ext_end()'s @only: every extension, or those an exit ends (not ops.keep_at_exit) */
#define EXT_ALL	    (-1)
#define EXT_AT_EXIT (-2)
static void ext_end(struct proc_tracker *pt, uint32_t pid, uint64_t until_ns, int only);
static void ext_free(struct ext *x, struct pext *e);

void proc_tracker__exec(struct proc_tracker *pt, uint32_t pid, bool gone,
			const struct procmaps_entry *img, uint64_t time_ns)
{
	struct proc_maps *km = NULL, *pre = NULL;
	struct tproc **pp, *p;
	uint64_t born = 0;
	uint32_t pre_ppid = 0;

	if (!pt)
		return;
	if (img && img->inode && img->kind == PROCMAPS_FILE && img->end > img->start)
		km = maps_of_entry(img);
	pthread_mutex_lock(&pt->lock);
	pt->st.events++;
	pt->st.execs++;
	not_gone(pt, pid);
	pp = find(pt, pid);
	if (gone)
		pt->st.execs_gone++;
	/* the old image's snapshot names nothing of the new image: dropped, so that a read that
	 * fails later (the new image gone) does not answer with it */
	if (*pp) {
		/* ...but what ran before it stays aside, for samples of it named late: the
		 * fork's copy (a read may have been in the exec's window), else the last read */
		p = *pp;
		if (p->fork_m) {
			pre = maps_get(p->fork_m);
			pre_ppid = p->ppid;
		} else if (p->m && !p->kernel_m) {
			pre = maps_get(p->m);
		}
		born = p->born_ns; /* a process's start is its fork's, whatever it runs */
		drop(pt, pp);
	}
	/* the kernel's word on the new image instead: stale (the next ask reads /proc), but what
	 * a failed read answers with */
	if ((km || pre || born) && pt->st.procs < pt->o.max_procs && (p = calloc(1, sizeof(*p)))) {
		p->pid = pid;
		p->stale = true;
		p->born_ns = born;
		p->m = km;
		p->kernel_m = km != NULL;
		p->pre_m = pre;
		p->pre_ppid = pre_ppid;
		p->pre_until_ns = time_ns;
		p->hnext = *pp;
		*pp = p;
		pt->st.procs++;
		pt->st.mem_bytes += sizeof(*p);
		if (km) {
			pt->st.mappings += km->n;
			pt->st.exec_images++;
		}
		km = pre = NULL;
	}
	pthread_mutex_unlock(&pt->lock);
	ext_end(pt, pid, time_ns, -1); /* the stages' states of the old image */
	proc_maps__put(km);
	proc_maps__put(pre);
}

/* Whether @m lacks the libraries its process had: the exec's executable alone (the kernel's
 * word, a seeded exec never read), or a read made while the loader mapped them. */
static bool maps_partial(const struct proc_maps *m)
{
	return m->loading || (m->n == 1 && m->e[0].exec_image);
}

/* Whether @pa is a fork's parent as it was at the fork at @born_ns: known then, neither born nor
 * exec'd since. */
static bool parent_as_at_fork(const struct tproc *pa, uint64_t born_ns)
{
	return pa && pa->born_ns <= born_ns && pa->pre_until_ns <= born_ns;
}

/*
 * @p's fork copy, or its image before its last exec if that was a fork copy (@pre): when it is
 * partial (its parent was copied at its exec, before any read of it: a shell that forks at once
 * and is never sampled), what the parent maps now, if the parent is the same image it was at the
 * fork (no exec and no pid reuse since). Names the fork's samples from before its exec: with the
 * partial copy a deep shell's fork came out "_start;[unknown];[unknown];main" (bash named, libc
 * not: test_exec, fresh-clone run ZP4). Read only when a sample is named by it: a fork that is
 * never sampled costs nothing. Called and returns under pt->lock (dropped meanwhile).
 */
static void fork_copy_fill(struct proc_tracker *pt, uint32_t pid, bool pre)
{
	struct tproc *p = *find(pt, pid), *pa, *was;
	struct proc_maps *old, *m;
	uint32_t ppid;
	uint64_t born;

	old = p ? (pre ? p->pre_m : p->fork_m) : NULL;
	ppid = p ? (pre ? p->pre_ppid : p->ppid) : 0;
	born = p ? p->born_ns : 0;
	if (!old || !ppid || !born || !maps_partial(old))
		return;
	was = pa = *find(pt, ppid);
	if (!parent_as_at_fork(pa, born))
		return;
	pthread_mutex_unlock(&pt->lock);
	m = proc_tracker__maps(pt, ppid, old->read_ns + 1);
	pthread_mutex_lock(&pt->lock);
	pa = *find(pt, ppid); /* the same entry: not dropped (an exit, a reused pid) meanwhile */
	p = *find(pt, pid);
	if (!m || maps_partial(m) || pa != was || !parent_as_at_fork(pa, born) || !p ||
	    (pre ? p->pre_m : p->fork_m) != old) {
		proc_maps__put(m);
		return;
	}
	if (p->m == old) {
		p->m = maps_get(m);
		pt->st.mappings += m->n;
		pt->st.mappings -= old->n;
		proc_maps__put(old);
	}
	if (pre)
		p->pre_m = m;
	else
		p->fork_m = m;
	proc_maps__put(old);
	pt->st.fork_copies_filled++;
}

/* A reference to @pid's fork copy (@pre false) or its image before its last exec, kept at most
 * PRE_EXEC_KEEP_NS (@pre, its time in *@ret_time_ns); NULL + errno ENOENT when none. */
static struct proc_maps *held_snapshot(struct proc_tracker *pt, uint32_t pid, bool pre,
				       uint64_t *ret_time_ns)
{
	struct proc_maps *m = NULL;
	struct tproc *p;

	if (!pt || !pid) {
		errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&pt->lock);
	fork_copy_fill(pt, pid, pre);
	p = *find(pt, pid);
	if (p && pre && p->pre_m && mono_ns() - p->pre_until_ns < PRE_EXEC_KEEP_NS) {
		m = maps_get(p->pre_m);
		*ret_time_ns = p->pre_until_ns;
	} else if (p && !pre && p->fork_m) {
		m = maps_get(p->fork_m);
		pt->st.reused++;
	}
	pthread_mutex_unlock(&pt->lock);
	if (!m)
		errno = ENOENT;
	return m;
}

struct proc_maps *proc_tracker__before_exec(struct proc_tracker *pt, uint32_t pid,
					    uint64_t *ret_time_ns)
{
	return held_snapshot(pt, pid, true, ret_time_ns);
}

int proc_tracker__last_exec(struct proc_tracker *pt, uint32_t pid, uint64_t *ret_time_ns)
{
	struct tproc *p;
	int r = -ENOENT;

	if (!pt || !pid)
		return -EINVAL;
	pthread_mutex_lock(&pt->lock);
	p = *find(pt, pid);
	if (p && p->pre_until_ns && mono_ns() - p->pre_until_ns < PRE_EXEC_KEEP_NS) {
		*ret_time_ns = p->pre_until_ns;
		r = 0;
	}
	pthread_mutex_unlock(&pt->lock);
	return r;
}

void proc_tracker__fork(struct proc_tracker *pt, uint32_t parent, uint32_t child, bool gone,
			bool listed, uint64_t time_ns)
{
	struct tproc **pp, *p, *pa;

	if (!pt || !child)
		return;
	pthread_mutex_lock(&pt->lock);
	pt->st.forks++;
	not_gone(pt, child);
	pp = find(pt, child);
	if (*pp)
		drop(pt, pp); /* a pid reused, its exit missed */
	/* gone (its exec or exit in the same batch): the parent's snapshot all the same, which
	 * names the samples it took before (its exit, later in the batch, drops it) */
	if (gone)
		pt->st.forks_gone++;
	if (listed)
		pt->st.fork_lists++;
	pa = *find(pt, parent);
	/* a parent never read (a shell started before emberd, never sampled or exec'd since; or
	 * exec'd with no image told, its entry holding only what ran before): read once now,
	 * while it lives, so that its forks (often gone at their first look) are named; its entry
	 * stays, read or not, so that its next forks share that read instead of reading again */
	if ((!pa || (!pa->m && pa->pre_m)) && parent && parent != child &&
	    pt->st.procs + 1 < pt->o.max_procs) {
		if (!pa)
			pa = entry_new(pt, find(pt, parent), parent);
		if (pa) {
			pt->st.fork_parent_reads++;
			pthread_mutex_unlock(&pt->lock);
			proc_maps__put(proc_tracker__maps(pt, parent, 0)); /* kept in pa */
			pthread_mutex_lock(&pt->lock);
			pp = find(pt, child); /* the table may have changed meanwhile */
			if (*pp)
				goto out; /* the child known since: its own read or event */
			pa = *find(pt, parent);
		}
	}
	if (!pa || !pa->m || pt->st.procs >= pt->o.max_procs)
		goto out;
	p = calloc(1, sizeof(*p));
	if (!p)
		goto out;
	p->pid = child;
	p->stale = pa->stale;
	p->m = maps_get(pa->m); /* immutable: shared */
	p->fork_m = maps_get(pa->m);
	p->ppid = parent;
	p->born_ns = time_ns;
	/* its executable is its parent's until its exec (which drops this entry), as the parent's
	 * was known (its entry holds one only since its own last exec): as of the fork */
	if (pa->exe_ns && time_ns) {
		p->exe_ns = time_ns;
		p->exe_dev = pa->exe_dev;
		p->exe_ino = pa->exe_ino;
	}
	p->hnext = *pp;
	*pp = p;
	pt->st.procs++;
	pt->st.mem_bytes += sizeof(*p);
	pt->st.mappings += p->m->n;
	pt->st.fork_copies++;
out:
	pthread_mutex_unlock(&pt->lock);
}

struct proc_maps *proc_tracker__maps(struct proc_tracker *pt, uint32_t pid, uint64_t min_read_ns)
{
	struct proc_maps *m = NULL, *old;
	struct tproc **pp, *p;

	if (!pt || !pid) {
		errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&pt->lock);
	p = *find(pt, pid);
	if (p && p->m && !p->stale && p->m->read_ns >= min_read_ns) {
		m = maps_get(p->m);
		pt->st.reused++;
	}
	if (!m && !p && is_gone(pt, pid, mono_ns())) {
		pt->st.gone_known++;
		pthread_mutex_unlock(&pt->lock);
		errno = ESRCH; /* its exit was told: no /proc work */
		return NULL;
	}
	pthread_mutex_unlock(&pt->lock);
	if (m)
		return m;
	m = read_maps(pt, pid); /* unlocked: /proc work */
	if (!m) {
		int err = errno;

		/* gone since the event (a process that lived a few milliseconds): what was read
		 * at its exec or first sample still names its samples */
		pthread_mutex_lock(&pt->lock);
		p = *find(pt, pid);
		if (p && p->m) {
			m = maps_get(p->m);
			pt->st.stale_used++;
			if (p->kernel_m && p->stale && (err == ENOENT || err == ESRCH)) {
				/* gone before any read: the exec's image is all there will be,
				 * answered from now on without trying /proc again */
				p->stale = false;
				pt->st.exec_image_used++;
			}
		}
		pthread_mutex_unlock(&pt->lock);
		if (!m)
			errno = err;
		return m;
	}
	pthread_mutex_lock(&pt->lock);
	pp = find(pt, pid);
	p = *pp ? *pp : entry_new(pt, pp, pid);
	if (p) {
		/* an event that came while we read stays pending only if it came after: the
		 * reader that asked after it sees this read as fresh enough (same event) */
		old = p->m;
		p->m = maps_get(m);
		p->stale = false;
		p->kernel_m = false;
		pt->st.mappings += m->n;
		if (old) {
			pt->st.mappings -= old->n;
			proc_maps__put(old);
		}
	} else {
		pt->st.not_kept++;
	}
	pthread_mutex_unlock(&pt->lock);
	return m;
}

/* The inode only: in a container the link's stat gives overlayfs's device while the mapping
 * shows the layer's (overlayfs keeps the layer's inode number), and a read again for every new
 * process there would cost what this saves */
static int exe_found(const struct procmaps_entry *e, void *ctx)
{
	return e->kind == PROCMAPS_FILE && e->inode == *(const uint64_t *)ctx;
}

int proc_tracker__exe_id(struct proc_tracker *pt, uint32_t pid, uint64_t max_age_ns,
			 uint64_t *ret_dev, uint64_t *ret_ino)
{
	uint64_t now = mono_ns();
	struct tproc *p, **pp;
	struct stat st;
	int r;

	pthread_mutex_lock(&pt->lock);
	p = *find(pt, pid);
	if (p && p->exe_ns && now - p->exe_ns <= max_age_ns) {
		*ret_dev = p->exe_dev;
		*ret_ino = p->exe_ino;
		pt->st.exe_reused++;
		pthread_mutex_unlock(&pt->lock);
		return 0;
	}
	if (!p && is_gone(pt, pid, now)) {
		pt->st.gone_known++;
		pthread_mutex_unlock(&pt->lock);
		return -ESRCH; /* its exit was told: no stat */
	}
	pt->st.exe_reads++;
	pthread_mutex_unlock(&pt->lock);
	r = procfs_exe_stat(pt->proc_root, pid, &st);
	if (r)
		return r;
	*ret_dev = (uint64_t)st.st_dev;
	*ret_ino = (uint64_t)st.st_ino;
	/* kept with the process (its exec or exit drops the entry, and with it this); an entry
	 * made for it if none yet (a first look asks this before the mappings), so that its
	 * forks know their executable without a stat of their own */
	pthread_mutex_lock(&pt->lock);
	pp = find(pt, pid);
	p = *pp ? *pp : entry_new(pt, pp, pid);
	if (p) {
		p->exe_ns = now;
		p->exe_dev = *ret_dev;
		p->exe_ino = *ret_ino;
	}
	pthread_mutex_unlock(&pt->lock);
	return 0;
}

int proc_tracker__cgroup(struct proc_tracker *pt, uint32_t pid, char **buf, size_t *cap,
			 size_t *ret_len)
{
	int r = procfs_read(pt ? pt->proc_root : NULL, pid, PROCFS_CGROUP, buf, cap,
			    PROC_CGROUP_MAX_BYTES, ret_len);

	if (pt) {
		pthread_mutex_lock(&pt->lock);
		pt->st.cgroup_reads++;
		pthread_mutex_unlock(&pt->lock);
	}
	return r;
}

void proc_cgroup_v2(const char *text, char *ret, size_t size)
{
	const char *line, *end;

	ret[0] = '\0';
	for (line = text; line && *line; line = *end ? end + 1 : end) {
		end = line + strcspn(line, "\n");
		if (!strncmp(line, "0::", 3)) {
			snprintf(ret, size, "%.*s", (int)(end - line - 3), line + 3);
			return;
		}
	}
}

struct proc_maps *proc_tracker__image_maps(struct proc_tracker *pt, uint32_t pid)
{
	struct proc_maps *m = proc_tracker__maps(pt, pid, 0);
	uint64_t dev, ino;

	/* the readers' first looks at a new process come one after another in one batch: one
	 * stat serves them, but no older one (an exec in between would be missed until their
	 * next look) */
	if (!m || proc_tracker__exe_id(pt, pid, PROC_EXE_BATCH_NS, &dev, &ino))
		return m;
	if (proc_maps__for_each(m, exe_found, &ino))
		return m;
	/* a snapshot of an image the process has left: what it maps now */
	pthread_mutex_lock(&pt->lock);
	pt->st.image_rereads++;
	pthread_mutex_unlock(&pt->lock);
	proc_maps__put(m);
	return proc_tracker__maps(pt, pid, mono_ns() + 1);
}

struct exe_find {
	uint64_t ino;
	const struct procmaps_entry *e;
};

static int exe_path_found(const struct procmaps_entry *e, void *ctx)
{
	struct exe_find *f = ctx;

	if (e->kind != PROCMAPS_FILE || e->inode != f->ino || !e->path_len)
		return 0;
	f->e = e;
	return 1;
}

ssize_t proc_tracker__exe_path(struct proc_tracker *pt, uint32_t pid, char *buf, size_t size)
{
	struct exe_find f = { 0 };
	struct proc_maps *m;
	uint64_t dev;
	ssize_t r;
	int e;

	if (!size)
		return -EINVAL;
	e = proc_tracker__exe_id(pt, pid, PROC_EXE_BATCH_NS, &dev, &f.ino);
	if (e)
		return e;
	m = proc_tracker__maps(pt, pid, 0);
	if (!m)
		return -errno;
	if (!proc_maps__for_each(m, exe_path_found, &f)) {
		r = -ENOENT;
	} else if (f.e->path_len >= size) {
		r = -ENAMETOOLONG;
	} else {
		memcpy(buf, f.e->path, f.e->path_len);
		buf[f.e->path_len] = '\0';
		r = (ssize_t)f.e->path_len;
	}
	proc_maps__put(m);
	if (r >= 0) {
		pthread_mutex_lock(&pt->lock);
		pt->st.exe_paths++;
		pthread_mutex_unlock(&pt->lock);
	}
	return r;
}

struct proc_maps *proc_tracker__forked(struct proc_tracker *pt, uint32_t pid)
{
	return held_snapshot(pt, pid, false, NULL);
}

static void ident_to_stat(const struct ident *id, struct stat *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->st_dev = (dev_t)id->dev;
	ret->st_ino = (ino_t)id->ino;
	ret->st_size = (off_t)id->size;
	ret->st_mtim.tv_sec = (time_t)(id->mtime_ns / 1000000000);
	ret->st_mtim.tv_nsec = (long)(id->mtime_ns % 1000000000);
	ret->st_uid = id->uid;
	ret->st_mode = id->mode;
}

int proc_tracker__identity(struct proc_tracker *pt, struct proc_maps *m,
			   const struct procmaps_entry *e, uint32_t pid, struct stat *ret_st)
{
	struct mapfile_want w;
	struct ident *id;
	struct stat st;
	int r;

	if (!pt || !m || e < m->e || e >= m->e + m->n || e->kind != PROCMAPS_FILE || !e->inode)
		return -EINVAL;
	id = &m->ident[e - m->e];
	pthread_mutex_lock(&m->ident_lock);
	if (id->checked) {
		ident_to_stat(id, ret_st);
		pthread_mutex_unlock(&m->ident_lock);
		__atomic_fetch_add(&pt->st.ident_reused, 1, __ATOMIC_RELAXED);
		return 0;
	}
	pthread_mutex_unlock(&m->ident_lock);
	/* unlocked: /proc work (two readers racing both check; the first answer is kept) */
	w = mapfile_want_of(pid, e);
	r = mapfile_stat(pt->proc_root, &w, &st);
	if (r) {
		/* not kept: gone through this pid may be reachable through another (a fork
		 * shares the snapshot), and a refusal must not stand for a later check */
		__atomic_fetch_add(&pt->st.ident_failed, 1, __ATOMIC_RELAXED);
		return r;
	}
	__atomic_fetch_add(&pt->st.ident_checks, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&m->ident_lock);
	if (!id->checked) {
		id->dev = (uint64_t)st.st_dev;
		id->ino = (uint64_t)st.st_ino;
		id->size = (uint64_t)st.st_size;
		id->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		id->uid = st.st_uid;
		id->mode = st.st_mode;
		id->checked = true;
	}
	ident_to_stat(id, ret_st);
	pthread_mutex_unlock(&m->ident_lock);
	return 0;
}

bool proc_tracker__admit_names(void *owner, size_t cost, uint64_t generation, size_t limit)
{
	struct proc_names_owner *o = owner;
	struct proc_tracker *pt = o ? o->pt : NULL;
	struct tproc *p;
	bool ok = true;

	if (!pt)
		return true;
	pthread_mutex_lock(&pt->lock);
	if (pt->names_gen != generation) { /* the table started over: every share with it */
		pt->names_gen = generation;
		pt->st.names_share_max = 0;
	}
	p = *find(pt, o->pid);
	if (!p) {
		pt->st.names_unowned++;
	} else {
		if (p->names_gen != generation) {
			p->names_gen = generation;
			p->names_bytes = 0;
		}
		if (limit && (cost > limit || p->names_bytes > limit - cost)) {
			pt->st.names_refused++;
			ok = false;
		} else {
			p->names_bytes += cost;
			if (p->names_bytes > pt->st.names_share_max)
				pt->st.names_share_max = p->names_bytes;
		}
	}
	pthread_mutex_unlock(&pt->lock);
	return ok;
}

int proc_tracker__intern_name(struct proc_tracker *pt, uint32_t pid, struct strtab *st,
			      const char *s, size_t len)
{
	struct proc_names_owner o = { .pt = pt, .pid = pid };

	return strtab__intern_as(st, s, len, proc_tracker__admit_names, &o);
}

void proc_tracker__exit(struct proc_tracker *pt, uint32_t pid)
{
	proc_tracker__exit_at(pt, pid, 0);
}

void proc_tracker__exit_at(struct proc_tracker *pt, uint32_t pid, uint64_t time_ns)
{
	struct tproc **pp;

	if (!pt)
		return;
	pthread_mutex_lock(&pt->lock);
	pt->st.exits++;
	pp = find(pt, pid);
	if (*pp)
		drop(pt, pp);
	/* its leader exited: /proc/PID shows no mappings or executable from now on (the leader's
	 * mm is gone even while other threads finish); asked of nobody again */
	if (pid)
		set_gone(pt, pid);
	pthread_mutex_unlock(&pt->lock);
	ext_end(pt, pid, time_ns, EXT_AT_EXIT);
}

int proc_tracker__sweep(struct proc_tracker *pt)
{
	uint32_t *pids = NULL;
	size_t n = 0, cap = 0, i;
	struct tproc *p, **pp;
	int swept = 0;
	uint64_t now;

	if (!pt)
		return 0;
	pthread_mutex_lock(&pt->lock);
	for (i = 0; i < SLOTS; i++)
		for (p = pt->slots[i]; p; p = p->hnext)
			if (!array_grow((void **)&pids, &cap, n + 1, sizeof(*pids), 256))
				pids[n++] = p->pid;
	pthread_mutex_unlock(&pt->lock);
	now = mono_ns();
	for (i = 0; i < n; i++) { /* the stat()s unlocked */
		bool there = procfs_exists(pt->proc_root, pids[i]); /* or cannot tell: kept */

		pthread_mutex_lock(&pt->lock);
		pp = find(pt, pids[i]);
		if (!*pp) {
			/* gone meanwhile */
		} else if (there) {
			(*pp)->gone_seen_ns = 0; /* a pid in use again */
			if ((*pp)->pre_m && now - (*pp)->pre_until_ns >= PRE_EXEC_KEEP_NS) {
				proc_maps__put((*pp)->pre_m); /* its samples from before are named */
				(*pp)->pre_m = NULL;
				if (!(*pp)->m)
					drop(pt, pp); /* nothing else held: as if never read */
			}
		} else if (!(*pp)->gone_seen_ns) {
			/* its exit may be in a batch not handled yet, and its samples not named:
			 * dropped at a later sweep (a deep shell's fork swept between its fork's
			 * copy and its samples' naming: 115 frames of "[unknown]") */
			(*pp)->gone_seen_ns = now;
		} else if (now - (*pp)->gone_seen_ns >= pt->o.sweep_grace_ns) {
			drop(pt, pp);
			pt->st.swept++;
			swept++;
			pthread_mutex_unlock(&pt->lock);
			ext_end(pt, pids[i], 0, -1);
			continue;
		}
		pthread_mutex_unlock(&pt->lock);
	}
	/* the stages' states of processes the table does not hold (read long ago, dropped, or
	 * never read): one stat each per sweep, their exits lost (a full ring buffer) */
	n = 0;
	pthread_mutex_lock(&pt->lock);
	for (int x = 0; x < PROC_EXT_MAX; x++) {
		struct pext *e;

		if (!pt->ext[x].used)
			continue;
		for (i = 0; i < EXT_SLOTS; i++)
			for (e = pt->ext[x].cur[i]; e; e = e->next)
				if (!*find(pt, e->pid) &&
				    !array_grow((void **)&pids, &cap, n + 1, sizeof(*pids), 256))
					pids[n++] = e->pid;
	}
	pthread_mutex_unlock(&pt->lock);
	for (i = 0; i < n; i++) {
		if (procfs_exists(pt->proc_root, pids[i]))
			continue;
		pthread_mutex_lock(&pt->lock);
		pt->st.ext_swept++;
		pthread_mutex_unlock(&pt->lock);
		ext_end(pt, pids[i], 0, -1); /* a pid in two extensions: the second finds none */
	}
	free(pids);
	return swept;
}

void proc_tracker__stats(struct proc_tracker *pt, struct proc_tracker_stats *ret)
{
	pthread_mutex_lock(&pt->lock);
	*ret = pt->st;
	pthread_mutex_unlock(&pt->lock);
	pthread_mutex_lock(&pt->read_lock);
	ret->mem_bytes += pt->text_cap + pt->ents_cap * sizeof(*pt->ents) + pt->names_cap;
	pthread_mutex_unlock(&pt->read_lock);
	ret->snapshot_bytes = __atomic_load_n(&snapshot_bytes, __ATOMIC_RELAXED);
	ret->mem_bytes += ret->snapshot_bytes;
	ret->procmap_query = !pt->o.force_maps_read &&
			     !__atomic_load_n(&pt->query_off, __ATOMIC_RELAXED) && ret->query_reads;
}

struct proc_tracker *proc_tracker__new(const struct proc_tracker_opts *o)
{
	struct proc_tracker *pt = calloc(1, sizeof(*pt));

	if (!pt)
		return NULL;
	if (o)
		pt->o = *o;
	if (!pt->o.max_procs)
		pt->o.max_procs = 32768;
	if (!pt->o.sweep_grace_ns)
		pt->o.sweep_grace_ns = PROC_SWEEP_GRACE_NS;
	snprintf(pt->proc_root, sizeof(pt->proc_root), "%s",
		 pt->o.proc_root ? pt->o.proc_root : "/proc");
	pt->o.proc_root = pt->proc_root;
	pthread_mutex_init(&pt->lock, NULL);
	pthread_mutex_init(&pt->read_lock, NULL);
	return pt;
}

/* --- extensions ------------------------------------------------------------------------------ */

int proc_tracker__ext_register(struct proc_tracker *pt, const struct proc_ext_ops *ops)
{
	int i;

	if (!pt || !ops || !ops->size)
		return -EINVAL;
	pthread_mutex_lock(&pt->lock);
	for (i = 0; i < PROC_EXT_MAX && pt->ext[i].used; i++)
		;
	if (i < PROC_EXT_MAX) {
		memset(&pt->ext[i], 0, sizeof(pt->ext[i]));
		pt->ext[i].used = true;
		pt->ext[i].ops = *ops;
	}
	pthread_mutex_unlock(&pt->lock);
	return i < PROC_EXT_MAX ? i : -ENOSPC;
}

static struct ext *ext_of(struct proc_tracker *pt, int id)
{
	return pt && id >= 0 && id < PROC_EXT_MAX && pt->ext[id].used ? &pt->ext[id] : NULL;
}

/* Under the lock: the slot of @pid's current state. */
static struct pext **ext_find(struct ext *x, uint32_t pid)
{
	struct pext **pp = &x->cur[hash_mix64(pid) & (EXT_SLOTS - 1)];

	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	return pp;
}

void *proc_tracker__ext(struct proc_tracker *pt, int id, uint32_t pid, bool make)
{
	struct ext *x = ext_of(pt, id);
	struct pext **pp, *e = NULL;

	if (!x || !pid)
		return NULL;
	pthread_mutex_lock(&pt->lock);
	pp = ext_find(x, pid);
	if (*pp) {
		e = *pp;
	} else if (make) {
		e = calloc(1, sizeof(*e) + x->ops.size);
		if (e) {
			e->pid = pid;
			*pp = e;
			x->nr_cur++;
		}
	}
	pthread_mutex_unlock(&pt->lock);
	return e ? e->data : NULL;
}

/* Under the lock: @pid's newest ended state of @x; NULL: none kept. */
static struct pext *ext_newest_ended(struct ext *x, uint32_t pid)
{
	struct pext *e = x->gone[hash_mix64(pid) & (EXT_SLOTS - 1)];

	while (e && e->pid != pid)
		e = e->next;
	return e;
}

void *proc_tracker__ext_last(struct proc_tracker *pt, int id, uint32_t pid)
{
	struct ext *x = ext_of(pt, id);
	struct pext *e;

	if (!x || !pid)
		return NULL;
	pthread_mutex_lock(&pt->lock);
	e = *ext_find(x, pid);
	if (!e)
		e = ext_newest_ended(x, pid);
	pthread_mutex_unlock(&pt->lock);
	return e ? e->data : NULL;
}

/*
 * Under the lock: the ended state of @pid whose image ran at @time_ns. Image k ran until
 * until_k: a sample at @time_ns is of the one with the smallest until_k after it (the chain is
 * newest first: the last such). NULL: none.
 */
static struct pext *ext_ended_at(struct ext *x, uint32_t pid, uint64_t time_ns)
{
	struct pext *e, *at = NULL;

	for (e = x->gone[hash_mix64(pid) & (EXT_SLOTS - 1)]; e; e = e->next)
		if (e->pid == pid && e->until_ns > time_ns)
			at = e;
	return at;
}

void *proc_tracker__ext_at(struct proc_tracker *pt, int id, uint32_t pid, uint64_t time_ns)
{
	struct ext *x = ext_of(pt, id);
	struct pext *at;

	if (!x || !pid)
		return NULL;
	pthread_mutex_lock(&pt->lock);
	at = ext_ended_at(x, pid, time_ns);
	if (!at)
		at = *ext_find(x, pid);
	if (!at) /* after the last image's end (its other threads ran on): that image */
		at = ext_newest_ended(x, pid);
	pthread_mutex_unlock(&pt->lock);
	return at ? at->data : NULL;
}

void *proc_tracker__ext_ended_at(struct proc_tracker *pt, int id, uint32_t pid, uint64_t time_ns)
{
	struct ext *x = ext_of(pt, id);
	struct pext *at;

	if (!x || !pid)
		return NULL;
	pthread_mutex_lock(&pt->lock);
	at = ext_ended_at(x, pid, time_ns);
	pthread_mutex_unlock(&pt->lock);
	return at ? at->data : NULL;
}

bool proc_tracker__ext_has_ended(struct proc_tracker *pt, int id, uint32_t pid)
{
	struct ext *x = ext_of(pt, id);
	bool r;

	if (!x || !pid || !x->nr_ended)
		return false;
	pthread_mutex_lock(&pt->lock);
	r = ext_newest_ended(x, pid) != NULL;
	pthread_mutex_unlock(&pt->lock);
	return r;
}

void *proc_tracker__ext_add_ended(struct proc_tracker *pt, int id, uint32_t pid, uint64_t until_ns)
{
	struct ext *x = ext_of(pt, id);
	struct pext *e, **gp;

	if (!x || !pid || !(e = calloc(1, sizeof(*e) + x->ops.size)))
		return NULL;
	e->pid = pid;
	e->ended_ns = mono_ns();
	e->until_ns = until_ns ? until_ns : e->ended_ns;
	pthread_mutex_lock(&pt->lock);
	/* older than its pid's ended states, if any: their images came after this one */
	for (gp = &x->gone[hash_mix64(pid) & (EXT_SLOTS - 1)]; *gp; gp = &(*gp)->next)
		;
	e->next = NULL;
	*gp = e;
	e->lnext = x->ended;
	x->ended = e;
	x->nr_ended++;
	pthread_mutex_unlock(&pt->lock);
	return e->data;
}

void proc_tracker__ext_drop(struct proc_tracker *pt, int id, uint32_t pid)
{
	struct ext *x = ext_of(pt, id);
	struct pext **pp, *e;

	if (!x || !pid)
		return;
	pthread_mutex_lock(&pt->lock);
	pp = ext_find(x, pid);
	if ((e = *pp)) {
		*pp = e->next;
		x->nr_cur--;
	}
	pthread_mutex_unlock(&pt->lock);
	if (e)
		ext_free(x, e);
}

void proc_tracker__ext_end(struct proc_tracker *pt, int id, uint32_t pid, uint64_t time_ns)
{
	if (ext_of(pt, id) && pid)
		ext_end(pt, pid, time_ns, id);
}

/*
 * @pid's image ended at @until_ns (exec, exit: the event's time; 0: now, a sweep): its current
 * states, of every extension (@only < 0) or of @only, move to the ended lists; their stages are
 * told (ops.ended) once the lock is let go.
 */
static void ext_end(struct proc_tracker *pt, uint32_t pid, uint64_t until_ns, int only)
{
	struct pext *told[PROC_EXT_MAX] = { 0 };
	uint64_t now = 0;
	int i;

	pthread_mutex_lock(&pt->lock);
	for (i = 0; i < PROC_EXT_MAX; i++) {
		struct ext *x = &pt->ext[i];
		struct pext **pp, *e, **gp;

		if (!x->used || !x->nr_cur || (only >= 0 && i != only) ||
		    (only == EXT_AT_EXIT && x->ops.keep_at_exit))
			continue;
		pp = ext_find(x, pid);
		if (!(e = *pp))
			continue;
		*pp = e->next;
		x->nr_cur--;
		if (!now)
			now = mono_ns();
		e->ended_ns = now;
		e->until_ns = until_ns ? until_ns : now;
		gp = &x->gone[hash_mix64(pid) & (EXT_SLOTS - 1)];
		e->next = *gp;
		*gp = e;
		e->lnext = x->ended;
		x->ended = e;
		x->nr_ended++;
		pt->st.ext_ended++;
		told[i] = e;
	}
	pthread_mutex_unlock(&pt->lock);
	for (i = 0; i < PROC_EXT_MAX; i++)
		if (told[i] && pt->ext[i].ops.ended)
			pt->ext[i].ops.ended(pt->ext[i].ops.ctx, pid, told[i]->data, until_ns);
}

/* Under the lock: @e unlinked from its pid's chain of ended states. */
static void ext_unchain(struct ext *x, struct pext *e)
{
	struct pext **pp = &x->gone[hash_mix64(e->pid) & (EXT_SLOTS - 1)];

	while (*pp && *pp != e)
		pp = &(*pp)->next;
	if (*pp)
		*pp = e->next;
}

/* A state gone from the lists: what it holds, then itself. */
static void ext_free(struct ext *x, struct pext *e)
{
	if (x->ops.release)
		x->ops.release(x->ops.ctx, e->pid, e->data);
	free(e);
}

size_t proc_tracker__ext_count(struct proc_tracker *pt, int id)
{
	struct ext *x = ext_of(pt, id);
	size_t n;

	if (!x)
		return 0;
	pthread_mutex_lock(&pt->lock);
	n = x->nr_cur + x->nr_ended;
	pthread_mutex_unlock(&pt->lock);
	return n;
}

void proc_tracker__ext_prune(struct proc_tracker *pt, int id)
{
	struct ext *x = ext_of(pt, id);
	struct pext **pp, *e, *out = NULL;
	uint64_t now = mono_ns();

	if (!x)
		return;
	pthread_mutex_lock(&pt->lock);
	for (pp = &x->ended; (e = *pp);) {
		if (now - e->ended_ns >= x->ops.keep_ns) {
			*pp = e->lnext;
			ext_unchain(x, e);
			x->nr_ended--;
			e->next = out;
			out = e;
		} else {
			pp = &e->lnext;
		}
	}
	pthread_mutex_unlock(&pt->lock);
	for (; out; out = e) {
		e = out->next;
		ext_free(x, out);
	}
}

void proc_tracker__ext_trim(struct proc_tracker *pt, int id, size_t max_ended)
{
	struct ext *x = ext_of(pt, id);
	struct pext **pp, *e, *out = NULL;
	size_t n = 0;

	if (!x || x->nr_ended <= max_ended)
		return;
	pthread_mutex_lock(&pt->lock);
	/* the list is newest first: what follows the first max_ended goes */
	for (pp = &x->ended; *pp && n < max_ended; pp = &(*pp)->lnext)
		n++;
	while ((e = *pp)) {
		*pp = e->lnext;
		ext_unchain(x, e);
		x->nr_ended--;
		e->next = out;
		out = e;
	}
	pthread_mutex_unlock(&pt->lock);
	for (; out; out = e) {
		e = out->next;
		ext_free(x, out);
	}
}

void proc_tracker__ext_each(struct proc_tracker *pt, int id,
			    void (*fn)(void *arg, uint32_t pid, void *state, bool ended), void *arg)
{
	struct ext *x = ext_of(pt, id);
	struct pext *e;
	size_t i;

	if (!x)
		return;
	/* the extension's own thread: nothing but its events' thread (the same) changes the lists */
	for (i = 0; i < EXT_SLOTS; i++)
		for (e = x->cur[i]; e; e = e->next)
			fn(arg, e->pid, e->data, false);
	for (e = x->ended; e; e = e->lnext)
		fn(arg, e->pid, e->data, true);
}

void proc_tracker__ext_unregister(struct proc_tracker *pt, int id)
{
	struct ext *x = ext_of(pt, id);
	struct pext *e, *next;
	size_t i;

	if (!x)
		return;
	for (i = 0; i < EXT_SLOTS; i++)
		for (e = x->cur[i]; e; e = next) {
			next = e->next;
			ext_free(x, e);
		}
	for (e = x->ended; e; e = next) {
		next = e->lnext;
		ext_free(x, e);
	}
	pthread_mutex_lock(&pt->lock);
	memset(x, 0, sizeof(*x));
	pthread_mutex_unlock(&pt->lock);
}

void proc_tracker__free(struct proc_tracker *pt)
{
	size_t i;

	if (!pt)
		return;
	for (i = 0; i < PROC_EXT_MAX; i++)
		proc_tracker__ext_unregister(pt, (int)i);
	for (i = 0; i < SLOTS; i++)
		while (pt->slots[i])
			drop(pt, &pt->slots[i]);
	pthread_mutex_destroy(&pt->lock);
	pthread_mutex_destroy(&pt->read_lock);
	free(pt->text);
	free(pt->ents);
	free(pt->names);
	free(pt);
}
