// SPDX-License-Identifier: MIT
/* filecache: per-file facts shared by every process mapping the file (filecache.h). */
#include "ember/daemon/elf/filecache.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/base/hash.h"

#define DEFAULT_MAX_FILES 1024
#define DEFAULT_MAX_BYTES (16ull << 20)

struct fent {
	struct fent *hnext;
	struct fent *lru_prev, *lru_next;
	struct filecache_id id;
	void *facts[FILECACHE__NR];
	size_t bytes[FILECACHE__NR];
};

struct filecache {
	struct filecache_opts o;
	struct fent **tab;
	size_t tab_size;
	struct fent lru; /* sentinel: lru.lru_next is the most recent */
	struct filecache_stats st;
};

static size_t slot(const struct filecache *fc, uint64_t dev, uint64_t ino)
{
	return hash_mix64(dev * 0x9e3779b97f4a7c15ull ^ ino) & (fc->tab_size - 1);
}

static void lru_unlink(struct fent *e)
{
	e->lru_prev->lru_next = e->lru_next;
	e->lru_next->lru_prev = e->lru_prev;
}

static void lru_front(struct filecache *fc, struct fent *e)
{
	e->lru_next = fc->lru.lru_next;
	e->lru_prev = &fc->lru;
	fc->lru.lru_next->lru_prev = e;
	fc->lru.lru_next = e;
}

static void fent_free(struct filecache *fc, struct fent *e)
{
	int k;

	for (k = 0; k < FILECACHE__NR; k++) {
		fc->st.bytes -= e->bytes[k];
		free(e->facts[k]);
	}
	fc->st.bytes -= sizeof(*e);
	fc->st.files--;
	free(e);
}

static void fent_remove(struct filecache *fc, struct fent *e)
{
	struct fent **pp;

	for (pp = &fc->tab[slot(fc, e->id.dev, e->id.ino)]; *pp; pp = &(*pp)->hnext) {
		if (*pp == e) {
			*pp = e->hnext;
			break;
		}
	}
	lru_unlink(e);
	fent_free(fc, e);
}

struct filecache *filecache__new(const struct filecache_opts *o)
{
	struct filecache *fc = calloc(1, sizeof(*fc));

	if (!fc)
		return NULL;
	if (o)
		fc->o = *o;
	if (!fc->o.max_files)
		fc->o.max_files = DEFAULT_MAX_FILES;
	if (!fc->o.max_bytes)
		fc->o.max_bytes = DEFAULT_MAX_BYTES;
	for (fc->tab_size = 64; fc->tab_size < fc->o.max_files; fc->tab_size *= 2)
		;
	fc->tab = calloc(fc->tab_size, sizeof(*fc->tab));
	if (!fc->tab) {
		free(fc);
		errno = ENOMEM;
		return NULL;
	}
	fc->lru.lru_next = fc->lru.lru_prev = &fc->lru;
	fc->st.bytes = fc->tab_size * sizeof(*fc->tab);
	return fc;
}

void filecache__free(struct filecache *fc)
{
	if (!fc)
		return;
	while (fc->lru.lru_next != &fc->lru) {
		struct fent *e = fc->lru.lru_next;

		lru_unlink(e);
		fent_free(fc, e);
	}
	free(fc->tab);
	free(fc);
}

void filecache_id_of(const struct stat *st, struct filecache_id *ret)
{
	*ret = (struct filecache_id){ .dev = st->st_dev, .ino = st->st_ino,
				      .size = (uint64_t)st->st_size,
				      .mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 +
						  st->st_mtim.tv_nsec };
}

/* The entry of @id's device and inode; one of another size or mtime is dropped (changed). */
static struct fent *find(struct filecache *fc, const struct filecache_id *id)
{
	struct fent *e;

	for (e = fc->tab[slot(fc, id->dev, id->ino)]; e; e = e->hnext) {
		if (e->id.dev != id->dev || e->id.ino != id->ino)
			continue;
		if (e->id.size != id->size || e->id.mtime_ns != id->mtime_ns) {
			fent_remove(fc, e);
			fc->st.changed++;
			return NULL;
		}
		if (fc->lru.lru_next != e) {
			lru_unlink(e);
			lru_front(fc, e);
		}
		return e;
	}
	return NULL;
}

const void *filecache__get(struct filecache *fc, const struct filecache_id *id,
			   enum filecache_kind k)
{
	struct fent *e;

	if ((unsigned)k >= FILECACHE__NR)
		return NULL;
	e = find(fc, id);
	if (!e || !e->facts[k]) {
		fc->st.misses++;
		return NULL;
	}
	fc->st.hits++;
	return e->facts[k];
}

int filecache__put(struct filecache *fc, const struct filecache_id *id, enum filecache_kind k,
		   const void *facts, size_t bytes)
{
	struct fent *e;
	void *copy;
	size_t h;

	if ((unsigned)k >= FILECACHE__NR || !bytes)
		return -EINVAL;
	if (bytes + sizeof(*e) > fc->o.max_bytes) {
		fc->st.refused++;
		return -E2BIG;
	}
	copy = malloc(bytes);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, facts, bytes);
	e = find(fc, id);
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e) {
			free(copy);
			return -ENOMEM;
		}
		e->id = *id;
		h = slot(fc, id->dev, id->ino);
		e->hnext = fc->tab[h];
		fc->tab[h] = e;
		lru_front(fc, e);
		fc->st.files++;
		fc->st.bytes += sizeof(*e);
	}
	fc->st.bytes -= e->bytes[k];
	free(e->facts[k]);
	e->facts[k] = copy;
	e->bytes[k] = bytes;
	fc->st.bytes += bytes;
	/* room: the least recently used go (never the one just put: it is the most recent) */
	while ((fc->st.files > fc->o.max_files ||
		fc->st.bytes > fc->o.max_bytes + fc->tab_size * sizeof(*fc->tab)) &&
	       fc->lru.lru_prev != e) {
		fent_remove(fc, fc->lru.lru_prev);
		fc->st.evictions++;
	}
	return 0;
}

void filecache__stats(const struct filecache *fc, struct filecache_stats *ret)
{
	*ret = fc->st;
}
