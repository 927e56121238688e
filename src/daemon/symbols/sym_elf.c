// SPDX-License-Identifier: MIT
/* symbolizer: the ELF image cache: entries by (device, inode), each checked once per mapping;
 * the images themselves in the file cache (elf/filecache.h: by file, and by build-id for a
 * copy); files pinned open until their symbols are needed. */
#include "symbolizer_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ember/core/base/clock.h"
#include "ember/core/base/hash.h"
#include "ember/core/base/log.h"
#include "ember/daemon/proc/mapfile.h"
#include "ember/daemon/elf/elffile.h"
#include "ember/daemon/elf/elfsym.h"

#define ELF_RETRY_NS (5000 * NS_PER_MS)	    /* retry an image that failed to open */
#define PIN_NS (2 * GONE_GRACE_NS)	    /* an unread image's file is kept open this long */
#define MAX_PINNED 256			    /* files kept open; past this, images are read at once */

/* --- ELF image cache ------------------------------------------------------------------------- */

static void lru_unlink_e(struct elfent *e)
{
	e->lru_prev->lru_next = e->lru_next;
	e->lru_next->lru_prev = e->lru_prev;
}

static void lru_front_e(struct symbolizer *s, struct elfent *e)
{
	e->lru_next = s->lru_e.lru_next;
	e->lru_prev = &s->lru_e;
	s->lru_e.lru_next->lru_prev = e;
	s->lru_e.lru_next = e;
}

static void image_put(struct symbolizer *s, struct image *img)
{
	if (!img || --img->refs)
		return;
	s->stats.elf_symbols -= elfsym__count(img->es);
	s->img_bytes -= img->bytes;
	elfsym__free(img->es);
	free(img);
}

void sym_image_uncache(void *obj, void *ctx)
{
	struct image *img = obj;

	img->cached = false;
	image_put(ctx, img);
}

/*
 * An entry lets go of its image: the file cache keeps an image only while an entry uses it (as
 * the build-id table it replaces did), so the symbolizer's bounds (max_elfs, max_image_bytes)
 * stay what bounds the images' memory.
 */
static void image_unref(struct symbolizer *s, struct image *img)
{
	if (img && img->cached && img->refs == 2)
		filecache__drop(s->files, &img->id, FILECACHE_SYMBOLS); /* its ref: refs 1 */
	image_put(s, img);
}

static size_t eslot(const struct symbolizer *s, uint64_t dev, uint64_t ino)
{
	return hash_mix64(dev * 0x9e3779b97f4a7c15ull ^ ino) & (s->etab_size - 1);
}

static void elfent_remove(struct symbolizer *s, struct elfent *e)
{
	struct elfent **pp;

	for (pp = &s->etab[eslot(s, e->dev, e->ino)]; *pp; pp = &(*pp)->hnext) {
		if (*pp == e) {
			*pp = e->hnext;
			break;
		}
	}
	lru_unlink_e(e);
	s->nelfs--;
	image_unref(s, e->img);
	if (e->fd >= 0) {
		close(e->fd);
		s->nr_pinned--;
	}
	free(e);
}

/* Frees the ELF entries and their images (the tables are symbolizer__free's). */
void sym_elf_cache_fini(struct symbolizer *s)
{
	size_t i;

	for (i = 0; s->etab && i < s->etab_size; i++) {
		struct elfent *e = s->etab[i], *next;

		for (; e; e = next) {
			next = e->hnext;
			image_unref(s, e->img);
			if (e->fd >= 0)
				close(e->fd);
			free(e);
		}
	}
}

static void etab_grow(struct symbolizer *s)
{
	size_t nsize = s->etab_size * 2, i;
	struct elfent **nt = calloc(nsize, sizeof(*nt));

	if (!nt)
		return;
	for (i = 0; i < s->etab_size; i++) {
		struct elfent *e = s->etab[i], *next;

		for (; e; e = next) {
			size_t h = hash_mix64(e->dev * 0x9e3779b97f4a7c15ull ^ e->ino) & (nsize - 1);

			next = e->hnext;
			e->hnext = nt[h];
			nt[h] = e;
		}
	}
	free(s->etab);
	s->etab = nt;
	s->etab_size = nsize;
}

/* Opens the file behind @m, the one way a mapped file is opened (proc/mapfile.h): its
 * map_files entry, else its path inside the process's root, else (an exec's executable the kernel
 * told of) the exec's path; the inode must match. fd or -errno. */
static int open_mapping(struct symbolizer *s, struct proc *p, const struct mapping *m,
			struct stat *ret_st)
{
	struct mapfile_want w = { .pid = p->pid, .start = m->start, .end = m->end,
				  .path = p->paths + m->path_off, .path_len = m->path_len,
				  .deleted = m->deleted, .dev_major = major(m->dev),
				  .dev_minor = minor(m->dev), .ino = m->ino,
				  .exec_path = m->snap_e && m->snap_e->exec_image };

	/* gone: only the exec's path, checked against the kernel's device and inode */
	if (p->gone && !w.exec_path)
		return -ENOENT;
	return mapfile_open(s->proc_root, &w, &s->stats.files, ret_st);
}

static int64_t mtime_ns_of(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

static void set_identity(struct elfent *e, const struct stat *st)
{
	e->size = (uint64_t)st->st_size;
	e->mtime_ns = mtime_ns_of(st);
	e->known = true;
}

/*
 * True when the file @m maps now is not the one @e was read from (same device and inode, other
 * size or mtime: a tmpfs inode given to a new file). Checked once per mapping of a live process,
 * with the tracker's check of the mapping (once per snapshot, shared with the unwinder and the
 * CPython reader: proc_tracker__identity); what cannot be checked (the process gone) is taken as
 * it is.
 */
static bool entry_stale(struct symbolizer *s, struct proc *p, struct mapping *m,
			const struct elfent *e)
{
	struct stat st;

	if (m->id_gen == e->gen || !e->known || p->gone || !p->snap || !m->snap_e)
		return false;
	m->id_gen = e->gen;
	if (proc_tracker__identity(s->procs, p->snap, m->snap_e, p->pid, &st))
		return false;
	return (uint64_t)st.st_size != e->size || mtime_ns_of(&st) != e->mtime_ns;
}

/* Whether @r of dbgfetch__request() leaves the debug file to come later: queued or being
 * fetched, or refused for now (a full queue, the minute's budget spent). */
static bool fetch_later(int r)
{
	return r == 1 || r == -ENOBUFS || r == -EBUSY;
}

/*
 * A stripped image (no .symtab) with no local debug file: its debug file asked of debuginfod
 * (dbgfetch.h), never waited for. In the folder already (fetched since this image was read):
 * the image read again with it. Else the image as it is (its .dynsym names its exported
 * functions), *@ret_pending set while the fetch may still bring it: sym_elf_get asks again as
 * fetches end. Returns the image to keep (@es, or the new one).
 */
static struct elfsym *with_fetched_debug(struct symbolizer *s, int fd, struct elfsym *es,
					 const struct elfsym_opts *eo, bool *ret_pending)
{
	const uint8_t *bid;
	struct elfsym *again;
	size_t len;
	int r;

	*ret_pending = false;
	if (!es || !s->o.fetch || elfsym__has_symtab(es) || elfsym__used_debug_file(es))
		return es;
	len = elfsym__build_id(es, &bid);
	if (len < 2)
		return es;
	r = dbgfetch__request(s->o.fetch, bid, len);
	if (fetch_later(r)) {
		*ret_pending = true;
		s->stats.elf_debug_pending++;
		return es;
	}
	if (r != 0)
		return es; /* failed (counted) */
	/* there now: fetched between this image's read and the request (else the read found it) */
	again = elfsym__open(fd, eo);
	if (!again)
		return es;
	if (elfsym__used_debug_file(again))
		s->stats.elf_debuginfod++;
	elfsym__free(es);
	return again;
}

/*
 * The image of the file open at @fd (borrowed, left open; @path: its path in the process), from
 * the file cache if this very file was read before, else read now and kept there. A reference
 * for the caller (image_put()), or NULL. *@ret_st: its fstat, when it could be taken.
 */
static struct image *image_read(struct symbolizer *s, int fd, const char *path,
				struct stat *ret_st, struct elfsym **ret_refused)
{
	struct elfsym_opts eo = { .debug_dirs = s->debug_dirs, .path = path,
				  .dwarf = s->o.inline_frames,
				  .max_symbols = s->o.max_symbols,
				  .max_section_bytes = s->o.max_section_bytes };
	struct elffile_facts ef;
	struct filecache_id id;
	struct image *img;
	struct stat st;

	if (fstat(fd, &st))
		return NULL;
	*ret_st = st;
	/*
	 * This very file read already (through another entry since evicted, or another mapping,
	 * or for a runtime reader: symbolizer__image_get), or the same build-id and size: the
	 * same file in another place (a container layer, a copy), parsed once; a build-id is the
	 * file's to write, so only from a file of the same owner or root's (elf/filecache.h's
	 * rule). A stripped copy has the build-id of the original but not its size.
	 */
	if (elffile_facts(s->files, fd, &st, &ef, &id)) /* its headers: read once for all */
		s->stats.elf_headers_read++;
	img = filecache__get_obj(s->files, &id, FILECACHE_SYMBOLS);
	if (img) {
		img->refs++;
		if (img->id.dev != id.dev || img->id.ino != id.ino) {
			s->stats.elf_buildid_hits++;
			/* findable as this copy too (frameloc looks files up as they are mapped) */
			elfshare__publish(s->o.share, img->es, &id);
		}
		return img;
	}
	img = calloc(1, sizeof(*img));
	if (!img)
		return NULL;
	img->es = elfsym__open(fd, &eo);
	img->es = with_fetched_debug(s, fd, img->es, &eo, &img->debug_pending);
	if (img->debug_pending)
		img->debug_seq = dbgfetch__done_seq(s->o.fetch);
	if (!img->es) {
		int err = errno;

		if (err == E2BIG)
			s->stats.elf_too_big++;
		else if (err == EIO)
			s->stats.elf_short_reads++;
		free(img);
		errno = err;
		return NULL;
	}
	s->stats.elf_debug_refused += elfsym__debug_refused(img->es);
	img->bytes = elfsym__mem_bytes(img->es);
	if (s->o.max_image_bytes && img->bytes > s->o.max_image_bytes) {
		/* more than all images may hold: not kept (the file's frames stay "[file]"); a
		 * reader that asked for it has it for its own use, not read again */
		s->stats.elf_mem_refused++;
		if (ret_refused)
			*ret_refused = img->es;
		else
			elfsym__free(img->es);
		free(img);
		errno = E2BIG;
		return NULL;
	}
	s->img_bytes += img->bytes;
	img->refs = 1;
	img->id = id;
	elfshare__publish(s->o.share, img->es, &id); /* the exporter's frameloc borrows it */
	img->serial = s->next_serial++;
	if (!s->next_serial)
		s->next_serial = 1; /* 0 marks an empty address-cache slot */
	if (elfsym__used_debug_file(img->es))
		s->stats.elf_debuginfo++;
	s->stats.elf_symbols += elfsym__count(img->es);
	/* kept in the file cache while an entry uses it (its own ref; refused or no memory: the
	 * free function gave it back) */
	img->refs++;
	img->cached = true;
	if (filecache__put_obj(s->files, &id, FILECACHE_SYMBOLS, img, sizeof(*img) + img->bytes) ==
	    -EINVAL) {
		img->refs--;
		img->cached = false;
	}
	return img;
}

/* Reads the symbols of @m's file: @fd if >= 0 (closed here), else opened now. *@ret_st: its
 * fstat, when it could be opened. */
static struct image *image_open(struct symbolizer *s, struct proc *p, const struct mapping *m,
				int fd, struct stat *ret_st)
{
	struct image *img;

	if (fd < 0)
		fd = open_mapping(s, p, m, NULL);
	if (fd < 0)
		return NULL;
	img = image_read(s, fd, p->paths + m->path_off, ret_st, NULL);
	close(fd);
	return img;
}

struct elfsym *symbolizer__image_get(void *ctx, int fd, const char *path)
{
	struct symbolizer *s = ctx;
	struct elfsym *es, *refused = NULL;
	struct image *img;
	struct stat st;

	img = image_read(s, fd, path, &st, &refused);
	if (!img) {
		if (refused)
			s->stats.elf_lent++; /* too big to keep: the reader's alone, freed by it */
		return refused;
	}
	es = elfsym__ref(img->es);
	s->stats.elf_lent++;
	/* the caller's reference to the image goes; the file cache's stays (bounded by it) until
	 * an entry takes the image, or the cache lets it go */
	image_put(s, img);
	return es;
}

static struct elfent *elf_find(struct symbolizer *s, const struct mapping *m)
{
	struct elfent *e;

	for (e = s->etab[eslot(s, m->dev, m->ino)]; e; e = e->hnext)
		if (e->dev == m->dev && e->ino == m->ino)
			return e;
	return NULL;
}

/* A new entry for @m's file, neither read nor open yet; the least recently used go first. */
static struct elfent *elf_add(struct symbolizer *s, const struct mapping *m)
{
	struct elfent *e;
	size_t h;

	while (s->nelfs >= s->o.max_elfs && s->lru_e.lru_prev != &s->lru_e) {
		elfent_remove(s, s->lru_e.lru_prev);
		s->stats.elf_evictions++;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->dev = m->dev;
	e->ino = m->ino;
	e->gen = ++s->elf_gen;
	e->fd = -1;
	if (s->nelfs + 1 > s->etab_size)
		etab_grow(s);
	h = eslot(s, m->dev, m->ino);
	e->hnext = s->etab[h];
	s->etab[h] = e;
	lru_front_e(s, e);
	s->nelfs++;
	return e;
}

/* Reads @e's symbols now: from its open file if pinned, else opened through @p. */
static void elf_read(struct symbolizer *s, struct elfent *e, struct proc *p,
		     const struct mapping *m)
{
	struct stat st;
	int fd = e->fd;

	if (fd >= 0) {
		e->fd = -1;
		s->nr_pinned--;
	}
	st.st_ino = 0;
	e->img = image_open(s, p, m, fd, &st);
	if (st.st_ino && !e->known)
		set_identity(e, &st);
	/* within max_image_bytes: the least recently used images go (this one is the most) */
	while (s->o.max_image_bytes && s->img_bytes > s->o.max_image_bytes &&
	       s->lru_e.lru_prev != e && s->lru_e.lru_prev != &s->lru_e) {
		elfent_remove(s, s->lru_e.lru_prev);
		s->stats.elf_mem_evictions++;
	}
	if (!e->img && !st.st_ino) {
		/* not opened through this process (gone: a short-lived one, named late): not the
		 * file's failure, which would leave every process mapping it unnamed for
		 * ELF_RETRY_NS; the next process that maps it opens it */
		e->failed_ns = 0;
		s->stats.elf_unreachable++;
	} else if (!e->img) {
		e->failed_ns = mono_ns();
		s->stats.elf_errors++;
		log_debug("pid %u: cannot read symbols of '%s'", p->pid, p->paths + m->path_off);
	}
}

/*
 * @e's image was read while its debug file was being fetched (or refused for now): once a fetch
 * has ended since, asked again; there now, the file is read again with it (the frames named
 * meanwhile keep their .dynsym names), else the image stays as it is.
 */
static void debug_recheck(struct symbolizer *s, struct elfent *e, struct proc *p,
			  const struct mapping *m)
{
	struct image *old = e->img;
	const uint8_t *bid;
	uint64_t seq = dbgfetch__done_seq(s->o.fetch);
	size_t len;
	int r;

	if (seq == old->debug_seq)
		return;
	old->debug_seq = seq;
	len = elfsym__build_id(old->es, &bid);
	r = len < 2 ? -EINVAL : dbgfetch__request(s->o.fetch, bid, len);
	if (fetch_later(r))
		return;
	old->debug_pending = false;
	if (r != 0)
		return; /* not found, or failed: named from what the file has */
	/* out of the file cache, so that the read makes a new image */
	if (old->cached)
		filecache__drop(s->files, &old->id, FILECACHE_SYMBOLS);
	e->img = NULL;
	elf_read(s, e, p, m);
	if (!e->img) {
		e->img = old; /* the file cannot be read again now: what it had */
		return;
	}
	s->stats.elf_debug_late++;
	image_put(s, old);
}

struct image *sym_elf_get(struct symbolizer *s, struct proc *p, struct mapping *m)
{
	struct elfent *e = elf_find(s, m);

	if (e && entry_stale(s, p, m, e)) {
		elfent_remove(s, e);
		s->stats.elf_changed++;
		e = NULL;
	}
	if (e && (e->img || e->fd >= 0 || mono_ns() - e->failed_ns < ELF_RETRY_NS)) {
		if (s->lru_e.lru_next != e) {
			lru_unlink_e(e);
			lru_front_e(s, e);
		}
		s->stats.elf_hits++; /* read, failed lately, or pinned (read now) */
		if (!e->img && e->fd >= 0)
			elf_read(s, e, p, m);
		else if (e->img && e->img->debug_pending && !p->gone)
			debug_recheck(s, e, p, m);
		return e->img;
	}
	s->stats.elf_misses++;
	if (!e)
		e = elf_add(s, m);
	if (!e)
		return NULL;
	elf_read(s, e, p, m);
	m->id_gen = e->gen; /* read through this mapping now */
	return e->img;
}

struct image *sym_elf_peek(struct symbolizer *s, const struct mapping *m)
{
	struct elfent *e = elf_find(s, m);

	/* a mapping checked against an entry since evicted (and made again for another file of
	 * that device and inode, as tmpfs reuses them) has another gen: not this one's to use */
	if (!e || !e->img || m->id_gen != e->gen)
		return NULL;
	return e->img;
}

/*
 * Keeps @m's file open for a later sym_elf_get, unless known already: what a process maps is read
 * when its stacks need it, even after it has exited (its path then gone, or another file).
 * Past MAX_PINNED open files, read at once.
 */
void sym_elf_pin(struct symbolizer *s, struct proc *p, struct mapping *m)
{
	struct elfent *e = elf_find(s, m);
	struct stat st;
	int fd;

	if (e && entry_stale(s, p, m, e)) {
		elfent_remove(s, e);
		s->stats.elf_changed++;
		e = NULL;
	}
	if (e) { /* a hit, as for sym_elf_get: one file for many processes */
		s->stats.elf_hits++;
		return;
	}
	if (s->nr_pinned >= MAX_PINNED) {
		(void)sym_elf_get(s, p, m);
		return;
	}
	fd = open_mapping(s, p, m, &st);
	if (fd < 0) {
		(void)sym_elf_get(s, p, m); /* counts and logs the failure, retried later */
		return;
	}
	e = elf_add(s, m);
	if (!e) {
		close(fd);
		return;
	}
	s->stats.elf_misses++;
	set_identity(e, &st);
	m->id_gen = e->gen;
	e->fd = fd;
	e->pinned_ns = mono_ns();
	s->nr_pinned++;
}

/* Closes the files pinned longer than PIN_NS: their processes' first samples are long drained
 * (a later read opens the file again through a live process). */
void sym_elf_unpin_old(struct symbolizer *s, uint64_t t)
{
	struct elfent *e, *prev;

	for (e = s->lru_e.lru_prev; s->nr_pinned && e != &s->lru_e; e = prev) {
		prev = e->lru_prev;
		if (e->fd >= 0 && t - e->pinned_ns >= PIN_NS) {
			close(e->fd);
			e->fd = -1;
			s->nr_pinned--;
		}
	}
}
