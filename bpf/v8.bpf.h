/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * V8's JavaScript frames, for the user stack walk (unwind.bpf.h, included once by sampler.bpf.c
 * before it). V8 on x86-64 builds every JavaScript frame (interpreted, baseline, optimized) and
 * its typed frames (entry, exit, stubs) on rbp, so the native walk already steps through them
 * by frame pointer: no CFI covers JIT code or the builtins embedded in the node binary. What it
 * lacks is the function. For a process userspace marked as a V8 it knows (v8_procs, written by
 * src/daemon/unwind/v8.c from the binary's v8dbg_* symbols), each such frame is looked at
 * before the step:
 *
 *   [fp + off_fp_context]   a Context (a tagged heap pointer) in a JavaScript frame; in a typed
 *                           frame a marker, type << 1 with the Smi tag 0: not a heap pointer
 *   [fp + off_fp_function]  the JSFunction being run
 *
 * and the JSFunction's SharedFunctionInfo is taken when its own map says it is one (two more
 * reads: a guard against a slot that only looks tagged). The SFI, not the JSFunction, is
 * recorded: one per function whatever its closures, and it outlives tier-ups. Names are
 * userspace's job (v8.c), from the process's memory, off the drain thread.
 *
 * Every read is bpf_probe_read_user (fails, never faults); nothing loops.
 */
#ifndef EMBER_V8_BPF_H
#define EMBER_V8_BPF_H

/* V8 processes (tgid), written by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct ember_v8_proc);
	__uint(max_entries, 1024);
} v8_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct ember_v8_bpf_stats);
	__uint(max_entries, 1);
} v8_stats SEC(".maps");

/* The frames the native walk stepped by frame pointer in a V8 process, per CPU: the frame
 * pointer and the frame's index in the stack, looked at once the walk is done. */
#define V8_MAX_NOTED 128
struct v8_scratch {
	__u64 fp[V8_MAX_NOTED];
	__u32 idx[V8_MAX_NOTED];
	__u32 n;  /* frames noted */
	__u32 on; /* the process is in v8_procs */
	__u64 t0; /* when the walk began (its time is counted) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct v8_scratch);
	__uint(max_entries, NEST_MAX); /* one per level (nest.bpf.h) */
} v8_scratch SEC(".maps");

static __always_inline struct v8_scratch *v8_scratch_get(void)
{
	return bpf_map_lookup_elem(&v8_scratch, NEST_KEY);
}

/* The walk under way is of a V8 process. */
static __always_inline bool v8_scratch_on(void)
{
	struct v8_scratch *sc = v8_scratch_get();

	return sc && sc->on;
}

/*
 * The SharedFunctionInfo (untagged) of the JavaScript frame whose frame pointer is @fp, or 0
 * when it is not one (a typed frame, a native frame that keeps rbp, garbage). Past the context
 * slot's test the reads are made whatever the one before gave (a failed read leaves zero, whose
 * own reads then fail) and judged once: each branch here is a path the verifier walks again for
 * every way the walk reaches a frame-pointer step.
 */
static __always_inline __u64 v8_frame_sfi(const struct ember_v8_proc *v, __u64 fp,
					  struct ember_v8_bpf_stats *vs)
{
	__u64 ctx = 0, fn = 0, sfi = 0, map = 0, tag = v->heap_tag, mask = v->heap_tag_mask;
	__u16 type = 0;
	long err;

	if (bpf_probe_read_user(&ctx, sizeof(ctx), (void *)(fp + v->fp_context)) ||
	    (ctx & mask) != tag) {
		if (vs)
			vs->markers++; /* a typed frame (or unreadable): named by its native symbol */
		return 0;
	}
	err = bpf_probe_read_user(&fn, sizeof(fn), (void *)(fp + v->fp_function));
	err |= bpf_probe_read_user(&sfi, sizeof(sfi), (void *)(fn - tag + v->shared_off));
	err |= bpf_probe_read_user(&map, sizeof(map), (void *)(sfi - tag + v->map_off));
	err |= bpf_probe_read_user(&type, sizeof(type), (void *)(map - tag + v->instance_type_off));
	if (err || (((fn & mask) ^ tag) | ((sfi & mask) ^ tag) | ((map & mask) ^ tag)) ||
	    type != v->type_sfi) {
		if (vs)
			vs->not_js++;
		return 0;
	}
	if (vs)
		vs->frames++;
	return (sfi - tag) & EMBER_V8F_ADDR_MASK;
}

/* The look at the noted frames, for its bpf_loop() callback (one frame per call). */
struct v8_look {
	const struct ember_v8_proc *v;
	struct v8_scratch *sc;
	struct ember_ustack *st;
	struct ember_v8_bpf_stats *vs;
	__u64 hash;
	__u32 nfp, keep, room;
};

static long v8_look_step(__u32 i, void *ctx)
{
	struct v8_look *l = ctx;
	__u64 sfi, word, fp;
	__u32 idx, n, k;

	if (i >= l->nfp || i >= V8_MAX_NOTED)
		return 1;
	k = i;
	barrier_var(k); /* the mask stays: the verifier sees it on the index itself */
	k &= V8_MAX_NOTED - 1;
	fp = l->sc->fp[k];
	idx = l->sc->idx[k];
	if (idx >= l->keep)
		return 1; /* noted leaf first: the rest were dropped for room */
	sfi = v8_frame_sfi(l->v, fp, l->vs);
	if (!sfi)
		return 0;
	n = l->st->nr;
	if (n >= l->room || n >= EMBER_MAX_STACK_DEPTH) {
		if (l->vs)
			l->vs->no_room++;
		return 1;
	}
	word = EMBER_V8F_MARK | ((__u64)(idx & 127) << EMBER_V8F_IDX_SHIFT) | sfi;
	l->st->ips[n & 127] = word;
	l->st->nr = n + 1;
	l->hash = (l->hash ^ word) * 0x100000001b3ULL;
	return 0;
}

/*
 * Looks at the frames the walk noted in v8_scratch (leaf first) and appends a word for each
 * JavaScript frame after the native ips of @st (bpf_shared.h), within @room entries; when the
 * native walk left too little room, its outermost frames make way (the stack is marked
 * truncated). Mixes the words into *@hash. Global (not static): verified once on its own, as
 * python_walk() is, whatever the ways the native walk got here.
 */
__noinline int v8_walk(__u32 pid, struct ember_ustack *st, __u32 room, __u64 *hash)
{
	struct v8_look l = { .st = st };
	__u32 zero = 0, nr, nfp;

	l.v = bpf_map_lookup_elem(&v8_procs, &pid);
	l.sc = bpf_map_lookup_elem(&v8_scratch, NEST_KEY);
	if (!l.v || !l.sc || !st || !hash)
		return 0;
	nfp = l.sc->n;
	l.vs = bpf_map_lookup_elem(&v8_stats, &zero);
	nr = st->nr;
	if (room > EMBER_MAX_STACK_DEPTH)
		room = EMBER_MAX_STACK_DEPTH;
	l.room = room;
	if (nfp > V8_MAX_NOTED)
		nfp = V8_MAX_NOTED;
	l.nfp = nfp;
	l.keep = nr;
	if (nr > room || nfp > room - nr) {
		/* at most nfp words: the outermost native frames go */
		l.keep = nfp < room ? room - nfp : 0;
		if (nr > l.keep) {
			st->nr = l.keep;
			st->flags |= EMBER_USTACK_TRUNC;
		}
	}
	l.hash = 0xcbf29ce484222325ULL;
	bpf_loop(V8_MAX_NOTED, v8_look_step, &l, 0);
	if (st->nr > l.keep)
		st->flags |= EMBER_USTACK_V8;
	*hash = (*hash ^ l.hash) * 0x100000001b3ULL;
	if (l.vs) {
		l.vs->walks++;
		l.vs->walk_ns += bpf_ktime_get_ns() - l.sc->t0;
	}
	return 0;
}

#endif
