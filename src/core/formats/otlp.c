// SPDX-License-Identifier: MIT
/* otlp: samples -> gzip-compressed OTLP profiles export request (protobuf-c; gzip by core/base/gzip.c). */
#include "ember/core/formats/otlp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/otlp.pb-c.h"
#include "ember/core/base/array.h"
#include "ember/core/base/gzip.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"
#include "ember/core/base/utf8.h"
#include "ember/core/model/frame.h"

/*
 * Every table is deduplicated by interning a key of its entry's fields into a strtab of its own:
 * the strtab's ids are the table's indices (entry 0: the empty key, the zero value). Keys hold
 * each number as 5 or 10 bytes of 7 bits with the top bit set, so that no key has a NUL byte.
 */
struct key {
	size_t n;
	bool over;
	char b[8192]; /* not zeroed: keys are built on the stack per sample */
};

#define KEY_RESET(k) ((k)->n = 0, (k)->over = false)

static void key_u64(struct key *k, uint64_t v, int bytes)
{
	int i;

	if (k->n + (size_t)bytes > sizeof(k->b)) {
		k->over = true;
		return;
	}
	for (i = 0; i < bytes; i++, v >>= 7)
		k->b[k->n++] = (char)(0x80 | (v & 0x7f));
}

#define key_u32(k, v) key_u64((k), (uint32_t)(v), 5)
#define OTLP_MAX_FRAMES 1600 /* a stack's key: 5 bytes a frame */

enum attr_kind { ATTR_NONE, ATTR_STR, ATTR_INT };

struct attr {
	int32_t key; /* string index */
	enum attr_kind kind;
	int64_t v;   /* string index or the integer */
};

struct function {
	int32_t name, file;
};

struct mapping {
	int32_t file, attr;
};

struct location {
	int32_t mapping, function, attr;
	int64_t line;
	uint64_t address;
};

struct stack {
	uint32_t off, n; /* in locs_pool */
};

#define RES_STRS 8

struct resource {
	uint32_t pid;
	int32_t s[RES_STRS]; /* string indices of struct otlp_process's strings, in order */
};

struct sample {
	uint32_t res, stack;
	int32_t attrs[3];
	uint64_t *ts;
	size_t nts, cap;
};

struct table {
	struct strtab *keys;
	void *rows;
	size_t cap, elem;
};

struct otlp_writer {
	uint64_t period_ns;
	struct strtab *strs;
	struct table attrs, funcs, maps, locs, stacks, res, samples;
	int32_t *locs_pool;
	size_t pool_len, pool_cap;
	struct strtab *frames; /* frame name -> location, cached */
	int32_t *frame_loc;
	size_t frame_loc_cap;
	int32_t *scratch;
	size_t scratch_cap;
	size_t nr_samples, size;
	int32_t k_type, k_tid, k_tname, k_cpu, k_build_id;
	int32_t v_kernel, v_native, v_jit, v_python;
	int32_t t_samples, t_count, t_cpu, t_ns;
	char type[32], unit[32]; /* the period type (otlp_writer__set_type); "": cpu/nanoseconds */
	uint64_t generation;
	struct sbuf u8; /* scratch: a string made valid UTF-8 */
};

/* --- tables ------------------------------------------------------------------------------- */

static int table_init(struct table *t, size_t elem)
{
	*t = (struct table){ .elem = elem };
	t->keys = strtab__new();
	if (!t->keys || strtab__intern(t->keys, "", 0) != 0)
		return -ENOMEM;
	if (array_grow(&t->rows, &t->cap, 1, elem, 64))
		return -ENOMEM;
	memset(t->rows, 0, elem);
	return 0;
}

static void table_fini(struct table *t)
{
	strtab__free(t->keys);
	free(t->rows);
	t->keys = NULL;
	t->rows = NULL;
}

static size_t table_len(const struct table *t)
{
	return t->keys ? strtab__count(t->keys) : 0;
}

/*
 * The index of @k in @t: *ret_new tells whether it was added (the caller fills the row, zeroed
 * here). Index >= 1, or -ENOMEM.
 */
static int table_intern(struct table *t, const struct key *k, bool *ret_new)
{
	size_t before = strtab__count(t->keys);
	int id;

	if (k->over)
		return -ENOMEM;
	id = strtab__intern(t->keys, k->b, k->n);
	if (id < 0)
		return id;
	*ret_new = (size_t)id >= before;
	if (*ret_new) {
		if (array_grow(&t->rows, &t->cap, (size_t)id + 1, t->elem, 64))
			return -ENOMEM;
		memset((char *)t->rows + (size_t)id * t->elem, 0, t->elem);
	}
	return id;
}

#define ROW(t, type, i) (&((type *)(t)->rows)[i])

/* Every string goes in as valid UTF-8 (protobuf's `string`; collectors reject a request with
 * one that is not): bytes outside it by the one rule of every output (utf8.h). */
static int32_t str_idx(struct otlp_writer *w, const char *s, size_t len)
{
	size_t before = strtab__count(w->strs);
	int id;

	if (!utf8_valid(s, len)) {
		sbuf_reset(&w->u8);
		sbuf_add_utf8(&w->u8, s, len);
		if (sbuf_error(&w->u8))
			return -ENOMEM;
		s = w->u8.buf;
		len = w->u8.len;
	}
	id = strtab__intern(w->strs, s, len);

	if (id >= 0 && (size_t)id >= before)
		w->size += len + 3;
	return id;
}

static int32_t str0(struct otlp_writer *w, const char *s)
{
	return s ? str_idx(w, s, strlen(s)) : 0;
}

static int32_t attr_idx(struct otlp_writer *w, int32_t key, enum attr_kind kind, int64_t v)
{
	struct key k;
	bool added;
	int id;

	KEY_RESET(&k);
	if (key < 0 || (kind == ATTR_STR && v < 0))
		return -ENOMEM;
	key_u32(&k, key);
	key_u32(&k, kind);
	key_u64(&k, (uint64_t)v, 10);
	id = table_intern(&w->attrs, &k, &added);
	if (id > 0 && added) {
		*ROW(&w->attrs, struct attr, id) = (struct attr){ key, kind, v };
		w->size += 16;
	}
	return id;
}

/* --- frames ------------------------------------------------------------------------------- */

static int32_t mapping_idx(struct otlp_writer *w, const char *file, size_t len, int32_t attr)
{
	struct key k;
	int32_t f = str_idx(w, file, len);
	bool added;
	int id;

	KEY_RESET(&k);
	if (f < 0)
		return -ENOMEM;
	key_u32(&k, f);
	key_u32(&k, attr);
	id = table_intern(&w->maps, &k, &added);
	if (id > 0 && added) {
		*ROW(&w->maps, struct mapping, id) = (struct mapping){ f, attr };
		w->size += 16;
	}
	return id;
}

/* The location of frame @name (@proc: the build id of its executable's mapping). */
static int32_t location_of(struct otlp_writer *w, const char *name, size_t n,
			   const struct otlp_process *proc, const struct otlp_frame_loc *fl)
{
	struct location loc = { 0 };
	struct function fn = { 0 };
	struct frame f;
	struct key k;
	const char *fname, *file = NULL, *p;
	size_t flen, filelen = 0;
	int32_t type = w->v_native, fid;
	bool added;
	int id;

	KEY_RESET(&k);
	frame_parse(name, n, &f);
	fname = f.name;
	flen = f.name_len;
	if (f.waker) /* a waker's frame keeps its mark: the chain's two parts stay apart */
		flen = (size_t)(name + n - fname);
	switch (f.kind) {
	case FRAME_KERNEL:
		type = w->v_kernel;
		break;
	case FRAME_JIT: /* a Java method or JavaScript function may name its file and line */
	case FRAME_PYTHON:
		type = f.kind == FRAME_JIT ? w->v_jit : w->v_python;
		if (f.form == FRAME_SYMBOL && f.file) {
			file = f.file;
			filelen = f.file_len;
			loc.line = f.line > 0 ? f.line : 0;
		}
		break;
	case FRAME_INLINED: /* an inlined frame: a native frame of its own */
		break;
	case FRAME_NATIVE:
	default:
		if (f.form == FRAME_FILE_OFFSET) { /* symbols.addr_offsets */
			loc.address = f.offset;
			file = f.file;
			filelen = f.file_len;
		} else if (f.form == FRAME_FILE) {
			file = f.file;
			filelen = f.file_len;
		}
		if (!file && f.form == FRAME_SYMBOL && fl && fl->file && fl->file[0]) {
			/* a symbolized native frame: its function's start in the mapped file */
			int32_t battr = 0;

			if (fl->build_id && fl->build_id[0])
				battr = attr_idx(w, w->k_build_id, ATTR_STR, str0(w, fl->build_id));
			if (battr < 0)
				return -ENOMEM;
			loc.mapping = mapping_idx(w, fl->file, strlen(fl->file), battr);
			if (loc.mapping < 0)
				return -ENOMEM;
			loc.address = fl->offset;
		}
		if (file) {
			const char *slash = NULL;
			int32_t battr = 0;

			for (p = file; p < file + filelen; p++)
				if (*p == '/')
					slash = p;
			/* the executable's mapping carries its build id */
			if (proc->build_id && proc->build_id[0] && proc->exe_path &&
			    ((filelen == strlen(proc->exe_path) &&
			      !memcmp(file, proc->exe_path, filelen)) ||
			     (!slash && proc->exe_name && filelen == strlen(proc->exe_name) &&
			      !memcmp(file, proc->exe_name, filelen))))
				battr = attr_idx(w, w->k_build_id, ATTR_STR, str0(w, proc->build_id));
			if (battr < 0)
				return -ENOMEM;
			loc.mapping = mapping_idx(w, file, filelen, battr);
			if (loc.mapping < 0)
				return -ENOMEM;
			file = NULL; /* a native file is the mapping's, not the function's */
		}
		break;
	}
	fn.name = str_idx(w, fname, flen);
	fn.file = file ? str_idx(w, file, filelen) : 0;
	if (fn.name < 0 || fn.file < 0)
		return -ENOMEM;
	key_u32(&k, fn.name);
	key_u32(&k, fn.file);
	fid = table_intern(&w->funcs, &k, &added);
	if (fid < 0)
		return fid;
	if (added) {
		*ROW(&w->funcs, struct function, fid) = fn;
		w->size += 14;
	}
	loc.function = fid;
	loc.attr = attr_idx(w, w->k_type, ATTR_STR, type);
	if (loc.attr < 0)
		return -ENOMEM;
	k.n = 0;
	key_u32(&k, loc.mapping);
	key_u32(&k, loc.function);
	key_u32(&k, loc.attr);
	key_u64(&k, (uint64_t)loc.line, 10);
	key_u64(&k, loc.address, 10);
	id = table_intern(&w->locs, &k, &added);
	if (id > 0 && added) {
		*ROW(&w->locs, struct location, id) = loc;
		w->size += 30;
	}
	return id;
}

/* --- writer ------------------------------------------------------------------------------- */

static void writer_reset(struct otlp_writer *w)
{
	size_t i;

	if (w->samples.rows)
		for (i = 1; i < table_len(&w->samples); i++)
			free(ROW(&w->samples, struct sample, i)->ts);
	strtab__free(w->strs);
	strtab__free(w->frames);
	table_fini(&w->attrs);
	table_fini(&w->funcs);
	table_fini(&w->maps);
	table_fini(&w->locs);
	table_fini(&w->stacks);
	table_fini(&w->res);
	table_fini(&w->samples);
	w->strs = w->frames = NULL;
	w->pool_len = 0;
	w->nr_samples = 0;
	w->size = 0;
}

static int writer_start(struct otlp_writer *w)
{
	w->strs = strtab__new();
	w->frames = strtab__new();
	if (!w->strs || !w->frames || strtab__intern(w->strs, "", 0) != 0 ||
	    table_init(&w->attrs, sizeof(struct attr)) ||
	    table_init(&w->funcs, sizeof(struct function)) ||
	    table_init(&w->maps, sizeof(struct mapping)) ||
	    table_init(&w->locs, sizeof(struct location)) ||
	    table_init(&w->stacks, sizeof(struct stack)) ||
	    table_init(&w->res, sizeof(struct resource)) ||
	    table_init(&w->samples, sizeof(struct sample)))
		return -ENOMEM;
	w->k_type = str0(w, "profile.frame.type");
	w->k_tid = str0(w, "thread.id");
	w->k_tname = str0(w, "thread.name");
	w->k_cpu = str0(w, "cpu.logical_number");
	w->k_build_id = str0(w, "process.executable.build_id.gnu");
	w->v_kernel = str0(w, "kernel");
	w->v_native = str0(w, "native");
	w->v_jit = str0(w, "jit");
	w->v_python = str0(w, "cpython");
	w->t_samples = str0(w, "samples");
	w->t_count = str0(w, "count");
	w->t_cpu = str0(w, w->type[0] ? w->type : "cpu");
	w->t_ns = str0(w, w->unit[0] ? w->unit : "nanoseconds");
	if (w->t_samples < 0 || w->t_count < 0 || w->t_cpu < 0 || w->t_ns < 0 ||
	    w->k_type < 0 || w->k_tid < 0 || w->k_tname < 0 || w->k_cpu < 0 ||
	    w->k_build_id < 0 || w->v_kernel < 0 || w->v_native < 0 || w->v_jit < 0 ||
	    w->v_python < 0)
		return -ENOMEM;
	w->size = 256;
	return 0;
}

struct otlp_writer *otlp_writer__new(uint64_t freq_hz)
{
	struct otlp_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	sbuf_init(&w->u8);
	w->period_ns = 1000000000ULL / (freq_hz ? freq_hz : 1);
	if (!w->period_ns)
		w->period_ns = 1;
	if (writer_start(w)) {
		otlp_writer__free(w);
		errno = ENOMEM;
		return NULL;
	}
	return w;
}

int otlp_writer__set_type(struct otlp_writer *w, const char *type, const char *unit,
			  uint64_t period)
{
	if (!type || !unit || !*type || !*unit || strlen(type) >= sizeof(w->type) ||
	    strlen(unit) >= sizeof(w->unit) || !period || otlp_writer__samples(w))
		return -EINVAL;
	strcpy(w->type, type);
	strcpy(w->unit, unit);
	w->period_ns = period;
	w->t_cpu = str0(w, w->type);
	w->t_ns = str0(w, w->unit);
	return w->t_cpu < 0 || w->t_ns < 0 ? -ENOMEM : 0;
}

void otlp_writer__free(struct otlp_writer *w)
{
	if (!w)
		return;
	writer_reset(w);
	free(w->locs_pool);
	free(w->frame_loc);
	free(w->scratch);
	sbuf_fini(&w->u8);
	free(w);
}

size_t otlp_writer__samples(const struct otlp_writer *w)
{
	return w->nr_samples;
}

size_t otlp_writer__size(const struct otlp_writer *w)
{
	return w->size;
}

static int32_t resource_of(struct otlp_writer *w, const struct otlp_process *p)
{
	const char *s[RES_STRS] = { p->exe_name, p->exe_path,	  p->build_id,	  p->container_id,
				    p->pod_uid,	 p->unit,	  p->service_name, p->host_name };
	struct resource r = { .pid = p->pid };
	struct key k;
	bool added;
	int i, id;

	KEY_RESET(&k);
	key_u32(&k, p->pid);
	for (i = 0; i < RES_STRS; i++) {
		r.s[i] = str0(w, s[i] && *s[i] ? s[i] : NULL);
		if (r.s[i] < 0)
			return -ENOMEM;
		key_u32(&k, r.s[i]);
	}
	id = table_intern(&w->res, &k, &added);
	if (id > 0 && added) {
		*ROW(&w->res, struct resource, id) = r;
		w->size += 300;
	}
	return id;
}

uint64_t otlp_writer__generation(const struct otlp_writer *w)
{
	return w->generation;
}

static int add_ts(struct otlp_writer *w, struct sample *sm, uint64_t time_ns)
{
	if (array_grow((void **)&sm->ts, &sm->cap, sm->nts + 1, sizeof(*sm->ts), 4))
		return -ENOMEM;
	sm->ts[sm->nts++] = time_ns;
	w->nr_samples++;
	w->size += 10;
	return 0;
}

int otlp_writer__add_again(struct otlp_writer *w, uint32_t handle, uint64_t time_ns)
{
	if (!handle || handle >= table_len(&w->samples))
		return -EINVAL;
	return add_ts(w, ROW(&w->samples, struct sample, handle), time_ns);
}

int otlp_writer__add(struct otlp_writer *w, const struct otlp_process *proc, uint64_t time_ns,
		     uint32_t tid, const char *thread_name, uint32_t cpu, const char *const *frames,
		     size_t n)
{
	uint32_t h;

	return otlp_writer__add_ret(w, proc, time_ns, tid, thread_name, cpu, frames, n, &h);
}

int otlp_writer__add_ret(struct otlp_writer *w, const struct otlp_process *proc,
			 uint64_t time_ns, uint32_t tid, const char *thread_name, uint32_t cpu,
			 const char *const *frames, size_t n, uint32_t *ret_handle)
{
	return otlp_writer__add_locs(w, proc, time_ns, tid, thread_name, cpu, frames, NULL, n,
				     ret_handle);
}

int otlp_writer__add_locs(struct otlp_writer *w, const struct otlp_process *proc,
			  uint64_t time_ns, uint32_t tid, const char *thread_name, uint32_t cpu,
			  const char *const *frames, const struct otlp_frame_loc *locs, size_t n,
			  uint32_t *ret_handle)
{
	struct key k;
	struct sample *sm;
	int32_t res, stack, loc, a[3] = { 0, 0, 0 };
	size_t i, before;
	bool added;
	int fid, sid;

	KEY_RESET(&k);
	if (n > OTLP_MAX_FRAMES) { /* the leaf-most ones */
		frames += n - OTLP_MAX_FRAMES;
		if (locs)
			locs += n - OTLP_MAX_FRAMES;
		n = OTLP_MAX_FRAMES;
	}
	res = resource_of(w, proc);
	if (res < 0)
		return -ENOMEM;
	if (array_grow((void **)&w->scratch, &w->scratch_cap, n + 1, sizeof(*w->scratch), 128))
		return -ENOMEM;
	for (i = 0; i < n; i++) { /* leaf first */
		const char *f = frames[n - 1 - i];
		size_t fl = strlen(f);

		const struct otlp_frame_loc *fl_i = locs ? &locs[n - 1 - i] : NULL;

		/* the cache is per name; the executable's build id makes "exe+0x.." per process,
		 * and a frame's own file makes its location, so those skip it */
		before = strtab__count(w->frames);
		fid = strtab__intern(w->frames, f, fl);
		if (fid < 0)
			return -ENOMEM;
		if (array_grow((void **)&w->frame_loc, &w->frame_loc_cap, (size_t)fid + 1,
			       sizeof(*w->frame_loc), 256))
			return -ENOMEM;
		if ((size_t)fid >= before)
			w->frame_loc[fid] = -1;
		loc = fl_i && fl_i->file && fl_i->file[0] ? -1 : w->frame_loc[fid];
		if (loc < 0) {
			loc = location_of(w, f, fl, proc, fl_i);
			if (loc < 0)
				return -ENOMEM;
			if (!ROW(&w->locs, struct location, loc)->mapping)
				w->frame_loc[fid] = loc;
		}
		w->scratch[i] = loc;
		key_u32(&k, loc);
	}
	stack = table_intern(&w->stacks, &k, &added);
	if (stack < 0)
		return -ENOMEM;
	if (added) {
		if (array_grow((void **)&w->locs_pool, &w->pool_cap, w->pool_len + n,
			       sizeof(*w->locs_pool), 1024))
			return -ENOMEM;
		memcpy(w->locs_pool + w->pool_len, w->scratch, n * sizeof(*w->scratch));
		*ROW(&w->stacks, struct stack, stack) =
			(struct stack){ .off = (uint32_t)w->pool_len, .n = (uint32_t)n };
		w->pool_len += n;
		w->size += 3 + 3 * n;
	}
	a[0] = attr_idx(w, w->k_tid, ATTR_INT, tid);
	a[1] = attr_idx(w, w->k_tname, ATTR_STR, str0(w, thread_name ? thread_name : ""));
	a[2] = cpu == UINT32_MAX ? 0 : attr_idx(w, w->k_cpu, ATTR_INT, cpu);
	if (a[0] < 0 || a[1] < 0 || a[2] < 0)
		return -ENOMEM;
	k.n = 0;
	key_u32(&k, res);
	key_u32(&k, stack);
	for (i = 0; i < 3; i++)
		key_u32(&k, a[i]);
	sid = table_intern(&w->samples, &k, &added);
	if (sid < 0)
		return -ENOMEM;
	sm = ROW(&w->samples, struct sample, sid);
	if (added) {
		sm->res = (uint32_t)res;
		sm->stack = (uint32_t)stack;
		memcpy(sm->attrs, a, sizeof(a));
		w->size += 24;
	}
	*ret_handle = (uint32_t)sid;
	return add_ts(w, sm, time_ns);
}

/* --- encoding ----------------------------------------------------------------------------- */

/* Packs @req, gzip-compressed or not, onto @out. 0 or -ENOMEM. */
static int pack_request(const Ember__Otlp__ExportProfilesServiceRequest *req, bool gzip,
			struct sbuf *out)
{
	size_t len = ember__otlp__export_profiles_service_request__get_packed_size(req);
	uint8_t *buf = malloc(len ? len : 1);
	int r = 0;

	if (!buf)
		return -ENOMEM;
	ember__otlp__export_profiles_service_request__pack(req, buf);
	if (gzip) {
		r = gzip_compress(buf, len, 1, out);
	} else {
		sbuf_add(out, buf, len);
		r = sbuf_error(out) ? -ENOMEM : 0;
	}
	free(buf);
	return r;
}

/* All the messages of one request, in arrays freed together. */
struct enc {
	Ember__Otlp__ExportProfilesServiceRequest req;
	Ember__Otlp__ProfilesDictionary dict;
	Ember__Otlp__Mapping *maps, **mapp;
	Ember__Otlp__Location *locs, **locp;
	Ember__Otlp__Line *lines, **linep;
	Ember__Otlp__Function *fns, **fnp;
	Ember__Otlp__Link link0, *linkp[1];
	Ember__Otlp__KeyValueAndUnit *attrs, **attrp;
	Ember__Otlp__AnyValue *avals;
	Ember__Otlp__Stack *stacks, **stackp;
	char **strs;
	Ember__Otlp__ResourceProfiles *rps, **rpp;
	Ember__Otlp__Resource *rs;
	Ember__Otlp__KeyValue *kvs, **kvp;
	Ember__Otlp__AnyValue *kvals;
	Ember__Otlp__ScopeProfiles *sps, **spp;
	Ember__Otlp__InstrumentationScope scope;
	Ember__Otlp__Profile *profs, **profp;
	Ember__Otlp__ValueType st, pt;
	Ember__Otlp__Sample *smps, **smpp;
	int64_t *ones;
	int32_t *sattrs;
	uint8_t *ids;
};

static void enc_fini(struct enc *e)
{
	free(e->maps);
	free(e->mapp);
	free(e->locs);
	free(e->locp);
	free(e->lines);
	free(e->linep);
	free(e->fns);
	free(e->fnp);
	free(e->attrs);
	free(e->attrp);
	free(e->avals);
	free(e->stacks);
	free(e->stackp);
	free(e->strs);
	free(e->rps);
	free(e->rpp);
	free(e->rs);
	free(e->kvs);
	free(e->kvp);
	free(e->kvals);
	free(e->sps);
	free(e->spp);
	free(e->profs);
	free(e->profp);
	free(e->smps);
	free(e->smpp);
	free(e->ones);
	free(e->sattrs);
	free(e->ids);
}

#define ALLOC(p, n) ((p) = calloc((n) > 0 ? (size_t)(n) : 1, sizeof(*(p))))

static const char *const res_keys[RES_STRS] = {
	"process.executable.name", "process.executable.path", "process.executable.build_id.gnu",
	"container.id",		   "k8s.pod.uid",	      "ember.systemd.unit",
	"service.name",		   "host.name",
};

int otlp_writer__finish(struct otlp_writer *w, uint64_t start_ns, uint64_t end_ns, bool gzip,
			struct sbuf *out)
{
	size_t nm = table_len(&w->maps), nl = table_len(&w->locs), nf = table_len(&w->funcs);
	size_t na = table_len(&w->attrs), nst = table_len(&w->stacks), ns = strtab__count(w->strs);
	size_t nr = table_len(&w->res), nsm = table_len(&w->samples), i, j, kv = 0, maxts = 0;
	struct enc e = { 0 };
	size_t *per_res = NULL, *fill = NULL;
	int r = -ENOMEM;

	for (i = 1; i < nsm; i++)
		if (ROW(&w->samples, struct sample, i)->nts > maxts)
			maxts = ROW(&w->samples, struct sample, i)->nts;
	if (!ALLOC(e.maps, nm) || !ALLOC(e.mapp, nm) || !ALLOC(e.locs, nl) || !ALLOC(e.locp, nl) ||
	    !ALLOC(e.lines, nl) || !ALLOC(e.linep, nl) || !ALLOC(e.fns, nf) || !ALLOC(e.fnp, nf) ||
	    !ALLOC(e.attrs, na) || !ALLOC(e.attrp, na) || !ALLOC(e.avals, na) ||
	    !ALLOC(e.stacks, nst) || !ALLOC(e.stackp, nst) || !ALLOC(e.strs, ns) ||
	    !ALLOC(e.rps, nr) || !ALLOC(e.rpp, nr) || !ALLOC(e.rs, nr) ||
	    !ALLOC(e.kvs, nr * (RES_STRS + 1)) || !ALLOC(e.kvp, nr * (RES_STRS + 1)) ||
	    !ALLOC(e.kvals, nr * (RES_STRS + 1)) || !ALLOC(e.sps, nr) || !ALLOC(e.spp, nr) ||
	    !ALLOC(e.profs, nr) || !ALLOC(e.profp, nr) || !ALLOC(e.smps, nsm) ||
	    !ALLOC(e.smpp, nsm) || !ALLOC(e.ones, maxts) || !ALLOC(e.sattrs, nsm * 3) ||
	    !ALLOC(e.ids, nr * 16) || !ALLOC(per_res, nr) || !ALLOC(fill, nr))
		goto out;
	for (i = 0; i < maxts; i++)
		e.ones[i] = 1;
	/* the dictionary: entry 0 of each table is the zero value */
	for (i = 0; i < nm; i++) {
		const struct mapping *m = ROW(&w->maps, struct mapping, i);

		ember__otlp__mapping__init(&e.maps[i]);
		e.maps[i].filename_strindex = m->file;
		if (m->attr) {
			e.maps[i].n_attribute_indices = 1;
			e.maps[i].attribute_indices = (int32_t *)&m->attr;
		}
		e.mapp[i] = &e.maps[i];
	}
	for (i = 0; i < nl; i++) {
		const struct location *l = ROW(&w->locs, struct location, i);

		ember__otlp__location__init(&e.locs[i]);
		e.locp[i] = &e.locs[i];
		if (!i)
			continue;
		e.locs[i].mapping_index = l->mapping;
		e.locs[i].address = l->address;
		ember__otlp__line__init(&e.lines[i]);
		e.lines[i].function_index = l->function;
		e.lines[i].line = l->line;
		e.linep[i] = &e.lines[i];
		e.locs[i].n_lines = 1;
		e.locs[i].lines = &e.linep[i];
		if (l->attr) {
			e.locs[i].n_attribute_indices = 1;
			e.locs[i].attribute_indices = (int32_t *)&l->attr;
		}
	}
	for (i = 0; i < nf; i++) {
		const struct function *f = ROW(&w->funcs, struct function, i);

		ember__otlp__function__init(&e.fns[i]);
		e.fns[i].name_strindex = f->name;
		e.fns[i].system_name_strindex = f->name;
		e.fns[i].filename_strindex = f->file;
		e.fnp[i] = &e.fns[i];
	}
	for (i = 0; i < na; i++) {
		const struct attr *a = ROW(&w->attrs, struct attr, i);

		ember__otlp__key_value_and_unit__init(&e.attrs[i]);
		e.attrp[i] = &e.attrs[i];
		if (!i)
			continue;
		ember__otlp__any_value__init(&e.avals[i]);
		e.attrs[i].key_strindex = a->key;
		if (a->kind == ATTR_STR) {
			e.avals[i].value_case = EMBER__OTLP__ANY_VALUE__VALUE_STRING_VALUE;
			e.avals[i].string_value = (char *)strtab__str(w->strs, (uint32_t)a->v);
		} else {
			e.avals[i].value_case = EMBER__OTLP__ANY_VALUE__VALUE_INT_VALUE;
			e.avals[i].int_value = a->v;
		}
		e.attrs[i].value = &e.avals[i];
	}
	for (i = 0; i < nst; i++) {
		const struct stack *s = ROW(&w->stacks, struct stack, i);

		ember__otlp__stack__init(&e.stacks[i]);
		e.stacks[i].n_location_indices = s->n;
		e.stacks[i].location_indices = s->n ? w->locs_pool + s->off : NULL;
		e.stackp[i] = &e.stacks[i];
	}
	for (i = 0; i < ns; i++)
		e.strs[i] = (char *)strtab__str(w->strs, (uint32_t)i);
	ember__otlp__link__init(&e.link0);
	e.linkp[0] = &e.link0;
	ember__otlp__profiles_dictionary__init(&e.dict);
	e.dict.n_mapping_table = nm;
	e.dict.mapping_table = e.mapp;
	e.dict.n_location_table = nl;
	e.dict.location_table = e.locp;
	e.dict.n_function_table = nf;
	e.dict.function_table = e.fnp;
	e.dict.n_link_table = 1;
	e.dict.link_table = e.linkp;
	e.dict.n_string_table = ns;
	e.dict.string_table = e.strs;
	e.dict.n_attribute_table = na;
	e.dict.attribute_table = e.attrp;
	e.dict.n_stack_table = nst;
	e.dict.stack_table = e.stackp;

	/* samples by resource */
	for (i = 1; i < nsm; i++)
		per_res[ROW(&w->samples, struct sample, i)->res]++;
	for (i = 1, j = 0; i < nr; i++) {
		fill[i] = j;
		j += per_res[i];
	}
	for (i = 1; i < nsm; i++) {
		const struct sample *s = ROW(&w->samples, struct sample, i);
		Ember__Otlp__Sample *o = &e.smps[fill[s->res]];
		size_t a;

		ember__otlp__sample__init(o);
		o->stack_index = (int32_t)s->stack;
		for (a = 0; a < 3; a++)
			if (s->attrs[a])
				e.sattrs[(i - 1) * 3 + o->n_attribute_indices++] = s->attrs[a];
		o->attribute_indices = &e.sattrs[(i - 1) * 3];
		o->n_values = s->nts;
		o->values = e.ones;
		o->n_timestamps_unix_nano = s->nts;
		o->timestamps_unix_nano = s->ts;
		e.smpp[fill[s->res]++] = o;
	}
	ember__otlp__value_type__init(&e.st);
	ember__otlp__value_type__init(&e.pt);
	e.st.type_strindex = w->t_samples;
	e.st.unit_strindex = w->t_count;
	e.pt.type_strindex = w->t_cpu;
	e.pt.unit_strindex = w->t_ns;
	ember__otlp__instrumentation_scope__init(&e.scope);
	e.scope.name = "ember";
	for (i = 1, j = 0; i < nr; i++) {
		const struct resource *rs = ROW(&w->res, struct resource, i);
		Ember__Otlp__ResourceProfiles *rp = &e.rps[i - 1];
		Ember__Otlp__Profile *p = &e.profs[i - 1];
		size_t k, first = kv;
		uint64_t h = 1469598103934665603ULL ^ start_ns;

		ember__otlp__resource_profiles__init(rp);
		ember__otlp__resource__init(&e.rs[i - 1]);
		ember__otlp__scope_profiles__init(&e.sps[i - 1]);
		ember__otlp__profile__init(p);
		/* process.pid first, then the strings that are set */
		ember__otlp__key_value__init(&e.kvs[kv]);
		ember__otlp__any_value__init(&e.kvals[kv]);
		e.kvs[kv].key = "process.pid";
		e.kvals[kv].value_case = EMBER__OTLP__ANY_VALUE__VALUE_INT_VALUE;
		e.kvals[kv].int_value = rs->pid;
		e.kvs[kv].value = &e.kvals[kv];
		e.kvp[kv] = &e.kvs[kv];
		kv++;
		for (k = 0; k < RES_STRS; k++) {
			if (!rs->s[k])
				continue;
			ember__otlp__key_value__init(&e.kvs[kv]);
			ember__otlp__any_value__init(&e.kvals[kv]);
			e.kvs[kv].key = (char *)res_keys[k];
			e.kvals[kv].value_case = EMBER__OTLP__ANY_VALUE__VALUE_STRING_VALUE;
			e.kvals[kv].string_value = (char *)strtab__str(w->strs, (uint32_t)rs->s[k]);
			e.kvs[kv].value = &e.kvals[kv];
			e.kvp[kv] = &e.kvs[kv];
			kv++;
		}
		e.rs[i - 1].n_attributes = kv - first;
		e.rs[i - 1].attributes = &e.kvp[first];
		rp->resource = &e.rs[i - 1];
		p->sample_type = &e.st;
		p->period_type = &e.pt;
		p->period = (int64_t)w->period_ns;
		p->time_unix_nano = start_ns;
		p->duration_nano = end_ns > start_ns ? end_ns - start_ns : 0;
		/* a profile id that is not all zeroes: FNV-1a of the window and the pid */
		for (k = 0; k < 16; k++) {
			h ^= (k < 8 ? rs->pid : i) + k;
			h *= 1099511628211ULL;
			e.ids[(i - 1) * 16 + k] = (uint8_t)(h >> 56) | 1;
		}
		p->profile_id.len = 16;
		p->profile_id.data = &e.ids[(i - 1) * 16];
		p->n_samples = per_res[i];
		p->samples = &e.smpp[j];
		j += per_res[i];
		e.profp[i - 1] = p;
		e.sps[i - 1].scope = &e.scope;
		e.sps[i - 1].n_profiles = 1;
		e.sps[i - 1].profiles = &e.profp[i - 1];
		e.spp[i - 1] = &e.sps[i - 1];
		rp->n_scope_profiles = 1;
		rp->scope_profiles = &e.spp[i - 1];
		e.rpp[i - 1] = rp;
	}
	ember__otlp__export_profiles_service_request__init(&e.req);
	e.req.n_resource_profiles = nr - 1;
	e.req.resource_profiles = e.rpp;
	e.req.dictionary = &e.dict;
	r = pack_request(&e.req, gzip, out);
out:
	enc_fini(&e);
	free(per_res);
	free(fill);
	if (!r) {
		writer_reset(w);
		r = writer_start(w);
		w->generation++;
	}
	return r;
}

/* --- reading back: split and count -------------------------------------------------------- */

#define MAX_BODY (1u << 30)

static Ember__Otlp__ExportProfilesServiceRequest *unpack_gz(const void *body, size_t len)
{
	Ember__Otlp__ExportProfilesServiceRequest *req = NULL;
	struct sbuf sb;

	sbuf_init(&sb);
	if (!gzip_inflate(body, len, MAX_BODY, &sb, NULL))
		req = ember__otlp__export_profiles_service_request__unpack(NULL, sb.len,
									   (uint8_t *)sb.buf);
	sbuf_fini(&sb);
	return req;
}

int otlp_count(const void *body, size_t len, size_t *ret_resources, size_t *ret_samples)
{
	Ember__Otlp__ExportProfilesServiceRequest *req = unpack_gz(body, len);
	size_t i, j, k, n = 0;

	if (!req)
		return -EINVAL;
	for (i = 0; i < req->n_resource_profiles; i++)
		for (j = 0; j < req->resource_profiles[i]->n_scope_profiles; j++) {
			Ember__Otlp__ScopeProfiles *sp = req->resource_profiles[i]->scope_profiles[j];

			for (k = 0; k < sp->n_profiles; k++) {
				size_t s;

				for (s = 0; s < sp->profiles[k]->n_samples; s++)
					n += sp->profiles[k]->samples[s]->n_timestamps_unix_nano;
			}
		}
	*ret_resources = req->n_resource_profiles;
	*ret_samples = n;
	ember__otlp__export_profiles_service_request__free_unpacked(req, NULL);
	return 0;
}

/*
 * A split half keeps only the dictionary entries its samples use (else the halves of a message
 * whose dictionary is most of it would never get smaller): every index is renumbered, entry 0
 * stays the zero value. Packs @req (whose resource profiles are the half) gzip-compressed onto
 * @out. 0 or -ENOMEM.
 */
struct remap {
	int32_t *map; /* old index -> new, -1: unused */
	size_t n, used;
};

static int remap_init(struct remap *m, size_t n)
{
	size_t i;

	m->n = n;
	m->used = n ? 1 : 0;
	m->map = malloc((n ? n : 1) * sizeof(*m->map));
	if (!m->map)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		m->map[i] = -1;
	if (n)
		m->map[0] = 0;
	return 0;
}

/* Marks @i used (out of range: 0). Returns its new index. */
static int32_t remap_use(struct remap *m, int32_t i)
{
	if (i <= 0 || (size_t)i >= m->n)
		return 0;
	if (m->map[i] < 0)
		m->map[i] = (int32_t)m->used++;
	return m->map[i];
}

static int pack_pruned(Ember__Otlp__ExportProfilesServiceRequest *req, struct sbuf *out)
{
	const Ember__Otlp__ProfilesDictionary *d = req->dictionary;
	Ember__Otlp__ProfilesDictionary nd;
	struct remap ms = { 0 }, ml = { 0 }, mf = { 0 }, ma = { 0 }, mk = { 0 }, mstr = { 0 };
	Ember__Otlp__Mapping *maps = NULL, **mapp = NULL;
	Ember__Otlp__Location *locs = NULL, **locp = NULL;
	Ember__Otlp__Line *lines = NULL, **linep = NULL;
	Ember__Otlp__Function *fns = NULL, **fnp = NULL;
	Ember__Otlp__KeyValueAndUnit *attrs = NULL, **attrp = NULL;
	Ember__Otlp__Stack *stacks = NULL, **stackp = NULL;
	char **strs = NULL;
	int32_t *ints = NULL;
	size_t nints = 0, used = 0, i, j, k, x;
	Ember__Otlp__Sample **saved_s = NULL;
	int32_t *saved_vals = NULL;
	size_t nsaved = 0, sv = 0, np = 0, pv = 0;
	int32_t *saved_pt = NULL;
	int r = -ENOMEM;

	if (remap_init(&ms, d->n_stack_table) || remap_init(&ml, d->n_location_table) ||
	    remap_init(&mf, d->n_function_table) || remap_init(&mk, d->n_mapping_table) ||
	    remap_init(&ma, d->n_attribute_table) || remap_init(&mstr, d->n_string_table))
		goto out;
	/* what the samples use, in order of first use */
	for (i = 0; i < req->n_resource_profiles; i++)
		for (j = 0; j < req->resource_profiles[i]->n_scope_profiles; j++) {
			Ember__Otlp__ScopeProfiles *sp = req->resource_profiles[i]->scope_profiles[j];

			for (k = 0; k < sp->n_profiles; k++) {
				Ember__Otlp__Profile *p = sp->profiles[k];

				np++;
				(void)remap_use(&mstr, p->sample_type->type_strindex);
				(void)remap_use(&mstr, p->sample_type->unit_strindex);
				(void)remap_use(&mstr, p->period_type->type_strindex);
				(void)remap_use(&mstr, p->period_type->unit_strindex);
				for (x = 0; x < p->n_samples; x++) {
					Ember__Otlp__Sample *sm = p->samples[x];
					size_t a;

					(void)remap_use(&ms, sm->stack_index);
					for (a = 0; a < sm->n_attribute_indices; a++)
						(void)remap_use(&ma, sm->attribute_indices[a]);
					nsaved += 1 + sm->n_attribute_indices;
				}
			}
		}
	for (i = 1; i < ms.n; i++) {
		const Ember__Otlp__Stack *st = d->stack_table[i];

		if (ms.map[i] < 0)
			continue;
		for (x = 0; x < st->n_location_indices; x++)
			(void)remap_use(&ml, st->location_indices[x]);
		nints += st->n_location_indices;
	}
	for (i = 1; i < ml.n; i++) {
		const Ember__Otlp__Location *l = d->location_table[i];

		if (ml.map[i] < 0)
			continue;
		(void)remap_use(&mk, l->mapping_index);
		for (x = 0; x < l->n_lines; x++)
			(void)remap_use(&mf, l->lines[x]->function_index);
		for (x = 0; x < l->n_attribute_indices; x++)
			(void)remap_use(&ma, l->attribute_indices[x]);
		nints += l->n_attribute_indices + l->n_lines;
	}
	for (i = 1; i < mk.n; i++) {
		const Ember__Otlp__Mapping *m = d->mapping_table[i];

		if (mk.map[i] < 0)
			continue;
		(void)remap_use(&mstr, m->filename_strindex);
		for (x = 0; x < m->n_attribute_indices; x++)
			(void)remap_use(&ma, m->attribute_indices[x]);
		nints += m->n_attribute_indices;
	}
	for (i = 1; i < mf.n; i++) {
		const Ember__Otlp__Function *f = d->function_table[i];

		if (mf.map[i] < 0)
			continue;
		(void)remap_use(&mstr, f->name_strindex);
		(void)remap_use(&mstr, f->system_name_strindex);
		(void)remap_use(&mstr, f->filename_strindex);
	}
	for (i = 1; i < ma.n; i++)
		if (ma.map[i] >= 0) {
			(void)remap_use(&mstr, d->attribute_table[i]->key_strindex);
			(void)remap_use(&mstr, d->attribute_table[i]->unit_strindex);
		}
	/* the new tables: shallow copies with renumbered indices */
	if (!ALLOC(maps, mk.used) || !ALLOC(mapp, mk.used) || !ALLOC(locs, ml.used) ||
	    !ALLOC(locp, ml.used) || !ALLOC(lines, nints + 1) || !ALLOC(linep, nints + 1) ||
	    !ALLOC(fns, mf.used) || !ALLOC(fnp, mf.used) || !ALLOC(attrs, ma.used) ||
	    !ALLOC(attrp, ma.used) || !ALLOC(stacks, ms.used) || !ALLOC(stackp, ms.used) ||
	    !ALLOC(strs, mstr.used) || !ALLOC(ints, 2 * nints + 1) ||
	    !ALLOC(saved_s, nsaved + 1) || !ALLOC(saved_vals, nsaved + 1) ||
	    !ALLOC(saved_pt, 4 * np + 1))
		goto out;
	for (i = 0; i < mstr.n; i++)
		if (mstr.map[i] >= 0)
			strs[mstr.map[i]] = d->string_table[i];
	for (i = 0; i < mk.n; i++) {
		if (mk.map[i] < 0)
			continue;
		maps[mk.map[i]] = *d->mapping_table[i];
		maps[mk.map[i]].filename_strindex = remap_use(&mstr, d->mapping_table[i]->filename_strindex);
		maps[mk.map[i]].attribute_indices = ints + used;
		for (x = 0; x < d->mapping_table[i]->n_attribute_indices; x++)
			ints[used++] = remap_use(&ma, d->mapping_table[i]->attribute_indices[x]);
		mapp[mk.map[i]] = &maps[mk.map[i]];
	}
	for (i = 0, k = 0; i < ml.n; i++) {
		const Ember__Otlp__Location *l = d->location_table[i];
		Ember__Otlp__Location *nl;

		if (ml.map[i] < 0)
			continue;
		nl = &locs[ml.map[i]];
		*nl = *l;
		nl->mapping_index = remap_use(&mk, l->mapping_index);
		nl->lines = &linep[k];
		for (x = 0; x < l->n_lines; x++, k++) {
			lines[k] = *l->lines[x];
			lines[k].function_index = remap_use(&mf, l->lines[x]->function_index);
			linep[k] = &lines[k];
		}
		nl->attribute_indices = ints + used;
		for (x = 0; x < l->n_attribute_indices; x++)
			ints[used++] = remap_use(&ma, l->attribute_indices[x]);
		locp[ml.map[i]] = nl;
	}
	for (i = 0; i < mf.n; i++) {
		const Ember__Otlp__Function *f = d->function_table[i];

		if (mf.map[i] < 0)
			continue;
		fns[mf.map[i]] = *f;
		fns[mf.map[i]].name_strindex = remap_use(&mstr, f->name_strindex);
		fns[mf.map[i]].system_name_strindex = remap_use(&mstr, f->system_name_strindex);
		fns[mf.map[i]].filename_strindex = remap_use(&mstr, f->filename_strindex);
		fnp[mf.map[i]] = &fns[mf.map[i]];
	}
	for (i = 0; i < ma.n; i++) {
		if (ma.map[i] < 0)
			continue;
		attrs[ma.map[i]] = *d->attribute_table[i];
		attrs[ma.map[i]].key_strindex = remap_use(&mstr, d->attribute_table[i]->key_strindex);
		attrs[ma.map[i]].unit_strindex =
			remap_use(&mstr, d->attribute_table[i]->unit_strindex);
		attrp[ma.map[i]] = &attrs[ma.map[i]];
	}
	for (i = 0; i < ms.n; i++) {
		const Ember__Otlp__Stack *st = d->stack_table[i];

		if (ms.map[i] < 0)
			continue;
		stacks[ms.map[i]] = *st;
		stacks[ms.map[i]].location_indices = ints + used;
		for (x = 0; x < st->n_location_indices; x++)
			ints[used++] = remap_use(&ml, st->location_indices[x]);
		stackp[ms.map[i]] = &stacks[ms.map[i]];
	}
	/* the samples' indices, renumbered in place (restored below: they belong to @req) */
	for (i = 0; i < req->n_resource_profiles; i++)
		for (j = 0; j < req->resource_profiles[i]->n_scope_profiles; j++) {
			Ember__Otlp__ScopeProfiles *sp = req->resource_profiles[i]->scope_profiles[j];

			for (k = 0; k < sp->n_profiles; k++) {
				Ember__Otlp__Profile *p = sp->profiles[k];

				int32_t *v[4] = { &p->sample_type->type_strindex,
						  &p->sample_type->unit_strindex,
						  &p->period_type->type_strindex,
						  &p->period_type->unit_strindex };
				size_t q;

				for (q = 0; q < 4; q++) {
					saved_pt[pv++] = *v[q];
					*v[q] = remap_use(&mstr, *v[q]);
				}
				for (x = 0; x < p->n_samples; x++) {
					Ember__Otlp__Sample *sm = p->samples[x];
					size_t a;

					saved_s[sv] = sm;
					saved_vals[sv++] = sm->stack_index;
					sm->stack_index = remap_use(&ms, sm->stack_index);
					for (a = 0; a < sm->n_attribute_indices; a++) {
						saved_s[sv] = sm;
						saved_vals[sv++] = sm->attribute_indices[a];
						sm->attribute_indices[a] =
							remap_use(&ma, sm->attribute_indices[a]);
					}
				}
			}
		}
	nd = *d;
	nd.n_mapping_table = mk.used;
	nd.mapping_table = mapp;
	nd.n_location_table = ml.used;
	nd.location_table = locp;
	nd.n_function_table = mf.used;
	nd.function_table = fnp;
	nd.n_attribute_table = ma.used;
	nd.attribute_table = attrp;
	nd.n_stack_table = ms.used;
	nd.stack_table = stackp;
	nd.n_string_table = mstr.used;
	nd.string_table = strs;
	req->dictionary = &nd;
	r = pack_request(req, true, out);
	req->dictionary = (Ember__Otlp__ProfilesDictionary *)d;
	/* put the samples' indices back (stack first, then its attributes, as saved) */
	for (i = 0; i < sv;) {
		Ember__Otlp__Sample *sm = saved_s[i];
		size_t a;

		sm->stack_index = saved_vals[i++];
		for (a = 0; a < sm->n_attribute_indices; a++)
			sm->attribute_indices[a] = saved_vals[i++];
	}
	pv = 0;
	for (i = 0; i < req->n_resource_profiles; i++)
		for (j = 0; j < req->resource_profiles[i]->n_scope_profiles; j++) {
			Ember__Otlp__ScopeProfiles *sp = req->resource_profiles[i]->scope_profiles[j];

			for (k = 0; k < sp->n_profiles; k++) {
				Ember__Otlp__Profile *p = sp->profiles[k];

				p->sample_type->type_strindex = saved_pt[pv++];
				p->sample_type->unit_strindex = saved_pt[pv++];
				p->period_type->type_strindex = saved_pt[pv++];
				p->period_type->unit_strindex = saved_pt[pv++];
			}
		}
out:
	free(ms.map);
	free(ml.map);
	free(mf.map);
	free(mk.map);
	free(ma.map);
	free(mstr.map);
	free(maps);
	free(mapp);
	free(locs);
	free(locp);
	free(lines);
	free(linep);
	free(fns);
	free(fnp);
	free(attrs);
	free(attrp);
	free(stacks);
	free(stackp);
	free(strs);
	free(ints);
	free(saved_s);
	free(saved_vals);
	free(saved_pt);
	return r;
}

int otlp_split(const void *body, size_t len, struct sbuf *a, struct sbuf *b)
{
	Ember__Otlp__ExportProfilesServiceRequest *req = unpack_gz(body, len), half;
	Ember__Otlp__ResourceProfiles **all, rp2, *rpp2[1];
	Ember__Otlp__ScopeProfiles *sp, sp2, *spp2[1];
	Ember__Otlp__Profile *p, p2, *pp2[1];
	size_t n, cut;
	int r;

	if (!req)
		return -EINVAL;
	all = req->resource_profiles;
	n = req->n_resource_profiles;
	half = *req;
	if (n >= 2) { /* half of the resources each */
		cut = n / 2;
		half.n_resource_profiles = cut;
		r = pack_pruned(&half, a);
		half.resource_profiles = all + cut;
		half.n_resource_profiles = n - cut;
		if (!r)
			r = pack_pruned(&half, b);
	} else if (n == 1 && all[0]->n_scope_profiles == 1 &&
		   all[0]->scope_profiles[0]->n_profiles == 1 &&
		   all[0]->scope_profiles[0]->profiles[0]->n_samples >= 2) {
		/* one process: half of its Samples each */
		sp = all[0]->scope_profiles[0];
		p = sp->profiles[0];
		cut = p->n_samples / 2;
		p2 = *p;
		sp2 = *sp;
		rp2 = *all[0];
		pp2[0] = &p2;
		spp2[0] = &sp2;
		rpp2[0] = &rp2;
		sp2.profiles = pp2;
		rp2.scope_profiles = spp2;
		half.resource_profiles = rpp2;
		half.n_resource_profiles = 1;
		p2.n_samples = cut;
		r = pack_pruned(&half, a);
		p2.samples = p->samples + cut;
		p2.n_samples = p->n_samples - cut;
		if (!r)
			r = pack_pruned(&half, b);
	} else {
		r = -E2BIG;
	}
	ember__otlp__export_profiles_service_request__free_unpacked(req, NULL);
	return r;
}
