/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * HotSpot's Java frames, for the user stack walk (unwind.bpf.h, included once by sampler.bpf.c
 * before it). HotSpot's compiled code keeps no frame pointer (rbp is a general register in C2
 * code) and has no CFI, so the native walk cannot step through it; its interpreter keeps rbp
 * frames but says nothing of the method. For a process userspace marked as a JVM it knows
 * (hs_procs, written by src/daemon/unwind/hotspot.c from libjvm's vmStructs tables read in the
 * process), a frame whose pc falls in one of its code heaps is stepped here:
 *
 *   the code blob    the heap's segment map, one byte per segment: 0 at a block's first
 *                    segment, else how many segments back to go (0xff: free); the block's
 *                    HeapBlock header, then the CodeBlob. Its _name says what it is: "nmethod"
 *                    and "native nmethod" (compiled), "Interpreter", anything else a stub.
 *   interpreted      rbp frames: Method* at [rbp - 24], bcp at [rbp - 64], the caller's sp at
 *                    [rbp - 8] (a compiled caller's frame is sized from it), saved rbp at [rbp],
 *                    return address at [rbp + 8] (x86-64 frame_x86.hpp, slots from userspace).
 *   compiled, stubs  sp + _frame_size words is the caller's sp; the return address and the saved
 *                    rbp lie just below it. In the prologue (pc before _frame_complete_offset, the
 *                    first frame only) only the return address is on the stack; in the epilogue
 *                    (the first frame only, told by the instruction at pc: hs_popped()) the
 *                    frame is already taken down. A stub of frame size 0 (the call stub, which
 *                    keeps an rbp frame) steps by rbp.
 *
 * The frame's ip is replaced by a word naming the method (bpf_shared.h, EMBER_HSF_*). The step
 * is a global function (verified once on its own, whatever the ways the native walk reaches a
 * frame); it takes and gives the registers in a per-CPU map, as the walk's state keeps its size
 * (unwind.bpf.h). Every read is bpf_probe_read_user (fails, never faults); loops are bounded.
 */
#ifndef EMBER_HOTSPOT_BPF_H
#define EMBER_HOTSPOT_BPF_H

/* The HotSpot step in the frame callback at all: set by userspace before load wherever the walker
 * is, and cleared for a second load when the verifier refused the first (sampler.c): a constant,
 * so that without it the verifier drops the code unseen. do_sample's instructions processed
 * with / without it: 6.1 27.8k / 27.0k, 6.18 125k / 85k (with it, since the walk and the
 * kernel's mapping lookup are global functions, unwind.bpf.h: 6.1 17.5k, 6.18 34.8k). An
 * earlier do_sample with it went past 6.1's 512-byte combined stack (refused: 544), and so did
 * the first global walk; the chain do_sample, walk_regs_cpu, walk_step_js, hs_step, hs_popped
 * is at 512 now: mind the stack of what the walk calls (test_kernel61 loads it on 6.1). */
const volatile bool hs_walk_on = false;

/* JVM processes (tgid), written by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct ember_hs_proc);
	__uint(max_entries, 1024);
} hs_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct ember_hs_bpf_stats);
	__uint(max_entries, 1);
} hs_stats SEC(".maps");

/* The registers of the frame being stepped, in and out, and the walk's flag, per CPU. */
struct hs_scratch {
	__u64 ip, sp, bp;
	__u64 word;	/* out: the frame's word (0: none) */
	__u32 exact;	/* in: ip is where the thread was, not a return address */
	__u32 on;	/* the walk under way is of a JVM process */
	__u64 t0;	/* when the walk began */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct hs_scratch);
	__uint(max_entries, NEST_MAX); /* one per level (nest.bpf.h) */
} hs_scratch SEC(".maps");

/* Segment-map hops followed to a blob's start: each goes back at most 254 segments. */
#define HS_MAX_HOPS 32
/* A compiled frame believed: 64 KiB (HotSpot's own frames are far smaller) */
#define HS_MAX_FRAME_WORDS 8192
/* "nmethod\0", "native n", "Interpre" as little-endian words */
#define HS_NAME_NMETHOD 0x00646f6874656d6eULL
#define HS_NAME_NATIVE 0x6e2065766974616eULL
#define HS_NAME_INTERP 0x6572707265746e49ULL

/* A compiled method's return on x86-64 (C1 and C2, JDK 17): add rsp, N; pop rbp; cmp rsp,
 * [r15 + polling word]; ja <poll stub>; ret. A thread stopped at pop rbp has the saved rbp at
 * [sp] and the return address above it (2); at the poll, the branch or the ret, only the return
 * address (1): stepping by the frame size from there read above the caller's frame (a sample
 * there came out [truncated];[unknown];App$Lcg.apply, 2 % of the samples of test_java_perf's
 * program). Told by the bytes at pc, which these instructions begin only there (rbp is saved by
 * a mov or a push in the prologue, popped only on the way out; the poll compares rsp only
 * there); 0 elsewhere (the add before them leaves the frame whole). An older JDK's poll (a test
 * of the polling page) is not recognised: stepped as before. Global: verified once, on its own
 * (with these checks inline in hs_step, on the bytes read to its stack, 6.1's verifier under
 * emulation did not load do_sample within 110 s, test_kernel61; so: 27.2k instructions). */
__noinline int hs_popped(__u64 w)
{
	if ((w & 0xff) == 0xc3) /* ret */
		return 1;
	if ((w & 0xff) == 0x5d) /* pop rbp */
		return 2;
	if ((w & 0x3fffff) == 0x273b49) /* cmp rsp, [r15 + d]: 49 3b a7 (d32) or 67 (d8) */
		return 1;
	if ((w & 0x00ff00000000ffffULL) == 0x00c300000000870fULL) /* ja rel32; ret */
		return 1;
	if ((w & 0xff00ff) == 0xc30077) /* ja rel8; ret */
		return 1;
	return 0;
}

static __always_inline struct hs_scratch *hs_scratch_get(void)
{
	return bpf_map_lookup_elem(&hs_scratch, NEST_KEY);
}

static __always_inline bool hs_scratch_on(void)
{
	struct hs_scratch *sc;

	if (!hs_walk_on)
		return false;
	sc = hs_scratch_get();
	return sc && sc->on;
}

/* The search for a pc's code blob, for bpf_loop() callbacks: its heap, then the segment map's
 * hops back to the block's first segment (callbacks: verified once, not once per path). */
struct hs_find {
	const struct ember_hs_proc *h;
	__u64 pc, low, segmap, seg;
	__u32 lg;
	int heap; /* -1: in none of them */
	int bad;  /* a free segment, a hop past the heap, unreadable */
};

static long hs_heap_cb(__u32 i, void *ctx)
{
	struct hs_find *f = ctx;
	__u32 k = i & (EMBER_HS_MAX_HEAPS - 1);

	if (i >= f->h->nr_heaps)
		return 1;
	if (f->pc >= f->h->low[k] && f->pc < f->h->high[k]) {
		f->low = f->h->low[k];
		f->segmap = f->h->segmap[k];
		f->lg = f->h->log2_seg[k] & 63;
		f->heap = (int)k;
		return 1;
	}
	return 0;
}

static long hs_hop_cb(__u32 i, void *ctx)
{
	struct hs_find *f = ctx;
	__u8 b = 0;

	if (bpf_probe_read_user(&b, 1, (void *)(f->segmap + f->seg)) || b == 0xff || b > f->seg) {
		f->bad = 1;
		return 1;
	}
	if (!b)
		return 1; /* the block's first segment */
	f->seg -= b;
	if (i == HS_MAX_HOPS - 1)
		f->bad = 1; /* still not there */
	return 0;
}

/* @a lies in one of the process's code heaps (@f's search, its pc and heap overwritten). */
static __always_inline bool hs_in_heap(struct hs_find *f, __u64 a)
{
	f->heap = -1;
	f->pc = a;
	bpf_loop(EMBER_HS_MAX_HEAPS, hs_heap_cb, f, 0);
	return f->heap >= 0;
}

/*
 * Steps the frame in hs_scratch of JVM @pid: 1 stepped (registers and word updated), 0 not in
 * its code heaps (the native walk goes on), 2 in them but not steppable (the walk stops).
 * Global: verified once.
 */
__noinline int hs_step(__u32 pid)
{
	struct hs_find f = { .heap = -1 };
	struct ember_hs_bpf_stats *hs;
	struct hs_scratch *sc;
	__u64 pc, low, seg, blob, name = 0, nm = 0, code = 0, fr[2], ssp = 0, m = 0, cm = 0,
						 bcp = 0, aux = EMBER_HSF_AUX_NONE;
	__s32 fsize = 0, fcomplete = 0;
	__u32 zero = 0, lg;
	const struct ember_hs_proc *h;

	sc = bpf_map_lookup_elem(&hs_scratch, NEST_KEY);
	h = bpf_map_lookup_elem(&hs_procs, &pid);
	if (!sc || !h)
		return 0;
	hs = bpf_map_lookup_elem(&hs_stats, &zero);
	sc->word = 0;
	pc = sc->exact ? sc->ip : sc->ip - 1;
	f.h = h;
	f.pc = pc;
	bpf_loop(EMBER_HS_MAX_HEAPS, hs_heap_cb, &f, 0);
	if (f.heap < 0)
		return 0;
	f.seg = (pc - f.low) >> f.lg;
	bpf_loop(HS_MAX_HOPS, hs_hop_cb, &f, 0);
	if (f.bad)
		goto no_blob;
	low = f.low;
	seg = f.seg;
	lg = f.lg;
	blob = low + (seg << lg) + h->heapblock_size;
	if (bpf_probe_read_user(&name, 8, (void *)(blob + h->blob_name)) ||
	    bpf_probe_read_user(&fsize, 4, (void *)(blob + h->blob_frame_size)) ||
	    bpf_probe_read_user(&fcomplete, 4, (void *)(blob + h->blob_frame_complete)) ||
	    bpf_probe_read_user(&code, 8, (void *)(blob + h->blob_code_begin)) ||
	    bpf_probe_read_user(&nm, 8, (void *)name))
		goto bad;
	if (nm == HS_NAME_INTERP) {
		/* an interpreted frame: rbp's */
		if (sc->bp < sc->sp || sc->bp - sc->sp > (1u << 20) ||
		    bpf_probe_read_user(fr, sizeof(fr), (void *)sc->bp) ||
		    bpf_probe_read_user(&m, 8, (void *)(sc->bp + h->interp_method * 8)) ||
		    bpf_probe_read_user(&ssp, 8, (void *)(sc->bp + h->interp_sender_sp * 8)))
			goto bad;
		if (!bpf_probe_read_user(&bcp, 8, (void *)(sc->bp + h->interp_bcp * 8)) &&
		    !bpf_probe_read_user(&cm, 8, (void *)(m + h->method_constmethod)) &&
		    bcp >= cm + h->constmethod_size &&
		    bcp - cm - h->constmethod_size < EMBER_HSF_AUX_NONE)
			aux = bcp - cm - h->constmethod_size;
		sc->word = EMBER_HSF_MARK | EMBER_HSF_INTERP << EMBER_HSF_KIND_SHIFT |
			   aux << EMBER_HSF_AUX_SHIFT | (m & EMBER_HSF_ADDR_MASK);
		/* the caller's sp: where a compiled caller's frame is measured from */
		sc->sp = ssp > sc->bp ? ssp : sc->bp + 16;
		sc->bp = fr[0];
		sc->ip = fr[1];
		if (hs)
			hs->interp++;
		return 1;
	}
	if (nm == HS_NAME_NMETHOD || nm == HS_NAME_NATIVE) {
		if (pc >= code && pc - code < EMBER_HSF_AUX_NONE)
			aux = pc - code;
		sc->word = EMBER_HSF_MARK | EMBER_HSF_COMPILED << EMBER_HSF_KIND_SHIFT |
			   aux << EMBER_HSF_AUX_SHIFT | (blob & EMBER_HSF_ADDR_MASK);
		if (hs)
			hs->compiled++;
	} else {
		sc->word = EMBER_HSF_MARK | EMBER_HSF_STUB << EMBER_HSF_KIND_SHIFT |
			   aux << EMBER_HSF_AUX_SHIFT | (blob & EMBER_HSF_ADDR_MASK);
		if (hs)
			hs->stubs++;
	}
	if (fsize < 0 || fsize > HS_MAX_FRAME_WORDS)
		goto bad;
	if (!fsize && sc->exact) {
		/* a stub without a frame, where the thread was (vtable and itable stubs jump on
		 * to their target): only the return address is on the stack */
		if (bpf_probe_read_user(&fr[1], 8, (void *)sc->sp))
			goto bad;
		sc->sp += 8;
		sc->ip = fr[1];
		return 1;
	}
	if (!fsize) {
		/* a stub without a frame of its own size that called on: the call stub, which
		 * keeps an rbp frame */
		if (sc->bp < sc->sp || bpf_probe_read_user(fr, sizeof(fr), (void *)sc->bp))
			goto bad;
		sc->sp = sc->bp + 16;
		sc->bp = fr[0];
		sc->ip = fr[1];
		return 1;
	}
	if (sc->exact && fcomplete > 0 && pc < code + (__u64)fcomplete) {
		/*
		 * In the prologue (JDK 17, x86-64): before anything, the return address is at sp;
		 * after "push rbp" (C1, and C2 with a stack bang), above the saved rbp; after C2's
		 * "sub rsp" of a method without a stack bang (apply-sized leaves), at the top of
		 * the whole frame, the saved rbp below it once stored. Every caller of a compiled
		 * method returns into the code heaps (compiled code, the interpreter, the call
		 * stub, adapters), a saved rbp is a stack address: the first of the three slots
		 * that holds an address in a code heap is the return address. Taken for [sp]
		 * always, a sample after the sub came out [unknown] in place of the caller
		 * (test_java_perf, 1 run in 4: 6-7 % of its samples, the callers of the small
		 * apply methods under -XX:+PreserveFramePointer). No new locals: 6.1 allows 512
		 * bytes of stack for the walker's deepest chain of calls (test_kernel61).
		 */
		ssp = sc->sp + (__u64)fsize * 8;
		if (bpf_probe_read_user(fr, sizeof(fr), (void *)sc->sp))
			goto bad;
		if (hs_in_heap(&f, fr[0])) { /* nothing pushed yet */
			sc->sp += 8;
			sc->ip = fr[0];
			return 1;
		}
		if (hs_in_heap(&f, fr[1])) { /* rbp pushed */
			sc->sp += 16;
			sc->bp = fr[0];
			sc->ip = fr[1];
			return 1;
		}
		if (fsize < 2 || bpf_probe_read_user(fr, sizeof(fr), (void *)(ssp - 16)))
			goto bad;
		if (!hs_in_heap(&f, fr[1]))
			goto bad;
		/* the frame allocated: rbp is still the caller's unless already pointed into it */
		if (sc->bp >= sc->sp && sc->bp < ssp)
			sc->bp = fr[0];
		sc->sp = ssp;
		sc->ip = fr[1];
		return 1;
	}
	if (sc->exact && nm == HS_NAME_NMETHOD && !bpf_probe_read_user(&fr[0], 8, (void *)pc)) {
		int popped = hs_popped(fr[0]);

		if (popped) {
			/* in the epilogue: the frame already taken down */
			if (bpf_probe_read_user(fr, sizeof(fr), (void *)sc->sp))
				goto bad;
			if (popped == 2) {
				sc->sp += 16;
				sc->bp = fr[0];
				sc->ip = fr[1];
			} else {
				sc->sp += 8;
				sc->ip = fr[0];
			}
			return 1;
		}
	}
	ssp = sc->sp + (__u64)fsize * 8;
	if (bpf_probe_read_user(fr, sizeof(fr), (void *)(ssp - 16)))
		goto bad;
	sc->sp = ssp;
	sc->bp = fr[0];
	sc->ip = fr[1];
	return 1;
no_blob:
	if (hs)
		hs->no_blob++;
	return 2;
bad:
	if (hs)
		hs->bad++;
	return 2;
}

/* A JVM's walk is done: counted, with its time since @t0. */
static __always_inline void hs_walked(__u64 t0)
{
	__u32 zero = 0;
	struct ember_hs_bpf_stats *hs = bpf_map_lookup_elem(&hs_stats, &zero);

	if (hs) {
		hs->walks++;
		hs->walk_ns += bpf_ktime_get_ns() - t0;
	}
}

#endif
