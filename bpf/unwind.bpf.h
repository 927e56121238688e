/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The user stack walk of sampler.bpf.c (included once by it): from the interrupted user
 * registers, frame by frame, with the unwind rows userspace compiled from each file's CFI
 * (src/daemon/unwind/cfi.c, unwind.c). Per frame: the mapping holding the address (the previous
 * frame's, else a binary search in the process's list), its rule (the rule cache by file and
 * offset, else the file's index by address block and a binary search in that block's few rows),
 * then the CFA, the return address at CFA - 8 and the caller's rbp by the row's rules. Frames
 * without a row (JIT code, a gap in the CFI, a process not listed yet) step by the frame pointer.
 *
 * Verifier: the frames are a bpf_loop() callback (verified once, whatever the depth), each
 * search a loop bounded by a constant; every index into an array is masked or checked against
 * its bound on the path the verifier sees.
 */
#ifndef EMBER_UNWIND_BPF_H
#define EMBER_UNWIND_BPF_H

/* Sizes set by userspace before load. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct ember_unwind_prow);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE); /* written through a mapping (sampler.c) */
} unwind_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32); /* tgid */
	__type(value, struct ember_unwind_proc);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} unwind_procs SEC(".maps");

/* Built tables by file (bpf_shared.h): for addresses the process's list lacks. Size set by
 * userspace (1 and vma_fallback off: none). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct ember_unwind_file_key);
	__type(value, struct ember_unwind_file);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} unwind_files SEC(".maps");

/* The kernel's offsets of the fields the mapping lookup reads (from its BTF, by userspace: no
 * CO-RE at load); vma_fallback is off when one was not found. */
const volatile bool vma_fallback = false;
const volatile __u32 vma_start_off, vma_end_off, vma_pgoff_off, vma_file_off, file_inode_off,
    inode_ino_off, inode_sb_off, sb_dev_off, inode_size_off, inode_mtime_sec_off,
    inode_mtime_nsec_off;

/* Mapping lookups per walk: one. In the sample's interrupt bpf_find_vma() leaves the mm's lock
 * to an irq_work that runs after the program, and a second call meanwhile gets -EBUSY; the
 * mappings found are kept per process (vma_cache), so the next samples find the next file. */
#define VMA_LOOKUPS_MAX 1

/* The mappings a process's walks found through the kernel, with their tables: a list of its own
 * in BPF while userspace has none (or lacks them). Forgotten at exec (on_exec) and by the LRU. */
#define VMA_CACHED 8
struct vma_cache {
	__u32 n;	/* entries in use */
	__u32 next;	/* the next one to replace when full */
	struct ember_unwind_map m[VMA_CACHED];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32); /* tgid */
	__type(value, struct vma_cache);
	__uint(max_entries, 4096);
} vma_cache SEC(".maps");

/* An empty vma_cache value to insert (too big for the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct vma_cache);
	__uint(max_entries, 1);
} vma_fresh SEC(".maps");

/* The walk's mapping found through the kernel, per CPU (not on the stack: the off-CPU program
 * is at 6.1's combined stack limit). */
struct vma_scratch {
	struct ember_unwind_map map;	/* [start, end): the last one found (row_count 0: no table) */
	/* the walk's own (reset at its start, walk_regs()): in map memory, where the verifier does
	 * not tell a walk's states apart by them */
	__u32 lookups;	/* bpf_find_vma() calls */
	__u32 used;	/* a frame was walked by a table found that way */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct vma_scratch);
	__uint(max_entries, NEST_MAX); /* one per level (nest.bpf.h) */
} vma_scratch SEC(".maps");

/* The stack being walked, per CPU: too big for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct ember_ustack);
	__uint(max_entries, NEST_MAX); /* one per level (nest.bpf.h) */
} ustack_scratch SEC(".maps");

/*
 * The rules of frames seen lately, per CPU, direct-mapped by (table id, file address): most
 * samples repeat the return addresses of the samples before them, and a hit saves the row
 * search. Keyed by file, not by process, every process of one binary (and every process using
 * libc) shares what one learned; a table's id is never reused, so an entry never outlives its
 * table's meaning. Rules that step by frame pointer (a gap in the CFI, a rule the walker cannot
 * express, an address before the first row) are cached too.
 */
#define RULE_CACHE_SLOTS 4096
struct rule_slot {
	__u32 off;	/* file address */
	__u32 id;	/* table id: 0 is an empty slot */
	__u32 rule;
	__u32 sum;	/* RULE_SLOT_SUM of the three: a slot written half by one program and half by
			   another that interrupted it (nest.bpf.h) is a miss, not a wrong rule */
};
#define RULE_SLOT_SUM(off, id, rule)                                                               \
	((((off) * 0x9e3779b1u) ^ ((id) * 0x85ebca77u) ^ ((rule) * 0xc2b2ae3du)) + 0x27d4eb2fu)

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct rule_slot);
	__uint(max_entries, RULE_CACHE_SLOTS);
} rule_cache SEC(".maps");

/* Walks stopped short, by reason (EMBER_STOP_*), per CPU: one increment per truncated walk; and
 * the walks' work (EMBER_WALK_*), added once per walk. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct ember_walk_stops);
	__uint(max_entries, 1);
} walk_stops SEC(".maps");


/* Rows in unwind_rows (its max_entries). */
const volatile __u32 nr_rows = 1;

/* x86-64 pt_regs (the UAPI layout, a stable ABI): word offsets. */
#define REGS_BP 4
#define REGS_IP 16
#define REGS_CS 17
#define REGS_SP 19

/* The ucontext's saved registers, at the rsp of a signal trampoline (struct rt_sigframe after
 * the handler returned): uc_flags, uc_link, uc_stack (40 bytes), then mcontext r8..r15, rdi,
 * rsi, rbp, rbx, rdx, rax, rcx, rsp, rip. */
#define UC_RBP 120
#define UC_RSP 160
#define UC_RIP 168

/* Frames in a row outside every known mapping (stale list, JIT code allocated since): past this
 * many the walk stops, as truncated, rather than follow a frame pointer through garbage. */
#define MAX_UNKNOWN_RUN 2

/* vma_map()'s row_start for a mapping of no file (anonymous: JIT code, the stack): no table, and
 * no file whose own code would keep frame pointers */
#define VMA_NO_FILE 0xffffffffu

struct walk {
	struct ember_ustack *st;		/* per-CPU scratch */
	const struct ember_unwind_proc *proc;	/* NULL: frame pointers only */
	__u32 pid;
	__u32 last_m;	/* the previous frame's mapping, + 1 (0: none) */
	__u64 ip, sp, bp;
	__u64 hash;
	__u32 unknown_run;
	__u32 max;	/* frames the walk may store: ips above are Python's (python.bpf.h) */
	bool exact_ip;	/* ip is not a return address (the first frame, after a signal frame) */
	bool done;
	__u8 fp_why;	/* why this frame steps by frame pointer: EMBER_STOP_NO_TABLE... */
	__u8 stop;	/* why the walk stopped short: EMBER_STOP_* (walk_stops) */
	__u32 rt;	/* the process's runtimes (EMBER_RT_*), in the hole before ws: no stack of
			   its own (6.1 bounds the walk's chain of frames to 512 bytes) */
	struct ember_walk_stops *ws;	/* this CPU's counters (NULL: none) */
};

/* Counts a walk's work (EMBER_WALK_*) in this CPU's walk_stops: map memory, which the verifier
 * does not track value by value as it would a counter on the stack. */
static __always_inline void wcount(struct walk *w, int i, __u64 n)
{
	if (w->ws)
		w->ws->walk[i] += n;
}

/* Stops the walk as truncated for @why (EMBER_STOP_*): returns 1, the callback's "stop". */
static __always_inline long stop_short(struct walk *w, __u8 why)
{
	w->st->flags |= EMBER_USTACK_TRUNC;
	w->stop = why;
	return 1;
}

/*
 * Binary searches without a data-dependent loop exit: the span n halves the same way whatever the
 * data, only the base moves, and the base is never compared in a branch, so the verifier prunes
 * the paths of each comparison at once instead of following 2^depth of them (a "lo < hi" search
 * took it past its million-instruction limit).
 */

/* The search for a mapping, for its bpf_loop() callback (one halving per call). */
struct map_search {
	const struct ember_unwind_proc *p;
	__u64 pc;
	__u32 base, n;
};

static long map_halve(__u32 i, void *ctx)
{
	struct map_search *ms = ctx;
	__u32 half;

	if (ms->n <= 1)
		return 1;
	half = ms->n / 2;
	if (ms->p->maps[(ms->base + half) & (EMBER_UNWIND_MAX_MAPS - 1)].start <= ms->pc)
		ms->base += half;
	ms->n -= half;
	return 0;
}

/* The mapping holding @pc: its index, or -1. */
static __always_inline int find_map(const struct ember_unwind_proc *p, __u64 pc)
{
	struct map_search ms = { .p = p, .pc = pc, .n = p->nr };
	__u32 base;

	if (ms.n > EMBER_UNWIND_MAX_MAPS)
		ms.n = EMBER_UNWIND_MAX_MAPS;
	if (!ms.n)
		return -1;
	/* the last mapping with start <= pc; 8 halvings take 256 to 1 */
	bpf_loop(9, map_halve, &ms, 0);
	base = ms.base & (EMBER_UNWIND_MAX_MAPS - 1);
	if (pc < p->maps[base].start || pc >= p->maps[base].end)
		return -1;
	return (int)base;
}

/* A binary search's state, for its bpf_loop() callback (one halving per call). */
struct row_search {
	__u32 base, n, pc;
};

static long row_halve(__u32 i, void *ctx)
{
	struct row_search *rs = ctx;
	const struct ember_unwind_prow *r;
	__u32 half, idx;

	if (rs->n <= 1)
		return 1;
	half = rs->n / 2;
	idx = rs->base + half;
	r = bpf_map_lookup_elem(&unwind_rows, &idx);
	if (!r)
		return 1;
	if (r->pc <= rs->pc)
		rs->base = idx;
	rs->n -= half;
	return 0;
}

/*
 * The rule of @pc (a file address) in the table at [start, start + count) of the rows array
 * (bpf_shared.h: header, index, rows), whose header's first element is @hdr: the row's rule, or
 * 0 (a gap: frame pointer) when no row covers @pc. -1: the table is malformed (not cached).
 */
static __always_inline __s64 find_rule(struct walk *w, __u32 start, __u32 count, __u32 nblocks,
				       __u32 pc)
{
	struct row_search rs;
	const struct ember_unwind_prow *r, *ix;
	long found;
	__u32 idx, k, rows, lo, hi;

	if (start + count > nr_rows || start + count < start ||
	    count < EMBER_UNWIND_HDR + nblocks || !nblocks)
		return -1;
	rows = start + EMBER_UNWIND_HDR + nblocks;
	idx = start + 1;
	r = bpf_map_lookup_elem(&unwind_rows, &idx);
	if (!r)
		return -1;
	if (pc < r->pc)
		return 0; /* before the first row */
	k = (pc - r->pc) >> (r->rule & 31);
	if (k >= nblocks)
		k = nblocks - 1;
	idx = start + EMBER_UNWIND_HDR + k;
	ix = bpf_map_lookup_elem(&unwind_rows, &idx);
	if (!ix)
		return -1;
	lo = ix->pc;
	hi = ix->rule;
	if (hi < lo || rows + hi >= start + count)
		return -1;
	/* the last row with row.pc <= pc in [lo, hi]: a block's few rows; 25 halvings take 32 M
	 * rows to 1 */
	rs.base = rows + lo;
	rs.n = hi - lo + 1;
	rs.pc = pc;
	found = bpf_loop(25, row_halve, &rs, 0);
	wcount(w, EMBER_WALK_HALVINGS, found);
	wcount(w, EMBER_WALK_SEARCHES, 1);
	r = bpf_map_lookup_elem(&unwind_rows, &rs.base);
	if (!r)
		return -1;
	return r->pc > pc ? 0 : (__s64)r->rule;
}

static __always_inline int read_u64(__u64 *dst, __u64 addr)
{
	return bpf_probe_read_user(dst, sizeof(*dst), (const void *)addr);
}

/* One step by the frame pointer: 0, or 1 to stop. */
static __always_inline int fp_step(struct walk *w)
{
	__u64 fr[2]; /* the saved rbp, the return address: one read */

	wcount(w, EMBER_WALK_FP_STEPS, 1);
	if (!w->bp) {
		w->st->flags |= EMBER_USTACK_END; /* the chain's end */
		return 1;
	}
	/* the walk came here for want of a rule: that is why it stops (w->fp_why) */
	if (w->bp < w->sp || bpf_probe_read_user(fr, sizeof(fr), (const void *)w->bp))
		return stop_short(w, w->fp_why);
	w->sp = w->bp + 16;
	w->bp = fr[0];
	w->ip = fr[1];
	w->exact_ip = false;
	return 0;
}

/*
 * In a V8 process (CPU samples), a frame about to be stepped by frame pointer is noted, to be
 * looked at as a JavaScript frame after the walk (v8.bpf.h). The flag and the count are in map
 * memory: on the stack the verifier would tell each value apart and walk the frame callback
 * again for each; and struct walk keeps its size (offcpu_resume is at 6.1's 512 bytes).
 */
static __always_inline void fp_note(struct walk *w, __u32 n)
{
	struct v8_scratch *sc = v8_scratch_get();
	__u32 k;

	if (!sc || !sc->on)
		return;
	k = sc->n;
	if (k >= V8_MAX_NOTED)
		return;
	sc->n = k + 1;
	barrier_var(k);
	k &= V8_MAX_NOTED - 1;
	sc->fp[k] = w->bp;
	sc->idx[k] = n;
}

/*
 * In a JVM process (CPU samples), a frame whose pc is in its code heaps is stepped by
 * hs_step() (hotspot.bpf.h), its ip replaced by the method's word: 0 or 1 as walk_frame()
 * returns, or -1 when the pc is not the JVM's (the native walk goes on).
 */
static __always_inline long hs_frame(struct walk *w, __u32 n)
{
	struct hs_scratch *sc = hs_scratch_get();
	int r;

	if (!sc)
		return -1;
	sc->ip = w->ip;
	sc->sp = w->sp;
	sc->bp = w->bp;
	sc->exact = w->exact_ip;
	r = hs_step(w->pid);
	if (!r)
		return -1;
	if (r != 1)
		return stop_short(w, EMBER_STOP_UNREADABLE);
	w->st->ips[n & 127] = sc->word;
	w->st->flags |= EMBER_USTACK_HS;
	w->hash = (w->hash ^ sc->word) * 0x100000001b3ULL;
	/* callers live at higher addresses */
	if (sc->sp <= w->sp)
		return stop_short(w, EMBER_STOP_LOOP);
	w->ip = sc->ip;
	w->sp = sc->sp;
	w->bp = sc->bp;
	w->exact_ip = false;
	return 0;
}

/* What bpf_find_vma()'s callback read (its context must be on the stack): end 0, nothing. */
struct vma_found {
	__u64 start, end, pgoff, file;
};

/* bpf_find_vma()'s callback: the mapping's range, page offset and file (0: anonymous). */
static long vma_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_found *vf = data;
	__u64 v = (__u64)vma;

	if (bpf_probe_read_kernel(&vf->start, 8, (void *)(v + vma_start_off)) ||
	    bpf_probe_read_kernel(&vf->pgoff, 8, (void *)(v + vma_pgoff_off)) ||
	    bpf_probe_read_kernel(&vf->file, 8, (void *)(v + vma_file_off)) ||
	    bpf_probe_read_kernel(&vf->end, 8, (void *)(v + vma_end_off)))
		vf->end = 0;
	return 0;
}

static __always_inline struct vma_scratch *vma_scratch_get(void)
{
	return bpf_map_lookup_elem(&vma_scratch, NEST_KEY);
}

/* Adds @n to this CPU's walk counter @i (EMBER_WALK_*), from a function without the walk. */
static __always_inline void wcount_cpu(int i, __u64 n)
{
	__u32 zero = 0;
	struct ember_walk_stops *ws = bpf_map_lookup_elem(&walk_stops, &zero);

	if (ws)
		ws->walk[i] += n;
}

/*
 * Whether @inode is still the file @f's table was read from: its size and mtime as userspace saw
 * them then (ember_unwind_file). A deleted file's inode number goes to the next file made there.
 */
static __always_inline bool file_same(__u64 inode, const struct ember_unwind_file *f)
{
	__s64 size = 0, sec = 0;
	__u32 nsec = 0;

	if (bpf_probe_read_kernel(&size, 8, (void *)(inode + inode_size_off)) ||
	    bpf_probe_read_kernel(&sec, 8, (void *)(inode + inode_mtime_sec_off)) ||
	    bpf_probe_read_kernel(&nsec, 4, (void *)(inode + inode_mtime_nsec_off)))
		return false;
	if ((__u64)size == f->size && sec * 1000000000 + nsec == f->mtime_ns)
		return true;
	wcount_cpu(EMBER_WALK_VMA_STALE, 1);
	return false;
}

/*
 * The mapping holding @pc in process @pid as the kernel has it, with the table built for its
 * file when there is one (row_count 0: none, frame pointers there), for an address the process's
 * list lacks: 1 when it is in vma_scratch's map, 0 when the lookup is not possible (off, too
 * many this walk, the mm lock taken: -EBUSY). A global function, verified once on its own and not
 * for each state of the frame callback that calls it (6.18 verifies a callback until its states
 * converge: inlined, this was a quarter of do_sample's instructions processed).
 */
__noinline int vma_find(__u32 pid, __u64 pc)
{
	struct ember_unwind_file_key k = {};
	struct vma_found vf = {};
	const struct ember_unwind_file *f;
	struct vma_scratch *vs;
	struct vma_cache *c;
	__u32 i;
	__u64 inode = 0, sb = 0, ino = 0;
	__u32 zero = 0, dev = 0;

	vs = vma_scratch_get();
	if (!vs)
		return 0;
	if (pc >= vs->map.start && pc < vs->map.end) {
		vs->used |= vs->map.row_count != 0;
		return 1;
	}
	c = bpf_map_lookup_elem(&vma_cache, &pid);
	if (c) {
		for (i = 0; i < VMA_CACHED; i++) {
			if (i >= c->n)
				break;
			if (pc >= c->m[i].start && pc < c->m[i].end) {
				vs->map = c->m[i];
				vs->used |= vs->map.row_count != 0;
				return 1;
			}
		}
	}
	if (vs->lookups >= VMA_LOOKUPS_MAX)
		return 0;
	vs->lookups++;
	wcount_cpu(EMBER_WALK_VMA_LOOKUPS, 1);
	if (bpf_find_vma(bpf_get_current_task_btf(), pc, vma_cb, &vf, 0) || !vf.end)
		return 0;
	vs->map.start = vf.start;
	vs->map.end = vf.end;
	vs->map.row_start = VMA_NO_FILE;
	vs->map.row_count = 0;
	vs->map.bias = 0;
	/* anonymous (JIT code), or a file without a table yet: frame pointers there, and not
	 * kept (its table may come) */
	if (!vf.file ||
	    bpf_probe_read_kernel(&inode, 8, (void *)(vf.file + file_inode_off)) || !inode ||
	    bpf_probe_read_kernel(&ino, 8, (void *)(inode + inode_ino_off)) ||
	    bpf_probe_read_kernel(&sb, 8, (void *)(inode + inode_sb_off)) || !sb ||
	    bpf_probe_read_kernel(&dev, 4, (void *)(sb + sb_dev_off)))
		return 1;
	vs->map.row_start = 0;
	k.ino = ino;
	k.dev = dev;
	f = bpf_map_lookup_elem(&unwind_files, &k);
	if (!f || !file_same(inode, f))
		return 1;
	vs->map.row_start = f->row_start;
	vs->map.row_count = f->row_count;
	vs->map.bias = vf.start - (vf.pgoff << 12) - f->vdelta;
	wcount_cpu(EMBER_WALK_VMA_TABLES, 1);
	vs->used = 1;
	if (!c) {
		struct vma_cache *fresh = bpf_map_lookup_elem(&vma_fresh, &zero);

		if (fresh)
			bpf_map_update_elem(&vma_cache, &pid, fresh, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&vma_cache, &pid);
	}
	if (c) {
		i = c->n < VMA_CACHED ? c->n++ : c->next++ % VMA_CACHED;
		c->m[i & (VMA_CACHED - 1)] = vs->map;
	}
	return 1;
}

/* vma_find()'s mapping for @pc, or NULL. */
static __always_inline const struct ember_unwind_map *vma_map(struct walk *w, __u64 pc)
{
	struct vma_scratch *vs;

	if (!vma_find(w->pid, pc))
		return NULL;
	vs = vma_scratch_get();
	return vs ? &vs->map : NULL;
}

/* A frame was walked by a table vma_find() found, this walk. */
static __always_inline bool vma_used(void)
{
	struct vma_scratch *vs = vma_scratch_get();

	return vs && vs->used;
}

/* A frame-pointer step of walk_frame(): one place for every reason (fp_step, noted first when
 * @js), so that the verifier follows it once per state and not once per reason. */
#define FP_STEP() goto fp

/* One frame: records w->ip, then finds the caller. 0 go on, 1 stop. @js (a constant): frames
 * stepped by frame pointer are noted for the V8 look (v8.bpf.h). */
static __always_inline long walk_frame(void *ctx, bool js)
{
	struct walk *w = ctx;
	const struct ember_unwind_proc *p = w->proc;
	const struct ember_unwind_map *map;
	const struct ember_unwind_prow *hdr;
	struct rule_slot *slot;
	__u32 rule, type, slot_key, foff, id, start;
	__s64 off, found;
	__u64 pc, cfa, ra, nbp = w->bp, sp = w->sp;
	__u32 n = w->st->nr;
	int m;

	if (!w->ip) {
		w->st->flags |= EMBER_USTACK_END;
		return 1;
	}
	if (n >= EMBER_MAX_STACK_DEPTH || n >= w->max)
		return stop_short(w, EMBER_STOP_DEPTH);
	w->st->ips[n & 127] = w->ip;
	w->st->nr = n + 1;
	w->hash = (w->hash ^ w->ip) * 0x100000001b3ULL;
	w->fp_why = EMBER_STOP_NO_TABLE;
	wcount(w, EMBER_WALK_FRAMES, 1);
	/* a JVM's code heaps: its frames by its rules (hotspot.bpf.h) */
	if (js && hs_scratch_on()) {
		long hr = hs_frame(w, n);

		if (hr >= 0)
			return hr;
	}
	/* a return address points after the call: look up the call itself */
	pc = w->exact_ip ? w->ip : w->ip - 1;
	/* not listed yet (its exec's list still in the worker's queue): the kernel's mapping and
	 * its file's table, for CPU samples */
	if (!p) {
		if (!js || !vma_fallback)
			FP_STEP();
		map = vma_map(w, pc);
		/* a file's code (with its table, or without one: frame pointers there) */
		if (map && (map->row_count || map->row_start != VMA_NO_FILE)) {
			w->unknown_run = 0;
			goto have_map;
		}
		/* an address not looked up (one lookup a walk), or no file's: once a table has
		 * walked this stack, rbp is what the code below kept in it, a frame pointer only if
		 * that code keeps one, and a step by it through a file that does not (a shell's
		 * forks: towers of 100 [unknown]) follows stack words; a few, not a run of them.
		 * A walk by frame pointers alone from the first frame is as before. */
		w->fp_why = EMBER_STOP_UNMAPPED;
		if (vma_used() && ++w->unknown_run > MAX_UNKNOWN_RUN)
			return stop_short(w, EMBER_STOP_UNMAPPED);
		FP_STEP();
	}
	/* most callers are in the callee's file: its mapping first */
	m = (int)((w->last_m - 1) & (EMBER_UNWIND_MAX_MAPS - 1));
	if (!w->last_m || w->last_m > p->nr || pc < p->maps[m].start || pc >= p->maps[m].end) {
		m = find_map(p, pc);
		wcount(w, EMBER_WALK_MAP_SEARCHES, 1);
	}
	if (m < 0 && js && vma_fallback) {
		/* in no mapping of the list: a library mapped since, or the list written at the
		 * exec, before ld.so mapped the libraries */
		map = vma_map(w, pc);
		if (map && map->row_count) {
			w->unknown_run = 0;
			w->last_m = 0;
			goto have_map;
		}
	}
	if (m < 0) {
		/* in no mapping we know: JIT code newer than the list? one frame pointer step,
		 * but not through a run of them */
		w->fp_why = EMBER_STOP_UNMAPPED;
		/* V8's JIT code newer than the list: its frames are no garbage (v8.bpf.h) */
		if (++w->unknown_run > MAX_UNKNOWN_RUN && !(js && v8_scratch_on()))
			return stop_short(w, EMBER_STOP_UNMAPPED);
		FP_STEP();
	}
	w->unknown_run = 0;
	m &= EMBER_UNWIND_MAX_MAPS - 1;
	w->last_m = (__u32)m + 1;
	map = &p->maps[m];
have_map:
	/* JIT code, a file without CFI: frame pointers (the reason stays NO_TABLE) */
	if (!map->row_count)
		FP_STEP();
	w->fp_why = EMBER_STOP_NO_ROW;
	if (pc - map->bias >= 0xffffffffULL)
		FP_STEP();
	foff = (__u32)(pc - map->bias);
	start = map->row_start;
	hdr = bpf_map_lookup_elem(&unwind_rows, &start);
	if (!hdr || !hdr->pc)
		FP_STEP();
	id = hdr->pc;
	slot_key = ((foff ^ (foff >> 13) ^ (id * 0x9e3779b9u)) * 0x85ebca6bu) >> 20;
	slot = bpf_map_lookup_elem(&rule_cache, &slot_key);
	if (slot) {
		/* read once, then checked: a program that interrupted this one on its CPU
		 * (nest.bpf.h) may have written the slot between two of these words */
		__u32 s_off = slot->off, s_id = slot->id, s_rule = slot->rule, s_sum = slot->sum;

		if (s_id == id && s_off == foff && s_sum == RULE_SLOT_SUM(s_off, s_id, s_rule)) {
			wcount(w, EMBER_WALK_CACHE_HITS, 1);
			rule = s_rule;
			goto have_rule;
		}
	}
	found = find_rule(w, start, map->row_count, hdr->rule, foff);
	if (found < 0)
		FP_STEP();
	rule = (__u32)found;
	if (slot) {
		slot->off = foff;
		slot->id = id;
		slot->rule = rule;
		slot->sum = RULE_SLOT_SUM(foff, id, rule);
	}
have_rule:
	type = EMBER_PROW_CFA_TYPE(rule);
	off = (__s64)EMBER_PROW_CFA_OFF(rule) * 8;
	if (type == EMBER_CFA_NONE) {
		w->fp_why = rule == EMBER_CFA_NONE ? EMBER_STOP_NO_ROW : EMBER_STOP_NO_RULE;
		FP_STEP();
	}
	switch (type) {
	case EMBER_CFA_SP:
		cfa = w->sp + off;
		break;
	case EMBER_CFA_BP:
		cfa = w->bp + off;
		break;
	case EMBER_CFA_DEREF_BP:
		if (read_u64(&cfa, w->bp + off))
			goto trunc;
		break;
	case EMBER_CFA_PLT:
		cfa = w->sp + off + ((w->ip & 15) >= (__u64)EMBER_PROW_BP(rule) ? 8 : 0);
		break;
	case EMBER_CFA_SIGNAL:
		/* the interrupted context, saved by the kernel at rsp */
		if (read_u64(&ra, w->sp + UC_RIP) || read_u64(&sp, w->sp + UC_RSP) ||
		    read_u64(&nbp, w->sp + UC_RBP))
			goto trunc;
		w->st->flags |= EMBER_USTACK_SIGNAL;
		w->ip = ra;
		w->sp = sp;
		w->bp = nbp;
		w->exact_ip = true; /* where it was interrupted, not a return address */
		return 0;
	case EMBER_CFA_END:
		w->st->flags |= EMBER_USTACK_END;
		return 1;
	default:
		return stop_short(w, EMBER_STOP_NO_RULE);
	}
	if (EMBER_PROW_BP_TYPE(rule) == EMBER_BP_SAVED && EMBER_PROW_BP(rule) == -2) {
		/* rbp pushed right below the return address (most frames that save it): one
		 * read for both */
		__u64 fr[2];

		if (bpf_probe_read_user(fr, sizeof(fr), (const void *)(cfa - 16)))
			goto trunc;
		nbp = fr[0];
		ra = fr[1];
	} else if (read_u64(&ra, cfa - 8)) {
		goto trunc;
	} else if (EMBER_PROW_BP_TYPE(rule) == EMBER_BP_SAVED) {
		if (read_u64(&nbp, cfa + (__s64)EMBER_PROW_BP(rule) * 8))
			goto trunc;
	} else if (EMBER_PROW_BP_TYPE(rule) == EMBER_BP_AT_RBP) {
		if (read_u64(&nbp, w->bp + (__s64)EMBER_PROW_BP(rule) * 8))
			goto trunc;
	}
	/* callers live at higher addresses: a CFA at or below rsp is a loop or garbage */
	if (cfa <= w->sp)
		return stop_short(w, EMBER_STOP_LOOP);
	w->sp = cfa;
	w->bp = nbp;
	w->ip = ra;
	w->exact_ip = false;
	return 0;
trunc:
	return stop_short(w, EMBER_STOP_UNREADABLE);
fp:
	if (js)
		fp_note(w, n);
	return fp_step(w);
}

/* The frame callbacks of bpf_loop(): without and with the V8 notes (CPU samples only). */
static long walk_step(__u32 idx, void *ctx)
{
	return walk_frame(ctx, false);
}

static long walk_step_js(__u32 idx, void *ctx)
{
	return walk_frame(ctx, true);
}

/*
 * Walks the user stack of the current task from its user registers @ip, @sp, @bp into the per-CPU
 * scratch (ustack_scratch at the running level; walk_user() hands it to the caller). @js (a
 * constant at each call): V8 and HotSpot frames looked at, for CPU samples. Returns 0 or -errno:
 * -EFAULT (nothing walked), -ENOMEM.
 */
static __always_inline int walk_regs(__u32 pid, __u32 rt, __u64 ip, __u64 sp, __u64 bp, bool js)
{
	struct walk w = { .exact_ip = true, .ip = ip, .sp = sp, .bp = bp, .rt = rt };
	__u32 zero = 0;

	w.st = bpf_map_lookup_elem(&ustack_scratch, NEST_KEY);
	if (!w.st)
		return -ENOMEM;
	w.hash = w.st->hash; /* the Python frames' (walk_from()) */
	/* a Python thread's frames are at the top of ips (walk_from()); the native walk below */
	w.max = EMBER_MAX_STACK_DEPTH - EMBER_PY_WORDS * EMBER_USTACK_PY_NR(w.st->flags);
	w.proc = bpf_map_lookup_elem(&unwind_procs, &pid);
	if (!w.proc)
		w.st->flags |= EMBER_USTACK_FP;
	w.pid = pid;
	w.ws = bpf_map_lookup_elem(&walk_stops, &zero);
	/* a V8 process: said in map memory, the walk state the same either way (a pointer or a
	 * flag in it that differed would have the verifier walk the frame callback once each
	 * way: 28k -> 62k instructions processed for do_sample on 6.18, and 6.1 under emulation
	 * did not load within a minute) */
	/* @js (a constant at each call): CPU samples only. The off-CPU and memory programs, whose
	 * own checks already take 6.1's verifier long (offcpu_resume: 171k instructions), stay
	 * without the V8 code: with it offcpu_resume did not load within 100 s under emulation */
	if (js) {
		/* set up before the walk, looked up again after it: fewer values live across the
		 * calls, a smaller frame (6.1 bounds a chain's frames to 512 bytes together) */
		struct v8_scratch *sc = v8_scratch_get();
		struct hs_scratch *hsc = hs_scratch_get();
		struct vma_scratch *vs = vma_scratch_get();

		if (!sc || !hsc || !vs)
			return -ENOMEM;
		sc->n = 0;
		sc->on = (w.rt & EMBER_RT_V8) != 0;
		sc->t0 = bpf_ktime_get_ns();
		hsc->on = hs_walk_on && (w.rt & EMBER_RT_HS);
		/* the last walk's mapping is not this one's */
		vs->map.start = vs->map.end = 0;
		vs->lookups = 0;
		vs->used = 0;
		bpf_loop(EMBER_MAX_STACK_DEPTH + 1, walk_step_js, &w, 0);
		sc = v8_scratch_get();
		if (sc && sc->on && sc->n) {
			v8_walk(w.pid, w.st, w.max, &w.hash);
			/* outermost native frames dropped for the JS ones: the depth's stop */
			if ((w.st->flags & EMBER_USTACK_TRUNC) && !w.stop)
				w.stop = EMBER_STOP_DEPTH;
		}
		hsc = hs_scratch_get();
		if (hs_walk_on && sc && hsc && hsc->on)
			hs_walked(sc->t0);
		/* walked whole by its file's tables without a list: not a frame-pointer walk */
		if (vma_used() && !(w.st->flags & EMBER_USTACK_TRUNC))
			w.st->flags &= ~EMBER_USTACK_FP;
	} else {
		bpf_loop(EMBER_MAX_STACK_DEPTH + 1, walk_step, &w, 0);
	}
	if (!w.st->nr)
		return -EFAULT;
	if (w.ws && (w.st->flags & EMBER_USTACK_TRUNC))
		w.ws->n[w.stop & (EMBER_STOP_NR - 1)]++;
	w.st->hash = w.hash ^ w.st->flags;
	return 0;
}

#define RT_SUM(pid, gen, f)                                                                        \
	((((__u64)(pid) * 0x9e3779b97f4a7c15ULL) ^ ((gen) * 0xc2b2ae3d27d4eb4fULL) ^ (f)) + 1)

/*
 * The runtimes of process @pid (EMBER_RT_*): which of py_procs, v8_procs and hs_procs hold it,
 * for a CPU sample's walk. A CPU samples the same process again and again: the answer for the
 * last process walked is kept in this CPU's stats while rt_gen stays (each lookup is a cold
 * bucket: ~1 us on a machine with nested paging, three per sample), else looked up and kept.
 * Global: its locals on a frame of its own, off the walk's chain of calls (6.1's 512 bytes).
 */
__noinline int rt_flags_cpu(__u32 pid)
{
	struct ember_bpf_stats *st;
	__u64 gen = *(volatile __u64 *)&rt_gen, c_gen, c_sum;
	__u32 zero = 0, f = 0, c_pid, c_f;

	st = rt_cache ? bpf_map_lookup_elem(&stats, &zero) : NULL;
	if (st) {
		/* read once, then checked: a program that interrupted this one on its CPU may
		 * have written the entry between two of these words */
		c_pid = st->rt_pid;
		c_f = st->rt_flags;
		c_gen = st->rt_gen;
		c_sum = st->rt_sum;
		if (c_pid == pid && c_gen == gen && c_sum == RT_SUM(c_pid, c_gen, c_f))
			return (int)c_f;
	}
	if (bpf_map_lookup_elem(&py_procs, &pid))
		f |= EMBER_RT_PY;
	if (bpf_map_lookup_elem(&v8_procs, &pid))
		f |= EMBER_RT_V8;
	if (hs_walk_on && bpf_map_lookup_elem(&hs_procs, &pid))
		f |= EMBER_RT_HS;
	if (st) {
		st->rt_pid = pid;
		st->rt_flags = f;
		st->rt_gen = gen;
		st->rt_sum = RT_SUM(pid, gen, f);
	}
	return (int)f;
}

/* The runtimes of @pid for a walk: rt_flags_cpu() for a CPU sample's (@js, a constant), Python's
 * alone otherwise (the off-CPU and memory programs' walks, of whichever thread ran: looked up). */
static __always_inline __u32 rt_flags(__u32 pid, bool js)
{
	if (js)
		return (__u32)rt_flags_cpu(pid);
	return bpf_map_lookup_elem(&py_procs, &pid) ? EMBER_RT_PY : 0;
}

/*
 * Reads the user registers from @regs (read through @regs_kernel when they are in kernel memory)
 * into @r: ip, sp, bp. Returns 0 or -EFAULT (no user context). The context's registers are read
 * with whole-word loads at fixed offsets; the task's (kernel memory) through the helper.
 */
static __always_inline int user_regs(const __u64 *regs, bool regs_kernel, __u64 *r)
{
	if (regs_kernel) {
		if (bpf_probe_read_kernel(&r[0], 8, regs + REGS_CS) || (r[0] & 3) != 3 ||
		    bpf_probe_read_kernel(&r[0], 8, regs + REGS_IP) ||
		    bpf_probe_read_kernel(&r[1], 8, regs + REGS_SP) ||
		    bpf_probe_read_kernel(&r[2], 8, regs + REGS_BP))
			return -EFAULT; /* a kernel thread: no user registers */
	} else {
		r[0] = regs[REGS_IP];
		r[1] = regs[REGS_SP];
		r[2] = regs[REGS_BP];
	}
	return r[0] ? 0 : -EFAULT;
}

/*
 * The walk, as global functions: each verified once on its own per program, whatever the states
 * its callers reach it in (inlined, the frame callback was verified once for each way the
 * caller's state differed: 137k instructions processed for do_sample on 6.18, 0.39 s at start).
 * One per @js, a constant inside each.
 */
__noinline int walk_regs_cpu(__u32 pid, __u32 rt, __u64 ip, __u64 sp, __u64 bp)
{
	return walk_regs(pid, rt, ip, sp, bp, true);
}

__noinline int walk_regs_plain(__u32 pid, __u32 rt, __u64 ip, __u64 sp, __u64 bp)
{
	return walk_regs(pid, rt, ip, sp, bp, false);
}

/*
 * The walk from @r (user_regs()): a Python thread's frames first (python_walk(), called from
 * here and not from the walk's own frame: 6.1 bounds the stack of a chain of calls, callbacks
 * included, to 512 bytes together), then the native walk; *@ret points to the stack walked.
 */
static __always_inline int walk_from(__u32 pid, const __u64 *r, bool js, struct ember_ustack **ret)
{
	struct ember_ustack *st = bpf_map_lookup_elem(&ustack_scratch, NEST_KEY);
	__u32 rt = rt_flags(pid, js);
	int err;

	if (!st)
		return -ENOMEM;
	st->nr = 0;
	st->flags = 0;
	st->hash = 0xcbf29ce484222325ULL; /* the walk's hash, begun here (walk_regs()) */
	if (rt & EMBER_RT_PY)
		python_walk(pid, st, &st->hash);
	err = js ? walk_regs_cpu(pid, rt, r[0], r[1], r[2])
		 : walk_regs_plain(pid, rt, r[0], r[1], r[2]);
	if (err)
		return err;
	*ret = bpf_map_lookup_elem(&ustack_scratch, NEST_KEY);
	return *ret ? 0 : -ENOMEM;
}

/*
 * Walks the user stack of the current task from its registers (@regs: user mode registers,
 * read through @regs_kernel when they are in kernel memory; @js, a constant: V8 and HotSpot
 * frames looked at, for CPU samples) into the per-CPU scratch, which *@ret points to (the caller
 * copies it into the sample's record), the registers read into @r (3 words of scratch). Returns
 * 0 or -errno: -EFAULT (no user context), -ENOMEM.
 */
static __always_inline int walk_user(__u32 pid, const __u64 *regs, bool regs_kernel, bool js,
				     __u64 *r, struct ember_ustack **ret)
{
	int err = user_regs(regs, regs_kernel, r);

	return err ? err : walk_from(pid, r, js, ret);
}

#endif
