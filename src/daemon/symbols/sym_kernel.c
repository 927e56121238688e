// SPDX-License-Identifier: MIT
/* symbolizer: kernel frames, through kernel_resolve (a cache of function ranges) or kallsyms. */
#include "symbolizer_internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "ember/core/base/array.h"
#include "ember/core/base/clock.h"
#include "ember/core/base/hash.h"
#include "ember/core/base/log.h"
#include "ember/core/base/parse.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"
#include "ember/daemon/elf/keysort.h"
#include "ember/daemon/symbols/ksyms.h"

#define KSYMS_RELOAD_NS (10000 * NS_PER_MS) /* reload kallsyms on a miss at most this often */
#define KSYMS_RELOAD_MAX_NS (320000 * NS_PER_MS) /* ... backing off to this when reloads miss */
#define KRES_MAX_RANGES 65536 /* kernel functions cached */

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
				FRAME_KERNEL);
		if (id >= 0)
			ksyms__set_cookie(s->ks, idx, (uint32_t)id + 1);
		return id;
	}
	s->stats.kernel_unresolved++;
	if (mod) { /* "[module]_[k]": in a module, no symbol */
		struct frame f = { .kind = FRAME_KERNEL, .form = FRAME_FILE, .file = mod,
				   .file_len = strlen(mod) };

		sbuf_reset(&s->name);
		frame_format(&s->name, &f);
		if (sbuf_error(&s->name))
			return -ENOMEM;
		sym_note_unresolved(s, NULL, NULL, NULL, UNRESOLVED_KERNEL, s->name.buf);
		return strtab__intern(s->st, s->name.buf, s->name.len);
	}
	sym_note_unresolved(s, NULL, NULL, NULL, UNRESOLVED_KERNEL, "[unknown]_[k]");
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
		id = sym_intern(s, t, len, false, FRAME_KERNEL);
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
				sym_note_unresolved(s, NULL, NULL, NULL, UNRESOLVED_KERNEL,
						    "[unknown]_[k]");
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
