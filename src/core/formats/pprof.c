// SPDX-License-Identifier: MIT
/* pprof: folded stacks <-> gzip-compressed profile.proto (protobuf-c; gzip by core/base/gzip.c). */
#include "ember/core/formats/pprof.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "gen/profile.pb-c.h"

#include "ember/core/model/profile.h"
#include "ember/core/base/gzip.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"
#include "ember/core/base/utf8.h"
#include "ember/core/model/frame.h"

enum mapping_kind { MAPPING_USER, MAPPING_KERNEL, MAPPING_JIT, MAPPING_NR };

static const char *const mapping_names[MAPPING_NR] = {
	[MAPPING_USER] = "[user]",
	[MAPPING_KERNEL] = "[kernel.kallsyms]",
	[MAPPING_JIT] = "[jit]",
};

struct pw_location {
	size_t lines_off;	/* into w->lines: function ids, innermost first */
	size_t nr_lines;
	uint64_t mapping_id;
};

struct pw_sample {
	size_t locs_off;	/* into w->locs: location ids, leaf first */
	size_t nr_locs;
	double count;
	int64_t pid, tid;
	int64_t comm;		/* string index, 0 when unknown */
};

/*
 * What pprof shows of a folded frame: the name without the marker suffix ("_[k]", "_[j]",
 * "_[i]", "_[py]"), and for a Python frame "qualname (file:line)_[py]" (a Java or JavaScript
 * frame "name (file:line)_[j]" alike) the name, the file and the line in their own fields. The folded frame itself goes to system_name when it
 * differs, so that pprof_read() gives it back.
 */
struct pw_fn_info {
	uint64_t name;		/* string id */
	uint64_t file;		/* string id, 0: none */
	int64_t line;		/* 0: none */
};

/*
 * The tables are keyed through strtabs used as hash sets: a key is interned as text, and its
 * dense id (0, 1, 2, ... by first appearance) indexes a plain array.
 */
struct pprof_writer {
	struct pprof_opts opts;
	struct strtab *strings;		/* the string table; id 0 is "" */
	uint64_t *fn_of_str;		/* string id -> function id (1-based), 0: none yet */
	size_t fn_of_str_cap;
	uint64_t *fn_name;		/* function id - 1 -> name string id */
	size_t nr_fns, fns_cap;
	unsigned char *fn_kind;		/* function id - 1 -> FN_* annotation flags */
	size_t fn_kind_cap;
	struct pw_fn_info *fn_info;	/* function id - 1 -> pprof's name, file, line */
	size_t fn_info_cap;
	struct strtab *loc_keys;	/* "f1,f2,..." -> location id - 1 */
	struct pw_location *locations;
	size_t locations_cap;
	uint64_t *lines;
	size_t nr_lines, lines_cap;
	struct strtab *sample_keys;	/* "l1,l2,...|pid|tid|comm" -> sample index */
	struct pw_sample *samples;
	size_t samples_cap;
	uint64_t *locs;
	size_t nr_locs, locs_cap;
	uint64_t mapping_id[MAPPING_NR];	/* 0: not used yet */
	int mapping_order[MAPPING_NR];		/* kinds in the order of their ids */
	int nr_mappings;
	unsigned long rounded;
	struct sbuf key;		/* scratch */
	struct sbuf u8;			/* scratch: a string made valid UTF-8 */
	uint64_t *scratch_fns;		/* scratch: function ids of the stack being added */
	size_t scratch_cap;
};

/* Grows *@arr (elements of @size) to hold @need; 0 or -ENOMEM. */
static int grow(void *arr, size_t *cap, size_t need, size_t size)
{
	void **p = arr;
	size_t ncap = *cap ? *cap : 64;
	void *n;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2 / size)
			return -ENOMEM;
		ncap *= 2;
	}
	n = realloc(*p, ncap * size);
	if (!n)
		return -ENOMEM;
	*p = n;
	*cap = ncap;
	return 0;
}

/* Every string goes in as valid UTF-8 (protobuf's `string`): bytes outside it by the one rule
 * of every output (utf8.h). */
static int intern_str(struct pprof_writer *w, const char *s, size_t len)
{
	if (!utf8_valid(s, len)) {
		sbuf_reset(&w->u8);
		sbuf_add_utf8(&w->u8, s, len);
		if (sbuf_error(&w->u8))
			return -ENOMEM;
		s = w->u8.buf;
		len = w->u8.len;
	}
	return strtab__intern(w->strings, s, len);
}

struct pprof_writer *pprof_writer__new(const struct pprof_opts *opts)
{
	struct pprof_writer *w = calloc(1, sizeof(*w));

	if (!w)
		goto nomem;
	if (opts)
		w->opts = *opts;
	if (!w->opts.freq_hz)
		w->opts.freq_hz = PPROF_DEFAULT_FREQ_HZ;
	sbuf_init(&w->key);
	sbuf_init(&w->u8);
	w->strings = strtab__new();
	w->loc_keys = strtab__new();
	w->sample_keys = strtab__new();
	if (!w->strings || !w->loc_keys || !w->sample_keys)
		goto nomem;
	if (intern_str(w, "", 0) != 0)
		goto nomem;
	return w;
nomem:
	pprof_writer__free(w);
	errno = ENOMEM;
	return NULL;
}

void pprof_writer__free(struct pprof_writer *w)
{
	if (!w)
		return;
	strtab__free(w->strings);
	strtab__free(w->loc_keys);
	strtab__free(w->sample_keys);
	free(w->fn_of_str);
	free(w->fn_name);
	free(w->fn_kind);
	free(w->fn_info);
	free(w->locations);
	free(w->lines);
	free(w->samples);
	free(w->locs);
	free(w->scratch_fns);
	sbuf_fini(&w->key);
	sbuf_fini(&w->u8);
	free(w);
}

void pprof_writer__set_time(struct pprof_writer *w, int64_t time_ns, int64_t duration_ns)
{
	w->opts.time_ns = time_ns;
	w->opts.duration_ns = duration_ns;
}

unsigned long pprof_writer__rounded(const struct pprof_writer *w)
{
	return w->rounded;
}

/* flamegraph.pl's frame annotations, found once per function */
enum { FN_INLINE = 1, FN_KERNEL = 2, FN_JIT = 4 };

/* Fills @ret for the folded frame @s (see struct pw_fn_info), by the one frame parser. 0 or
 * -ENOMEM. */
static int fn_info_of(struct pprof_writer *w, const char *s, struct pw_fn_info *ret)
{
	size_t len = strlen(s), n;
	struct frame f;
	int id, fid = 0;
	int64_t line = 0;

	frame_parse(s, len, &f);
	n = f.name_len;
	if (f.waker) /* a waker's frame keeps its mark: the chain's two parts stay apart */
		n = (size_t)(s + len - f.name);
	if ((f.kind == FRAME_PYTHON || f.kind == FRAME_JIT) && f.form == FRAME_SYMBOL && f.file) {
		fid = intern_str(w, f.file, f.file_len);
		if (fid < 0)
			return -ENOMEM;
		line = f.line > 0 ? f.line : 0;
	}
	id = intern_str(w, f.name, n);
	if (id < 0)
		return -ENOMEM;
	*ret = (struct pw_fn_info){ .name = (uint64_t)id, .file = (uint64_t)fid, .line = line };
	return 0;
}

/* Function id (1-based) for the frame name @s, created on first use; 0 on ENOMEM. */
static uint64_t function_of(struct pprof_writer *w, const char *s)
{
	size_t old = w->fn_of_str_cap;
	int sid = intern_str(w, s, strlen(s));

	if (sid < 0)
		return 0;
	if (grow(&w->fn_of_str, &w->fn_of_str_cap, (size_t)sid + 1, sizeof(*w->fn_of_str)))
		return 0;
	if (w->fn_of_str_cap > old)
		memset(w->fn_of_str + old, 0, (w->fn_of_str_cap - old) * sizeof(*w->fn_of_str));
	if (w->fn_of_str[sid])
		return w->fn_of_str[sid];
	if (grow(&w->fn_name, &w->fns_cap, w->nr_fns + 1, sizeof(*w->fn_name)) ||
	    grow(&w->fn_kind, &w->fn_kind_cap, w->nr_fns + 1, sizeof(*w->fn_kind)))
		return 0;
	switch (frame_kind_of(s, strlen(s))) {
	case FRAME_INLINED:
		w->fn_kind[w->nr_fns] = FN_INLINE;
		break;
	case FRAME_KERNEL:
		w->fn_kind[w->nr_fns] = FN_KERNEL;
		break;
	case FRAME_JIT:
		w->fn_kind[w->nr_fns] = FN_JIT;
		break;
	default:
		w->fn_kind[w->nr_fns] = 0;
		break;
	}
	if (grow(&w->fn_info, &w->fn_info_cap, w->nr_fns + 1, sizeof(*w->fn_info)) ||
	    fn_info_of(w, s, &w->fn_info[w->nr_fns]))
		return 0;
	w->fn_name[w->nr_fns++] = (uint64_t)sid;
	w->fn_of_str[sid] = w->nr_fns;
	return w->nr_fns;
}

static uint64_t mapping_of(struct pprof_writer *w, enum mapping_kind kind)
{
	if (!w->mapping_id[kind]) {
		w->mapping_order[w->nr_mappings] = kind;
		w->mapping_id[kind] = (uint64_t)++w->nr_mappings;
	}
	return w->mapping_id[kind];
}

/*
 * Location id (1-based) for the physical frame @fns[0] and the inlined frames @fns[1..n) called
 * from it (outermost first, as in the folded stack); 0 on ENOMEM.
 */
static uint64_t location_of(struct pprof_writer *w, const uint64_t *fns, size_t n,
			    enum mapping_kind kind)
{
	struct pw_location *l;
	size_t i, before = strtab__count(w->loc_keys);
	int id;

	sbuf_reset(&w->key);
	for (i = 0; i < n; i++) {
		sbuf_addu(&w->key, fns[i]);
		sbuf_addc(&w->key, ',');
	}
	if (sbuf_error(&w->key))
		return 0;
	/* room first, so that an interned key always has its location */
	if (grow(&w->locations, &w->locations_cap, before + 1, sizeof(*w->locations)) ||
	    grow(&w->lines, &w->lines_cap, w->nr_lines + n, sizeof(*w->lines)))
		return 0;
	id = strtab__intern(w->loc_keys, w->key.buf, w->key.len);
	if (id < 0)
		return 0;
	if (strtab__count(w->loc_keys) == before)
		return (uint64_t)id + 1;
	l = &w->locations[id];
	l->lines_off = w->nr_lines;
	l->nr_lines = n;
	l->mapping_id = mapping_of(w, kind);
	for (i = 0; i < n; i++) /* pprof lists the innermost line first */
		w->lines[w->nr_lines++] = fns[n - 1 - i];
	return (uint64_t)id + 1;
}

static int add_fns(struct pprof_writer *w, size_t n, double count, const struct pprof_labels *lb,
		   int64_t comm);

int pprof_writer__add(struct pprof_writer *w, const char *const *frames, size_t n, double count,
		      const struct pprof_labels *labels)
{
	struct pprof_labels lb = labels ? *labels : PPROF_LABELS_NONE;
	int64_t comm = 0;
	size_t i;
	int c;

	if (!isfinite(count) || count < 0)
		return -EINVAL;
	if (count != floor(count)) {
		w->rounded++;
		count = floor(count + 0.5);
	}
	if (lb.comm) {
		c = intern_str(w, lb.comm, strlen(lb.comm));
		if (c < 0)
			return -ENOMEM;
		comm = c;
	}
	if (grow(&w->scratch_fns, &w->scratch_cap, n + 1, sizeof(*w->scratch_fns)))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		w->scratch_fns[i] = function_of(w, frames[i]);
		if (!w->scratch_fns[i])
			return -ENOMEM;
	}
	return add_fns(w, n, count, &lb, comm);
}

/* Adds the stack of function ids in w->scratch_fns[0..n) (root first). 0 or -ENOMEM. */
static int add_fns(struct pprof_writer *w, size_t n, double count, const struct pprof_labels *lb,
		   int64_t comm)
{
	size_t i, j, nlocs = 0, before, locs_start;
	struct pw_sample *s;
	int id;

	/*
	 * Group each physical frame with the inlined frames after it, leaf group first for the
	 * sample; the location ids go to the end of w->locs and become the sample's key.
	 */
	if (grow(&w->locs, &w->locs_cap, w->nr_locs + n, sizeof(*w->locs)))
		return -ENOMEM;
	locs_start = w->nr_locs;
	for (j = n; j > 0;) {
		size_t end = j, start = j - 1;
		enum mapping_kind kind = MAPPING_USER;
		unsigned char k;
		uint64_t loc;

		while (start > 0 && (w->fn_kind[w->scratch_fns[start] - 1] & FN_INLINE))
			start--;
		k = w->fn_kind[w->scratch_fns[start] - 1];
		if (k & FN_KERNEL)
			kind = MAPPING_KERNEL;
		else if (k & FN_JIT)
			kind = MAPPING_JIT;
		loc = location_of(w, &w->scratch_fns[start], end - start, kind);
		if (!loc)
			return -ENOMEM;
		w->locs[locs_start + nlocs++] = loc;
		j = start;
	}
	sbuf_reset(&w->key);
	for (i = 0; i < nlocs; i++) {
		sbuf_addu(&w->key, w->locs[locs_start + i]);
		sbuf_addc(&w->key, ',');
	}
	sbuf_addf(&w->key, "|%" PRId64 "|%" PRId64 "|%" PRId64, lb->pid, lb->tid, comm);
	if (sbuf_error(&w->key))
		return -ENOMEM;
	before = strtab__count(w->sample_keys);
	if (grow(&w->samples, &w->samples_cap, before + 1, sizeof(*w->samples)))
		return -ENOMEM;
	id = strtab__intern(w->sample_keys, w->key.buf, w->key.len);
	if (id < 0)
		return -ENOMEM;
	if (strtab__count(w->sample_keys) == before) {
		w->samples[id].count += count;
		return 0;
	}
	s = &w->samples[id];
	*s = (struct pw_sample){ .locs_off = locs_start, .nr_locs = nlocs, .count = count,
				 .pid = lb->pid, .tid = lb->tid, .comm = comm };
	w->nr_locs += nlocs;
	return 0;
}

int pprof_writer__add_profile(struct pprof_writer *w, const struct profile *p)
{
	const struct strtab *st = profile__strtab(p);
	const struct pprof_labels none = PPROF_LABELS_NONE;
	size_t nids = strtab__count(st), i, k, depth;
	/* profile frame id -> function id, so that each name is interned once */
	uint64_t *fn_of_id = calloc(nids ? nids : 1, sizeof(*fn_of_id));
	int err = 0;

	if (!fn_of_id)
		return -ENOMEM;
	for (i = 0; i < profile__nr_stacks(p) && !err; i++) {
		const uint32_t *f = profile__stack(p, i, &depth);
		double count = profile__count(p, i);

		if (count == 0)
			continue;
		if (!isfinite(count) || count < 0) {
			err = -EINVAL;
			break;
		}
		if (count != floor(count)) {
			w->rounded++;
			count = floor(count + 0.5);
		}
		if (grow(&w->scratch_fns, &w->scratch_cap, depth + 1, sizeof(*w->scratch_fns))) {
			err = -ENOMEM;
			break;
		}
		for (k = 0; k < depth && !err; k++) {
			if (!fn_of_id[f[k]])
				fn_of_id[f[k]] = function_of(w, strtab__str(st, f[k]));
			w->scratch_fns[k] = fn_of_id[f[k]];
			if (!w->scratch_fns[k])
				err = -ENOMEM;
		}
		if (!err)
			err = add_fns(w, depth, count, &none, 0);
	}
	free(fn_of_id);
	return err;
}

/*
 * count * period with saturation detection; -EOVERFLOW when it does not fit. With @ns, @count
 * is the time already: the samples are count / period, rounded.
 */
static int mul_value(double count, int64_t period, bool ns, int64_t *ret_count, int64_t *ret_ns)
{
	if (ns) {
		if (count >= 9.2e18)
			return -EOVERFLOW;
		*ret_ns = (int64_t)count;
		*ret_count = (int64_t)(count / (double)period + 0.5);
		return 0;
	}
	if (count >= 9.2e18 || count * (double)period >= 9.2e18)
		return -EOVERFLOW;
	*ret_count = (int64_t)count;
	*ret_ns = (int64_t)count * period;
	return 0;
}

int pprof_writer__finish(struct pprof_writer *w, struct sbuf *out)
{
	Ember__Pprof__Profile prof = EMBER__PPROF__PROFILE__INIT;
	Ember__Pprof__ValueType vt[3] = { EMBER__PPROF__VALUE_TYPE__INIT,
					  EMBER__PPROF__VALUE_TYPE__INIT,
					  EMBER__PPROF__VALUE_TYPE__INIT };
	Ember__Pprof__ValueType *vtp[2] = { &vt[0], &vt[1] };
	size_t nstr, nfn = w->nr_fns, nloc = strtab__count(w->loc_keys);
	size_t nsmp = strtab__count(w->sample_keys), nlabels = 0, i, k;
	Ember__Pprof__Mapping maps[MAPPING_NR], *mapp[MAPPING_NR];
	uint64_t map_new[MAPPING_NR + 1] = { 0 };	/* writer's mapping id -> written id */
	Ember__Pprof__Function *fns = NULL, **fnp = NULL;
	Ember__Pprof__Location *locs = NULL, **locp = NULL;
	Ember__Pprof__Line *lines = NULL, **linep = NULL;
	Ember__Pprof__Sample *smp = NULL, **smpp = NULL;
	Ember__Pprof__Label *labels = NULL, **labelp = NULL;
	int64_t *values = NULL, period;
	char **strs = NULL;
	uint8_t *packed = NULL;
	size_t plen;
	int s_samples, s_count, s_cpu, s_ns, s_pid, s_tid, s_comm, err = -ENOMEM;

	s_samples = intern_str(w, "samples", 7);
	s_count = intern_str(w, "count", 5);
	s_cpu = w->opts.sample_type && *w->opts.sample_type
		    ? intern_str(w, w->opts.sample_type, strlen(w->opts.sample_type))
		    : intern_str(w, "cpu", 3);
	s_ns = w->opts.unit && *w->opts.unit ? intern_str(w, w->opts.unit, strlen(w->opts.unit))
					     : intern_str(w, "nanoseconds", 11);
	s_pid = intern_str(w, "pid", 3);
	s_tid = intern_str(w, "tid", 3);
	s_comm = intern_str(w, "comm", 4);
	if (s_samples < 0 || s_count < 0 || s_cpu < 0 || s_ns < 0 || s_pid < 0 || s_tid < 0 ||
	    s_comm < 0)
		return -ENOMEM;
	for (k = 0; k < (size_t)w->nr_mappings; k++)
		if (intern_str(w, mapping_names[w->mapping_order[k]],
			       strlen(mapping_names[w->mapping_order[k]])) < 0)
			return -ENOMEM;
	nstr = strtab__count(w->strings);
	for (i = 0; i < nsmp; i++)
		nlabels += (w->samples[i].pid >= 0) + (w->samples[i].tid >= 0) +
			   (w->samples[i].comm > 0);

	strs = malloc(nstr * sizeof(*strs));
	fns = malloc((nfn + 1) * sizeof(*fns));
	fnp = malloc((nfn + 1) * sizeof(*fnp));
	locs = malloc((nloc + 1) * sizeof(*locs));
	locp = malloc((nloc + 1) * sizeof(*locp));
	lines = malloc((w->nr_lines + 1) * sizeof(*lines));
	linep = malloc((w->nr_lines + 1) * sizeof(*linep));
	smp = malloc((nsmp + 1) * sizeof(*smp));
	smpp = malloc((nsmp + 1) * sizeof(*smpp));
	values = malloc((2 * nsmp + 1) * sizeof(*values));
	labels = malloc((nlabels + 1) * sizeof(*labels));
	labelp = malloc((nlabels + 1) * sizeof(*labelp));
	if (!strs || !fns || !fnp || !locs || !locp || !lines || !linep || !smp || !smpp ||
	    !values || !labels || !labelp)
		goto out;

	for (i = 0; i < nstr; i++)
		strs[i] = (char *)strtab__str(w->strings, (uint32_t)i);
	prof.n_string_table = nstr;
	prof.string_table = strs;

	vt[0].type = s_samples;
	vt[0].unit = s_count;
	vt[1].type = s_cpu;
	vt[1].unit = s_ns;
	vt[2].type = s_cpu;
	vt[2].unit = s_ns;
	prof.n_sample_type = 2;
	prof.sample_type = vtp;
	prof.period_type = &vt[2];
	period = w->opts.period_ns && w->opts.period_ns < INT64_MAX ? (int64_t)w->opts.period_ns :
		 (int64_t)(1e9 / (double)w->opts.freq_hz + 0.5);
	if (period < 1)
		period = 1;
	prof.period = period;
	prof.time_nanos = w->opts.time_ns;
	prof.duration_nanos = w->opts.duration_ns;
	prof.default_sample_type = s_cpu; /* a string index: "cpu", as Go's CPU profiles say */

	/*
	 * The mappings in kind order, user code first: pprof's header names the first one
	 * ("File: [user]", not "[kernel.kallsyms]" because a kernel frame came first)
	 */
	for (i = 0, k = 0; i < MAPPING_NR; i++)
		if (w->mapping_id[i])
			map_new[w->mapping_id[i]] = (uint64_t)++k;
	for (i = 0, k = 0; i < MAPPING_NR; i++)
		if (w->mapping_id[i])
			w->mapping_order[k++] = (int)i;
	for (k = 0; k < (size_t)w->nr_mappings; k++) {
		const char *name = mapping_names[w->mapping_order[k]];

		maps[k] = (Ember__Pprof__Mapping)EMBER__PPROF__MAPPING__INIT;
		maps[k].id = k + 1;
		maps[k].filename = strtab__find(w->strings, name, strlen(name));
		maps[k].has_functions = 1;
		mapp[k] = &maps[k];
	}
	prof.n_mapping = (size_t)w->nr_mappings;
	prof.mapping = mapp;

	for (i = 0; i < nfn; i++) {
		fns[i] = (Ember__Pprof__Function)EMBER__PPROF__FUNCTION__INIT;
		fns[i].id = i + 1;
		fns[i].name = (int64_t)w->fn_info[i].name;
		fns[i].filename = (int64_t)w->fn_info[i].file;
		fns[i].start_line = w->fn_info[i].line;
		/*
		 * system_name only for a frame whose name was cut (its marker, a Python file):
		 * the folded frame, for pprof_read(). Our names are already demangled, and
		 * pprof only demangles or simplifies (drops "<...>" and "(...)") a name equal
		 * to its system name, so it shows the name as it is.
		 */
		if (w->fn_info[i].name != w->fn_name[i])
			fns[i].system_name = (int64_t)w->fn_name[i];
		fnp[i] = &fns[i];
	}
	prof.n_function = nfn;
	prof.function = fnp;

	for (i = 0; i < w->nr_lines; i++) {
		lines[i] = (Ember__Pprof__Line)EMBER__PPROF__LINE__INIT;
		lines[i].function_id = w->lines[i];
		lines[i].line = w->fn_info[w->lines[i] - 1].line;
		linep[i] = &lines[i];
	}
	for (i = 0; i < nloc; i++) {
		locs[i] = (Ember__Pprof__Location)EMBER__PPROF__LOCATION__INIT;
		locs[i].id = i + 1;
		locs[i].mapping_id = map_new[w->locations[i].mapping_id];
		locs[i].n_line = w->locations[i].nr_lines;
		locs[i].line = &linep[w->locations[i].lines_off];
		locp[i] = &locs[i];
	}
	prof.n_location = nloc;
	prof.location = locp;

	for (i = 0, k = 0; i < nsmp; i++) {
		const struct pw_sample *ws = &w->samples[i];
		Ember__Pprof__Label **first = &labelp[k];

		smp[i] = (Ember__Pprof__Sample)EMBER__PPROF__SAMPLE__INIT;
		smp[i].n_location_id = ws->nr_locs;
		/* an empty stack has no locations, and w->locs may then be NULL */
		smp[i].location_id = ws->nr_locs ? &w->locs[ws->locs_off] : NULL;
		err = mul_value(ws->count, period, w->opts.counts_ns, &values[2 * i], &values[2 * i + 1]);
		if (err)
			goto out;
		err = -ENOMEM;
		smp[i].n_value = 2;
		smp[i].value = &values[2 * i];
		if (ws->pid >= 0) {
			labels[k] = (Ember__Pprof__Label)EMBER__PPROF__LABEL__INIT;
			labels[k].key = s_pid;
			labels[k].num = ws->pid;
			labelp[k] = &labels[k];
			k++;
		}
		if (ws->tid >= 0) {
			labels[k] = (Ember__Pprof__Label)EMBER__PPROF__LABEL__INIT;
			labels[k].key = s_tid;
			labels[k].num = ws->tid;
			labelp[k] = &labels[k];
			k++;
		}
		if (ws->comm > 0) {
			labels[k] = (Ember__Pprof__Label)EMBER__PPROF__LABEL__INIT;
			labels[k].key = s_comm;
			labels[k].str = ws->comm;
			labelp[k] = &labels[k];
			k++;
		}
		smp[i].n_label = (size_t)(&labelp[k] - first);
		smp[i].label = smp[i].n_label ? first : NULL;
		smpp[i] = &smp[i];
	}
	prof.n_sample = nsmp;
	prof.sample = smpp;

	plen = ember__pprof__profile__get_packed_size(&prof);
	packed = malloc(plen ? plen : 1);
	if (!packed)
		goto out;
	if (ember__pprof__profile__pack(&prof, packed) != plen) {
		err = -EIO;
		goto out;
	}
	err = gzip_compress(packed, plen, w->opts.compress_level, out);
out:
	free(packed);
	free(strs);
	free(fns);
	free(fnp);
	free(locs);
	free(locp);
	free(lines);
	free(linep);
	free(smp);
	free(smpp);
	free(values);
	free(labels);
	free(labelp);
	return err;
}

int pprof_write_profile(const struct profile *p, const struct pprof_opts *opts, struct sbuf *out)
{
	struct pprof_writer *w = pprof_writer__new(opts);
	int err;

	if (!w)
		return -ENOMEM;
	err = pprof_writer__add_profile(w, p);
	if (!err)
		err = pprof_writer__finish(w, out);
	pprof_writer__free(w);
	return err;
}

/* ------------------------------------------------------------------------------------------ */
/* Reading */

bool pprof_is_gzip(const void *buf, size_t len)
{
	const unsigned char *b = buf;

	return len >= 2 && b[0] == 0x1f && b[1] == 0x8b;
}

struct pr_ctx {
	const Ember__Pprof__Profile *prof;
	struct parse_error *reterr;
};

static int bad(struct pr_ctx *c, const char *reason)
{
	if (c->reterr)
		c->reterr->reason = reason;
	return -EINVAL;
}

static const char *pr_str(const struct pr_ctx *c, int64_t idx)
{
	if (idx < 0 || (uint64_t)idx >= c->prof->n_string_table)
		return NULL;
	return c->prof->string_table[idx] ? c->prof->string_table[idx] : "";
}

static int cmp_u64(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return (*x > *y) - (*x < *y);
}

/*
 * Builds an id -> index table. pprof ids are arbitrary non-zero numbers; writers use 1..n, so
 * a direct table works unless ids are sparse, in which case a sorted (id, index) array is
 * searched instead. Duplicate ids make the profile invalid.
 */
struct id_map {
	uint64_t *pairs;	/* sorted by id: id, index */
	size_t n;
};

static int id_map_build(struct id_map *m, size_t n, uint64_t (*id_of)(const void *, size_t),
			const void *tab, struct pr_ctx *c)
{
	size_t i;

	m->n = n;
	m->pairs = malloc((n ? n : 1) * 2 * sizeof(*m->pairs));
	if (!m->pairs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		m->pairs[2 * i] = id_of(tab, i);
		m->pairs[2 * i + 1] = i;
		if (!m->pairs[2 * i])
			return bad(c, "a location or function has id 0");
	}
	qsort(m->pairs, n, 2 * sizeof(*m->pairs), cmp_u64);
	for (i = 1; i < n; i++)
		if (m->pairs[2 * i] == m->pairs[2 * i - 2])
			return bad(c, "duplicate location or function id");
	return 0;
}

/* Index of @id, or -1. */
static ssize_t id_map_find(const struct id_map *m, uint64_t id)
{
	size_t lo = 0, hi = m->n;

	/* the common case: ids 1..n in order */
	if (id >= 1 && id <= m->n && m->pairs[2 * (id - 1)] == id)
		return (ssize_t)m->pairs[2 * (id - 1) + 1];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->pairs[2 * mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < m->n && m->pairs[2 * lo] == id)
		return (ssize_t)m->pairs[2 * lo + 1];
	return -1;
}

static uint64_t fn_id_of(const void *tab, size_t i)
{
	return ((Ember__Pprof__Function *const *)tab)[i]->id;
}

static uint64_t loc_id_of(const void *tab, size_t i)
{
	return ((Ember__Pprof__Location *const *)tab)[i]->id;
}

/* Interns a frame name, keeping the folded format intact: ';' and line breaks are replaced. */
static int intern_frame(struct strtab *st, const char *name, struct sbuf *tmp)
{
	size_t len = strlen(name), i;

	if (!len)
		return strtab__intern(st, "[unknown]", 9);
	if (!strpbrk(name, ";\n\r"))
		return strtab__intern(st, name, len);
	sbuf_reset(tmp);
	for (i = 0; i < len; i++)
		sbuf_addc(tmp, name[i] == ';' ? ':' : (name[i] == '\n' || name[i] == '\r') ? ' ' :
									     name[i]);
	if (sbuf_error(tmp))
		return -ENOMEM;
	return strtab__intern(st, tmp->buf, tmp->len);
}

static int choose_index(const Ember__Pprof__Profile *prof, int want, struct pr_ctx *c)
{
	size_t i;

	if (prof->n_sample_type == 0)
		return bad(c, "no sample types");
	if (want >= 0) {
		if ((size_t)want >= prof->n_sample_type)
			return bad(c, "no such sample index");
		return want;
	}
	for (i = 0; i < prof->n_sample_type; i++) {
		const char *t = pr_str(c, prof->sample_type[i]->type);
		const char *u = pr_str(c, prof->sample_type[i]->unit);

		if (t && u && !strcmp(t, "samples") && !strcmp(u, "count"))
			return (int)i;
	}
	if (prof->default_sample_type > 0) {
		const char *d = pr_str(c, prof->default_sample_type);

		for (i = 0; d && i < prof->n_sample_type; i++) {
			const char *t = pr_str(c, prof->sample_type[i]->type);

			if (t && !strcmp(t, d))
				return (int)i;
		}
	}
	return (int)prof->n_sample_type - 1;
}

static int read_profile(const Ember__Pprof__Profile *prof, struct profile *p, int want,
			struct pprof_info *info, struct parse_error *reterr)
{
	struct pr_ctx c = { .prof = prof, .reterr = reterr };
	struct id_map fmap = { 0 }, lmap = { 0 };
	struct strtab *st = profile__strtab(p);
	uint32_t *frames = NULL, *frame_of_fn = NULL; /* function index -> strtab id + 1 */
	size_t frames_cap = 0, i, j, k;
	struct sbuf tmp = SBUF_INIT;
	int idx, err;

	if (prof->n_string_table == 0 || !prof->string_table[0] || prof->string_table[0][0])
		return bad(&c, "the string table does not start with \"\"");
	idx = choose_index(prof, want, &c);
	if (idx < 0)
		return idx;
	info->sample_index = idx;
	snprintf(info->sample_type, sizeof(info->sample_type), "%s/%s",
		 pr_str(&c, prof->sample_type[idx]->type) ?: "?",
		 pr_str(&c, prof->sample_type[idx]->unit) ?: "?");
	info->time_ns = prof->time_nanos;
	info->duration_ns = prof->duration_nanos;
	info->period = prof->period;

	frame_of_fn = calloc(prof->n_function ? prof->n_function : 1, sizeof(*frame_of_fn));
	if (!frame_of_fn)
		return -ENOMEM;
	err = id_map_build(&fmap, prof->n_function, fn_id_of, prof->function, &c);
	if (!err)
		err = id_map_build(&lmap, prof->n_location, loc_id_of, prof->location, &c);
	if (err)
		goto out;
	for (i = 0; i < prof->n_sample && !err; i++) {
		const Ember__Pprof__Sample *s = prof->sample[i];
		size_t n = 0;

		if (s->n_value != prof->n_sample_type) {
			err = bad(&c, "a sample has the wrong number of values");
			break;
		}
		if (s->value[idx] < 0) {
			info->skipped++;
			continue;
		}
		for (j = s->n_location_id; j > 0 && !err; j--) {
			ssize_t li = id_map_find(&lmap, s->location_id[j - 1]);
			const Ember__Pprof__Location *l;

			if (li < 0) {
				err = bad(&c, "a sample refers to a missing location");
				break;
			}
			l = prof->location[li];
			if (grow(&frames, &frames_cap, n + l->n_line + 1, sizeof(*frames))) {
				err = -ENOMEM;
				break;
			}
			if (l->n_line == 0) {
				char addr[32];
				int r;

				snprintf(addr, sizeof(addr), "0x%" PRIx64, l->address);
				r = strtab__intern(st, addr, strlen(addr));
				if (r < 0) {
					err = r;
					break;
				}
				frames[n++] = (uint32_t)r;
				continue;
			}
			/* lines are innermost first; folded stacks are outermost first */
			for (k = l->n_line; k > 0; k--) {
				ssize_t fi = id_map_find(&fmap, l->line[k - 1]->function_id);
				const char *name, *sys;
				int r;

				if (fi < 0) {
					err = bad(&c, "a location refers to a missing function");
					break;
				}
				if (frame_of_fn[fi]) { /* each function's name is interned once */
					frames[n++] = frame_of_fn[fi] - 1;
					continue;
				}
				name = pr_str(&c, prof->function[fi]->name);
				sys = pr_str(&c, prof->function[fi]->system_name);
				/* ours: the folded frame, marker and Python file included */
				if ((name && !*name) ||
				    (sys && frame_kind_of(sys, strlen(sys)) != FRAME_NATIVE))
					name = sys;
				if (!name) {
					err = bad(&c, "a function name is not in the string table");
					break;
				}
				r = intern_frame(st, name, &tmp);
				if (r < 0) {
					err = r;
					break;
				}
				frame_of_fn[fi] = (uint32_t)r + 1;
				frames[n++] = (uint32_t)r;
			}
		}
		if (err)
			break;
		if (s->value[idx] == 0)
			continue;
		if (profile__add(p, frames, n, (double)s->value[idx]) < 0) {
			err = -ENOMEM;
			break;
		}
		info->samples++;
	}
out:
	free(fmap.pairs);
	free(lmap.pairs);
	free(frames);
	free(frame_of_fn);
	sbuf_fini(&tmp);
	return err;
}

int pprof_read(const void *buf, size_t len, struct profile *p, const struct pprof_read_opts *opts,
	       struct pprof_info *ret_info, struct parse_error *reterr)
{
	struct pprof_read_opts o = opts ? *opts : PPROF_READ_OPTS_DEFAULT;
	struct pprof_info info = { .sample_index = -1 };
	struct sbuf raw = SBUF_INIT;
	Ember__Pprof__Profile *prof;
	const void *data = buf;
	size_t dlen = len;
	int err;

	if (!o.max_bytes)
		o.max_bytes = PPROF_DEFAULT_MAX_BYTES;
	if (pprof_is_gzip(buf, len)) {
		err = gzip_inflate(buf, len, o.max_bytes, &raw, reterr ? &reterr->reason : NULL);
		if (err) {
			if (err == -E2BIG && reterr)
				reterr->reason = "decompressed profile too large";
			goto out;
		}
		data = raw.buf;
		dlen = raw.len;
	} else if (len > o.max_bytes) {
		if (reterr)
			reterr->reason = "profile too large";
		err = -E2BIG;
		goto out;
	}
	prof = ember__pprof__profile__unpack(NULL, dlen, data);
	if (!prof) {
		if (reterr)
			reterr->reason = "not a pprof profile (protobuf decoding failed)";
		err = -EINVAL;
		goto out;
	}
	err = read_profile(prof, p, o.sample_index, &info, reterr);
	ember__pprof__profile__free_unpacked(prof, NULL);
out:
	sbuf_fini(&raw);
	if (ret_info)
		*ret_info = info;
	return err;
}
