/* SPDX-License-Identifier: MIT */
/*
 * Private to the symbolizer (src/daemon/symbols/symbolizer.c and sym_*.c); the contract is
 * include/ember/daemon/symbols/symbolizer.h. One struct symbolizer, each file owning a part:
 *
 *   symbolizer.c    the public API: construction and free, names (interning, tidying),
 *                   output frames (the leaf-first scratch stack), user frames (mapping ->
 *                   image, vDSO, address cache, "[base]" unknowns), stats
 *   sym_kernel.c    kernel frames: kernel_resolve batches and the function ranges they name
 *                   (kr, kaddrs, ktexts), kallsyms and its reload policy (ks, kmiss)
 *   sym_proc.c      /proc readers (stat, status, exe, maps) and the process cache: the
 *                   process tracker's extension (ext), live processes on an LRU list (lru_p),
 *                   retired ones (ended states), note/check/prune
 *   sym_elf.c       the ELF image cache: entries by (dev, ino) (etab, lru_e), images in the
 *                   file cache (files: by file and build-id), files pinned open until their
 *                   symbols are needed
 *   sym_perfmap.c   perf maps (/tmp/perf-PID.map, read incrementally) and JIT frames
 *
 * Functions here are named sym_*; everything else in those files is static. Limits used by one
 * file are defined in it; those below are shared or size the types. Not thread-safe, like the
 * symbolizer.
 */
#ifndef EMBER_SYMBOLIZER_INTERNAL_H
#define EMBER_SYMBOLIZER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ember/core/base/sbuf.h"
#include "ember/core/model/frame.h"
#include "ember/daemon/elf/filecache.h"
#include "ember/daemon/proc/procmaps.h"
#include "ember/daemon/proc/proctrack.h"
#include "ember/daemon/symbols/symbolizer.h"

struct elfsym;
struct ksyms;
struct perfmap;
struct strtab;

#define ADDR_CACHE_FRAMES 4
#define NS_PER_MS 1000000ull
#define GONE_GRACE_NS (5000 * NS_PER_MS)    /* keep a dead process's state for late samples */
#define KMISS_SLOTS 256 /* kernel addresses a reload did not resolve (direct-mapped) */
#define KRES_BATCH 128 /* kernel_resolve: addresses per call (a stack is at most 127) */
#define KRES_TEXT 600 /* ... and bytes per text: KSYM_NAME_LEN 512 + offsets + module */

enum pm_state {
	PM_UNKNOWN = 0,
	PM_OK,
	PM_ABSENT,
	PM_NOT_REGULAR,
	PM_TOO_BIG,
	PM_OWNER,
	PM_ERROR,
	PM_STALE
};

struct mapping {
	uint64_t start, end, pgoff;
	uint64_t dev, ino;
	uint32_t path_off, path_len; /* in proc->paths */
	uint32_t base_off, base_len; /* base name, in proc->paths */
	enum procmaps_kind kind;
	bool deleted;
	uint64_t id_gen;	     /* the elfent (its gen) this mapping's file was compared
					with (size, mtime) or read through; 0: none yet */
	int32_t unknown_id;	     /* "[base]" frame id, -1 until interned */
	uint32_t bias_serial;	     /* the image (its serial) @bias is of; 0: none yet */
	uint64_t bias;		     /* address - bias = the image's vaddr (map_vaddr()) */
	const struct procmaps_entry *snap_e; /* its entry in proc->snap (its identity) */
};

struct proc {
	struct proc *lru_prev, *lru_next; /* current: on the LRU list; NULL: not (retired) */
	bool retired;			/* ended (exec, pid reuse): kept for earlier samples */
	uint32_t pid, nspid;
	uint64_t start_time;		/* clock ticks since boot, from /proc/PID/stat (0: not
					   read: born_ns, or not known) */
	uint64_t born_ns;		/* its fork's time (CLOCK_MONOTONIC) as the process tracker
					   had it; 0: not known */
	uint64_t exe_dev, exe_ino;	/* to notice exec */
	struct mapping *maps;
	size_t nmaps;
	struct proc_maps *snap;		/* the tracker's snapshot maps came from (held): the
					   mappings' identities, checked once per snapshot */
	char *paths;
	size_t paths_len;
	uint64_t maps_read_ns, validated_ns, gone_ns;
	bool gone;
	bool reread;			/* maps re-read on a miss at least once */
	struct perfmap *pm;
	uint64_t pm_used;		/* bytes of the file consumed */
	uint64_t pm_checked_ns;
	enum pm_state pm_state;
	size_t mem_bytes;
	uint64_t version;		/* changes when what resolves its addresses may have */
};

/* A file's symbols: an object of the file cache (elf/filecache.h, FILECACHE_SYMBOLS), found
 * there by the file it was read from or, by build-id and size, for a copy of it. */
struct image {
	unsigned refs;			/* the elfents using it, and the file cache's while held */
	bool cached;			/* held by the file cache (one of the refs) */
	uint32_t serial;
	struct elfsym *es;
	struct filecache_id id;		/* the file read: fstat and build-id */
	uint64_t bytes;			/* elfsym__mem_bytes() when read */
	bool debug_pending;		/* read while debuginfod may still bring its debug file */
	uint64_t debug_seq;		/* dbgfetch__done_seq() when last asked */
	uint64_t names_gen;		/* the names' generation its symbols' ids are of */
};

struct elfent {
	struct elfent *hnext;
	struct elfent *lru_prev, *lru_next;
	uint64_t dev, ino;
	uint64_t gen;			/* unique per entry (never 0): what a mapping was checked with */
	struct image *img;		/* NULL: not read yet (fd), or failed (retry after ELF_RETRY_NS) */
	uint64_t failed_ns;
	int fd;				/* the file, kept open until its symbols are needed; -1 */
	uint64_t pinned_ns;		/* when fd was opened */
	/* what the file was when read: (device, inode) is no key a process cannot forge (tmpfs
	 * gives a deleted file's inode to the next one), so each mapping checks these once */
	uint64_t size;
	int64_t mtime_ns;
	bool known;
};

struct addr_slot {
	uint64_t vaddr;
	uint32_t serial;		/* 0: empty */
	uint32_t n;
	uint32_t ids[ADDR_CACHE_FRAMES];
};

/* A kernel function as kernel_resolve gave it: [start, end) is @id. */
struct krange {
	uint64_t start, end;
	uint32_t id;
};

struct symbolizer {
	struct symbolizer_opts o;
	char *debug_dirs, *proc_root, *kallsyms_path;
	struct proc_tracker *procs;	/* the mappings (proc/proctrack.h) */
	struct proc_tracker *own_procs;	/* ... when the caller gave none */
	struct strtab *st;
	/* the process whose user frames are being named (symbolizer__user_at): new names are
	 * charged to its share of the table (proc_tracker__intern_name); 0: none */
	uint32_t owner_pid;
	struct symbolizer_stats stats;

	struct ksyms *ks;
	bool ks_tried;
	uint64_t ks_loaded_ns;
	/* A reload costs ~50 ms (the kernel generates 100 000+ lines): an address that a reload
	 * did not resolve (a trampoline, a stale return address) is remembered and does not
	 * trigger another, and each fruitless reload doubles the interval. */
	uint64_t ks_reload_ns;
	uint64_t kmiss[KMISS_SLOTS];
	int32_t kunknown_id;
	/* kernel_resolve: the functions it named, sorted by start; a batch's addresses and texts */
	struct krange *kr;
	size_t nkr, kr_cap;
	uint64_t *kaddrs;
	char *ktexts;
	bool kres_failed;

	int ext;			/* the processes: the tracker's extension (sym_proc.c) */
	size_t nprocs;			/* current ones, on the LRU list */
	struct proc lru_p;		/* sentinel: lru_next is the most recent */
	size_t nretired;		/* ended ones kept (retired) */

	struct elfent **etab;
	size_t etab_size, nelfs;
	uint64_t img_bytes;		/* held by every image's symbols: bounded by o.max_image_bytes */
	size_t nr_pinned;		/* elfents holding an unread file open */
	uint64_t version_seq;		/* last proc version handed out */
	uint64_t elf_gen;		/* last elfent gen handed out */
	uint64_t user_not_by_file;	/* user frames not named by a file's (or the vDSO's)
					   symbols: JIT, unknown, a retired state (file keys) */
	struct elfent lru_e;
	struct filecache *files;	/* the images (elf/filecache.h): the caller's, or own_files */
	struct filecache *own_files;
	uint32_t next_serial;

	struct elfsym *vdso;
	bool vdso_tried;
	uint64_t vdso_names_gen;	/* the names' generation its symbols' ids are of */

	struct addr_slot *acache;
	struct sbuf name;		/* scratch for names */
	struct sbuf tidy;		/* ... and for sym_tidy() */
	char *buf;			/* scratch for file contents */
	size_t buf_cap;
	uint32_t *tmp;			/* frames, leaf first */
	size_t tmp_cap;
	int32_t unknown_id;
	uint64_t user_retryable;	/* unresolved user frames that may resolve later */
	/* the files behind unresolved frames (stats.unresolved_files), keyed by reason and file */
	struct unresolved_file unres[SYMBOLIZER_UNRESOLVED_FILES];
	uint64_t unres_dev[SYMBOLIZER_UNRESOLVED_FILES], unres_ino[SYMBOLIZER_UNRESOLVED_FILES];
	uint32_t nr_unres;
};

/* names (symbolizer.c) */

/* Tidies s->name as a folded frame, as comms and every other name are (sbuf_add_frame(): ';'
 * becomes ':', control bytes and DEL "\xNN"). 0 or -ENOMEM. */
int sym_tidy(struct symbolizer *s);
/* Interns @raw (demangled if @dem) + @suffix. Returns id >= 0 or -ENOMEM. */
int sym_intern_name(struct symbolizer *s, bool owned);
int sym_intern(struct symbolizer *s, const char *raw, size_t raw_len, bool dem,
	       enum frame_kind kind);
/* Interns the literal @lit once, caching its id in *@cache (-1: not yet). id >= 0 or -ENOMEM. */
int sym_intern_lit(struct symbolizer *s, int32_t *cache, const char *lit);

/*
 * Counts one unresolved frame of @m (NULL: in no mapping; @p NULL too: a kernel frame named
 * @frame) in the table of files behind unresolved frames, for @why. @img: its image, if read.
 */
void sym_note_unresolved(struct symbolizer *s, const struct proc *p, const struct mapping *m,
			 const struct image *img, enum unresolved_reason why, const char *frame);

/* output frames (symbolizer.c) */

/* Appends frame @id to the scratch stack s->tmp (leaf first), *@n frames so far. 0 or -ENOMEM. */
int sym_push(struct symbolizer *s, size_t *n, uint32_t id);
/* Writes the @n scratch frames root first into @ret, keeping the leaf-most @cap. The count. */
int sym_emit(struct symbolizer *s, size_t n, uint32_t *ret, size_t cap);

/* /proc readers and the process cache (sym_proc.c) */

/* (Re)reads the process's executable mappings. 0 or -errno (the old ones stay on failure). */
/* (Re)takes @p's executable mappings from the process tracker: its last read, unless older than
 * @min_read_ns (0: any). 0 or -errno (the old ones stay on failure). */
int sym_read_maps(struct symbolizer *s, struct proc *p, uint64_t min_read_ns);
/* The innermost pid of the process (the one its own pid namespace sees), from NSpid; @pid if
 * unknown. */
uint32_t sym_read_nspid(struct symbolizer *s, uint32_t pid);
/* A start time of /proc/PID/stat (clock ticks after boot) on CLOCK_MONOTONIC; 0 if unknown. */
uint64_t sym_start_to_mono(uint64_t ticks);
/* The cached state of @pid, created (its maps read) on a miss. Borrowed; NULL: no memory. */
struct proc *sym_proc_get(struct symbolizer *s, uint32_t pid);
/* The retired state of @pid that was current at @time_ns, or NULL. Borrowed. */
struct proc *sym_retired_find(struct symbolizer *s, uint32_t pid, uint64_t time_ns);
/* The processes' states as the tracker's extension (s->procs set): 0 or -errno. */
int sym_proc_cache_init(struct symbolizer *s);
/* Releases the cached and retired processes. */
void sym_proc_cache_fini(struct symbolizer *s);
/* The cached state of @pid, or NULL (nothing read). Borrowed. */
struct proc *sym_proc_find(struct symbolizer *s, uint32_t pid);

/* the ELF image cache (sym_elf.c) */

/* The symbols of @m's file, read now if need be; NULL if they cannot be read (retried after a
 * while). Borrowed: valid until the entry is evicted. */
struct image *sym_elf_get(struct symbolizer *s, struct proc *p, struct mapping *m);
/* The symbols of @m's file if already read and the file checked to be the one they were read
 * from through this very mapping (its id_gen); else NULL, and nothing read, opened or counted. */
struct image *sym_elf_peek(struct symbolizer *s, const struct mapping *m);
/* Keeps @m's file open for a later sym_elf_get, unless known already. */
void sym_elf_pin(struct symbolizer *s, struct proc *p, struct mapping *m);
/* Closes the files pinned longer than PIN_NS at time @t. */
void sym_elf_unpin_old(struct symbolizer *s, uint64_t t);
/* Frees the ELF entries and their images (the tables are symbolizer__free's). */
void sym_elf_cache_fini(struct symbolizer *s);
/* The file cache's free function of FILECACHE_SYMBOLS objects (@ctx: the symbolizer). */
void sym_image_uncache(void *img, void *ctx);

/* perf maps (sym_perfmap.c) */

/* Reads what was appended to the process's perf map since the last look. Never blocks. */
void sym_perfmap_refresh(struct symbolizer *s, struct proc *p);
/* The JIT frame for @addr (the perf map looked at again on a miss if @refresh), or -ENOENT;
 * -ENOMEM. */
int sym_jit_frame(struct symbolizer *s, struct proc *p, uint64_t addr, bool refresh);

#endif
