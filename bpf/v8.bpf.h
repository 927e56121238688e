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

#endif
