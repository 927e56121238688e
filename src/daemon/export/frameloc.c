// SPDX-License-Identifier: MIT
#include "ember/daemon/export/frameloc.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ember/core/base/clock.h"
#include "ember/core/base/hash.h"
#include "ember/daemon/proc/mapfile.h"
#include "ember/daemon/elf/elfload.h"
#include "ember/daemon/elf/elfsym.h"
#include "ember/daemon/elf/filecache.h"
#include "ember/daemon/proc/procmaps.h"
#include "ember/daemon/proc/proctrack.h"

#define MAX_PIDS	 1024u	/* process images whose files are kept (counted past it) */
#define MAX_PID_FILES	 32	/* executable files per process looked in */

struct name_slot {
	const char *name; /* borrowed from the file's elfsym; NULL: empty */
	uint64_t offset;
};

struct file {
	bool used;
	uint32_t dev_major, dev_minor;
	uint64_t ino;
	uint64_t stamp; /* LRU */
	char *path;
	char build_id[81];
	struct elfsym *es;
	struct name_slot *names; /* open addressing */
	size_t cap;
};

/* A process image's executable files: the process tracker's extension (made when a frame of the
 * image is looked up, ended by its exec or exit), on the exporter's thread alone */
struct pid_files {
	bool read;		  /* the fields below are a read's */
	uint64_t round;		  /* the round it was read in */
	uint64_t read_ns;	  /* the tracker's read it came from (CLOCK_MONOTONIC) */
	uint64_t checked;	  /* the round its files were last found cached */
	unsigned int n;
	struct {
		uint32_t dev_major, dev_minor;
		uint64_t ino;
	} f[MAX_PID_FILES];
};

struct frameloc {
	char proc_root[256];
	struct proc_tracker *procs; /* the processes' mappings (borrowed) */
	struct elfshare *share;	    /* the symbolizer's images (borrowed); NULL: none */
	struct file files[FRAMELOC_FILES];
	int ext; /* the tracker's extension id of struct pid_files (< 0: none) */
	uint64_t round;
	uint64_t clock;
	unsigned int loads; /* this round */
	uint64_t round_cpu0; /* the thread's CPU at the round's start */
	struct frameloc_stats st;
};

static uint64_t name_hash(const char *s)
{
	return hash_bytes(s, strlen(s), 0x6c);
}

static void file_clear(struct file *f)
{
	elfsym__free(f->es);
	free(f->names);
	free(f->path);
	memset(f, 0, sizeof(*f));
}

/* The file offset of @vaddr by the PT_LOAD segment that holds it. */
static bool vaddr_to_off(const struct elfload *l, uint64_t vaddr, uint64_t *ret)
{
	unsigned int i;

	for (i = 0; l && i < l->n; i++)
		if (vaddr >= l->segs[i].vaddr && vaddr - l->segs[i].vaddr < l->segs[i].filesz) {
			*ret = l->segs[i].off + (vaddr - l->segs[i].vaddr);
			return true;
		}
	return false;
}

/* The names of @f->es into its table: the first symbol of a name wins. 0 or -ENOMEM. */
static int file_index(struct file *f)
{
	const struct elfload *l = elfsym__load(f->es);
	size_t n = elfsym__count(f->es), cap = 16, i;

	while (cap < 2 * n)
		cap *= 2;
	f->names = calloc(cap, sizeof(*f->names));
	if (!f->names)
		return -ENOMEM;
	f->cap = cap;
	for (i = 0; i < n; i++) {
		const char *name = elfsym__name(f->es, (int)i);
		uint64_t off;
		size_t j;

		if (!name || !*name || !vaddr_to_off(l, elfsym__addr(f->es, (int)i), &off))
			continue;
		j = name_hash(name) & (cap - 1);
		while (f->names[j].name && strcmp(f->names[j].name, name))
			j = (j + 1) & (cap - 1);
		if (!f->names[j].name)
			f->names[j] = (struct name_slot){ .name = name, .offset = off };
	}
	return 0;
}

static struct file *file_find(struct frameloc *fl, uint32_t maj, uint32_t min, uint64_t ino)
{
	size_t i;

	for (i = 0; i < FRAMELOC_FILES; i++)
		if (fl->files[i].used && fl->files[i].ino == ino && fl->files[i].dev_major == maj &&
		    fl->files[i].dev_minor == min)
			return &fl->files[i];
	return NULL;
}

/* Opens and indexes the file of mapping @e of @pid into a slot (the least recently used). */
static struct file *file_load(struct frameloc *fl, uint32_t pid, const struct procmaps_entry *e)
{
	struct mapfile_want w = mapfile_want_of(pid, e);
	struct file *f = &fl->files[0];
	struct filecache_id id;
	struct stat st;
	const uint8_t *b;
	uint64_t t0;
	size_t i, n;
	int fd;

	/* only the symbolizer's images: a file it never read has no frame to locate (a frame's
	 * name is its), and is not parsed here. A hint first, the file opened only when it has one */
	if (!elfshare__has(fl->share, e->inode)) {
		fl->st.files_unshared++;
		return NULL;
	}
	if (fl->loads >= FRAMELOC_LOADS_PER_ROUND ||
	    clock_ns(CLOCK_THREAD_CPUTIME_ID) - fl->round_cpu0 >= FRAMELOC_ROUND_CPU_NS) {
		fl->st.files_deferred++;
		return NULL;
	}
	fl->loads++;
	t0 = mono_ns();
	for (i = 0; i < FRAMELOC_FILES; i++) {
		if (!fl->files[i].used) {
			f = &fl->files[i];
			break;
		}
		if (fl->files[i].stamp < f->stamp)
			f = &fl->files[i];
	}
	file_clear(f);
	fd = mapfile_open(strcmp(fl->proc_root, "/proc") ? fl->proc_root : NULL, &w, NULL, &st);
	if (fd < 0) {
		fl->st.files_failed++;
		return NULL;
	}
	/* the symbolizer's image of this very file, if it has one: no second parse */
	filecache_id_of(&st, &id);
	f->es = elfshare__find(fl->share, &id);
	close(fd);
	if (!f->es) {
		fl->st.files_unshared++; /* another file under that inode now */
		fl->st.load_ns += mono_ns() - t0;
		return NULL;
	}
	fl->st.files_borrowed++;
	f->path = strndup(e->path, e->path_len);
	if (!f->es || !f->path || file_index(f)) {
		file_clear(f);
		fl->st.files_failed++;
		fl->st.load_ns += mono_ns() - t0;
		return NULL;
	}
	fl->st.load_ns += mono_ns() - t0;
	n = elfsym__build_id(f->es, &b);
	for (i = 0; i < n && 2 * i + 2 < sizeof(f->build_id); i++)
		snprintf(f->build_id + 2 * i, 3, "%02x", b[i]);
	f->used = true;
	f->dev_major = e->dev_major;
	f->dev_minor = e->dev_minor;
	f->ino = e->inode;
	fl->st.files_read++;
	return f;
}

static int on_map(const struct procmaps_entry *e, void *ctx)
{
	struct pid_files *p = ctx;
	unsigned int i;

	if (e->kind != PROCMAPS_FILE || !e->x || !e->inode || !e->path_len)
		return 0;
	for (i = 0; i < p->n; i++)
		if (p->f[i].ino == e->inode && p->f[i].dev_major == e->dev_major &&
		    p->f[i].dev_minor == e->dev_minor)
			return 0;
	if (p->n == MAX_PID_FILES)
		return 1;
	p->f[p->n].dev_major = e->dev_major;
	p->f[p->n].dev_minor = e->dev_minor;
	p->f[p->n].ino = e->inode;
	p->n++;
	return 0;
}

struct load_ctx {
	struct frameloc *fl;
	uint32_t pid;
};

/* Loads the files of the process's executable mappings not cached yet. */
static int on_map_load(const struct procmaps_entry *e, void *ctx)
{
	struct load_ctx *c = ctx;
	struct file *f;

	if (e->kind != PROCMAPS_FILE || !e->x || !e->inode || !e->path_len)
		return 0;
	f = file_find(c->fl, e->dev_major, e->dev_minor, e->inode);
	if (!f)
		f = file_load(c->fl, c->pid, e);
	if (f)
		f->stamp = ++c->fl->clock;
	return 0;
}

/* @pid's files for its current image (its maps read now if not yet, or stale); NULL: unknown. */
static struct pid_files *pid_get(struct frameloc *fl, uint32_t pid)
{
	struct load_ctx lc = { .fl = fl, .pid = pid };
	struct pid_files *p;
	struct proc_maps *m;
	uint64_t min_read_ns;

	if (fl->ext < 0)
		return NULL;
	p = proc_tracker__ext(fl->procs, fl->ext, pid, false);
	if (p && p->read && fl->round - p->round < FRAMELOC_REREAD_ROUNDS) {
		unsigned int i;

		if (p->checked == fl->round)
			return p;
		/* read in an earlier round: its files may have been evicted since (LRU) */
		for (i = 0; i < p->n; i++)
			if (!file_find(fl, p->f[i].dev_major, p->f[i].dev_minor, p->f[i].ino))
				break;
		if (i == p->n) {
			p->checked = fl->round;
			return p;
		}
	}
	if (clock_ns(CLOCK_THREAD_CPUTIME_ID) - fl->round_cpu0 >= FRAMELOC_ROUND_CPU_NS) {
		fl->st.procs_deferred++; /* asked again for each of its frames: counts lookups */
		return p && p->read ? p : NULL; /* the old answer for now */
	}
	if (!p) {
		if (proc_tracker__ext_count(fl->procs, fl->ext) >= MAX_PIDS) {
			fl->st.procs_refused++; /* counts lookups, as above */
			return NULL;
		}
		p = proc_tracker__ext(fl->procs, fl->ext, pid, true);
		if (!p)
			return NULL;
	}
	/* the same image after FRAMELOC_REREAD_ROUNDS (dlopen since?): newer than the last read;
	 * a new image, or files evicted: the tracker's read since the last event, if it has one */
	min_read_ns =
	    p->read && fl->round - p->round >= FRAMELOC_REREAD_ROUNDS ? p->read_ns + 1 : 0;
	p->read = true;
	p->round = p->checked = fl->round;
	p->n = 0;
	m = proc_tracker__maps(fl->procs, pid, min_read_ns);
	if (!m)
		return p; /* gone before it was ever read: no files */
	fl->st.maps_read++;
	p->read_ns = proc_maps__read_ns(m);
	(void)proc_maps__for_each(m, on_map, p);
	(void)proc_maps__for_each(m, on_map_load, &lc);
	proc_maps__put(m);
	return p;
}

int frameloc__find(struct frameloc *fl, uint32_t pid, const char *name, struct frameloc_hit *ret)
{
	struct pid_files *p = pid && name && *name ? pid_get(fl, pid) : NULL;
	uint64_t h = name && *name ? name_hash(name) : 0;
	unsigned int i;

	for (i = 0; p && i < p->n; i++) {
		struct file *f = file_find(fl, p->f[i].dev_major, p->f[i].dev_minor, p->f[i].ino);
		size_t j;

		if (!f)
			continue;
		f->stamp = ++fl->clock;
		j = h & (f->cap - 1);
		while (f->names[j].name && strcmp(f->names[j].name, name))
			j = (j + 1) & (f->cap - 1);
		if (f->names[j].name) {
			ret->file = f->path;
			ret->build_id = f->build_id;
			ret->offset = f->names[j].offset;
			fl->st.found++;
			return 0;
		}
	}
	fl->st.not_found++;
	return -ENOENT;
}

void frameloc__set_share(struct frameloc *fl, struct elfshare *share)
{
	fl->share = share;
}

void frameloc__round(struct frameloc *fl)
{
	if (fl->ext >= 0) /* the images ended (exec, exit) since the last round */
		proc_tracker__ext_prune(fl->procs, fl->ext);
	fl->round++;
	fl->loads = 0;
	fl->round_cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

struct frameloc *frameloc__new(struct proc_tracker *procs, const char *proc_root)
{
	struct frameloc *fl = calloc(1, sizeof(*fl));

	if (!fl)
		goto err_out;
	fl->procs = procs;
	snprintf(fl->proc_root, sizeof(fl->proc_root), "%s", proc_root ? proc_root : "/proc");
	/* ended states go at the next round (only the current image's files are looked in) */
	fl->ext = procs ? proc_tracker__ext_register(
			      procs, &(struct proc_ext_ops){ .name = "frameloc",
							     .size = sizeof(struct pid_files) })
			: -1;
	if (procs && fl->ext < 0) {
		free(fl);
		errno = ENOSPC;
		return NULL;
	}
	return fl;

err_out:
	frameloc__free(fl);
	errno = ENOMEM;
	return NULL;
}

void frameloc__free(struct frameloc *fl)
{
	size_t i;

	if (!fl)
		return;
	if (fl->ext >= 0) /* before the tracker goes */
		proc_tracker__ext_unregister(fl->procs, fl->ext);
	for (i = 0; i < FRAMELOC_FILES; i++)
		file_clear(&fl->files[i]);
	free(fl);
}

void frameloc__stats(const struct frameloc *fl, struct frameloc_stats *ret)
{
	*ret = fl->st;
}
