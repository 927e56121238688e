// SPDX-License-Identifier: MIT
/* ingest: sampler groups -> named stacks -> a sink (include/ember/daemon/ingest/ingest.h). */
#include "ember/daemon/ingest/ingest.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "ember/core/base/clock.h"
#include "ember/core/base/hash.h"
#include "ember/core/base/strtab.h"
#include "ember/core/model/idle.h"
#include "ember/daemon/proc/proctrack.h"
#include "ember/daemon/sample/sampler.h"
#include "ember/daemon/sample/bpf_shared.h"
#include "ember/daemon/unwind/runtime.h"
#include "ember/daemon/symbols/symbolizer.h"
#include "ember/daemon/unwind/unwind.h"

#define MAX_FRAMES  1024 /* symbolized frames per stack (inline frames can add to 2 x 127) */
#define HALF_FRAMES (MAX_FRAMES / 2)
#define LIST_MAX    1024 /* bytes of a [filter] list */
#define TRUNCATED_FRAME "[truncated]"
/* a waker that was an interrupt: in place of the task it came in on (irq_waker()) */
#define IRQ_WAKER_FRAME "[interrupt]"

/*
 * Symbolized stacks, cached for a short while. A user stack whose every frame is in a file whose
 * symbols are read (symbolizer__user_keys) is keyed by those files and the offsets in them, so a
 * new process of a known binary finds the stacks the last one had; the keys are kept
 * and compared whole, not only their hash, so no stack can take another's names by a collision.
 * Other user stacks (JIT code, "[file]" frames, a process not read yet) are keyed by pid and
 * addresses, valid while the process's symbol version is unchanged; kernel stacks by addresses.
 * Direct-mapped; the TTL bounds staleness after an exec or a module load.
 */
#define SCACHE_SLOTS	  4096
#define SCACHE_USER_TTL	  (2 * NSEC_PER_SEC) /* frames that may resolve later: retried soon */
#define SCACHE_STABLE_TTL (10 * NSEC_PER_SEC) /* resolved, and its process's symbols unchanged */
#define SCACHE_FILE_TTL	  (30 * NSEC_PER_SEC) /* named by files' symbols only */
#define SCACHE_KERN_TTL	  (30 * NSEC_PER_SEC)
#define KEY_FRAMES	  256 /* deeper user stacks are keyed by pid */

/* [filter]'s cgroup answers: in each process's state (the process tracker's extension
 * "filter"), read again after CG_TTL_NS (a process moved to another cgroup), kept CG_KEEP_NS
 * after its image ended (exec, exit) for its samples drained later; at most CG_PROCS states. */
#define CG_TTL_NS   (10 * NSEC_PER_SEC)
#define CG_KEEP_NS  (10 * NSEC_PER_SEC)
#define CG_PROCS    16384
#define CG_PATH_MAX 1024

struct scache_ent {
	uint64_t hash;
	uint64_t expires_ns;
	uint64_t version; /* symbolizer__pid_version() of a user stack's process */
	uint32_t pid;	  /* the process it was named for (by_file: the first one) */
	bool by_file;	  /* keyed by keys[], for every process */
	bool files_only;  /* every frame named by its file's symbols (a candidate for by_file) */
	uint32_t n;	  /* frame ids */
	uint32_t *ids;	  /* symbolizer strtab ids, root first; owned */
	size_t cap;
	uint64_t *keys; /* by_file: symbolizer__user_keys() of the stack; owned */
	uint32_t nkeys;
	size_t kcap;
};

struct cg_state {
	uint64_t at_ns;	   /* when /proc/PID/cgroup was read (0: not yet) */
	uint64_t gen;	   /* the filter it was compared with (ingest.cg_gen) */
	bool excluded;
};

struct ingest {
	struct symbolizer *sym;
	struct unwinder *unwind;	/* asked to re-read a process whose walk was cut short */
	struct runtime_set rts;		/* the language runtimes' readers (unwind/runtime.h) */
	uint32_t rtids[MAX_FRAMES];	/* the user frames of a stack with a reader's words */
	struct strtab *names;
	struct scache_ent *scache;   /* SCACHE_SLOTS entries */
	uint32_t tmp[HALF_FRAMES];   /* uncached symbolizer answers */
	uint64_t keys[KEY_FRAMES];   /* the stack being named, by file and offset */
	uint32_t frames[MAX_FRAMES]; /* the stack being built */
	char comms[LIST_MAX];	     /* [filter]: ','-separated globs */
	char cgroups[LIST_MAX];	     /* ... and cgroup path prefixes */
	struct proc_tracker *procs;  /* the cgroup answers' owner (NULL: read at every ask) */
	int cg_ext;		     /* their extension of it; -1: none */
	uint64_t cg_gen;	     /* bumped by each ingest__set_filter() */
	uint64_t cg_pruned_ns;
	char *cg_text;		     /* a read's scratch */
	size_t cg_cap;
	uint64_t filtered; /* atomic: read by HTTP threads */
	struct ingest_stats st;
};

struct ingest *ingest__new(struct symbolizer *sym, struct strtab *names)
{
	struct ingest *in = calloc(1, sizeof(*in));

	if (!in)
		goto fail;
	in->sym = sym;
	in->names = names;
	in->cg_ext = -1;
	in->scache = calloc(SCACHE_SLOTS, sizeof(*in->scache));
	if (!in->scache)
		goto fail;
	return in;
fail:
	ingest__free(in);
	errno = ENOMEM;
	return NULL;
}

void ingest__free(struct ingest *in)
{
	size_t i;

	if (!in)
		return;
	if (in->scache)
		for (i = 0; i < SCACHE_SLOTS; i++) {
			free(in->scache[i].ids);
			free(in->scache[i].keys);
		}
	free(in->scache);
	if (in->cg_ext >= 0)
		proc_tracker__ext_unregister(in->procs, in->cg_ext);
	free(in->cg_text);
	free(in);
}

int ingest__set_procs(struct ingest *in, struct proc_tracker *pt)
{
	int ext;

	if (in->cg_ext >= 0)
		proc_tracker__ext_unregister(in->procs, in->cg_ext);
	in->cg_ext = -1;
	in->procs = pt;
	if (!pt)
		return 0;
	ext = proc_tracker__ext_register(pt, &(struct proc_ext_ops){
		.name = "filter", .size = sizeof(struct cg_state), .keep_ns = CG_KEEP_NS });
	if (ext < 0)
		return ext;
	in->cg_ext = ext;
	return 0;
}

void ingest__set_unwinder(struct ingest *in, struct unwinder *u)
{
	in->unwind = u;
}

struct unwinder *ingest__unwinder(const struct ingest *in)
{
	return in->unwind;
}

int ingest__add_runtime(struct ingest *in, const struct runtime_ops *ops, void *rt)
{
	return runtime_set_add(&in->rts, ops, rt);
}

const struct runtime_set *ingest__runtimes(const struct ingest *in)
{
	return &in->rts;
}

const struct strtab *ingest__names(const struct ingest *in)
{
	return in->names;
}

uint64_t ingest__filtered(const struct ingest *in)
{
	return __atomic_load_n(&in->filtered, __ATOMIC_RELAXED);
}

void ingest__names_forget(struct ingest *in)
{
	size_t i;

	for (i = 0; i < SCACHE_SLOTS; i++)
		in->scache[i].expires_ns = 0;
}

void ingest__stats(const struct ingest *in, struct ingest_stats *ret)
{
	size_t i, mem = sizeof(*in) + SCACHE_SLOTS * sizeof(*in->scache);

	*ret = in->st;
	ret->filtered = ingest__filtered(in);
	for (i = 0; i < SCACHE_SLOTS; i++)
		mem += in->scache[i].cap * sizeof(uint32_t) + in->scache[i].kcap * sizeof(uint64_t);
	ret->mem_bytes = mem;
}

/* --- [filter] ----------------------------------------------------------------------------- */

int ingest__set_filter(struct ingest *in, const char *exclude_comms, const char *exclude_cgroups)
{
	const char *c = exclude_comms ? exclude_comms : "";
	const char *g = exclude_cgroups ? exclude_cgroups : "";

	if (strlen(c) >= sizeof(in->comms) || strlen(g) >= sizeof(in->cgroups))
		return -EINVAL;
	snprintf(in->comms, sizeof(in->comms), "%s", c);
	snprintf(in->cgroups, sizeof(in->cgroups), "%s", g);
	in->cg_gen++; /* the answers kept were for the old prefixes */
	return 0;
}

/* Does the ','-separated list @list hold an item for which @match(item, @s) is true? */
static bool list_any(const char *list, const char *s, bool (*match)(const char *, const char *))
{
	char item[256];
	const char *p = list;

	while (*p) {
		size_t n = strcspn(p, ",");

		if (n && n < sizeof(item)) {
			memcpy(item, p, n);
			item[n] = '\0';
			if (match(item, s))
				return true;
		}
		p += n + (p[n] == ',');
	}
	return false;
}

static bool glob_match(const char *glob, const char *s)
{
	return fnmatch(glob, s, 0) == 0;
}

/* @prefix matches the path itself or a path below it ("/a" matches "/a" and "/a/b", not "/ab"). */
static bool prefix_match(const char *prefix, const char *path)
{
	size_t n = strlen(prefix);

	while (n > 1 && prefix[n - 1] == '/')
		n--;
	return !strncmp(prefix, path, n) && (path[n] == '\0' || path[n] == '/' || n == 1);
}

/* Is @pid's cgroup (v2) under one of [filter]'s prefixes, as /proc tells it now? */
static bool cgroup_excluded(struct ingest *in, uint32_t pid)
{
	char cg[CG_PATH_MAX];
	size_t len;
	int r;

	in->st.cgroup_reads++;
	r = proc_tracker__cgroup(in->procs, pid, &in->cg_text, &in->cg_cap, &len);
	if (r && r != -EFBIG)
		return false; /* gone: nothing left to exclude it by */
	proc_cgroup_v2(in->cg_text, cg, sizeof(cg));
	return cg[0] && list_any(in->cgroups, cg, prefix_match);
}

bool ingest__excluded_at(struct ingest *in, uint32_t pid, const char *comm, uint64_t time_ns)
{
	struct proc_tracker *pt = in->procs;
	struct cg_state *cs = NULL, *cur;
	uint64_t now;

	if (in->comms[0] && list_any(in->comms, comm, glob_match))
		return true;
	if (!in->cgroups[0] || !pid)
		return false;
	if (in->cg_ext < 0)
		return cgroup_excluded(in, pid);
	now = mono_ns();
	if (now - in->cg_pruned_ns >= NSEC_PER_SEC) {
		proc_tracker__ext_prune(pt, in->cg_ext);
		in->cg_pruned_ns = now;
	}
	/* the current image's state first (made: a state for the image ended, with none current,
	 * would answer for samples taken after its end too) */
	cur = proc_tracker__ext(pt, in->cg_ext, pid, false);
	if (!cur && proc_tracker__ext_count(pt, in->cg_ext) < CG_PROCS)
		cur = proc_tracker__ext(pt, in->cg_ext, pid, true);
	/* the answer for the image the samples were taken in: one that ended since (an exec, an
	 * exit: the pid may be another process's by now) keeps its last answer */
	if (time_ns)
		cs = proc_tracker__ext_at(pt, in->cg_ext, pid, time_ns);
	if (cs && cs != cur && cs->at_ns && cs->gen == in->cg_gen) {
		in->st.cgroup_kept++;
		return cs->excluded;
	}
	if (!cur)
		return cgroup_excluded(in, pid); /* CG_PROCS held: asked again next time */
	if (cur->at_ns && cur->gen == in->cg_gen && now - cur->at_ns < CG_TTL_NS) {
		in->st.cgroup_kept++;
		return cur->excluded;
	}
	cur->excluded = cgroup_excluded(in, pid);
	cur->gen = in->cg_gen;
	cur->at_ns = now;
	return cur->excluded;
}

bool ingest__excluded(struct ingest *in, uint32_t pid, const char *comm)
{
	return ingest__excluded_at(in, pid, comm, 0);
}

/* --- naming ------------------------------------------------------------------------------- */

/* A live entry of hash @h. */
static bool ent_live(const struct scache_ent *e, uint64_t h, uint64_t now)
{
	return e->ids && e->hash == h && now < e->expires_ns;
}

/* Keeps @n @ids in @e, and @nkeys @keys (by file). 0 or -ENOMEM. */
static int ent_store_ids(struct scache_ent *e, const uint32_t *ids, uint32_t n,
			 const uint64_t *keys, size_t nkeys)
{
	if (n > e->cap || !e->ids) {
		uint32_t *nids = realloc(e->ids, ((size_t)n + 1) * sizeof(*nids));

		if (!nids)
			return -ENOMEM;
		e->ids = nids;
		e->cap = (size_t)n + 1;
	}
	if (nkeys > e->kcap) {
		uint64_t *nkeys_buf = realloc(e->keys, nkeys * sizeof(*nkeys_buf));

		if (!nkeys_buf)
			return -ENOMEM;
		e->keys = nkeys_buf;
		e->kcap = nkeys;
	}
	memmove(e->ids, ids, (size_t)n * sizeof(*ids));
	if (nkeys)
		memcpy(e->keys, keys, nkeys * sizeof(*keys));
	e->n = n;
	e->nkeys = (uint32_t)nkeys;
	return 0;
}

/* Makes @e (its ids and keys stored) the entry of the stack keyed by file, hash @fh. */
static void file_entry(struct scache_ent *e, uint64_t fh, uint32_t pid, uint64_t now)
{
	e->by_file = true;
	e->files_only = true;
	e->hash = fh;
	e->pid = pid;
	e->version = 0;
	e->expires_ns = now + SCACHE_FILE_TTL;
}

/*
 * Symbol ids of a stack, root first, through the cache: *ret points into the cache or the
 * ingest's scratch (valid until the next call). Returns the number of ids or -ENOMEM.
 */
static int symbolize(struct ingest *in, bool kernel, uint32_t pid, uint64_t time_ns,
		     const uint64_t *ips, size_t n, const uint32_t **ret)
{
	uint64_t h = hash_bytes(ips, n * sizeof(*ips), kernel ? 0x6b : 0x75) ^ hash_mix64(pid + 1);
	struct scache_ent *e = &in->scache[h & (SCACHE_SLOTS - 1)], *fe = NULL;
	uint64_t now = mono_ns(), ver = 0, unresolved = 0, not_file = 0, fh = 0;
	uint64_t ttl = SCACHE_KERN_TTL;
	bool files_only;
	int r;

	if (!kernel && symbolizer__has_retired(in->sym, pid)) {
		/* exec or pid reuse lately: the answer depends on when, so no caching */
		r = symbolizer__user_at(in->sym, pid, time_ns, ips, n, in->tmp, HALF_FRAMES);
		*ret = in->tmp;
		return r;
	}
	/* by file and offset: any process's stack of the same files and offsets */
	if (!kernel && n <= KEY_FRAMES && symbolizer__user_keys(in->sym, pid, ips, n, in->keys) == 1) {
		fh = hash_bytes(in->keys, n * sizeof(*in->keys), 0x66);
		fe = &in->scache[fh & (SCACHE_SLOTS - 1)];
		if (ent_live(fe, fh, now) && fe->by_file && fe->nkeys == n &&
		    !memcmp(fe->keys, in->keys, n * sizeof(*in->keys))) {
			in->st.cache_hits++;
			if (fe->pid != pid)
				in->st.cache_file_hits++;
			*ret = fe->ids;
			return (int)fe->n;
		}
	}
	/* a user stack's answer holds while its process's mappings and JIT symbols are unchanged */
	if (!kernel)
		ver = symbolizer__pid_version(in->sym, pid);
	if (ent_live(e, h, now) && !e->by_file && e->pid == pid && e->version == ver) {
		in->st.cache_hits++;
		*ret = e->ids;
		if (fe && e->files_only && fe != e) {
			/* named by files before its files were all read: now for every process */
			if (ent_store_ids(fe, e->ids, e->n, in->keys, n) == 0)
				file_entry(fe, fh, pid, now);
		}
		return (int)e->n;
	}
	in->st.cache_misses++;
	if (!kernel) {
		unresolved = symbolizer__user_retryable(in->sym);
		not_file = symbolizer__user_not_by_file(in->sym);
	}
	r = kernel ? symbolizer__kernel(in->sym, ips, n, in->tmp, HALF_FRAMES)
		   : symbolizer__user_at(in->sym, pid, time_ns, ips, n, in->tmp, HALF_FRAMES);
	if (r < 0)
		return r;
	if (!kernel && symbolizer__has_retired(in->sym, pid)) {
		/* its first naming found an image before an exec kept: no caching either */
		*ret = in->tmp;
		return r;
	}
	files_only = !kernel && symbolizer__user_not_by_file(in->sym) == not_file;
	if (fe && files_only) {
		/* every frame named by its file's symbols: any process of those files may use it */
		if (ent_store_ids(fe, in->tmp, (uint32_t)r, in->keys, n))
			return -ENOMEM;
		file_entry(fe, fh, pid, now);
		*ret = fe->ids;
		return r;
	}
	if (!kernel) {
		/* the call may have read the process for the first time, or read it again */
		ver = symbolizer__pid_version(in->sym, pid);
		ttl = ver && symbolizer__user_unresolved(in->sym) == unresolved ? SCACHE_STABLE_TTL
										: SCACHE_USER_TTL;
	}
	if (ent_store_ids(e, in->tmp, (uint32_t)r, NULL, 0))
		return -ENOMEM;
	e->by_file = false;
	e->files_only = files_only;
	e->hash = h;
	e->pid = pid;
	e->version = ver;
	e->expires_ns = now + ttl;
	*ret = e->ids;
	return r;
}

/* Appends the marker frame @name: its id in the names. */
static int add_marker(struct ingest *in, size_t *n, const char *name)
{
	int id = strtab__intern(in->names, name, strlen(name));

	if (id < 0)
		return id;
	in->frames[(*n)++] = (uint32_t)id;
	return 0;
}

/*
 * Is kernel frame @name where an interrupt came in (x86-64: asm_sysvec_*, asm_common_interrupt;
 * arm64: el1h_64_irq, el0t_64_irq) or where softirqs ran (on an interrupt's exit, or in a task
 * at local_bh_enable())? A wakeup under it was the interrupt's, not the task it came in on.
 */
static bool irq_frame(const char *name, size_t len)
{
#define PRE(x) { x, sizeof(x) - 1 }
	static const struct {
		const char *s;
		size_t len;
	} pre[] = { PRE("asm_sysvec_"), PRE("asm_common_interrupt"), PRE("el1h_64_irq"),
		    PRE("el0t_64_irq"), PRE("handle_softirqs"), PRE("__do_softirq") };
#undef PRE
	size_t i;

	for (i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
		if (len >= pre[i].len && !memcmp(name, pre[i].s, pre[i].len))
			return true;
	return false;
}

/*
 * A waker's stack (EMBER_KIND_WAKEUP) whose kernel part has an interrupt (irq_frame()): the
 * wakeup came from the interrupt (a timer's, a device's), and the task it came in on, taken as
 * `current`, did not make it: its user stack and the kernel frames under the interrupt go, the
 * marker IRQ_WAKER_FRAME stands in their place (the root stays that task's comm). A leaf
 * __traceiter_sched_waking/wakeup frame goes too. Returns the new number of frames, or < 0.
 */
static int irq_waker(struct ingest *in, struct ingest_stack *st, size_t n)
{
	static const char traceiter[] = "__traceiter_sched_wak";
	size_t i, e;
	int id;

	/* the tracepoint's iterator as the leaf (more than one program on sched_waking, another
	 * emberd's say, are called through it; with one, through a static call: no frame) */
	if (st->nr_kernel > 1 &&
	    strtab__len(in->names, in->frames[n - 1]) >= sizeof(traceiter) - 1 &&
	    !memcmp(strtab__str(in->names, in->frames[n - 1]), traceiter, sizeof(traceiter) - 1)) {
		n--;
		st->nr_kernel--;
	}
	/* "no interrupt frame" is e == n of the stack as trimmed (set before the trim, a waker
	 * without an interrupt under another program on sched_waking came out of here with no
	 * frames and nr_kernel -1: the store refused it, and the rest of its batch was lost) */
	e = n;
	for (i = n - st->nr_kernel; i < n; i++)
		if (irq_frame(strtab__str(in->names, in->frames[i]),
			      strtab__len(in->names, in->frames[i]))) {
			e = i;
			break;
		}
	if (e == n)
		return (int)n;
	id = strtab__intern(in->names, IRQ_WAKER_FRAME, strlen(IRQ_WAKER_FRAME));
	if (id < 0)
		return id;
	memmove(in->frames + 1, in->frames + e, (n - e) * sizeof(*in->frames));
	in->frames[0] = (uint32_t)id;
	st->nr_kernel = n - e;
	st->flags &= ~(unsigned int)INGEST_STACK_TRUNCATED;
	in->st.irq_wakers++;
	return (int)(n - e + 1);
}

/* A stack the sampler could not keep: a collision in its map, or lost. */
static const char *lost_name(int err, bool kernel)
{
	if (err == -EEXIST)
		return kernel ? "[stack collision]_[k]" : "[stack collision]";
	return kernel ? "[lost stack]_[k]" : "[lost stack]";
}

/*
 * A native run of a runtime's user stack (@n ips, leaf first) symbolized as any stack is (cached)
 * and appended to in->rtids at *@out (root first, cut at MAX_FRAMES). 0 or -errno.
 */
static int add_native(struct ingest *in, uint32_t pid, uint64_t t, const uint64_t *ips, size_t n,
		      size_t *out)
{
	const uint32_t *ids;
	int r;

	if (!n)
		return 0;
	r = symbolize(in, false, pid, t, ips, n, &ids);
	if (r < 0)
		return r;
	if ((size_t)r > MAX_FRAMES - *out)
		r = (int)(MAX_FRAMES - *out);
	memcpy(in->rtids + *out, ids, (size_t)r * sizeof(*ids));
	*out += (size_t)r;
	return 0;
}

/*
 * The user frames of a group whose walk stored a reader's words after the native ips
 * (RUNTIME_WORDS_AFTER; bpf_shared.h, V8: one per JavaScript frame, its native ip's index and
 * its SharedFunctionInfo), root first in *@ret: each such frame by the reader's names (runtime.h:
 * its function, and those inlined into it at its ip) in place of its native ip, or by that ip
 * when it cannot be named; the native runs between them symbolized as any stack is (cached
 * each). Frames or -errno.
 */
static int symbolize_after(struct ingest *in, const struct sampler_group *g,
			   const struct runtime_ops *ops, void *rt, const uint32_t **ret)
{
	const uint64_t *ips = g->user_ips;
	uint64_t t = g->nr_times ? g->times_ns[0] : 0, word[EMBER_MAX_STACK_DEPTH + 1] = { 0 };
	uint32_t jids[RUNTIME_MAX_FRAMES];
	size_t nn = 0, end, i, out = 0;
	int r, nj;

	while (nn < g->nr_user && !EMBER_V8F_IS(ips[nn]))
		nn++;
	if (nn > EMBER_MAX_STACK_DEPTH)
		nn = EMBER_MAX_STACK_DEPTH;
	for (i = nn; i < g->nr_user; i++)
		if (EMBER_V8F_IS(ips[i]) && EMBER_V8F_IDX(ips[i]) < nn)
			word[EMBER_V8F_IDX(ips[i])] = ips[i];
	/* from the root down: each native run [i + 1, end) leaf first, then the frame at i */
	for (end = i = nn; i-- > 0;) {
		if (!word[i])
			continue;
		nj = ops->frame_names(rt, g->pid, word[i], ips[i], i == 0, jids, RUNTIME_MAX_FRAMES);
		if (nj == -ENOMEM)
			return nj;
		if (nj < 0)
			continue; /* named by its native ip, with its run */
		r = add_native(in, g->pid, t, ips + i + 1, end - i - 1, &out);
		if (r < 0)
			return r;
		for (int k = 0; k < nj && out < MAX_FRAMES; k++)
			in->rtids[out++] = jids[k];
		end = i;
	}
	r = add_native(in, g->pid, t, ips, end, &out);
	if (r < 0)
		return r;
	*ret = in->rtids;
	return (int)out;
}

/*
 * The user frames of a group whose walk replaced the ips of some frames by a reader's words
 * (RUNTIME_WORDS_IN_PLACE; bpf_shared.h, HotSpot: Java frames), root first in *@ret: each such
 * frame by the reader's names (a method, and those inlined into it), the native runs between
 * them symbolized as any stack is. Frames or -errno.
 */
static int symbolize_in_place(struct ingest *in, const struct sampler_group *g,
			      const struct runtime_ops *ops, void *rt, const uint32_t **ret)
{
	const uint64_t *ips = g->user_ips;
	uint64_t t = g->nr_times ? g->times_ns[0] : 0;
	size_t end = g->nr_user, i, out = 0;
	uint32_t jids[RUNTIME_MAX_FRAMES];
	int r, nj;

	if (end > EMBER_MAX_STACK_DEPTH + 1)
		end = EMBER_MAX_STACK_DEPTH + 1;
	/* from the root down: each native run [i + 1, end) leaf first, then the frame at i */
	for (i = end; i-- > 0;) {
		if (!EMBER_HSF_IS(ips[i]))
			continue;
		nj = ops->frame_names(rt, g->pid, ips[i], 0, i == 0, jids, RUNTIME_MAX_FRAMES);
		if (nj < 0)
			return nj;
		r = add_native(in, g->pid, t, ips + i + 1, end - i - 1, &out);
		if (r < 0)
			return r;
		for (int k = 0; k < nj && out < MAX_FRAMES; k++)
			in->rtids[out++] = jids[k];
		end = i;
	}
	r = add_native(in, g->pid, t, ips, end, &out);
	if (r < 0)
		return r;
	*ret = in->rtids;
	return (int)out;
}

/* The user frames of @g, root first in *@ret: by the reader whose words its walk stored, else
 * natively; then merged with the frames of the readers that merge (CPython). Frames or -errno. */
static int symbolize_user(struct ingest *in, const struct sampler_group *g, const uint32_t **ret)
{
	const struct runtime_set *s = &in->rts;
	int r = 1;
	size_t i;

	for (i = 0; i < s->n; i++) {
		const struct runtime_ops *ops = s->r[i].ops;

		if (ops->words == RUNTIME_WORDS_NONE || !(g->user_flags & ops->ustack_flag))
			continue;
		r = ops->words == RUNTIME_WORDS_AFTER ? symbolize_after(in, g, ops, s->r[i].rt, ret)
						      : symbolize_in_place(in, g, ops, s->r[i].rt, ret);
		break;
	}
	if (i == s->n)
		r = symbolize(in, false, g->pid, g->nr_times ? g->times_ns[0] : 0, g->user_ips,
			      g->nr_user, ret);
	for (i = 0; r >= 0 && i < s->n; i++)
		if (s->r[i].ops->merge) /* e.g. Python frames where the interpreter ran them */
			r = s->r[i].ops->merge(s->r[i].rt, g, *ret, (size_t)r, ret);
	return r;
}

static int add_ids(struct ingest *in, size_t *n, const uint32_t *ids, int r)
{
	if ((size_t)r > MAX_FRAMES - *n)
		r = (int)(MAX_FRAMES - *n);
	memcpy(in->frames + *n, ids, (size_t)r * sizeof(*ids));
	*n += (size_t)r;
	return 0;
}

int ingest__group(struct ingest *in, const struct sampler_group *g, ingest_sink_fn sink, void *ctx)
{
	struct ingest_stack st = { .frames = in->frames, .g = g };
	size_t n = 0, i, total = g->nr_times + g->untimed;
	const uint32_t *ids;
	int r;

	in->st.groups++;
	if (g->user_ips)
		unwinder__sampled(in->unwind, g->pid); /* its tables stay while it runs */
	if ((in->comms[0] || in->cgroups[0]) &&
	    ingest__excluded_at(in, g->pid, g->comm, g->nr_times ? g->times_ns[0] : 0)) {
		__atomic_fetch_add(&in->filtered, total, __ATOMIC_RELAXED);
		return 0;
	}
	/* the files its walk reached get their unwind tables */
	if (g->user_ips)
		unwinder__reached(in->unwind, g->pid, g->user_ips, g->nr_user, total);
	/* user frames, root first; a walk cut short starts with its marker where the outer frames
	 * are missing (and the process's mappings are read again: new code since?) */
	if (g->user_ips && g->nr_user) {
		if (g->user_flags & EMBER_USTACK_TRUNC) {
			r = add_marker(in, &n, TRUNCATED_FRAME);
			if (r < 0)
				return r;
			st.flags |= INGEST_STACK_TRUNCATED;
			unwinder__refresh_pid(in->unwind, g->pid);
		}
		runtime_set_sampled(&in->rts, g->pid); /* a new process: a Node? a JVM? */
		r = symbolize_user(in, g, &ids);
		if (r < 0)
			return r;
		add_ids(in, &n, ids, r);
	} else if (g->pid != 0 && g->user_err != -EFAULT) {
		r = add_marker(in, &n, lost_name(g->user_err, false));
		if (r < 0)
			return r;
		st.flags |= INGEST_STACK_USER_MISSING;
	} else if (g->pid != 0) {
		st.flags |= INGEST_STACK_USER_MISSING; /* kernel thread, or no user context */
	}
	/* kernel frames on top, root first */
	if (g->kernel_ips && g->nr_kernel) {
		r = symbolize(in, true, 0, 0, g->kernel_ips, g->nr_kernel, &ids);
		if (r < 0)
			return r;
		st.nr_kernel = n;
		add_ids(in, &n, ids, r);
		st.nr_kernel = n - st.nr_kernel;
	} else if (g->pid == 0 && g->kernel_err == -EFAULT) {
		/* idle sample without its stack (sampling.idle_stacks = no): one marker frame */
		r = add_marker(in, &n, IDLE_MARKER_FRAME);
		if (r < 0)
			return r;
		st.nr_kernel = 1;
	} else if (g->kernel_err != -EFAULT && g->kernel_err) {
		r = add_marker(in, &n, lost_name(g->kernel_err, true));
		if (r < 0)
			return r;
		st.nr_kernel = 1;
		st.flags |= INGEST_STACK_KERN_MISSING;
	} else {
		st.flags |= INGEST_STACK_KERN_MISSING;
	}
	/* the one idle rule: the idle task, in an idle function (or the marker) */
	if (idle_task(g->pid, g->comm, strnlen(g->comm, sizeof(g->comm))))
		for (i = n - st.nr_kernel; i < n; i++)
			if (idle_frame(strtab__str(in->names, in->frames[i]),
				       strtab__len(in->names, in->frames[i]))) {
				st.flags |= INGEST_STACK_IDLE;
				break;
			}
	if (g->kind == EMBER_KIND_WAKEUP && st.nr_kernel) {
		r = irq_waker(in, &st, n);
		if (r < 0)
			return r;
		n = (size_t)r;
	}
	st.nr_frames = n;
	return sink(&st, ctx);
}
