// SPDX-License-Identifier: MIT
#include "ember/daemon/symbols/symbolizer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include <elf.h>

#include "ember/core/base/clock.h"
#include "ember/core/base/hash.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"
#include "ember/daemon/symbols/demangle.h"
#include "ember/daemon/elf/elfload.h"
#include "ember/daemon/elf/elfsym.h"
#include "ember/daemon/elf/keysort.h"
#include "ember/daemon/symbols/ksyms.h"
#include "ember/daemon/symbols/perfmap.h"
#include "symbolizer_internal.h"

#define DEFAULT_MAX_PIDS 4096
#define DEFAULT_MAX_ELFS 512
#define DEFAULT_MAX_PERFMAP (64u << 20)
#define MAX_INLINE 8			/* inline frames per address */
#define ADDR_CACHE_SIZE 65536		/* direct-mapped (image, address) -> frames, 2 MiB */
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

/* --- names ------------------------------------------------------------------------------- */

int sym_tidy(struct symbolizer *s)
{
	struct sbuf t;
	size_t i;

	for (i = 0; i < s->name.len; i++) {
		unsigned char c = (unsigned char)s->name.buf[i];

		if (c == ';' || c < 0x20 || c >= 0x7f) /* >= 0x80: checked as UTF-8 below */
			break;
	}
	if (i == s->name.len)
		return sbuf_error(&s->name) ? -ENOMEM : 0;
	sbuf_reset(&s->tidy);
	sbuf_add_frame(&s->tidy, s->name.buf, s->name.len);
	if (sbuf_error(&s->tidy))
		return -ENOMEM;
	t = s->name;
	s->name = s->tidy;
	s->tidy = t;
	return 0;
}

/* Interns the frame of @kind named @raw (demangled if @dem), written by the one frame formatter
 * (frame.h). Returns id >= 0 or -ENOMEM. */
int sym_intern(struct symbolizer *s, const char *raw, size_t raw_len, bool dem,
	       enum frame_kind kind)
{
	struct frame f = { .kind = kind, .form = FRAME_SYMBOL, .name = raw, .name_len = raw_len };

	sbuf_reset(&s->name);
	if (dem && s->o.demangle && raw[raw_len] == '\0') {
		sbuf_reset(&s->tidy);
		demangle_append(&s->tidy, raw);
		if (sbuf_error(&s->tidy))
			return -ENOMEM;
		f.name = s->tidy.buf;
		f.name_len = s->tidy.len;
	}
	frame_format(&s->name, &f);
	if (sbuf_error(&s->name))
		return -ENOMEM;
	return sym_intern_name(s, kind != FRAME_KERNEL);
}

/* Interns s->name, charged to the process being named when @owned (a user frame's name). */
int sym_intern_name(struct symbolizer *s, bool owned)
{
	if (owned && s->owner_pid)
		return proc_tracker__intern_name(s->procs, s->owner_pid, s->st, s->name.buf,
						 s->name.len);
	return strtab__intern(s->st, s->name.buf, s->name.len);
}

int sym_intern_lit(struct symbolizer *s, int32_t *cache, const char *lit)
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
	s->ext = -1;
	s->etab_size = 256;
	s->etab = calloc(s->etab_size, sizeof(*s->etab));
	s->acache = calloc(ADDR_CACHE_SIZE, sizeof(*s->acache));
	s->lru_p.lru_next = s->lru_p.lru_prev = &s->lru_p;
	s->lru_e.lru_next = s->lru_e.lru_prev = &s->lru_e;
	s->next_serial = 1;
	s->kunknown_id = s->unknown_id = -1;
	sbuf_init(&s->name);
	sbuf_init(&s->tidy);
	s->files = s->o.files;
	if (!s->files)
		s->files = s->own_files = filecache__new(NULL);
	if (s->files)
		filecache__set_free(s->files, FILECACHE_SYMBOLS, sym_image_uncache, s);
	s->procs = s->o.procs;
	if (!s->procs && s->proc_root) {
		struct proc_tracker_opts po = { .proc_root = s->proc_root };

		s->procs = s->own_procs = proc_tracker__new(&po);
	}
	if (!s->debug_dirs || !s->proc_root || !s->kallsyms_path || !s->etab || !s->files ||
	    !s->acache || !s->procs || sym_proc_cache_init(s)) {
		symbolizer__free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	sym_proc_cache_fini(s);
	sym_elf_cache_fini(s);
	if (s->files) { /* the images it still holds: their free function needs @s */
		filecache__drop_kind(s->files, FILECACHE_SYMBOLS);
		filecache__set_free(s->files, FILECACHE_SYMBOLS, NULL, NULL);
	}
	filecache__free(s->own_files);
	free(s->etab);
	free(s->acache);
	ksyms__free(s->ks);
	free(s->kr);
	free(s->kaddrs);
	free(s->ktexts);
	elfsym__free(s->vdso);
	sbuf_fini(&s->name);
	sbuf_fini(&s->tidy);
	free(s->buf);
	free(s->tmp);
	free(s->debug_dirs);
	free(s->proc_root);
	free(s->kallsyms_path);
	proc_tracker__free(s->own_procs);
	free(s);
}

/* --- output frames --------------------------------------------------------------------------- */

int sym_push(struct symbolizer *s, size_t *n, uint32_t id)
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
int sym_emit(struct symbolizer *s, size_t n, uint32_t *ret, size_t cap)
{
	size_t i, k = n < cap ? n : cap;

	if (n > cap)
		s->stats.truncated_stacks++;
	for (i = 0; i < k; i++)
		ret[i] = s->tmp[k - 1 - i];
	return (int)k;
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
	uint64_t gen = strtab__generation(s->st);

	/* ids attached to the image's symbols are of the names' generation they were made in (an
	 * image outlives a renewal in the file cache without being looked at): forgotten here */
	if (img ? img->names_gen != gen : s->vdso_names_gen != gen) {
		elfsym__clear_cookies(es);
		*(img ? &img->names_gen : &s->vdso_names_gen) = gen;
	}
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

		id = sym_intern(s, name, strlen(name), true, FRAME_NATIVE);
		if (id < 0)
			return -ENOMEM;
		/* a name refused to this process's share is not kept for the image's others */
		if (strtab__is_refused(s->st, id))
			slot = NULL;
		else
			elfsym__set_cookie(es, idx, (uint32_t)id + 1);
	}
	ids[n++] = (uint32_t)id; /* outermost first in ids[] */
	if (s->o.inline_frames && img) {
		int ni = elfsym__inlines(es, vaddr, inl, MAX_INLINE);

		for (i = 0; i < ni; i++) {
			id = sym_intern(s, inl[i], strlen(inl[i]), true, FRAME_INLINED);
			if (id < 0)
				return -ENOMEM;
			if (strtab__is_refused(s->st, id))
				slot = NULL;
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
	if (!s->o.addr_offsets && m->unknown_id >= 0)
		return m->unknown_id;
	sbuf_reset(&s->name);
	frame_format(&s->name, &(struct frame){
		.form = s->o.addr_offsets ? FRAME_FILE_OFFSET : FRAME_FILE,
		.file = base, .file_len = strlen(base), .offset = addr - m->start + m->pgoff });
	if (sbuf_error(&s->name))
		return -ENOMEM;
	id = sym_intern_name(s, true);
	if (id >= 0 && !s->o.addr_offsets)
		m->unknown_id = id;
	return id;
}

static const char *const unresolved_names[UNRESOLVED__NR] = {
	[UNRESOLVED_NO_MAPPING] = "no_mapping", [UNRESOLVED_JIT] = "jit",
	[UNRESOLVED_NOT_READ] = "not_read",	[UNRESOLVED_STRIPPED] = "stripped",
	[UNRESOLVED_NO_SYMBOL] = "no_symbol",	[UNRESOLVED_KERNEL] = "kernel",
};

const char *unresolved_reason_name(enum unresolved_reason r)
{
	return (unsigned)r < UNRESOLVED__NR ? unresolved_names[r] : "unknown";
}

/* at most @cap - 1 bytes of @src (@len of them), NUL-terminated */
static void copy_text(char *dst, size_t cap, const char *src, size_t len)
{
	if (len >= cap)
		len = cap - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

void sym_note_unresolved(struct symbolizer *s, const struct proc *p, const struct mapping *m,
			 const struct image *img, enum unresolved_reason why, const char *frame)
{
	bool file = m && m->kind == PROCMAPS_FILE;
	uint64_t dev = file ? m->dev : 0, ino = file ? m->ino : 0, least = UINT64_MAX;
	struct unresolved_file *u;
	uint32_t i, slot = 0;

	/* what the graphs show for those that are no file: "[vdso]" ("vdso+0x.."), "[unknown]" */
	if (m && m->kind == PROCMAPS_VDSO)
		frame = s->o.addr_offsets ? "vdso" : "[vdso]";
	else if (!frame)
		frame = "[unknown]";
	for (i = 0; i < s->nr_unres; i++) {
		u = &s->unres[i];
		if (u->reason == why && s->unres_dev[i] == dev && s->unres_ino[i] == ino &&
		    (file || !strcmp(u->frame, frame))) {
			u->frames++;
			return;
		}
		if (u->frames < least) {
			least = u->frames;
			slot = i;
		}
	}
	/* a new one: a free slot, else the one with the fewest frames, whose count it takes on
	 * (as the space-saving top-k does: a count is then an upper bound, never an undercount) */
	if (s->nr_unres < SYMBOLIZER_UNRESOLVED_FILES) {
		slot = s->nr_unres++;
		least = 0;
	}
	u = &s->unres[slot];
	memset(u, 0, sizeof(*u));
	s->unres_dev[slot] = dev;
	s->unres_ino[slot] = ino;
	u->reason = (uint8_t)why;
	u->frames = least + 1;
	if (file && m->base_len) {
		sbuf_reset(&s->name);
		sbuf_addf(&s->name, s->o.addr_offsets ? "%.*s" : "[%.*s]", (int)m->base_len,
			  p->paths + m->base_off);
		if (!sbuf_error(&s->name) && !sym_tidy(s)) {
			copy_text(u->frame, sizeof(u->frame), s->name.buf, s->name.len);
		}
	} else {
		copy_text(u->frame, sizeof(u->frame), frame, strlen(frame));
	}
	if (m && p && m->path_len)
		copy_text(u->path, sizeof(u->path), p->paths + m->path_off, m->path_len);
	u->deleted = m && m->deleted;
	if (img) {
		const uint8_t *bid;
		size_t n = elfsym__build_id(img->es, &bid), k;

		for (k = 0; k < n && 2 * k + 2 < sizeof(u->build_id); k++) {
			u->build_id[2 * k] = "0123456789abcdef"[bid[k] >> 4];
			u->build_id[2 * k + 1] = "0123456789abcdef"[bid[k] & 15];
		}
	}
}

/* @addr (in @m) as a virtual address of @img, the file @m maps: the bias through the image's
 * load segments found once per mapping and image, not per frame. 0 or -ENOENT (no segment). */
static int map_vaddr(const struct image *img, struct mapping *m, uint64_t addr, uint64_t *ret)
{
	if (m->bias_serial != img->serial) {
		/* the symbolizer keeps executable mappings */
		struct elfload_map em = { .start = m->start, .end = m->end, .pgoff = m->pgoff,
					  .x = true };
		uint64_t bias;

		if (elfload_bias(elfsym__load(img->es), &em, &bias))
			return -ENOENT;
		m->bias = bias;
		m->bias_serial = img->serial;
	}
	*ret = addr - m->bias;
	return 0;
}

static int user_frame(struct symbolizer *s, struct proc *p, uint64_t addr, size_t *k)
{
	struct mapping *m = find_mapping(p, addr);
	enum unresolved_reason why = UNRESOLVED_NO_MAPPING;
	struct image *img = NULL;
	bool final = false;
	int r, id;

	s->stats.user_frames++;
	if (!m && !p->gone &&
	    mono_ns() - p->maps_read_ns >= (p->reread ? MAPS_REFRESH_NS : MAPS_FIRST_REFRESH_NS)) {
		/* new code mapped since (dlopen, exec, a JIT's new region): look again */
		p->reread = true;
		(void)sym_read_maps(s, p, mono_ns());
		m = find_mapping(p, addr);
	}
	if (m && m->kind == PROCMAPS_FILE) {
		uint64_t vaddr;

		img = sym_elf_get(s, p, m);
		why = img ? UNRESOLVED_NO_SYMBOL : UNRESOLVED_NOT_READ;
		if (img && map_vaddr(img, m, addr, &vaddr) == 0) {
			final = true; /* the image has no symbol here: asking again finds none */
			r = image_frames(s, img, img->es, img->serial, vaddr, k);
			if (r)
				return r < 0 ? r : 0;
			if (!elfsym__full_symbols(img->es))
				why = UNRESOLVED_STRIPPED;
		}
	} else if (m && m->kind == PROCMAPS_VDSO) {
		struct elfsym *v = vdso_image(s);
		uint64_t vaddr;

		why = UNRESOLVED_NO_SYMBOL;
		if (v && elfsym__file_to_vaddr(v, addr - m->start, &vaddr) == 0) {
			r = image_frames(s, NULL, v, 0, vaddr, k);
			if (r)
				return r < 0 ? r : 0;
		}
	} else if (m) {
		why = m->kind == PROCMAPS_ANON ? UNRESOLVED_JIT : UNRESOLVED_NO_SYMBOL;
	}
	/* anonymous executable memory, a memfd, or nothing known: a JIT's perf map may know */
	if (!m || m->kind != PROCMAPS_SPECIAL) {
		/* an address in no mapping (even after a re-read) is mostly a garbage return
		 * address: look in the perf map already read, but do not open the file again */
		id = sym_jit_frame(s, p, addr, m != NULL || !p->nmaps);
		if (id >= 0) {
			s->stats.jit_frames++;
			s->user_not_by_file++; /* the process's own perf map named it */
			return sym_push(s, k, (uint32_t)id);
		}
		if (id == -ENOMEM)
			return id;
	}
	s->user_not_by_file++; /* "[base]" is the process's path for the file, "[unknown]" */
	s->stats.user_unresolved++;
	if (!m)
		s->stats.user_no_mapping++;
	if (!final)
		s->user_retryable++; /* no mapping, JIT code, an image not read: may resolve later */
	sym_note_unresolved(s, p, m, img, why, NULL);
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
	int r = 0;

	if (!p) {
		p = sym_proc_get(s, pid);
		/* created now, beside the image it ran before an exec (retire_before_exec()):
		 * the sample's time tells which names it */
		if (p && time_ns && s->nretired) {
			struct proc *q = sym_retired_find(s, pid, time_ns);

			if (q)
				p = q;
		}
	}
	if (!p)
		return -ENOMEM;
	s->owner_pid = pid;
	for (i = 0; i < n && r >= 0; i++) {
		if (!ips[i])
			continue;
		/* callers' entries are return addresses: look up the call instruction */
		r = user_frame(s, p, first ? ips[i] : ips[i] - 1, &k);
		first = false;
	}
	s->owner_pid = 0;
	return r < 0 ? r : sym_emit(s, k, ret, cap);
}

/* --- stacks keyed by file and offset ---------------------------------------------------------- */

/* An image serial or a vaddr past these bits: no key (the caller names it per process). */
#define KEY_SERIAL_BITS 23
#define KEY_VADDR_BITS 40
#define KEY_VDSO ((1ull << KEY_SERIAL_BITS) - 1) /* the vDSO: every process maps the same */

int symbolizer__user_keys(struct symbolizer *s, uint32_t pid, const uint64_t *ips, size_t n,
			  uint64_t *ret_keys)
{
	struct proc *p = sym_proc_find(s, pid);
	bool first = true;
	size_t i;

	/* not read yet (the first stack reads it), or replaced lately (names depend on when) */
	if (!p || symbolizer__has_retired(s, pid))
		return 0;
	for (i = 0; i < n; i++) {
		/* callers' entries are return addresses: the call instruction, as symbolizer__user */
		uint64_t addr = first ? ips[i] : ips[i] - 1, vaddr, serial;
		struct mapping *m;

		if (!ips[i]) {
			ret_keys[i] = 0;
			continue;
		}
		first = false;
		m = find_mapping(p, addr);
		if (!m)
			return 0;
		if (m->kind == PROCMAPS_VDSO) {
			serial = KEY_VDSO;
			vaddr = addr - m->start;
		} else if (m->kind == PROCMAPS_FILE) {
			struct image *img = sym_elf_peek(s, m);

			if (!img || map_vaddr(img, m, addr, &vaddr))
				return 0;
			serial = img->serial;
		} else {
			return 0; /* JIT code, a memfd: the process's perf map names it */
		}
		if (serial >= KEY_VDSO || vaddr >= 1ull << KEY_VADDR_BITS)
			return 0;
		ret_keys[i] = serial << KEY_VADDR_BITS | vaddr;
	}
	return 1;
}

uint64_t symbolizer__user_not_by_file(const struct symbolizer *s)
{
	return s->user_not_by_file;
}

/* --- stats ----------------------------------------------------------------------------------- */

static int cmp_unres(const void *a, const void *b)
{
	const struct unresolved_file *x = a, *y = b;

	return (y->frames > x->frames) - (y->frames < x->frames);
}

/* A process's names' ids of the generation that ended: looked up again. */
static void proc_names_forget(void *arg, uint32_t pid, void *state, bool ended)
{
	struct proc *p = state;
	size_t i;

	(void)arg;
	(void)pid;
	(void)ended;
	for (i = 0; i < p->nmaps; i++)
		p->maps[i].unknown_id = -1;
	if (p->pm)
		perfmap__clear_cookies(p->pm);
}

void symbolizer__names_forget(struct symbolizer *s)
{
	size_t i;

	for (i = 0; i < ADDR_CACHE_SIZE; i++)
		s->acache[i].serial = 0;
	s->unknown_id = s->kunknown_id = -1;
	s->nkr = 0;
	if (s->ks)
		ksyms__clear_cookies(s->ks);
	/* images: as each is next used (image_frames()) */
	proc_tracker__ext_each(s->procs, s->ext, proc_names_forget, NULL);
}

/* A process's bytes into *@arg. */
static void proc_mem(void *arg, uint32_t pid, void *state, bool ended)
{
	const struct proc *p = state;

	(void)pid;
	(void)ended;
	*(size_t *)arg += sizeof(*p) + p->mem_bytes + (p->pm ? perfmap__mem_bytes(p->pm) : 0);
}

void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *ret)
{
	size_t mem = sizeof(*s) + ADDR_CACHE_SIZE * sizeof(struct addr_slot) +
		     s->etab_size * sizeof(void *) + s->buf_cap + s->tmp_cap * sizeof(uint32_t) +
		     s->name.cap;
	size_t i;

	*ret = s->stats;
	ret->debuginfod = s->o.fetch != NULL;
	if (s->o.fetch)
		dbgfetch__stats(s->o.fetch, &ret->fetch);
	ret->kernel_resolver = s->o.kernel_resolve && !s->kres_failed;
	ret->kernel_functions = s->nkr;
	ret->pids_cached = s->nprocs;
	ret->elfs_cached = s->nelfs;
	proc_tracker__ext_each(s->procs, s->ext, proc_mem, &mem);
	for (i = 0; i < s->etab_size; i++) {
		const struct elfent *e;

		/* a shared image counts once over its users (the file cache's ref is none) */
		for (e = s->etab[i]; e; e = e->hnext)
			mem += sizeof(*e) + (e->img ? (sizeof(*e->img) +
						       elfsym__mem_bytes(e->img->es)) /
							      (e->img->refs - e->img->cached)
						    : 0);
	}
	if (s->ks)
		mem += ksyms__mem_bytes(s->ks);
	mem += s->kr_cap * sizeof(*s->kr) +
	       (s->kaddrs ? KRES_BATCH * (sizeof(uint64_t) + KRES_TEXT) : 0);
	ret->mem_bytes = mem;
	ret->names_bytes = strtab__mem_bytes(s->st);
	ret->names_refused = strtab__refused(s->st);
	ret->names_renewals = strtab__generation(s->st);
	/* most frames first */
	ret->nr_unresolved_files = s->nr_unres;
	memcpy(ret->unresolved_files, s->unres, s->nr_unres * sizeof(s->unres[0]));
	qsort(ret->unresolved_files, s->nr_unres, sizeof(s->unres[0]), cmp_unres);
}
