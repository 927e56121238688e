// SPDX-License-Identifier: MIT
/* unwind: the BPF walker's tables (include/ember/daemon/unwind/unwind.h). */
#include "ember/daemon/unwind/unwind.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ember/core/base/array.h"
#include "ember/core/base/clock.h"
#include "ember/core/base/hash.h"
#include "ember/daemon/proc/procfs.h"
#include "ember/daemon/sample/bpf_shared.h"
#include "ember/daemon/sample/sampler.h"
#include "ember/daemon/unwind/cfi.h"
#include "ember/daemon/elf/dbgfetch.h"
#include "ember/daemon/elf/elffile.h"
#include "ember/daemon/elf/elfload.h"
#include "ember/daemon/elf/filecache.h"
#include "ember/daemon/elf/elfsym.h"
#include "ember/daemon/proc/procmaps.h"
#include "ember/daemon/proc/proctrack.h"

#define FILE_SLOTS	1024 /* hash buckets of files (chained) */
/* A walk cut short (an address in no listed mapping) reads the process's maps again at most this
 * often, except the first time: a process listed at exec or right after it has not had its
 * libraries mapped by ld.so yet, and must not be walked by frame pointer for a second. */
#define REFRESH_NS	NSEC_PER_SEC
#define FIRST_REFRESH_NS (NSEC_PER_SEC / 20)
/* A process listed while ld.so maps its libraries is read again at each work call for so long */
#define LOADER_WAIT_NS	(NSEC_PER_SEC / 2)
#define FAIL_RETRY_NS	(60 * NSEC_PER_SEC) /* a file that failed is tried again after this */
/* A table a process sampled this recently uses is not evicted for another: the new one is not
 * built (frame pointers there, counted as refused) rather than two tables chase each other. */
#define HOT_NS		(30 * NSEC_PER_SEC)
/* Addresses a walk reached in a process whose list is not written yet (or about to be written
 * again): kept until its next list, where they ask for their files' tables. More: dropped,
 * counted (reach_dropped); the next sample asks again. */
#define REACH_MAX	64
/* A process's image ended (exit, exec): its mappings of files listed without a table are kept
 * so long (the process tracker's ended state) for the samples delivered after the exit (a
 * batch's events come before its samples, and a worker behind is up to two ticks late), so that
 * a process living 30 ms still asks for the tables the next one of its binary is walked with;
 * for at most ENDED_MAPS_MAX images at once (a host's churn: the newest are kept). */
#define GONE_KEEP_NS	(3 * NSEC_PER_SEC)
#define ENDED_MAPS_MAX	256

/* One file's rows in the array (or none: no CFI there, frame pointers). */
struct table {
	struct table *prev, *next;	/* LRU, most recent first after the sentinel */
	/* the file read (its fstat and build-id): shared with another file by elf/filecache.h's
	 * rule (filecache_id_shares: the same build-id and size, the same owner or root) */
	struct filecache_id id;
	uint32_t row_start, nelem;	/* its elements in the array: header, index, rows */
	uint32_t row_count;		/* ... of which rows */
	struct elfload load;		/* where its segments go: a mapping's bias */
	unsigned int files;		/* file entries naming it */
	unsigned int users;		/* listed process mappings using it */
	uint64_t hot_ns;		/* a process using it was sampled then (CLOCK_MONOTONIC) */
	bool debug_pending;		/* built while debuginfod may still bring a debug file's CFI */
};

/* A file as /proc/PID/maps names it: (device, inode). Entered when a process lists it; its
 * table is built only when a walk reaches it (wanted). */
struct file {
	struct file *hnext;
	uint64_t dev, ino;
	struct table *t;		/* NULL: not built yet (!tried), or failed at failed_ns */
	uint64_t failed_ns;
	bool tried;			/* a build was tried (t or failed_ns tells how it went) */
	bool wanted;			/* a walk reached it: build at its next listing */
	/* what the file was when read (elf/filecache.h: the one "same file" rule of the three
	 * readers): tmpfs gives a deleted file's inode to the next file */
	struct filecache_id id;
	bool known;
};

struct umap {
	uint64_t start, end, pgoff;
	uint64_t dev, ino;		/* its file (ino 0: anonymous, vDSO) */
	struct table *t;		/* NULL: frame pointers (anonymous, no CFI, not built yet) */
	bool bottom;			/* the executable or the C library: every whole walk ends
					 * there (_start, main, __libc_start_call_main) */
};

/* A process image's state: the process tracker's extension (proc_tracker__ext_register()), made
 * at its first note, ended by the tracker's exec and exit events (or forget), kept GONE_KEEP_NS
 * with only its mappings of files without a table (ended), then released. */
struct proc {
	uint32_t pid;
	bool ended;			/* its image ended: only its unbuilt mappings are left */
	bool queued;			/* in the work queue */
	bool listed;			/* its list is in the BPF map */
	bool exec_only;			/* listed at exec: no table built for it yet */
	bool adopted;			/* listed with its parent's list at its fork, not written
					   since */
	uint64_t written_ns;		/* mono time after emberd last wrote its list (0: never, or
					   the BPF program's copy at the fork) */
	uint64_t noted_ns;		/* first note, for the time to a list */
	uint64_t refreshed_ns;
	uint64_t want_ns;		/* a re-read was asked then: mappings read since */
	uint32_t lists;			/* lists written: the first is re-read sooner */
	uint64_t first_ns;		/* the first list's time */
	uint64_t sampled_ns;		/* last unwinder__sampled(), to 1 s */
	struct umap *maps;
	size_t n, cap;
	size_t unbuilt;			/* maps of a file without a table: frame pointers there */
	bool asked;			/* a walk of it asked for a table: the files at the bottom
					 * of every stack are wanted too */
	uint64_t *reach;		/* addresses walks reached before its next list */
	size_t nreach;
};

struct range {
	uint32_t start, len;
};

struct unwinder {
	struct unwind_opts o;
	char proc_root[256], debug_dir[4096];
	struct sampler *s;
	uint32_t capacity;
	struct file *files[FILE_SLOTS];
	int ext;			/* the processes: the tracker's extension */
	size_t ended_maps;		/* ended states holding mappings (ENDED_MAPS_MAX) */
	struct table lru;		/* sentinel */
	struct table *vdso;		/* this process's vDSO rows; NULL: none */
	struct range *free;		/* free ranges of the array, sorted by start */
	size_t nfree, free_cap;
	uint32_t *queue;		/* pids to list */
	size_t nqueue, queue_cap;
	struct ember_unwind_prow *packed; /* scratch: a table's rows as the array holds them */
	size_t packed_cap;
	struct proc_tracker *tracker;	/* the mappings */
	struct proc_tracker *own_tracker; /* ... when the caller gave none */
	struct ember_unwind_proc list;	/* scratch: the list being written */
	uint32_t list_gen;		/* the last list's generation */
	uint32_t table_id;		/* the last table's id (bpf_shared.h: the rule cache's key) */
	uint32_t built;			/* tables built by this work call: other lists to update */
	bool wants;			/* files newly wanted: a process listing them builds them */
	size_t npending;		/* tables with debug_pending */
	uint64_t debug_seq;		/* dbgfetch__done_seq() when they were last asked about */
	struct unwind_stats st;
};

/* --- the rows array: free ranges ---------------------------------------------------------- */

static int range_alloc(struct unwinder *u, uint32_t len, uint32_t *ret)
{
	size_t i;

	for (i = 0; i < u->nfree; i++) {
		if (u->free[i].len < len)
			continue;
		*ret = u->free[i].start;
		u->free[i].start += len;
		u->free[i].len -= len;
		if (!u->free[i].len) {
			memmove(&u->free[i], &u->free[i + 1], (u->nfree - i - 1) * sizeof(*u->free));
			u->nfree--;
		}
		return 0;
	}
	return -ENOSPC;
}

static int range_free(struct unwinder *u, uint32_t start, uint32_t len)
{
	size_t i;

	if (!len)
		return 0;
	for (i = 0; i < u->nfree && u->free[i].start < start; i++)
		;
	/* merge with the range before and/or after */
	if (i > 0 && u->free[i - 1].start + u->free[i - 1].len == start) {
		u->free[i - 1].len += len;
		if (i < u->nfree && start + len == u->free[i].start) {
			u->free[i - 1].len += u->free[i].len;
			memmove(&u->free[i], &u->free[i + 1], (u->nfree - i - 1) * sizeof(*u->free));
			u->nfree--;
		}
		return 0;
	}
	if (i < u->nfree && start + len == u->free[i].start) {
		u->free[i].start = start;
		u->free[i].len += len;
		return 0;
	}
	if (array_grow((void **)&u->free, &u->free_cap, u->nfree + 1, sizeof(*u->free), 16))
		return -ENOMEM;
	memmove(&u->free[i + 1], &u->free[i], (u->nfree - i) * sizeof(*u->free));
	u->free[i] = (struct range){ .start = start, .len = len };
	u->nfree++;
	return 0;
}

/* --- tables ------------------------------------------------------------------------------- */

static void lru_unlink(struct table *t)
{
	if (t->prev) {
		t->prev->next = t->next;
		t->next->prev = t->prev;
	}
	t->prev = t->next = NULL;
}

static void lru_touch(struct unwinder *u, struct table *t)
{
	if (t == u->vdso)
		return;
	lru_unlink(t);
	t->next = u->lru.next;
	t->prev = &u->lru;
	u->lru.next->prev = t;
	u->lru.next = t;
}

static void table_free(struct unwinder *u, struct table *t)
{
	if (!t)
		return;
	if (t->debug_pending)
		u->npending--;
	lru_unlink(t);
	(void)range_free(u, t->row_start, t->nelem);
	if (t->nelem) {
		u->st.rows_used -= t->row_count;
		u->st.index_used -= t->nelem - t->row_count;
		u->st.tables--;
	} else {
		u->st.tables_empty--;
	}
	free(t);
}

static size_t file_slot(uint64_t dev, uint64_t ino)
{
	return hash_mix64(dev * 0x9e3779b97f4a7c15ULL ^ ino) & (FILE_SLOTS - 1);
}

static struct file *file_find(struct unwinder *u, uint64_t dev, uint64_t ino)
{
	struct file *f;

	for (f = u->files[file_slot(dev, ino)]; f; f = f->hnext)
		if (f->dev == dev && f->ino == ino)
			return f;
	return NULL;
}

/* A table read from another file that may serve @want (elf/filecache.h's rule: a build-id is
 * the file's to write, so shared with files of the same owner, or from root's; the same size). */
static struct table *table_by_bid(struct unwinder *u, const struct filecache_id *want)
{
	struct table *t;

	if (!want->build_id_len)
		return NULL;
	for (t = u->lru.next; t != &u->lru; t = t->next)
		if (filecache_id_shares(want, &t->id))
			return t;
	return NULL;
}

/* @pid's current image's state; NULL: none (never noted, or ended). */
static struct proc *proc_find(struct unwinder *u, uint32_t pid)
{
	return proc_tracker__ext(u->tracker, u->ext, pid, false);
}

static int write_list(struct unwinder *u, struct proc *p);

/* The kernel's dev_t of a device /proc/PID/maps shows as major:minor (f->dev: major << 32). */
static uint64_t kdev(uint64_t dev)
{
	return (dev >> 32) << 20 | (dev & 0xfffff);
}

/*
 * Enters @f's table for the walks of addresses a list lacks (bpf_shared.h: ember_unwind_file):
 * a process exec'd while the worker is busy is walked by it from its first sample. Only a table
 * with rows and one p_vaddr - p_offset for all its executable segments (the bias the walk
 * computes from the kernel's mapping alone).
 */
static void file_publish(struct unwinder *u, const struct file *f)
{
	const struct table *t = f->t;
	struct ember_unwind_file e;
	uint64_t vdelta = 0;
	bool any = false;
	unsigned int i;

	if (!t || !t->nelem || !f->known)
		return; /* (!known: the walk could not tell this file from the next with its inode) */
	for (i = 0; i < t->load.n; i++) {
		const struct elfload_seg *g = &t->load.segs[i];

		if (!g->x)
			continue;
		if (any && g->vaddr - g->off != vdelta)
			return;
		vdelta = g->vaddr - g->off;
		any = true;
	}
	if (!any)
		return;
	e = (struct ember_unwind_file){ .row_start = t->row_start, .row_count = t->nelem,
					.vdelta = vdelta, .size = f->id.size,
					.mtime_ns = f->id.mtime_ns };
	if (sampler__unwind_set_file(u->s, kdev(f->dev), f->ino, &e) == 0)
		u->st.files_published++;
}

static void file_unpublish(struct unwinder *u, const struct file *f)
{
	if (f->t && f->t->nelem && sampler__unwind_del_file(u->s, kdev(f->dev), f->ino) == 0 &&
	    u->st.files_published)
		u->st.files_published--;
}

static void file_set_tried(struct unwinder *u, struct file *f, bool tried);
static struct file *file_want(struct unwinder *u, struct file *f, uint64_t dev, uint64_t ino,
			      uint64_t now);

struct evict {
	struct unwinder *u;
	struct table *t;
};

static void evict_from(void *arg, uint32_t pid, void *state, bool ended)
{
	struct evict *ev = arg;
	struct proc *p = state;
	bool used = false;
	size_t j;

	(void)pid;
	if (ended)
		return; /* an ended image holds no table */
	for (j = 0; j < p->n; j++) {
		if (p->maps[j].t == ev->t) {
			p->maps[j].t = NULL;
			if (p->maps[j].ino)
				p->unbuilt++;
			used = true;
		}
	}
	if (used && p->listed)
		(void)write_list(ev->u, p);
}

/*
 * Drops @t from every process list and every file (they fall back to frame pointers there) and
 * frees it: its rows are needed for another table. @again: its files stay, wanted again at once
 * (the table is to be built anew from the same file: a debug file came).
 */
static void table_evict(struct unwinder *u, struct table *t, bool again)
{
	struct evict ev = { .u = u, .t = t };
	uint64_t now = mono_ns();
	struct file *f, **pf;
	size_t i;

	proc_tracker__ext_each(u->tracker, u->ext, evict_from, &ev);
	for (i = 0; i < FILE_SLOTS; i++) {
		for (pf = &u->files[i]; (f = *pf);) {
			if (f->t == t && again) {
				file_unpublish(u, f);
				f->t = NULL;
				file_set_tried(u, f, false);
				(void)file_want(u, f, f->dev, f->ino, now);
				pf = &f->hnext;
			} else if (f->t == t) {
				*pf = f->hnext;
				file_unpublish(u, f);
				free(f);
			} else {
				pf = &f->hnext;
			}
		}
	}
	u->st.evictions++;
	table_free(u, t);
}

/*
 * Room for @len rows, evicting tables no listed process uses (least recently used first), then
 * tables whose processes were not sampled for HOT_NS; -ENOSPC when only hot tables are left.
 */
static int make_room(struct unwinder *u, uint32_t len, uint32_t *ret)
{
	uint64_t now = mono_ns();
	struct table *t, *victim;

	if (len > u->capacity)
		return -E2BIG;
	while (range_alloc(u, len, ret)) {
		victim = NULL;
		for (t = u->lru.prev; t != &u->lru; t = t->prev) {
			if (t->nelem && !t->users) {
				victim = t;
				break;
			}
		}
		for (t = u->lru.prev; t != &u->lru && !victim; t = t->prev)
			if (t->nelem && now - t->hot_ns >= HOT_NS)
				victim = t;
		if (!victim) {
			u->st.refused++;
			return -ENOSPC; /* every table left is in use: this one waits */
		}
		table_evict(u, victim, false);
	}
	return 0;
}

/* The 8-byte form of @r (bpf_shared.h); a rule it cannot hold becomes EMBER_CFA_NONE. */
static struct ember_unwind_prow pack_row(const struct ember_unwind_row *r, uint64_t *ret_lossy)
{
	struct ember_unwind_prow p = { .pc = r->pc, .rule = EMBER_PROW_NONE_RULE };
	int32_t cfa = r->cfa_off, bp = r->bp_off;
	uint32_t type = r->cfa_type, bpt = r->bp_type;

	/* a gap (no FDE) stays rule 0, a rule the walker cannot express is told apart: the walk
	 * counts a stop there as no_row or no_rule (EMBER_STOP_*) */
	if (type == EMBER_CFA_NONE && r->cfa_off != CFI_NONE_GAP)
		return p;
	if (type == EMBER_CFA_NONE || type == EMBER_CFA_SIGNAL || type == EMBER_CFA_END)
		cfa = 0, bp = 0, bpt = EMBER_BP_SAME;
	if (type == EMBER_CFA_PLT) {
		bpt = EMBER_BP_SAME; /* bp holds the threshold, not scaled */
	} else if (bpt != EMBER_BP_SAME) {
		if (bp % 8) {
			++*ret_lossy;
			return p;
		}
		bp /= 8;
	}
	if (cfa % 8 || cfa / 8 > 32767 || cfa / 8 < -32768 || bp > 1023 || bp < -1024) {
		++*ret_lossy;
		return p;
	}
	p.rule = type | bpt << 3 | ((uint32_t)bp & 0x7ff) << 5 | (uint32_t)(cfa / 8) << 16;
	return p;
}

/*
 * The shift of the index's block size for rows from @lo to @hi (their pcs), @n of them: the
 * smallest (from 64-byte blocks) that keeps the index to n / 16 + 2 blocks, about 16 rows a block
 * (a search of 4 halvings in two cache lines) for at most 1/16 of the rows' memory.
 */
static unsigned int index_shift(uint32_t lo, uint32_t hi, size_t n)
{
	unsigned int s = 6;

	while (s < 31 && (size_t)((hi >> s) - (lo >> s)) + 1 > n / 16 + 2)
		s++;
	return s;
}

size_t unwind_pack_table(const struct ember_unwind_row *rows, size_t n, uint32_t id,
			 struct ember_unwind_prow **buf, size_t *cap, uint64_t *ret_lossy)
{
	unsigned int shift = index_shift(rows[0].pc, rows[n - 1].pc, n);
	uint32_t base = rows[0].pc >> shift << shift;
	size_t nblocks = (size_t)((rows[n - 1].pc >> shift) - (rows[0].pc >> shift)) + 1;
	size_t total = EMBER_UNWIND_HDR + nblocks + n, i, k, j = 0;
	struct ember_unwind_prow *ix;
	uint64_t first, last;

	if (!n || array_grow((void **)buf, cap, total, sizeof(**buf), 4096))
		return 0;
	(*buf)[0] = (struct ember_unwind_prow){ .pc = id, .rule = (uint32_t)nblocks };
	(*buf)[1] = (struct ember_unwind_prow){ .pc = base, .rule = shift };
	ix = &(*buf)[EMBER_UNWIND_HDR];
	/* j: the last row with pc <= the address at hand (0 when none: the walk checks the row) */
	for (k = 0; k < nblocks; k++) {
		first = (uint64_t)base + ((uint64_t)k << shift);
		last = first + (1ull << shift) - 1;
		while (j + 1 < n && rows[j + 1].pc <= first)
			j++;
		ix[k].pc = (uint32_t)j;
		while (j + 1 < n && rows[j + 1].pc <= last)
			j++;
		ix[k].rule = (uint32_t)j;
		/* the next block starts with the row covering this one's end */
	}
	for (i = 0; i < n; i++)
		ix[nblocks + i] = pack_row(&rows[i], ret_lossy);
	return total;
}

/* Compiles @ct into the array as a new table (most recent), with the file's load segments
 * @load (NULL: none known). NULL + errno. */
static struct table *table_from_cfi(struct unwinder *u, struct cfi_table *ct,
				    const struct elfload *load)
{
	const struct ember_unwind_row *rows;
	struct table *t = calloc(1, sizeof(*t));
	size_t n = 0;
	uint32_t start = 0;
	int err;

	if (!t) {
		errno = ENOMEM;
		return NULL;
	}
	if (load)
		t->load = *load; /* none or some: bias_of() falls back */
	rows = ct ? cfi_table__rows(ct, &n) : NULL;
	if (n) {
		uint32_t id = ++u->table_id ? u->table_id : ++u->table_id; /* never 0 */
		size_t total = n > u->capacity ? n :
			unwind_pack_table(rows, n, id, &u->packed, &u->packed_cap, &u->st.rows_lossy);

		if (!total) {
			free(t);
			errno = ENOMEM;
			return NULL;
		}
		err = total > u->capacity ? -E2BIG : make_room(u, (uint32_t)total, &start);
		if (err) {
			if (err == -E2BIG)
				u->st.too_big++;
			free(t);
			errno = -err;
			return NULL;
		}
		(void)sampler__unwind_write_rows(u->s, start, u->packed, total);
		t->row_start = start;
		t->nelem = (uint32_t)total;
		t->row_count = (uint32_t)n;
		u->st.rows_used += n;
		u->st.index_used += total - n;
		u->st.tables++;
	} else {
		u->st.tables_empty++;
	}
	lru_touch(u, t);
	return t;
}

/* A separate debug file by build-id (elffile_open_debug(): root's, with that build-id), for
 * files without .eh_frame; -1 when none. *@fetched: it is in debuginfod's cache folder (whoever
 * fetched it: the symbolizer often has, by the time a walk reaches the file). */
static int open_debug(struct unwinder *u, const uint8_t *bid, size_t len, bool *fetched)
{
	const char *fdir = u->o.fetch ? dbgfetch__dir(u->o.fetch) : NULL, *dir = NULL;
	size_t dlen = 0;
	int fd;

	fd = elffile_open_debug(u->debug_dir, bid, len, NULL, &dir, &dlen, NULL);
	if (fd < 0)
		return -1;
	*fetched = fdir && dir && strlen(fdir) == dlen && !memcmp(fdir, dir, dlen);
	return fd;
}

/* The table of the file open at @fd: shared by build-id, or compiled. NULL + errno. */
static struct table *table_of_fd(struct unwinder *u, int fd, const struct stat *sb)
{
	struct cfi_opts co = { .max_rows = u->capacity, .max_section_bytes = u->o.max_section_bytes };
	struct elffile_facts ef;
	struct filecache_id id;
	struct cfi_table *ct;
	struct table *t;
	int r, dfd = -1, err;
	bool fetched = false, pending = false;
	const uint8_t *bid;
	uint64_t t0;
	int fr;

	/* the file's headers, read once for every reader (elf/elffile.h) */
	if (elffile_facts(u->o.files, fd, sb, &ef, &id))
		u->st.headers_read++;
	r = ef.err ? ef.err : ef.build_id_len;
	bid = ef.build_id;
	t = table_by_bid(u, &id);
	if (t) {
		u->st.build_shared++;
		return t;
	}
	t0 = mono_ns();
	/* a debug file's .debug_frame adds to .eh_frame's rows when the file has none of its own:
	 * built without unwind tables, stripped, its .eh_frame holds only crt's _start */
	if (r > 0)
		dfd = open_debug(u, bid, (size_t)r, &fetched);
	/* a stripped file without a local debug file: debuginfod's, where a server has it, for
	 * its .debug_frame; never waited for (dbgfetch.h): while it is being fetched the table is
	 * built from what the file has, and built again once it came (unwinder__work) */
	if (dfd < 0 && r > 1 && u->o.fetch && !ef.has_symtab) {
		fr = dbgfetch__request(u->o.fetch, bid, (size_t)r);
		if (fr == 0)
			dfd = open_debug(u, bid, (size_t)r, &fetched);
		else
			pending = fr == 1 || fr == -ENOBUFS || fr == -EBUSY;
	}
	if (dfd >= 0 && fetched)
		u->st.debuginfod++;
	ct = cfi_table__open(fd, dfd, &co);
	if (!ct && errno == ENOEXEC && dfd >= 0) { /* the debug file is not for this machine */
		close(dfd);
		dfd = -1;
		ct = cfi_table__open(fd, -1, &co);
	}
	if (!ct && errno != ENOENT) { /* not ELF, too big, no memory: no table at all */
		err = errno;
		if (dfd >= 0)
			close(dfd);
		if (err == E2BIG)
			u->st.too_big++; /* more rows than the whole array */
		else
			u->st.build_failures++;
		errno = err;
		return NULL;
	}
	if (!ct)
		u->st.build_failures++; /* no CFI: an empty table, frame pointers */
	t = table_from_cfi(u, ct, ef.err ? NULL : &ef.load);
	err = errno;
	cfi_table__free(ct);
	if (dfd >= 0)
		close(dfd);
	u->st.builds++;
	u->st.build_ns += mono_ns() - t0;
	if (t)
		t->id = id;
	if (t && pending && t != u->vdso) {
		t->debug_pending = true;
		u->npending++;
		u->st.debuginfod_pending++;
	}
	errno = err;
	return t;
}

/* This process's vDSO: the same image in every process of this kernel. */
static void build_vdso(struct unwinder *u)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	struct cfi_table *ct;
	Elf *elf;
	size_t len = 0;
	GElf_Ehdr eh;

	if (!base)
		return;
	elf_version(EV_CURRENT);
	/* the image's size: the end of its section headers (it is mapped whole) */
	elf = elf_memory((char *)base, 1 << 16);
	if (!elf || !gelf_getehdr(elf, &eh)) {
		elf_end(elf);
		return;
	}
	len = eh.e_shoff + (size_t)eh.e_shnum * eh.e_shentsize;
	elf_end(elf);
	if (len > 1 << 20)
		return;
	elf = elf_memory((char *)base, len);
	ct = elf ? cfi_table__new(elf, NULL, NULL) : NULL;
	if (ct) {
		struct elfload load;

		(void)elfload_read(elf, &load);
		u->vdso = table_from_cfi(u, ct, &load);
		if (u->vdso)
			lru_unlink(u->vdso); /* never evicted */
	}
	cfi_table__free(ct);
	elf_end(elf);
}

/* --- processes ---------------------------------------------------------------------------- */

static uint64_t bias_of(const struct table *t, const struct umap *m)
{
	struct elfload_map em = { .start = m->start, .end = m->end, .pgoff = m->pgoff, .x = true };
	uint64_t bias;

	if (elfload_bias(&t->load, &em, &bias))
		bias = m->start - m->pgoff; /* no segment: file offsets (never with CFI rows) */
	return bias;
}

static int write_list(struct unwinder *u, struct proc *p)
{
	struct ember_unwind_proc *l = &u->list;
	size_t i;
	int err;

	l->nr = 0;
	l->gen = ++u->list_gen ? u->list_gen : ++u->list_gen; /* never 0: an empty cache slot */
	for (i = 0; i < p->n && l->nr < EMBER_UNWIND_MAX_MAPS; i++) {
		const struct umap *m = &p->maps[i];
		struct ember_unwind_map *x = &l->maps[l->nr++];

		*x = (struct ember_unwind_map){ .start = m->start, .end = m->end };
		if (m->t && m->t->nelem) {
			x->bias = bias_of(m->t, m);
			x->row_start = m->t->row_start;
			x->row_count = m->t->nelem;
		}
	}
	if (p->n > EMBER_UNWIND_MAX_MAPS)
		u->st.maps_overflow += p->n - EMBER_UNWIND_MAX_MAPS;
	err = sampler__unwind_set_proc(u->s, p->pid, l);
	if (err) {
		if (err == -E2BIG)
			u->st.procs_dropped++;
		return err;
	}
	p->written_ns = mono_ns();
	if (!p->listed)
		u->st.procs++;
	p->listed = true;
	u->st.lists++;
	return 0;
}

static void proc_unuse(struct proc *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (p->maps[i].t)
			p->maps[i].t->users--;
	p->n = 0;
	p->unbuilt = 0;
}

struct collect {
	struct unwinder *u;
	struct proc *p;
	struct proc_maps *m;		/* the snapshot walked: its mappings' identities */
	uint64_t deadline_ns;
	bool incomplete;		/* a table still to build: stay queued */
	bool ldso, libs;		/* the dynamic loader mapped; other shared objects mapped */
	bool no_build;			/* the tables already built only (unwinder__exec_pid) */
	int err;
};

/* The loader's own file (glibc's or musl's): mapped at exec, before it maps the libraries. */
/* The files every whole walk of @p ends in: its executable (its first file mapping: PIE and
 * non-PIE executables are mapped below the libraries) and the C library. Asked for with the
 * first file a walk reached, so that a walk stopped in one file without a table does not find
 * the next one a tick later, one file per tick (a stack is 3 files deep at least). */
static bool is_bottom(const struct proc *p, const struct procmaps_entry *e)
{
	const char *b = e->path, *q;
	size_t i;

	for (i = 0; i < p->n; i++)
		if (p->maps[i].ino)
			break;
	if (i == p->n)
		return true; /* no file mapping before it: the executable */
	for (q = e->path; q < e->path + e->path_len; q++)
		if (*q == '/')
			b = q + 1;
	return (size_t)(e->path + e->path_len - b) >= 7 &&
	       (!strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5) || !strncmp(b, "ld-musl", 7));
}

/* True when the file @e maps is not the one @f was read from (filecache_id_same_file: same
 * device and inode, other size or mtime); what cannot be checked is taken as it is. The check
 * is the tracker's, once per mapping per snapshot, shared with the symbolizer and the CPython
 * reader (proc_tracker__identity). */
static bool file_stale(struct unwinder *u, struct collect *c, const struct procmaps_entry *e,
		       const struct file *f)
{
	struct filecache_id now;
	struct stat st;

	if (!f->known || proc_tracker__identity(u->tracker, c->m, e, c->p->pid, &st))
		return false;
	filecache_id_of(&st, &now);
	return !filecache_id_same_file(&f->id, &now);
}

/* Opens the file behind a mapping, the one way (proc/mapfile.h). fd or -errno. */
static int open_mapped(struct unwinder *u, uint32_t pid, const struct procmaps_entry *e,
		       struct stat *ret_st)
{
	struct mapfile_want w = mapfile_want_of(pid, e);

	return mapfile_open(u->proc_root, &w, &u->st.files, ret_st);
}

static struct file *file_new(struct unwinder *u, uint64_t dev, uint64_t ino)
{
	struct file *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->dev = dev;
	f->ino = ino;
	f->hnext = u->files[file_slot(dev, ino)];
	u->files[file_slot(dev, ino)] = f;
	u->st.files_unbuilt++;
	return f;
}

/* A build was tried (or the file changed under its key: tried = false again). */
static void file_set_tried(struct unwinder *u, struct file *f, bool tried)
{
	if (f->tried != tried)
		u->st.files_unbuilt += tried ? (uint64_t)-1 : 1;
	f->tried = tried;
}

/* Whether a walk may ask for @f's table: never tried, or failed long enough ago. */
static bool file_buildable(const struct file *f, uint64_t now)
{
	return !f->t && (!f->tried || now - f->failed_ns >= FAIL_RETRY_NS);
}

/* Whether a walk of @p reached [start, end) before this list (unwinder__reached()). */
static bool reach_in(const struct proc *p, uint64_t start, uint64_t end)
{
	size_t i;

	for (i = 0; i < p->nreach; i++)
		if (p->reach[i] >= start && p->reach[i] < end)
			return true;
	return false;
}

static int on_entry(const struct procmaps_entry *e, void *ctx)
{
	struct collect *c = ctx;
	struct unwinder *u = c->u;
	struct proc *p = c->p;
	struct table *t = NULL;
	struct file *f = NULL;
	struct stat sb;
	uint64_t dev = 0;
	bool bottom = false;
	int fd;

	if (!e->x || e->kind == PROCMAPS_SPECIAL)
		return 0;
	if (e->kind == PROCMAPS_FILE && e->path_len) {
		if (procmaps_is_loader(e))
			c->ldso = true;
		else if (procmaps_is_shared_object(e))
			c->libs = true;
	}
	if (e->kind == PROCMAPS_VDSO) {
		t = u->vdso;
	} else if (e->kind == PROCMAPS_FILE && e->inode) {
		dev = (uint64_t)e->dev_major << 32 | e->dev_minor;
		f = file_find(u, dev, e->inode);
		if (f && file_stale(u, c, e, f)) {
			/* another file under the same key now: its table is not this one's */
			file_unpublish(u, f);
			if (f->t)
				f->t->files--;
			f->t = NULL;
			f->failed_ns = 0;
			f->known = false;
			file_set_tried(u, f, false);
			u->st.files_changed++;
		}
		if (!f) {
			f = file_new(u, dev, e->inode);
			if (!f) {
				c->err = -ENOMEM;
				return 1;
			}
		}
		bottom = is_bottom(p, e);
		/* a walk of this process reached it before this list (or another file, and every
		 * whole walk ends in this one) */
		if (!f->wanted && (reach_in(p, e->start, e->end) || (bottom && (p->asked || p->nreach))) &&
		    file_buildable(f, mono_ns())) {
			f->wanted = true;
			u->st.build_asks++;
		}
		/* built only when a walk reached it: frame pointers there meanwhile (a recent
		 * failure stays frame pointers) */
		if (!f->wanted || !file_buildable(f, mono_ns())) {
			if (!f->t && !f->tried && c->no_build)
				u->st.exec_unbuilt++; /* frame pointers there until sampled */
		} else if (mono_ns() > c->deadline_ns) {
			c->incomplete = true;
		} else {
			fd = open_mapped(u, p->pid, e, &sb);
			/* not reachable through this process (gone already: a short-lived one): not
			 * the file's failure, which would keep it from every process for
			 * FAIL_RETRY_NS; still wanted: the next process listing it builds it */
			if (fd < 0)
				goto listed;
			t = table_of_fd(u, fd, &sb);
			close(fd);
			f->t = t;
			f->wanted = false;
			file_set_tried(u, f, true);
			filecache_id_of(&sb, &f->id);
			f->known = true;
			if (t) {
				t->files++;
				u->built++;
				file_publish(u, f);
			} else {
				f->failed_ns = mono_ns();
			}
		}
		t = f->t;
	}
listed:
	/* anonymous (JIT) or without a table: listed with no rows, frame pointers there */
	if (array_grow((void **)&p->maps, &p->cap, p->n + 1, sizeof(*p->maps), 16)) {
		c->err = -ENOMEM;
		return 1;
	}
	p->maps[p->n++] = (struct umap){ .start = e->start, .end = e->end, .pgoff = e->pgoff,
					 .dev = f ? dev : 0, .ino = f ? e->inode : 0, .t = t,
					 .bottom = bottom };
	if (t) {
		t->users++;
		t->hot_ns = mono_ns(); /* listed now: its first samples come */
		lru_touch(u, t);
	} else if (f) {
		p->unbuilt++;
	}
	return 0;
}

/* Reads @p's mappings and lists them. 1: done; 0: tables left to build; -errno. */
static int list_proc(struct unwinder *u, struct proc *p, uint64_t deadline_ns)
{
	struct collect c = { .u = u, .p = p, .deadline_ns = deadline_ns, .no_build = p->exec_only };
	struct proc_maps *m;
	int r;

	/* from the process tracker: read once per event, shared with the symbolizer and the
	 * CPython reader */
	m = proc_tracker__maps(u->tracker, p->pid, p->want_ns);
	if (!m) {
		u->st.maps_errors++;
		return -errno;
	}
	c.m = m;
	proc_unuse(p);
	(void)proc_maps__for_each(m, on_entry, &c);
	proc_maps__put(m);
	if (c.err)
		return c.err;
	p->nreach = 0; /* asked for: the files they are in are wanted now */
	p->adopted = false;
	r = write_list(u, p);
	if (r)
		return r;
	p->refreshed_ns = mono_ns();
	p->lists++;
	if (!p->first_ns)
		p->first_ns = p->refreshed_ns;
	/* listed at exec, before ld.so mapped the libraries (the loader and no other shared
	 * object): its walks would be cut short in libc until a walk asks for a re-read, a drain
	 * tick or two later; read it again at the next work call instead, for at most
	 * LOADER_WAIT_NS (a program that maps no library at all) */
	/* (not a process listed at exec and not sampled yet: its first sample reads again, and
	 * most such processes never get one: /bin/true, a compiler's helpers) */
	if (c.ldso && !c.libs && !p->exec_only && p->refreshed_ns - p->first_ns < LOADER_WAIT_NS) {
		c.incomplete = true;
		p->want_ns = mono_ns(); /* a new read at the next call */
	}
	if (!c.incomplete && p->noted_ns && !p->exec_only) {
		u->st.ready_ns_total += p->refreshed_ns - p->noted_ns;
		u->st.ready_count++;
		p->noted_ns = 0;
	}
	return c.incomplete ? 0 : 1;
}

/*
 * The tracker's ops.ended: @p's image ended (exec, exit at @event_ns; 0: a sweep, or forgotten
 * without an event). Its list goes from the BPF map unless the BPF program deleted it at the
 * event and emberd wrote none since (a list written after the exec, from a read before it, would
 * walk the new image wrong); its tables are let go; its mappings of files without a table are
 * kept, in address order, for the samples delivered after the event.
 */
static void proc_ended(void *ctx, uint32_t pid, void *state, uint64_t event_ns)
{
	struct unwinder *u = ctx;
	struct proc *p = state;
	size_t i, n = 0;

	if (p->listed) {
		if (!event_ns || p->written_ns >= event_ns)
			(void)sampler__unwind_del_proc(u->s, pid);
		else
			u->st.dels_skipped++;
		u->st.procs--;
		p->listed = false;
	}
	for (i = 0; i < p->n; i++) {
		if (p->maps[i].t)
			p->maps[i].t->users--;
		else if (p->maps[i].ino)
			p->maps[n++] = p->maps[i];
	}
	p->n = n;
	p->unbuilt = n;
	if (n && u->ended_maps >= ENDED_MAPS_MAX) {
		p->n = p->unbuilt = n = 0; /* the oldest kept are older than this one: still theirs */
		u->st.ended_maps_dropped++;
	}
	if (!n) {
		free(p->maps);
		p->maps = NULL;
		p->cap = 0;
	} else {
		u->ended_maps++;
	}
	free(p->reach);
	p->reach = NULL;
	p->nreach = 0;
	p->ended = true;
}

/* ... ops.release: what the state holds (the tracker frees the state). */
static void proc_release(void *ctx, uint32_t pid, void *state)
{
	struct unwinder *u = ctx;
	struct proc *p = state;

	(void)pid;
	if (!p->ended)
		proc_unuse(p); /* the unwinder going: its tables go after */
	else if (p->n)
		u->ended_maps--;
	free(p->reach);
	free(p->maps);
}

static void queue(struct unwinder *u, struct proc *p)
{
	if (p->queued)
		return;
	if (array_grow((void **)&u->queue, &u->queue_cap, u->nqueue + 1, sizeof(*u->queue), 64))
		return; /* no memory: walked by frame pointer */
	u->queue[u->nqueue++] = p->pid;
	p->queued = true;
}

static void note(struct unwinder *u, uint32_t pid, bool exec_only)
{
	struct proc *p;

	if (!u || !pid)
		return;
	p = proc_find(u, pid);
	if (!p) {
		p = proc_tracker__ext(u->tracker, u->ext, pid, true); /* zeroed */
		if (!p)
			return;
		p->pid = pid;
		p->noted_ns = mono_ns();
		p->exec_only = exec_only;
	} else if (!exec_only && p->exec_only) {
		p->exec_only = false; /* sampled: its tables now */
		p->noted_ns = mono_ns();
	} else if (!exec_only && p->adopted && p->listed) {
		/* a fork's first sample, its parent's list adopted and not written since: the
		 * same list again would be written (its walks' files are asked for by
		 * unwinder__reached()) */
		u->st.fork_notes_kept++;
		return;
	}
	queue(u, p);
}

void unwinder__note_pid(struct unwinder *u, uint32_t pid)
{
	note(u, pid, false);
}

void unwinder__exec_pid(struct unwinder *u, uint32_t pid, bool seeded)
{
	if (!u)
		return;
	if (seeded) {
		u->st.exec_seeded++;
		return;
	}
	u->st.exec_lists++;
	note(u, pid, true);
}

int unwinder__fork_pid(struct unwinder *u, uint32_t parent, uint32_t child)
{
	struct proc *pp = u ? proc_find(u, parent) : NULL, *p;
	size_t i;

	if (!pp || !pp->listed || !child)
		return -ENOENT;
	unwinder__forget_pid(u, child); /* a pid reused, its exit missed */
	p = proc_tracker__ext(u->tracker, u->ext, child, true);
	if (!p)
		return -ENOMEM;
	p->maps = pp->n ? malloc(pp->n * sizeof(*p->maps)) : NULL;
	if (pp->n && !p->maps) {
		proc_tracker__ext_end(u->tracker, u->ext, child, 0); /* nothing listed: let go */
		return -ENOMEM;
	}
	memcpy(p->maps, pp->maps, pp->n * sizeof(*p->maps));
	p->n = p->cap = pp->n;
	p->unbuilt = pp->unbuilt;
	for (i = 0; i < p->n; i++)
		if (p->maps[i].t)
			p->maps[i].t->users++;
	p->pid = child;
	p->exec_only = pp->exec_only;
	p->refreshed_ns = pp->refreshed_ns;
	p->lists = pp->lists;
	p->first_ns = pp->first_ns;
	/* not written: the BPF program copied the parent's list at the fork (a write now could
	 * land after the child's exec, which deleted it); adopted with the same tables */
	p->listed = true;
	p->adopted = true;
	u->st.procs++;
	return 0;
}

void unwinder__refresh_pid(struct unwinder *u, uint32_t pid)
{
	struct proc *p = u ? proc_find(u, pid) : NULL;

	if (p && !p->queued &&
	    mono_ns() - p->refreshed_ns >= (p->lists <= 1 ? FIRST_REFRESH_NS : REFRESH_NS)) {
		p->want_ns = mono_ns(); /* the mappings as they are now, not as listed */
		queue(u, p);
	}
}

void unwinder__sampled(struct unwinder *u, uint32_t pid)
{
	struct proc *p = u ? proc_find(u, pid) : NULL;
	uint64_t now;
	size_t i;

	if (!p)
		return;
	now = mono_ns();
	if (now - p->sampled_ns < NSEC_PER_SEC)
		return;
	p->sampled_ns = now;
	for (i = 0; i < p->n; i++)
		if (p->maps[i].t)
			p->maps[i].t->hot_ns = now;
}

static void reach_add(struct unwinder *u, struct proc *p, uint64_t pc)
{
	size_t i;

	for (i = 0; i < p->nreach; i++)
		if (p->reach[i] == pc)
			return;
	if (!p->reach) {
		p->reach = malloc(REACH_MAX * sizeof(*p->reach));
		if (!p->reach) {
			u->st.reach_dropped++;
			return;
		}
	}
	if (p->nreach >= REACH_MAX) {
		u->st.reach_dropped++;
		return;
	}
	p->reach[p->nreach++] = pc;
}

/* @f was reached: built at its next listing (by any process). */
static struct file *file_want(struct unwinder *u, struct file *f, uint64_t dev, uint64_t ino,
			      uint64_t now)
{
	if (!f)
		f = file_new(u, dev, ino); /* evicted since it was listed */
	if (f && !f->wanted && file_buildable(f, now)) {
		f->wanted = true;
		u->wants = true;
		u->st.build_asks++;
	}
	return f;
}

static struct umap *maps_find(struct umap *maps, size_t n, uint64_t pc)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (pc < maps[mid].start)
			hi = mid;
		else if (pc >= maps[mid].end)
			lo = mid + 1;
		else
			return &maps[mid];
	}
	return NULL;
}

/* A walk of a process whose image ended meanwhile: its files as it had them listed. */
static void reached_ended(struct unwinder *u, uint32_t pid, const uint64_t *ips, size_t n,
			  uint64_t samples)
{
	const struct proc *r = proc_tracker__ext_last(u->tracker, u->ext, pid);
	const struct umap *m;
	uint64_t now = mono_ns();
	bool fp = false;
	size_t i;

	if (!r || !r->ended || !r->n)
		return;
	for (i = 0; i < n; i++) {
		m = maps_find(r->maps, r->n, i ? ips[i] - 1 : ips[i]);
		if (!m)
			continue;
		fp = true;
		(void)file_want(u, file_find(u, m->dev, m->ino), m->dev, m->ino, now);
	}
	if (fp)
		u->st.reach_fp_samples += samples;
}

void unwinder__reached(struct unwinder *u, uint32_t pid, const uint64_t *ips, size_t n,
		       uint64_t samples)
{
	struct proc *p = u ? proc_find(u, pid) : NULL;
	const struct umap *m = NULL;
	bool fp = false, ask = false, unlisted = false;
	uint64_t now, pc;
	struct file *f;
	size_t i;

	if (u && !p && n)
		reached_ended(u, pid, ips, n, samples); /* exited: its samples come after */
	if (!p || !n)
		return;
	now = mono_ns();
	for (i = 0; i < n; i++) {
		if (EMBER_V8F_IS(ips[i]))
			continue; /* a JavaScript frame's word (bpf_shared.h), no address */
		/* a return address points after the call: the call itself */
		pc = i ? ips[i] - 1 : ips[i];
		if (!m || pc < m->start || pc >= m->end)
			m = maps_find(p->maps, p->n, pc); /* callers: mostly the callee's file */
		if (m && !m->t && m->ino)
			fp = true; /* its file has no table in this list: frame pointers there */
		if (!p->listed || p->queued) {
			/* its list is to be written (again): asked for there */
			if (!m || (!m->t && m->ino))
				reach_add(u, p, pc);
			continue;
		}
		if (!m) {
			/* code mapped since its list (a dlopen, a new JIT region): the walk went
			 * there by frame pointers, or by a table found through the kernel's
			 * mapping, which may be a recycled device and inode's: listed again */
			unlisted = true;
			continue;
		}
		if (m->t || !m->ino)
			continue; /* its table, or anonymous */
		f = file_find(u, m->dev, m->ino);
		if (f && f->t) {
			ask = true; /* built since this list: written again */
		} else if (!f || file_buildable(f, now)) {
			if (file_want(u, f, m->dev, m->ino, now))
				ask = true;
		}
	}
	if (fp)
		u->st.reach_fp_samples += samples;
	if (ask && !p->asked) {
		p->asked = true;
		/* and the files every whole walk ends in */
		for (i = 0; i < p->n; i++) {
			if (!p->maps[i].bottom || p->maps[i].t)
				continue;
			f = file_find(u, p->maps[i].dev, p->maps[i].ino);
			if (!f || file_buildable(f, now))
				(void)file_want(u, f, p->maps[i].dev, p->maps[i].ino, now);
		}
	}
	if (ask)
		queue(u, p);
	else if (unlisted && !p->queued) {
		u->st.reach_unlisted++;
		unwinder__refresh_pid(u, pid); /* at most every 50 ms, then every second */
	}
}

/* @event_ns: the BPF program deleted the list at that time (0: it did not). The tracker's exec
 * and exit events have ended the state already (proc_ended(), with their time): a no-op then. */
static void forget(struct unwinder *u, uint32_t pid, uint64_t event_ns)
{
	if (u)
		proc_tracker__ext_end(u->tracker, u->ext, pid, event_ns);
}

void unwinder__forget_pid(struct unwinder *u, uint32_t pid)
{
	forget(u, pid, 0);
}

void unwinder__forget_pid_at(struct unwinder *u, uint32_t pid, uint64_t event_ns)
{
	forget(u, pid, event_ns);
}

struct pids {
	uint32_t *v;
	size_t n, cap;
};

static void collect_pid(void *arg, uint32_t pid, void *state, bool ended)
{
	struct pids *ps = arg;

	(void)state;
	if (ended)
		return;
	if (!array_grow((void **)&ps->v, &ps->cap, ps->n + 1, sizeof(*ps->v), 64))
		ps->v[ps->n++] = pid; /* no memory: the rest at the next sweep */
}

int unwinder__sweep(struct unwinder *u)
{
	struct pids ps = { 0 };
	size_t i;
	int n = 0;

	if (!u)
		return 0;
	/* the ended states kept past GONE_KEEP_NS go */
	proc_tracker__ext_prune(u->tracker, u->ext);
	proc_tracker__ext_each(u->tracker, u->ext, collect_pid, &ps);
	for (i = 0; i < ps.n; i++) {
		if (!procfs_exists(u->proc_root, ps.v[i])) {
			unwinder__forget_pid(u, ps.v[i]);
			u->st.procs_swept++;
			n++;
		}
	}
	free(ps.v);
	return n;
}

/* Tables were built, or files wanted: every listed process listing one of those files without
 * its table is queued, to have its list written again with it (no /proc read: the maps it was
 * listed from) or to build it (through it: the process that asked may be gone). */
static void queue_if_user(void *arg, uint32_t pid, void *state, bool ended)
{
	struct unwinder *u = arg;
	struct proc *p = state;
	const struct file *f;
	uint64_t now = mono_ns();
	size_t j;

	(void)pid;
	if (ended || !p->unbuilt || p->queued || !p->listed)
		return;
	for (j = 0; j < p->n; j++) {
		if (p->maps[j].t || !p->maps[j].ino)
			continue;
		f = file_find(u, p->maps[j].dev, p->maps[j].ino);
		if (f && (f->t || (f->wanted && file_buildable(f, now)))) {
			queue(u, p);
			break;
		}
	}
}

static void queue_users_of_built(struct unwinder *u)
{
	proc_tracker__ext_each(u->tracker, u->ext, queue_if_user, u);
}

/*
 * Tables built while their debug file was being fetched, asked about again once a fetch has
 * ended: there now, the table goes and its files are wanted again at once (a table is built
 * only where walks reached, so its processes are being sampled: their lists are written again
 * with the debug file's CFI at this call's end, without waiting for a walk to stop there and
 * ask; frame pointers there meanwhile); not found, it stays as it is.
 */
static void debug_recheck(struct unwinder *u)
{
	struct table *t, *next;
	uint64_t seq = dbgfetch__done_seq(u->o.fetch);
	int r;

	if (seq == u->debug_seq)
		return;
	u->debug_seq = seq;
	for (t = u->lru.next; u->npending && t != &u->lru; t = next) {
		next = t->next;
		if (!t->debug_pending)
			continue;
		r = dbgfetch__request(u->o.fetch, t->id.build_id, t->id.build_id_len);
		if (r == 1 || r == -ENOBUFS || r == -EBUSY)
			continue;
		t->debug_pending = false;
		u->npending--;
		if (r == 0) {
			u->st.debuginfod_late++;
			table_evict(u, t, true);
		}
	}
}

int unwinder__work(struct unwinder *u)
{
	uint64_t deadline = mono_ns() + u->o.work_budget_ns;
	size_t i, keep = 0;
	struct proc *p;
	int r;

	u->built = 0;
	if (u->npending && u->o.fetch)
		debug_recheck(u);
	for (i = 0; i < u->nqueue; i++) {
		p = proc_find(u, u->queue[i]);
		if (!p)
			continue; /* forgotten meanwhile */
		r = list_proc(u, p, deadline);
		if (r == 0 || r == -ENOMEM) {
			u->queue[keep++] = p->pid; /* tables left: next call */
			continue;
		}
		p->queued = false;
		if (r < 0 && !p->listed) /* gone or unreadable: nothing to walk with */
			unwinder__forget_pid(u, p->pid);
	}
	u->nqueue = keep;
	/* the processes listing the new tables' files: their lists at the next call (soon: the
	 * drain asks for one within 5 ms while work is pending) */
	if (u->built || u->wants)
		queue_users_of_built(u);
	u->wants = false;
	return (int)u->nqueue;
}

static void add_proc_mem(void *arg, uint32_t pid, void *state, bool ended)
{
	const struct proc *p = state;

	(void)pid;
	(void)ended;
	*(size_t *)arg += sizeof(*p) + p->cap * sizeof(*p->maps) +
			  (p->reach ? REACH_MAX * sizeof(*p->reach) : 0);
}

void unwinder__stats(const struct unwinder *u, struct unwind_stats *ret)
{
	const struct file *f;
	const struct table *t;
	size_t i, mem = sizeof(*u) + u->packed_cap * sizeof(*u->packed) +
			u->queue_cap * sizeof(*u->queue) + u->free_cap * sizeof(*u->free);

	*ret = u->st;
	ret->rows_capacity = u->capacity;
	ret->bytes = (uint64_t)u->capacity * sizeof(struct ember_unwind_prow);
	ret->procs_pending = u->nqueue;
	for (i = 0; i < FILE_SLOTS; i++)
		for (f = u->files[i]; f; f = f->hnext)
			mem += sizeof(*f);
	proc_tracker__ext_each(u->tracker, u->ext, add_proc_mem, &mem);
	for (t = u->lru.next; t != &u->lru; t = t->next)
		mem += sizeof(*t);
	ret->heap_bytes = mem;
}

struct unwinder *unwinder__new(struct sampler *sampler, const struct unwind_opts *o)
{
	struct unwind_opts def = UNWIND_OPTS_DEFAULT;
	struct unwinder *u;

	if (!sampler || !sampler__unwind_capacity(sampler)) {
		errno = EINVAL;
		return NULL;
	}
	u = calloc(1, sizeof(*u));
	if (!u) {
		errno = ENOMEM;
		return NULL;
	}
	u->o = o ? *o : def;
	snprintf(u->proc_root, sizeof(u->proc_root), "%s",
		 u->o.proc_root ? u->o.proc_root : "/proc");
	snprintf(u->debug_dir, sizeof(u->debug_dir), "%s",
		 u->o.debug_dir ? u->o.debug_dir : "/usr/lib/debug");
	u->o.proc_root = u->proc_root;
	u->o.debug_dir = u->debug_dir;
	u->tracker = u->o.procs;
	if (!u->tracker) {
		struct proc_tracker_opts po = { .proc_root = u->proc_root };

		u->tracker = u->own_tracker = proc_tracker__new(&po);
		if (!u->tracker) {
			free(u);
			errno = ENOMEM;
			return NULL;
		}
	}
	u->s = sampler;
	u->capacity = sampler__unwind_capacity(sampler);
	u->lru.next = u->lru.prev = &u->lru;
	{
		struct proc_ext_ops ops = { .name = "unwind", .size = sizeof(struct proc),
					    .keep_ns = GONE_KEEP_NS, .ended = proc_ended,
					    .release = proc_release, .ctx = u };

		u->ext = proc_tracker__ext_register(u->tracker, &ops);
	}
	if (u->ext < 0 || range_free(u, 0, u->capacity)) {
		if (u->ext >= 0)
			proc_tracker__ext_unregister(u->tracker, u->ext);
		proc_tracker__free(u->own_tracker);
		free(u->free);
		free(u);
		errno = ENOMEM;
		return NULL;
	}
	build_vdso(u);
	return u;
}

void unwinder__free(struct unwinder *u)
{
	struct file *f;
	size_t i;

	if (!u)
		return;
	/* the processes first: they let go of the tables */
	proc_tracker__ext_unregister(u->tracker, u->ext);
	for (i = 0; i < FILE_SLOTS; i++) {
		while ((f = u->files[i])) {
			u->files[i] = f->hnext;
			free(f);
		}
	}
	while (u->lru.next != &u->lru)
		table_free(u, u->lru.next);
	free(u->vdso);
	free(u->free);
	free(u->queue);
	proc_tracker__free(u->own_tracker);
	free(u->packed);
	free(u);
}
