// SPDX-License-Identifier: MIT
#include "ember/daemon/symbols/symbolizer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <elf.h>

#include "ember/core/base/array.h"
#include "ember/daemon/symbols/demangle.h"
#include "ember/daemon/symbols/elfsym.h"
#include "ember/core/base/hash.h"
#include "ember/daemon/symbols/keysort.h"
#include "ember/daemon/symbols/ksyms.h"
#include "ember/core/base/log.h"
#include "ember/core/base/parse.h"
#include "ember/daemon/symbols/perfmap.h"
#include "ember/daemon/symbols/procmaps.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"
#include "ember/core/base/clock.h"

#define DEFAULT_MAX_PIDS 4096
#define DEFAULT_MAX_ELFS 512
#define DEFAULT_MAX_PERFMAP (64u << 20)
#define MAX_MAPS_BYTES (64u << 20)	/* /proc/PID/maps larger than this is cut (counted) */
#define MAX_INLINE 8			/* inline frames per address */
#define ADDR_CACHE_SIZE 65536		/* direct-mapped (image, address) -> frames, 2 MiB */
#define ADDR_CACHE_FRAMES 4
#define NS_PER_MS 1000000ull
/*
 * A miss (an address in no known mapping) re-reads the process's maps at most this often: most
 * misses are garbage return addresses of code built without frame pointers, which no re-read
 * resolves, and a read of /proc/PID/maps costs ~50-200 us. Exec is notified separately
 * (symbolizer__forget_pid + note_pid), so only dlopen and new JIT regions wait for this.
 */
#define MAPS_REFRESH_NS (1000 * NS_PER_MS)
/* ... except the first re-read: a process captured at exec or right after it has not had its
 * libraries mapped by ld.so yet, and a short-lived one must not wait a second for them */
#define MAPS_FIRST_REFRESH_NS (50 * NS_PER_MS)
#define PERFMAP_RECHECK_NS (200 * NS_PER_MS) /* look at a perf map again on a miss */
#define ELF_RETRY_NS (5000 * NS_PER_MS)	    /* retry an image that failed to open */
#define VALIDATE_NS (1000 * NS_PER_MS)	    /* note_pid re-checks a cached pid's start time */
#define GONE_GRACE_NS (5000 * NS_PER_MS)    /* keep a dead process's state for late samples */
#define PIN_NS (2 * GONE_GRACE_NS)	    /* an unread image's file is kept open this long */
#define MAX_PINNED 256			    /* files kept open; past this, images are read at once */
/* Keep a replaced state (exec, pid reuse) so long: samples reach the symbolizer 1-2 ticks after
 * they are taken (sampling.tick_ms, 1 s by default, at most 10 s). Bounded in number: in an exec
 * storm the oldest go first (each holds its mappings, a few KB). */
#define RETIRED_GRACE_NS (25000 * NS_PER_MS)
#define RTAB_SIZE 1024
#define MAX_RETIRED 1024
#define KSYMS_RELOAD_NS (10000 * NS_PER_MS) /* reload kallsyms on a miss at most this often */
#define KSYMS_RELOAD_MAX_NS (320000 * NS_PER_MS) /* ... backing off to this when reloads miss */
#define KMISS_SLOTS 256 /* kernel addresses a reload did not resolve (direct-mapped) */
#define KRES_BATCH 128 /* kernel_resolve: addresses per call (a stack is at most 127) */
#define KRES_TEXT 600 /* ... and bytes per text: KSYM_NAME_LEN 512 + offsets + module */
#define KRES_MAX_RANGES 65536 /* kernel functions cached */

enum pm_state { PM_UNKNOWN = 0, PM_OK, PM_ABSENT, PM_NOT_REGULAR, PM_TOO_BIG, PM_ERROR };

struct mapping {
	uint64_t start, end, pgoff;
	uint64_t dev, ino;
	uint32_t path_off, path_len; /* in proc->paths */
	uint32_t base_off, base_len; /* base name, in proc->paths */
	enum procmaps_kind kind;
	bool deleted;
	int32_t unknown_id;	     /* "[base]" frame id, -1 until interned */
};

struct proc {
	struct proc *hnext;
	struct proc *lru_prev, *lru_next;
	uint32_t pid, nspid;
	uint64_t start_time;		/* clock ticks since boot, from /proc/PID/stat */
	uint64_t exe_dev, exe_ino;	/* to notice exec */
	struct mapping *maps;
	size_t nmaps;
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

/*
 * The state of a process image that exec or pid reuse replaced, kept for samples taken before
 * the switch (at until_ns, CLOCK_MONOTONIC like the sample times) and drained after it.
 */
struct retired {
	struct retired *hnext, *next;
	uint64_t until_ns, expire_ns;
	struct proc *p;
};

struct image {
	struct image *bnext;		/* build-id hash chain */
	unsigned refs;
	uint32_t serial;
	struct elfsym *es;
	uint8_t build_id[64];
	size_t build_id_len;
	uint64_t bid_hash;
	uint64_t file_size;		/* a stripped copy shares the build-id, not the size */
};

struct elfent {
	struct elfent *hnext;
	struct elfent *lru_prev, *lru_next;
	uint64_t dev, ino;
	struct image *img;		/* NULL: not read yet (fd), or failed (retry after ELF_RETRY_NS) */
	uint64_t failed_ns;
	int fd;				/* the file, kept open until its symbols are needed; -1 */
	uint64_t pinned_ns;		/* when fd was opened */
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
	struct strtab *st;
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

	struct proc **ptab;
	size_t ptab_size, nprocs;
	struct proc lru_p;		/* sentinel: lru_next is the most recent */
	struct retired *rtab[RTAB_SIZE];	/* by pid */
	struct retired *rhead, *rtail;	/* oldest first: they expire in that order */
	size_t nretired;

	struct elfent **etab;
	size_t etab_size, nelfs;
	size_t nr_pinned;		/* elfents holding an unread file open */
	uint64_t version_seq;		/* last proc version handed out */
	struct elfent lru_e;
	struct image **btab;		/* images by build-id */
	size_t btab_size;
	uint32_t next_serial;

	struct elfsym *vdso;
	bool vdso_tried;

	struct addr_slot *acache;
	struct sbuf name;		/* scratch for names */
	char *buf;			/* scratch for file contents */
	size_t buf_cap;
	uint32_t *tmp;			/* frames, leaf first */
	size_t tmp_cap;
	int32_t unknown_id;
};

/* --- names ------------------------------------------------------------------------------- */

/* Folded frames cannot hold ';' or line breaks: the same tidying as stackcollapse-perf. */
static void sym_sanitize(char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c == ';')
			p[i] = ':';
		else if (c < 0x20 || c == 0x7f)
			p[i] = '?';
	}
}

/* Interns @raw (demangled if @dem) + @suffix. Returns id >= 0 or -ENOMEM. */
static int sym_intern(struct symbolizer *s, const char *raw, size_t raw_len, bool dem,
		      const char *suffix)
{
	sbuf_reset(&s->name);
	if (dem && s->o.demangle && raw[raw_len] == '\0')
		demangle_append(&s->name, raw);
	else
		sbuf_add(&s->name, raw, raw_len);
	if (suffix)
		sbuf_adds(&s->name, suffix);
	if (sbuf_error(&s->name))
		return -ENOMEM;
	sym_sanitize(s->name.buf, s->name.len);
	return strtab__intern(s->st, s->name.buf, s->name.len);
}

static int sym_intern_lit(struct symbolizer *s, int32_t *cache, const char *lit)
{
	int id;

	if (*cache >= 0)
		return *cache;
	id = strtab__intern(s->st, lit, strlen(lit));
	if (id >= 0)
		*cache = id;
	return id;
}

/* --- construction -------------------------------------------------------------------------- */

static char *dup_or(const char *v, const char *def)
{
	return strdup(v ? v : def);
}

struct symbolizer *symbolizer__new(const struct symbolizer_opts *o, struct strtab *st)
{
	static const struct symbolizer_opts def = SYMBOLIZER_OPTS_DEFAULT;
	struct symbolizer *s;

	if (!st) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->o = o ? *o : def;
	s->st = st;
	if (!s->o.max_pids)
		s->o.max_pids = DEFAULT_MAX_PIDS;
	if (!s->o.max_elfs)
		s->o.max_elfs = DEFAULT_MAX_ELFS;
	if (!s->o.max_perfmap_bytes)
		s->o.max_perfmap_bytes = DEFAULT_MAX_PERFMAP;
	s->debug_dirs = dup_or(s->o.debug_dirs, "/usr/lib/debug");
	s->proc_root = dup_or(s->o.proc_root, "/proc");
	s->kallsyms_path = dup_or(s->o.kallsyms_path, "/proc/kallsyms");
	s->o.debug_dirs = s->debug_dirs;
	s->o.proc_root = s->proc_root;
	s->o.kallsyms_path = s->kallsyms_path;
	s->ptab_size = 1024;
	s->etab_size = 256;
	s->btab_size = 256;
	s->ptab = calloc(s->ptab_size, sizeof(*s->ptab));
	s->etab = calloc(s->etab_size, sizeof(*s->etab));
	s->btab = calloc(s->btab_size, sizeof(*s->btab));
	s->acache = calloc(ADDR_CACHE_SIZE, sizeof(*s->acache));
	s->lru_p.lru_next = s->lru_p.lru_prev = &s->lru_p;
	s->lru_e.lru_next = s->lru_e.lru_prev = &s->lru_e;
	s->next_serial = 1;
	s->kunknown_id = s->unknown_id = -1;
	sbuf_init(&s->name);
	if (!s->debug_dirs || !s->proc_root || !s->kallsyms_path || !s->ptab || !s->etab ||
	    !s->btab || !s->acache) {
		symbolizer__free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

static void sym_proc_cache_fini(struct symbolizer *s);
static void sym_elf_cache_fini(struct symbolizer *s);

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	sym_proc_cache_fini(s);
	sym_elf_cache_fini(s);
	free(s->ptab);
	free(s->etab);
	free(s->btab);
	free(s->acache);
	ksyms__free(s->ks);
	free(s->kr);
	free(s->kaddrs);
	free(s->ktexts);
	elfsym__free(s->vdso);
	sbuf_fini(&s->name);
	free(s->buf);
	free(s->tmp);
	free(s->debug_dirs);
	free(s->proc_root);
	free(s->kallsyms_path);
	free(s);
}

/* --- output frames --------------------------------------------------------------------------- */

static int sym_push(struct symbolizer *s, size_t *n, uint32_t id)
{
	if (*n >= s->tmp_cap) {
		size_t ncap = s->tmp_cap ? s->tmp_cap * 2 : 512;
		uint32_t *nt = realloc(s->tmp, ncap * sizeof(*nt));

		if (!nt)
			return -ENOMEM;
		s->tmp = nt;
		s->tmp_cap = ncap;
	}
	s->tmp[(*n)++] = id;
	return 0;
}

/* tmp[] holds frames leaf first; write them root first, keeping the leaf-most @cap. */
static int sym_emit(struct symbolizer *s, size_t n, uint32_t *ret, size_t cap)
{
	size_t i, k = n < cap ? n : cap;

	if (n > cap)
		s->stats.truncated_stacks++;
	for (i = 0; i < k; i++)
		ret[i] = s->tmp[k - 1 - i];
	return (int)k;
}

/* --- kernel ---------------------------------------------------------------------------------- */

static uint64_t ks_now(const struct symbolizer *s)
{
	return s->o.ks_clock_ns ? s->o.ks_clock_ns() : mono_ns();
}

static void load_ksyms(struct symbolizer *s)
{
	struct ksyms *k;

	s->ks_tried = true;
	s->ks_loaded_ns = ks_now(s);
	k = ksyms__load(s->kallsyms_path, NULL);
	if (!k) {
		log_debug("cannot read '%s': %s", s->kallsyms_path, strerror(errno));
		return;
	}
	ksyms__free(s->ks);
	s->ks = k;
	s->stats.kallsyms_loads++;
	s->stats.kallsyms_symbols = ksyms__count(k);
	s->stats.kallsyms_modules = ksyms__nr_module_syms(k);
	s->stats.kallsyms_restricted = ksyms__restricted(k);
}

void symbolizer__reload_kernel(struct symbolizer *s)
{
	s->ks_tried = false;
}

static int kernel_frame(struct symbolizer *s, uint64_t addr)
{
	const char *mod = NULL;
	int idx, id;
	uint32_t c;

	s->stats.kernel_frames++;
	if (!s->ks_tried)
		load_ksyms(s);
	idx = s->ks ? ksyms__lookup(s->ks, addr, &mod) : -ENOENT;
	if (idx < 0 && s->ks && !s->stats.kallsyms_restricted &&
	    s->kmiss[hash_mix64(addr) % KMISS_SLOTS] != addr &&
	    ks_now(s) - s->ks_loaded_ns > (s->ks_reload_ns ? s->ks_reload_ns : KSYMS_RELOAD_NS)) {
		/* a module or BPF program loaded since: kallsyms changed */
		log_debug("kernel address 0x%llx in no symbol: reloading kallsyms",
			  (unsigned long long)addr);
		load_ksyms(s);
		idx = s->ks ? ksyms__lookup(s->ks, addr, &mod) : -ENOENT;
		if (idx < 0) {
			s->kmiss[hash_mix64(addr) % KMISS_SLOTS] = addr;
			s->ks_reload_ns = s->ks_reload_ns ? s->ks_reload_ns * 2 : 2 * KSYMS_RELOAD_NS;
			if (s->ks_reload_ns > KSYMS_RELOAD_MAX_NS)
				s->ks_reload_ns = KSYMS_RELOAD_MAX_NS;
		} else {
			s->ks_reload_ns = 0;
			memset(s->kmiss, 0, sizeof(s->kmiss));
		}
	}
	if (idx >= 0) {
		c = ksyms__cookie(s->ks, idx);
		if (c)
			return (int)(c - 1);
		id = sym_intern(s, ksyms__name(s->ks, idx), strlen(ksyms__name(s->ks, idx)), false,
				"_[k]");
		if (id >= 0)
			ksyms__set_cookie(s->ks, idx, (uint32_t)id + 1);
		return id;
	}
	s->stats.kernel_unresolved++;
	if (mod) {
		sbuf_reset(&s->name);
		sbuf_addf(&s->name, "[%s]_[k]", mod);
		if (sbuf_error(&s->name))
			return -ENOMEM;
		sym_sanitize(s->name.buf, s->name.len);
		return strtab__intern(s->st, s->name.buf, s->name.len);
	}
	return sym_intern_lit(s, &s->kunknown_id, "[unknown]_[k]");
}

/* The index of the first cached kernel function starting after @addr. */
static size_t krange_after(const struct symbolizer *s, uint64_t addr)
{
	return keysort_upper(s->kr, s->nkr, sizeof(*s->kr), offsetof(struct krange, start), addr);
}

/* The cached function containing @addr (kernel_resolve), or -1. */
static int64_t krange_find(const struct symbolizer *s, uint64_t addr)
{
	size_t i = krange_after(s, addr);

	return i && addr < s->kr[i - 1].end ? (int64_t)s->kr[i - 1].id : -1;
}

static int krange_add(struct symbolizer *s, uint64_t start, uint64_t end, uint32_t id)
{
	size_t i;

	if (s->nkr >= KRES_MAX_RANGES) /* bounded: start over (the names stay interned) */
		s->nkr = 0;
	if (array_grow((void **)&s->kr, &s->kr_cap, s->nkr + 1, sizeof(*s->kr), 256))
		return -ENOMEM;
	i = krange_after(s, start);
	if (i && s->kr[i - 1].start == start) { /* the same function again: keep one */
		s->kr[i - 1].end = end;
		s->kr[i - 1].id = id;
		return 0;
	}
	memmove(&s->kr[i + 1], &s->kr[i], (s->nkr - i) * sizeof(*s->kr));
	s->kr[i] = (struct krange){ .start = start, .end = end, .id = id };
	s->nkr++;
	return 0;
}

/*
 * "%pS" of @addr: "name+0xoff/0xsize", then " [module]" (" [module buildid]") for a module; a
 * bare "0x..." when no symbol has it. The name and the function's [start, end); false: none.
 */
static bool parse_ps(const char *t, uint64_t addr, size_t *name_len, uint64_t *start,
		     uint64_t *end)
{
	const char *e = t + strlen(t), *plus, *slash;
	uint64_t off, size;

	if (e > t && e[-1] == ']') { /* the module: not part of the name (as with kallsyms) */
		const char *b = e;

		while (b > t && !(b[0] == '[' && b[-1] == ' '))
			b--;
		if (b == t)
			return false;
		e = b - 1;
	}
	for (plus = e; plus > t && *plus != '+'; plus--)
		;
	if (plus == t)
		return false;
	slash = memchr(plus, '/', (size_t)(e - plus));
	if (!slash || parse_hex_u64(plus + 1, slash, &off) != slash ||
	    parse_hex_u64(slash + 1, e, &size) != e || off > addr)
		return false;
	*name_len = (size_t)(plus - t);
	*start = addr - off;
	/* a symbol without a size (assembly): this address only */
	*end = size > off && *start + size > *start ? *start + size : addr + 1;
	return true;
}

/* Resolves through kernel_resolve those of @addrs[0..n) not cached yet (n <= KRES_BATCH). 0 or
 * -errno. */
static int kresolve_batch(struct symbolizer *s, const uint64_t *addrs, size_t n)
{
	size_t i, j, m = 0;
	int r;

	if (!s->kaddrs) {
		s->kaddrs = malloc(KRES_BATCH * sizeof(*s->kaddrs));
		s->ktexts = malloc((size_t)KRES_BATCH * KRES_TEXT);
		if (!s->kaddrs || !s->ktexts)
			return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		uint64_t a = addrs[i];

		if (krange_find(s, a) >= 0)
			continue;
		for (j = 0; j < m && s->kaddrs[j] != a; j++)
			;
		if (j == m)
			s->kaddrs[m++] = a;
	}
	if (!m)
		return 0;
	s->stats.kernel_lookups += m;
	r = s->o.kernel_resolve(s->o.kernel_resolve_ctx, s->kaddrs, m, s->ktexts, KRES_TEXT);
	if (r)
		return r;
	for (j = 0; j < m; j++) {
		const char *t = s->ktexts + j * KRES_TEXT;
		uint64_t start, end;
		size_t len;
		int id;

		if (!parse_ps(t, s->kaddrs[j], &len, &start, &end))
			continue; /* no symbol: asked again next time (a module may load) */
		id = sym_intern(s, t, len, false, "_[k]");
		if (id < 0 || krange_add(s, start, end, (uint32_t)id))
			return -ENOMEM;
	}
	return 0;
}

/* Frames of @m looked-up kernel addresses (call sites), pushed in order: through kernel_resolve
 * (one call for the new ones) while it works, else kallsyms. 0 or -ENOMEM. */
static int kernel_batch(struct symbolizer *s, const uint64_t *addrs, size_t m, size_t *k)
{
	size_t i;

	if (s->o.kernel_resolve && !s->kres_failed) {
		int r = kresolve_batch(s, addrs, m);

		if (r == -ENOMEM)
			return r;
		if (r) {
			log_debug("kernel symbol lookup failed (%s): reading /proc/kallsyms",
				  strerror(-r));
			s->kres_failed = true;
		}
	}
	for (i = 0; i < m; i++) {
		int64_t id;

		if (s->kres_failed || !s->o.kernel_resolve) {
			id = kernel_frame(s, addrs[i]);
		} else {
			s->stats.kernel_frames++;
			id = krange_find(s, addrs[i]);
			if (id < 0) {
				s->stats.kernel_unresolved++;
				id = sym_intern_lit(s, &s->kunknown_id, "[unknown]_[k]");
			}
		}
		if (id < 0 || sym_push(s, k, (uint32_t)id))
			return -ENOMEM;
	}
	return 0;
}

int symbolizer__kernel(struct symbolizer *s, const uint64_t *ips, size_t n, uint32_t *ret,
		       size_t cap)
{
	uint64_t addrs[KRES_BATCH];
	size_t i, k = 0, m = 0;
	bool leaf = true;

	for (i = 0; i < n; i++) {
		if (!ips[i])
			continue;
		/* callers' entries are return addresses: look up the call instruction */
		addrs[m++] = leaf ? ips[i] : ips[i] - 1;
		leaf = false;
		if (m == KRES_BATCH) {
			if (kernel_batch(s, addrs, m, &k))
				return -ENOMEM;
			m = 0;
		}
	}
	if (m && kernel_batch(s, addrs, m, &k))
		return -ENOMEM;
	return sym_emit(s, k, ret, cap);
}

/* --- /proc readers --------------------------------------------------------------------------- */

/* Reads a whole /proc file into s->buf (NUL-terminated). Length or -errno. */
static ssize_t read_file(struct symbolizer *s, const char *path, size_t max)
{
	size_t len = 0;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t r;

		if (len + 4096 + 1 > s->buf_cap) {
			size_t ncap = s->buf_cap ? s->buf_cap * 2 : 65536;
			char *nb;

			if (s->buf_cap >= max) {
				err = -EFBIG;
				break;
			}
			nb = realloc(s->buf, ncap);
			if (!nb) {
				err = -ENOMEM;
				break;
			}
			s->buf = nb;
			s->buf_cap = ncap;
		}
		r = read(fd, s->buf + len, s->buf_cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	if (err && err != -EFBIG)
		return err;
	s->buf[len] = '\0';
	return (ssize_t)len;
}

/* Start time (field 22 of /proc/PID/stat), 0 or -errno. */
static int read_start_time(struct symbolizer *s, uint32_t pid, uint64_t *ret)
{
	char path[64];
	const char *p;
	ssize_t n;
	int field;

	snprintf(path, sizeof(path), "%s/%u/stat", s->proc_root, pid);
	n = read_file(s, path, 65536);
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
static uint32_t sym_read_nspid(struct symbolizer *s, uint32_t pid)
{
	char path[64];
	const char *p, *eol;
	uint32_t ns = pid;

	snprintf(path, sizeof(path), "%s/%u/status", s->proc_root, pid);
	if (read_file(s, path, 1 << 20) < 0)
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

static void read_exe_id(struct symbolizer *s, uint32_t pid, uint64_t *dev, uint64_t *ino)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%u/exe", s->proc_root, pid);
	if (stat(path, &st) == 0) {
		*dev = st.st_dev;
		*ino = st.st_ino;
	} else {
		*dev = *ino = 0;
	}
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
			       .kind = e->kind, .deleted = e->deleted, .unknown_id = -1 };
	if (add_path(c, e->path, e->path_len, &m->path_off))
		return c->err = -ENOMEM;
	m->path_len = (uint32_t)e->path_len;
	base = procmaps_basename(e, &blen);
	m->base_off = m->path_off + (uint32_t)(base - e->path);
	m->base_len = (uint32_t)blen;
	c->n++;
	return 0;
}

/*
 * Calls collect_mapping() for the executable lines of a maps text only: the permissions field
 * ("r-xp") is checked before the line is parsed, so the data, heap and stack lines (most of a
 * large process's maps) cost a memchr each. Malformed lines are skipped, as by procmaps_parse().
 */
static void parse_exec_maps(const char *text, size_t len, struct maps_ctx *c)
{
	const char *p = text, *end = text + len;

	while (p < end && !c->err) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *sp = memchr(p, ' ', n);
		struct procmaps_entry e;

		/* "start-end rwxp ...": the x is the third character after the first space */
		if (sp && (size_t)(sp - p) + 3 < n && sp[3] == 'x' &&
		    procmaps_parse_line(p, n, &e, NULL) == 0)
			(void)collect_mapping(&e, c);
		p += n + (nl ? 1 : 0);
	}
}

static int cmp_mapping(const void *a, const void *b)
{
	const struct mapping *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/* (Re)reads the process's executable mappings. 0 or -errno (the old ones stay on failure). */
static int sym_read_maps(struct symbolizer *s, struct proc *p)
{
	struct maps_ctx c = { 0 };
	char path[64];
	ssize_t n;
	size_t i, j;

	p->maps_read_ns = mono_ns();
	p->version = ++s->version_seq;
	s->stats.maps_reads++;
	snprintf(path, sizeof(path), "%s/%u/maps", s->proc_root, p->pid);
	n = read_file(s, path, MAX_MAPS_BYTES);
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
	if (n == 0 && p->nmaps) {
		/* an exited (zombie) process reads as empty: keep what we had */
		s->stats.maps_errors++;
		return -ESRCH;
	}
	parse_exec_maps(s->buf, (size_t)n, &c);
	if (c.err) {
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
	p->maps = c.maps;
	p->nmaps = c.n;
	p->paths = c.paths;
	p->paths_len = c.paths_len;
	p->mem_bytes = c.cap * sizeof(*c.maps) + c.paths_cap;
	return 0;
}

/* --- process cache --------------------------------------------------------------------------- */

static void lru_unlink_p(struct proc *p)
{
	p->lru_prev->lru_next = p->lru_next;
	p->lru_next->lru_prev = p->lru_prev;
}

static void lru_front_p(struct symbolizer *s, struct proc *p)
{
	p->lru_next = s->lru_p.lru_next;
	p->lru_prev = &s->lru_p;
	s->lru_p.lru_next->lru_prev = p;
	s->lru_p.lru_next = p;
}

static void proc_free(struct proc *p)
{
	if (!p)
		return;
	free(p->maps);
	free(p->paths);
	perfmap__free(p->pm);
	free(p);
}

static size_t pslot(const struct symbolizer *s, uint32_t pid)
{
	return hash_mix64(pid) & (s->ptab_size - 1);
}

static struct proc *proc_find(struct symbolizer *s, uint32_t pid)
{
	struct proc *p;

	for (p = s->ptab[pslot(s, pid)]; p; p = p->hnext)
		if (p->pid == pid)
			return p;
	return NULL;
}

static void proc_unlink(struct symbolizer *s, struct proc *p)
{
	struct proc **pp;

	for (pp = &s->ptab[pslot(s, p->pid)]; *pp; pp = &(*pp)->hnext) {
		if (*pp == p) {
			*pp = p->hnext;
			break;
		}
	}
	lru_unlink_p(p);
	s->nprocs--;
}

static void proc_remove(struct symbolizer *s, struct proc *p)
{
	proc_unlink(s, p);
	proc_free(p);
}

static void retired_pop(struct symbolizer *s)
{
	struct retired *r = s->rhead, **pp;

	for (pp = &s->rtab[r->p->pid % RTAB_SIZE]; *pp; pp = &(*pp)->hnext) {
		if (*pp == r) {
			*pp = r->hnext;
			break;
		}
	}
	s->rhead = r->next;
	if (!s->rhead)
		s->rtail = NULL;
	s->nretired--;
	proc_free(r->p);
	free(r);
}

/* Frees the cached and retired processes (the table is symbolizer__free's). */
static void sym_proc_cache_fini(struct symbolizer *s)
{
	size_t i;

	while (s->rhead)
		retired_pop(s);
	for (i = 0; s->ptab && i < s->ptab_size; i++) {
		struct proc *p = s->ptab[i], *next;

		for (; p; p = next) {
			next = p->hnext;
			proc_free(p);
		}
	}
}

static void retired_expire(struct symbolizer *s, uint64_t now)
{
	while (s->rhead && s->rhead->expire_ns <= now)
		retired_pop(s);
}

/* Takes @p out of the cache; keeps it for samples taken before @until_ns (0: frees it). */
static void proc_retire(struct symbolizer *s, struct proc *p, uint64_t until_ns)
{
	struct retired *r = until_ns ? calloc(1, sizeof(*r)) : NULL;

	proc_unlink(s, p);
	if (!r) {
		proc_free(p);
		return;
	}
	/* /proc/PID is another image's now: never read it for this one again (no maps re-read,
	 * no perf map refresh, files by their host path with the inode checked) */
	if (!p->gone) {
		p->gone = true;
		p->gone_ns = mono_ns();
	}
	r->p = p;
	r->until_ns = until_ns;
	r->expire_ns = mono_ns() + RETIRED_GRACE_NS;
	r->hnext = s->rtab[p->pid % RTAB_SIZE];
	s->rtab[p->pid % RTAB_SIZE] = r;
	if (s->rtail)
		s->rtail->next = r;
	else
		s->rhead = r;
	s->rtail = r;
	s->nretired++;
	s->stats.pid_retired++;
	while (s->nretired > MAX_RETIRED)
		retired_pop(s);
}

/* The retired state of @pid that was current at @time_ns, or NULL. */
static struct proc *sym_retired_find(struct symbolizer *s, uint32_t pid, uint64_t time_ns)
{
	struct retired *r, *best = NULL;

	for (r = s->rtab[pid % RTAB_SIZE]; r; r = r->hnext)
		if (r->p->pid == pid && time_ns < r->until_ns &&
		    (!best || r->until_ns < best->until_ns))
			best = r;
	return best ? best->p : NULL;
}

uint64_t symbolizer__pid_version(const struct symbolizer *s, uint32_t pid)
{
	const struct proc *p;

	for (p = s->ptab[pslot(s, pid)]; p; p = p->hnext)
		if (p->pid == pid)
			return p->gone ? 0 : p->version;
	return 0;
}

uint64_t symbolizer__user_unresolved(const struct symbolizer *s)
{
	return s->stats.user_unresolved;
}

bool symbolizer__has_retired(const struct symbolizer *s, uint32_t pid)
{
	const struct retired *r;

	for (r = s->nretired ? s->rtab[pid % RTAB_SIZE] : NULL; r; r = r->hnext)
		if (r->p->pid == pid)
			return true;
	return false;
}

/* Clock ticks since boot (a /proc/PID/stat start time) as CLOCK_MONOTONIC ns; 0 if unknown. */
static uint64_t start_to_mono(uint64_t ticks)
{
	long hz = sysconf(_SC_CLK_TCK);
	struct timespec b, m;
	uint64_t boot_ns, off;

	if (hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &b) || clock_gettime(CLOCK_MONOTONIC, &m))
		return 0;
	boot_ns = ticks * (1000000000ull / (uint64_t)hz);
	off = ((uint64_t)b.tv_sec * 1000000000ull + (uint64_t)b.tv_nsec) -
	      ((uint64_t)m.tv_sec * 1000000000ull + (uint64_t)m.tv_nsec);
	return boot_ns > off ? boot_ns - off : 0;
}

static void ptab_grow(struct symbolizer *s)
{
	size_t nsize = s->ptab_size * 2, i;
	struct proc **nt = calloc(nsize, sizeof(*nt));

	if (!nt)
		return; /* longer chains, still correct */
	for (i = 0; i < s->ptab_size; i++) {
		struct proc *p = s->ptab[i], *next;

		for (; p; p = next) {
			size_t h = hash_mix64(p->pid) & (nsize - 1);

			next = p->hnext;
			p->hnext = nt[h];
			nt[h] = p;
		}
	}
	free(s->ptab);
	s->ptab = nt;
	s->ptab_size = nsize;
}

static struct image *sym_elf_get(struct symbolizer *s, struct proc *p, struct mapping *m);
static void sym_elf_pin(struct symbolizer *s, struct proc *p, struct mapping *m);
static void sym_elf_unpin_old(struct symbolizer *s, uint64_t t);
static void sym_perfmap_refresh(struct symbolizer *s, struct proc *p);

static bool has_anon_code(const struct proc *p)
{
	size_t i;

	for (i = 0; i < p->nmaps; i++)
		if (p->maps[i].kind == PROCMAPS_ANON)
			return true;
	return false;
}

static struct proc *proc_create(struct symbolizer *s, uint32_t pid)
{
	struct proc *p;
	size_t h;

	while (s->nprocs >= s->o.max_pids && s->lru_p.lru_prev != &s->lru_p) {
		proc_remove(s, s->lru_p.lru_prev);
		s->stats.pid_evictions++;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->validated_ns = mono_ns();
	if (read_start_time(s, pid, &p->start_time) < 0) {
		p->gone = true;
		p->gone_ns = p->validated_ns;
		s->stats.pid_gone++;
	} else {
		/* the namespaced pid (NSpid) is read when a perf map is first looked for */
		read_exe_id(s, pid, &p->exe_dev, &p->exe_ino);
		(void)sym_read_maps(s, p);
	}
	if (s->nprocs + 1 > s->ptab_size)
		ptab_grow(s);
	h = pslot(s, pid);
	p->hnext = s->ptab[h];
	s->ptab[h] = p;
	lru_front_p(s, p);
	s->nprocs++;
	return p;
}

static struct proc *sym_proc_get(struct symbolizer *s, uint32_t pid)
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

	if (p)
		proc_retire(s, p, until_ns);
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
	uint64_t st, dev, ino;

	*until = mono_ns();
	if (read_start_time(s, p->pid, &st) < 0) {
		if (!p->gone) {
			p->gone = true;
			p->gone_ns = mono_ns();
			s->stats.pid_gone++;
		}
		return 0;
	}
	if (p->gone || st != p->start_time) {
		uint64_t born = start_to_mono(st);

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

/* Expiry, and with @check each live process's start time and executable read again. */
static int prune(struct symbolizer *s, bool check)
{
	struct proc *p, *prev;
	uint64_t t = mono_ns(), until;
	int n = 0;

	retired_expire(s, t);
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

void symbolizer__check_pid(struct symbolizer *s, uint32_t pid)
{
	struct proc *p = proc_find(s, pid);
	uint64_t until;

	if (p && !p->gone && proc_stale(s, p, &until))
		proc_retire(s, p, until);
}

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
	struct image **pp;

	if (!img || --img->refs)
		return;
	if (img->build_id_len) {
		for (pp = &s->btab[img->bid_hash % s->btab_size]; *pp; pp = &(*pp)->bnext) {
			if (*pp == img) {
				*pp = img->bnext;
				break;
			}
		}
	}
	s->stats.elf_symbols -= elfsym__count(img->es);
	elfsym__free(img->es);
	free(img);
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
	image_put(s, e->img);
	if (e->fd >= 0) {
		close(e->fd);
		s->nr_pinned--;
	}
	free(e);
}

/* Frees the ELF entries and their images (the tables are symbolizer__free's). */
static void sym_elf_cache_fini(struct symbolizer *s)
{
	size_t i;

	for (i = 0; s->etab && i < s->etab_size; i++) {
		struct elfent *e = s->etab[i], *next;

		for (; e; e = next) {
			next = e->hnext;
			image_put(s, e->img);
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

/* Opens the file behind @m: through the process's root, then its map_files entry (deleted
 * files, other mount namespaces), then the host path; the inode must match. fd or -errno. */
static int open_mapping(struct symbolizer *s, struct proc *p, const struct mapping *m)
{
	const char *path = p->paths + m->path_off;
	char buf[PATH_MAX];
	struct stat st;
	int fd, i;

	for (i = 0; i < 3; i++) {
		int n;

		if (i == 0 && (m->deleted || path[0] != '/' || p->gone))
			continue;
		if (i == 1 && p->gone)
			continue;
		if (i == 2 && (m->deleted || path[0] != '/'))
			continue;
		if (i == 0)
			n = snprintf(buf, sizeof(buf), "%s/%u/root%s", s->proc_root, p->pid, path);
		else if (i == 1)
			n = snprintf(buf, sizeof(buf), "%s/%u/map_files/%llx-%llx", s->proc_root,
				     p->pid, (unsigned long long)m->start,
				     (unsigned long long)m->end);
		else
			n = snprintf(buf, sizeof(buf), "%s", path);
		if (n < 0 || (size_t)n >= sizeof(buf))
			continue;
		fd = open(buf, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (m->ino && st.st_ino != m->ino)) {
			close(fd);
			continue;
		}
		return fd;
	}
	return -ENOENT;
}

static struct image *image_by_build_id(struct symbolizer *s, const uint8_t *id, size_t len,
				       uint64_t h, uint64_t size)
{
	struct image *img;

	for (img = s->btab[h % s->btab_size]; img; img = img->bnext)
		if (img->build_id_len == len && img->file_size == size &&
		    !memcmp(img->build_id, id, len))
			return img;
	return NULL;
}

/* Reads the symbols of @m's file: @fd if >= 0 (closed here), else opened now. */
static struct image *image_open(struct symbolizer *s, struct proc *p, const struct mapping *m,
				int fd)
{
	struct elfsym_opts eo = { .debug_dirs = s->debug_dirs, .path = p->paths + m->path_off,
				  .dwarf = s->o.inline_frames };
	uint8_t id[64];
	char root[64];
	struct image *img;
	const uint8_t *bid;
	struct stat st;
	int n;
	uint64_t h = 0;

	if (fd < 0)
		fd = open_mapping(s, p, m);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st)) {
		close(fd);
		return NULL;
	}
	/*
	 * The same build-id and size: the same file in another place (a container layer, a
	 * copy), parsed once. A stripped copy has the build-id of the original but not its size.
	 */
	n = elfsym_read_build_id(fd, id, sizeof(id));
	if (n > 0) {
		h = hash_bytes(id, (size_t)n, 0);
		img = image_by_build_id(s, id, (size_t)n, h, (uint64_t)st.st_size);
		if (img) {
			close(fd);
			img->refs++;
			s->stats.elf_buildid_hits++;
			return img;
		}
	}
	snprintf(root, sizeof(root), "%s/%u/root", s->proc_root, p->pid);
	eo.root = p->gone ? NULL : root;
	img = calloc(1, sizeof(*img));
	if (!img) {
		close(fd);
		return NULL;
	}
	img->es = elfsym__open(fd, &eo);
	close(fd);
	if (!img->es) {
		free(img);
		return NULL;
	}
	img->refs = 1;
	img->file_size = (uint64_t)st.st_size;
	img->serial = s->next_serial++;
	if (!s->next_serial)
		s->next_serial = 1; /* 0 marks an empty address-cache slot */
	if (elfsym__used_debug_file(img->es))
		s->stats.elf_debuginfo++;
	s->stats.elf_symbols += elfsym__count(img->es);
	img->build_id_len = elfsym__build_id(img->es, &bid);
	if (img->build_id_len > sizeof(img->build_id))
		img->build_id_len = 0;
	if (img->build_id_len) {
		memcpy(img->build_id, bid, img->build_id_len);
		img->bid_hash = hash_bytes(img->build_id, img->build_id_len, 0);
		img->bnext = s->btab[img->bid_hash % s->btab_size];
		s->btab[img->bid_hash % s->btab_size] = img;
	}
	return img;
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
	int fd = e->fd;

	if (fd >= 0) {
		e->fd = -1;
		s->nr_pinned--;
	}
	e->img = image_open(s, p, m, fd);
	if (!e->img) {
		e->failed_ns = mono_ns();
		s->stats.elf_errors++;
		log_debug("pid %u: cannot read symbols of '%s'", p->pid, p->paths + m->path_off);
	}
}

static struct image *sym_elf_get(struct symbolizer *s, struct proc *p, struct mapping *m)
{
	struct elfent *e = elf_find(s, m);

	if (e && (e->img || e->fd >= 0 || mono_ns() - e->failed_ns < ELF_RETRY_NS)) {
		if (s->lru_e.lru_next != e) {
			lru_unlink_e(e);
			lru_front_e(s, e);
		}
		s->stats.elf_hits++; /* read, failed lately, or pinned (read now) */
		if (!e->img && e->fd >= 0)
			elf_read(s, e, p, m);
		return e->img;
	}
	s->stats.elf_misses++;
	if (!e)
		e = elf_add(s, m);
	if (!e)
		return NULL;
	elf_read(s, e, p, m);
	return e->img;
}

/*
 * Keeps @m's file open for a later sym_elf_get, unless known already: what a process maps is read
 * when its stacks need it, even after it has exited (its path then gone, or another file).
 * Past MAX_PINNED open files, read at once.
 */
static void sym_elf_pin(struct symbolizer *s, struct proc *p, struct mapping *m)
{
	struct elfent *e = elf_find(s, m);
	int fd;

	if (e) { /* a hit, as for sym_elf_get: one file for many processes */
		s->stats.elf_hits++;
		return;
	}
	if (s->nr_pinned >= MAX_PINNED) {
		(void)sym_elf_get(s, p, m);
		return;
	}
	fd = open_mapping(s, p, m);
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
	e->fd = fd;
	e->pinned_ns = mono_ns();
	s->nr_pinned++;
}

/* Closes the files pinned longer than PIN_NS: their processes' first samples are long drained
 * (a later read opens the file again through a live process). */
static void sym_elf_unpin_old(struct symbolizer *s, uint64_t t)
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
static void sym_perfmap_refresh(struct symbolizer *s, struct proc *p)
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
static int sym_jit_frame(struct symbolizer *s, struct proc *p, uint64_t addr, bool refresh)
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

/* --- user frames ----------------------------------------------------------------------------- */

static struct mapping *find_mapping(struct proc *p, uint64_t addr)
{
	size_t lo = keysort_upper(p->maps, p->nmaps, sizeof(*p->maps),
				  offsetof(struct mapping, start), addr);

	if (lo && addr < p->maps[lo - 1].end)
		return &p->maps[lo - 1];
	return NULL;
}

static struct elfsym *vdso_image(struct symbolizer *s)
{
	const unsigned char *base;
	const Elf64_Ehdr *eh;
	size_t len, i;

	if (s->vdso_tried)
		return s->vdso;
	s->vdso_tried = true;
	/* every process of this kernel and ABI maps the same vDSO image as we do */
	base = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	if (!base || memcmp(base, ELFMAG, SELFMAG) || base[EI_CLASS] != ELFCLASS64)
		return NULL;
	eh = (const Elf64_Ehdr *)base;
	len = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	for (i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff) + i;

		if (ph->p_offset + ph->p_filesz > len)
			len = ph->p_offset + ph->p_filesz;
	}
	if (len > (1u << 20))
		return NULL;
	s->vdso = elfsym__open_mem(base, len, NULL);
	return s->vdso;
}

/* Resolves @addr within image @img: pushes innermost first. 1 if resolved, 0 if not, -ENOMEM. */
static int image_frames(struct symbolizer *s, struct image *img, struct elfsym *es,
			uint32_t serial, uint64_t vaddr, size_t *k)
{
	const char *inl[MAX_INLINE];
	struct addr_slot *slot = NULL;
	int idx, id, n = 0, i;
	uint32_t ids[1 + MAX_INLINE];
	uint32_t c;

	if (serial) {
		slot = &s->acache[hash_mix64(vaddr ^ (uint64_t)serial << 40) & (ADDR_CACHE_SIZE - 1)];
		if (slot->serial == serial && slot->vaddr == vaddr) {
			for (i = (int)slot->n - 1; i >= 0; i--)
				if (sym_push(s, k, slot->ids[i]))
					return -ENOMEM;
			s->stats.inline_frames += slot->n - 1;
			return 1;
		}
	}
	idx = elfsym__lookup(es, vaddr);
	if (idx < 0)
		return 0;
	c = elfsym__cookie(es, idx);
	if (c) {
		id = (int)(c - 1);
	} else {
		const char *name = elfsym__name(es, idx);

		id = sym_intern(s, name, strlen(name), true, NULL);
		if (id < 0)
			return -ENOMEM;
		elfsym__set_cookie(es, idx, (uint32_t)id + 1);
	}
	ids[n++] = (uint32_t)id; /* outermost first in ids[] */
	if (s->o.inline_frames && img) {
		int ni = elfsym__inlines(es, vaddr, inl, MAX_INLINE);

		for (i = 0; i < ni; i++) {
			id = sym_intern(s, inl[i], strlen(inl[i]), true, "_[i]");
			if (id < 0)
				return -ENOMEM;
			ids[n++] = (uint32_t)id;
		}
	}
	for (i = n - 1; i >= 0; i--)
		if (sym_push(s, k, ids[i]))
			return -ENOMEM;
	s->stats.inline_frames += (uint64_t)(n - 1);
	if (slot && n <= ADDR_CACHE_FRAMES) {
		slot->serial = serial;
		slot->vaddr = vaddr;
		slot->n = (uint32_t)n;
		memcpy(slot->ids, ids, (size_t)n * sizeof(ids[0]));
	}
	return 1;
}

static int unknown_frame(struct symbolizer *s, struct proc *p, struct mapping *m, uint64_t addr)
{
	const char *base;
	int id;

	if (!m)
		return sym_intern_lit(s, &s->unknown_id, "[unknown]");
	if (m->kind == PROCMAPS_VDSO)
		base = "vdso";
	else if (m->kind == PROCMAPS_FILE && m->base_len)
		base = p->paths + m->base_off;
	else
		return sym_intern_lit(s, &s->unknown_id, "[unknown]");
	sbuf_reset(&s->name);
	if (s->o.addr_offsets) {
		sbuf_addf(&s->name, "%s+0x%llx", base,
			  (unsigned long long)(addr - m->start + m->pgoff));
	} else {
		if (m->unknown_id >= 0)
			return m->unknown_id;
		sbuf_addf(&s->name, "[%s]", base);
	}
	if (sbuf_error(&s->name))
		return -ENOMEM;
	sym_sanitize(s->name.buf, s->name.len);
	id = strtab__intern(s->st, s->name.buf, s->name.len);
	if (id >= 0 && !s->o.addr_offsets)
		m->unknown_id = id;
	return id;
}

static int user_frame(struct symbolizer *s, struct proc *p, uint64_t addr, size_t *k)
{
	struct mapping *m = find_mapping(p, addr);
	int r, id;

	s->stats.user_frames++;
	if (!m && !p->gone &&
	    mono_ns() - p->maps_read_ns >= (p->reread ? MAPS_REFRESH_NS : MAPS_FIRST_REFRESH_NS)) {
		/* new code mapped since (dlopen, exec, a JIT's new region): look again */
		p->reread = true;
		(void)sym_read_maps(s, p);
		m = find_mapping(p, addr);
	}
	if (m && m->kind == PROCMAPS_FILE) {
		struct image *img = sym_elf_get(s, p, m);
		uint64_t vaddr;

		if (img && elfsym__file_to_vaddr(img->es, addr - m->start + m->pgoff, &vaddr) == 0) {
			r = image_frames(s, img, img->es, img->serial, vaddr, k);
			if (r)
				return r < 0 ? r : 0;
		}
	} else if (m && m->kind == PROCMAPS_VDSO) {
		struct elfsym *v = vdso_image(s);
		uint64_t vaddr;

		if (v && elfsym__file_to_vaddr(v, addr - m->start, &vaddr) == 0) {
			r = image_frames(s, NULL, v, 0, vaddr, k);
			if (r)
				return r < 0 ? r : 0;
		}
	}
	/* anonymous executable memory, a memfd, or nothing known: a JIT's perf map may know */
	if (!m || m->kind != PROCMAPS_SPECIAL) {
		/* an address in no mapping (even after a re-read) is mostly a garbage return
		 * address: look in the perf map already read, but do not open the file again */
		id = sym_jit_frame(s, p, addr, m != NULL || !p->nmaps);
		if (id >= 0) {
			s->stats.jit_frames++;
			return sym_push(s, k, (uint32_t)id);
		}
		if (id == -ENOMEM)
			return id;
	}
	s->stats.user_unresolved++;
	if (!m)
		s->stats.user_no_mapping++;
	id = unknown_frame(s, p, m, addr);
	if (id < 0)
		return id;
	return sym_push(s, k, (uint32_t)id);
}

int symbolizer__user(struct symbolizer *s, uint32_t pid, const uint64_t *ips, size_t n,
		     uint32_t *ret, size_t cap)
{
	return symbolizer__user_at(s, pid, 0, ips, n, ret, cap);
}

int symbolizer__user_at(struct symbolizer *s, uint32_t pid, uint64_t time_ns, const uint64_t *ips,
			size_t n, uint32_t *ret, size_t cap)
{
	struct proc *p = time_ns && s->nretired ? sym_retired_find(s, pid, time_ns) : NULL;
	size_t i, k = 0;
	bool first = true;

	if (!p)
		p = sym_proc_get(s, pid);
	if (!p)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		int r;

		if (!ips[i])
			continue;
		/* callers' entries are return addresses: look up the call instruction */
		r = user_frame(s, p, first ? ips[i] : ips[i] - 1, &k);
		first = false;
		if (r < 0)
			return r;
	}
	return sym_emit(s, k, ret, cap);
}

/* --- stats ----------------------------------------------------------------------------------- */

void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *ret)
{
	const struct proc *p;
	size_t mem = sizeof(*s) + ADDR_CACHE_SIZE * sizeof(struct addr_slot) +
		     (s->ptab_size + s->etab_size + s->btab_size) * sizeof(void *) + s->buf_cap +
		     s->tmp_cap * sizeof(uint32_t) + s->name.cap;
	size_t i;

	*ret = s->stats;
	ret->kernel_resolver = s->o.kernel_resolve && !s->kres_failed;
	ret->kernel_functions = s->nkr;
	ret->pids_cached = s->nprocs;
	ret->elfs_cached = s->nelfs;
	for (p = s->lru_p.lru_next; p != &s->lru_p; p = p->lru_next)
		mem += sizeof(*p) + p->mem_bytes + (p->pm ? perfmap__mem_bytes(p->pm) : 0);
	for (const struct retired *r = s->rhead; r; r = r->next)
		mem += sizeof(*r) + sizeof(*r->p) + r->p->mem_bytes +
		       (r->p->pm ? perfmap__mem_bytes(r->p->pm) : 0);
	for (i = 0; i < s->etab_size; i++) {
		const struct elfent *e;

		/* a shared image counts once over its users */
		for (e = s->etab[i]; e; e = e->hnext)
			mem += sizeof(*e) + (e->img ? (sizeof(*e->img) +
						       elfsym__mem_bytes(e->img->es)) /
							      e->img->refs
						    : 0);
	}
	if (s->ks)
		mem += ksyms__mem_bytes(s->ks);
	mem += s->kr_cap * sizeof(*s->kr) +
	       (s->kaddrs ? KRES_BATCH * (sizeof(uint64_t) + KRES_TEXT) : 0);
	ret->mem_bytes = mem;
}
