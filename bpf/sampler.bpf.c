// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ember's sampler: attached to a perf event on every CPU. Per sample it walks the user stack of
 * the running task with the unwind tables userspace loaded (unwind.bpf.h), with its Python
 * frames (python.bpf.h), takes the kernel stack (bpf_get_stack) and sends the whole sample as
 * one variable-length record into the ring buffer (struct ember_sample_rec). No stack maps, no
 * counts map: userspace drains only the ring buffer, with no system call per stack or per tick,
 * so that its own bpf() calls (which make the kernel skip this program on their CPU) are few.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "ember/daemon/sample/bpf_shared.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define EEXIST 17
#define EFAULT 14
#define ENOMEM 12

/*
 * The programs' contexts, read at their fixed UAPI offsets: `ctx->args[i]` or
 * `ctx->sample_period` through vmlinux.h (which marks every struct for CO-RE) would each be a
 * CO-RE relocation, and one relocation anywhere in the object makes libbpf read and parse all
 * of the kernel's BTF (~6 MB, ~70 ms of CPU with a fresh heap) at every start. A raw
 * tracepoint's context is its arguments, 8 bytes each; a perf_event program's is
 * struct bpf_perf_event_data, the registers (struct pt_regs, 21 words on x86-64) then the
 * sample period.
 */
#define RAW_TP_ARG(ctx, i) (((const volatile __u64 *)(ctx))[i])
#if defined(__TARGET_ARCH_x86)
#define PERF_SAMPLE_PERIOD(ctx) (*(const volatile __u64 *)((const char *)(ctx) + 21 * sizeof(__u64)))
#endif

/* Per-CPU counters, and the shortcuts kept with them (before the walkers: they read it). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct ember_bpf_stats);
	__uint(max_entries, 1);
} stats SEC(".maps");

/* The runtimes' maps' generation: bumped by userspace after each change of py_procs, v8_procs or
 * hs_procs (sampler.c), and here when on_exec or on_exit deletes an entry; the per-CPU runtime
 * shortcut (rt_flags(), unwind.bpf.h) holds while it is unchanged. rt_cache: the shortcut is
 * taken (not for a capture's sampler: the daemon's changes bump the daemon's rt_gen only). */
__u64 rt_gen = 0;
const volatile bool rt_cache = false;

/* the sampled thread's Python frames, stored with its user stack by walk_user() */
#include "nest.bpf.h"
#include "python.bpf.h"
#include "v8.bpf.h"
#include "hotspot.bpf.h"
#include "unwind.bpf.h"

/* Knobs, set between open and load. */
const volatile bool include_idle = true;
/* Walk the idle task's kernel stack; else its samples carry no stack (userspace shows "[idle]"). */
const volatile bool idle_stacks = false;
/* Only this process (tgid) when not 0: an ad hoc capture's second sampler (capture.c). */
const volatile __u32 target_pid = 0;
/* Half the ring buffer's size: past it, a sample wakes userspace at once. */
const volatile __u64 ring_half = 1 << 19;

/* Bumped by each exec notification: invalidates the per-CPU "last pid" shortcut below. */
__u32 exec_seq = 0;
/*
 * exec records wake userspace at most once per this window (0: each one); the others
 * wait for the drain, which reads the ring when the window that held them is over
 * (sampler.c: an exec is handed to the worker this long after it happened, with its exit if it
 * came meanwhile: then nothing is read for it).
 */
const volatile __u64 exec_batch_ns = 0;
/* task_struct's pid and tgid offsets (the kernel's BTF, read by the sampler; 0: unknown, no fork
 * records): a fork's child is read by bpf_probe_read_kernel(), no CO-RE relocation. */
const volatile __u32 task_pid_off = 0;
/* task_struct's nvcsw and nivcsw (context switches): count_misses() */
const volatile __u32 task_nvcsw_off = 0, task_nivcsw_off = 0;
const volatile __u32 task_tgid_off = 0;
/* Exec records carry the executable's text mapping (struct ember_exec_img_rec) when set: the
 * mapping lookup's offsets (unwind.bpf.h) and these two were found, and bpf_find_vma() is there. */
const volatile bool exec_images = false;
const volatile __u32 task_mm_off = 0, mm_start_code_off = 0;
/* linux_binprm's interp: the exec's path, kept by pid (0: not found, no path kept) */
const volatile __u32 bprm_interp_off = 0;

/* The path of each exec with an image (struct ember_exec_path), by pid: the latest execs'. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, struct ember_exec_path);
	__uint(max_entries, 1024);
} exec_paths SEC(".maps");

/* One path being written (too big for the stack beside the record's locals). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct ember_exec_path);
	__uint(max_entries, NEST_MAX); /* one per level (nest.bpf.h) */
} exec_path_scratch SEC(".maps");
/* When an exec record last woke userspace (bpf_ktime_get_ns(): CLOCK_MONOTONIC); the sampler
 * reads it through the mapped .bss, no system call. */
__u64 exec_wake_ns = 0;

/* Its size is set by the sampler from the config before load. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} samples SEC(".maps");

/* The record being built, per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct ember_sample_buf);
	__uint(max_entries, NEST_MAX); /* one per level (nest.bpf.h) */
} sample_buf SEC(".maps");

/*
 * Processes recently seen. A sample of a pid not in here wakes the sampler up at once (the other
 * records wait for the tick), so that userspace captures a new process's mappings while it lives.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 8192);
} seen SEC(".maps");

static __always_inline void count_err(__s32 err, __u64 *efault, __u64 *other)
{
	if (err == -EFAULT)
		(*efault)++;
	else if (err < 0)
		(*other)++;
}

/*
 * One sample. @walk (a constant at each call): the user stack by the BPF walker (unwind.bpf.h,
 * with Python's frames), else by the kernel's frame-pointer walk (bpf_get_stack), the program
 * for kernels without bpf_loop() (< 5.17): do_sample_fp holds no call to the walker, so none of
 * its bpf_loop() callbacks is linked into it.
 */
/* off-CPU (offcpu.bpf.h, included below): user-mode preemption recorded at the next sample */
static __always_inline void offcpu_sample(struct ember_sample_buf *b, __u32 nw);

/* memio.bpf.h: a page-fault sample's budget (the faulting process's records per second) */
static __always_inline bool memio_admit(__u32 pid, __u32 m, __u64 w);
static __always_inline void memio_sent(__u32 m, __u64 w, __u64 size, long err);
static __always_inline __u64 memio_wake(__u32 m);

/*
 * @kind (a constant at each call): EMBER_KIND_CPU, or EMBER_KIND_PAGEFAULT for the page-fault
 * software event's samples, EMBER_KIND_CYCLES or _INSTRUCTIONS for the hardware counters'
 * (memio.bpf.h), recorded with the weight @weight in the cpu field and counted apart.
 */
#define MEMIO_OF(kind)                                                                             \
	((kind) == EMBER_KIND_CYCLES	      ? EMBER_MEMIO_CYCLES                                 \
	 : (kind) == EMBER_KIND_INSTRUCTIONS ? EMBER_MEMIO_INSTRUCTIONS                           \
					     : EMBER_MEMIO_PAGEFAULT)
/* The CPU clock's period (cpu-clock events: a fixed hrtimer period), set by userspace once the
 * event is chosen (after load: not a constant); 0 for hardware events, whose period follows the
 * frequency. */
__u64 timer_period_ns = 0;

/*
 * Firings of this CPU's timer the program did not see: a gap longer than one period and a half
 * since the last one is (gap / period, rounded) - 1 of them, whoever's fault it was (the timer
 * late with interrupts off, the hypervisor, the kernel skipping the program while another BPF
 * program or a map call ran on this CPU). Counted only when one task ran through the gap (the
 * same thread at both firings, no context switch of it in between): an idle CPU's timer fires
 * when the kernel sees fit (half of 999 Hz on an idle VM here), which is no sample lost. A gap
 * of more than a second is the event off (a CPU offline): not counted. A lower bound, then: a
 * gap in which the thread was preempted is not counted (two CPU burners at 999 Hz: taken +
 * counted 99.82 % of the timer's firings, every gap counted 100.02 %; at 999 Hz beside the
 * browser tests' chromium, 811 firings missing of 74,101, 692 counted).
 */
static __always_inline void count_misses(struct ember_bpf_stats *st, __u32 tid)
{
	__u64 now = bpf_ktime_get_ns(), gap = now - st->last_fire_ns, task, csw = 0;
	__u64 p = *(volatile __u64 *)&timer_period_ns;

	/* read into the per-CPU stats, not the stack: do_sample is at 6.1's combined stack limit */
	if (tid) {
		task = (__u64)bpf_get_current_task();
		if (bpf_probe_read_kernel(&st->fire_csw[0], 8, (void *)(task + task_nvcsw_off)) ||
		    bpf_probe_read_kernel(&st->fire_csw[1], 8, (void *)(task + task_nivcsw_off)))
			tid = 0;
		csw = st->fire_csw[0] + st->fire_csw[1];
	}
	if (tid && tid == st->last_fire_tid && csw == st->last_csw && st->last_fire_ns &&
	    gap > p + p / 2 && gap < 1000000000ULL)
		st->timer_misses += (gap + p / 2) / p - 1;
	st->last_fire_ns = now;
	st->last_fire_tid = tid;
	st->last_csw = csw;
}

static __always_inline int sample(struct bpf_perf_event_data *ctx, const bool walk,
				  const __u32 kind, __u32 weight)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 zero = 0, seq, pid = id >> 32, tid = (__u32)id, nu = 0, npy = 0, nk = 0;
	__u64 wake = BPF_RB_NO_WAKEUP, size;
	struct ember_ustack *us = NULL;
	struct ember_sample_buf *b;
	struct ember_bpf_stats *st;
	bool kstack = true; /* take the kernel stack */
	__u8 yes = 1;
	long r;

	st = bpf_map_lookup_elem(&stats, &zero);
	b = bpf_map_lookup_elem(&sample_buf, NEST_KEY);
	if (!st || !b) /* cannot happen for one-element arrays; the verifier wants the check */
		return 0;
	if (kind == EMBER_KIND_CPU && *(volatile __u64 *)&timer_period_ns)
		count_misses(st, tid);
	if (target_pid && pid != target_pid)
		return 0;
	if (tid == 0 && !include_idle)
		return 0;
	if (kind != EMBER_KIND_CPU && (!tid || !memio_admit(pid, MEMIO_OF(kind), weight)))
		return 0;
	b->hdr.time_ns = bpf_ktime_get_ns();
	b->hdr.cgroup_id = bpf_get_current_cgroup_id();
	b->hdr.pid = pid;
	b->hdr.tid = tid;
	b->hdr.cpu = bpf_get_smp_processor_id();
	b->hdr.kind = kind; /* the scratch is shared with off-CPU records (offcpu.bpf.h) */
	b->hdr.user_flags = 0;
	b->hdr.kern_err = -EFAULT;
	b->hdr.user_err = -EFAULT;
	bpf_get_current_comm(b->hdr.comm, sizeof(b->hdr.comm));
	/*
	 * A sample that interrupted user mode has no kernel stack: the helper would walk nothing
	 * and return -EFAULT, so skip it (x86-64: the privilege level in CS; elsewhere ask it).
	 */
#if defined(__TARGET_ARCH_x86)
	/*
	 * The context allows only whole-word loads of the registers: no narrowing to CS's low bits.
	 * CS is word 17 of the UAPI struct pt_regs, a fixed offset: ctx->regs.cs would be a CO-RE
	 * relocation (vmlinux.h marks every struct), for which libbpf reads and parses all of the
	 * kernel's BTF (~6 MB) at start-up, for one field of a stable ABI.
	 */
	kstack = (*(volatile __u64 *)((char *)ctx + 17 * sizeof(__u64)) & 3) != 3;
#endif
	/* the idle task's stack only on request: without it, -EFAULT marks an idle sample */
	if (tid == 0 && !idle_stacks)
		kstack = false;
	if (tid && !walk) {
		r = bpf_get_stack(ctx, b->words, EMBER_MAX_STACK_DEPTH * sizeof(__u64),
				  BPF_F_USER_STACK);
		if (r > 0) {
			nu = (__u32)r / sizeof(__u64);
			b->hdr.user_err = 0;
			b->hdr.user_flags = EMBER_USTACK_FP |
					    (nu >= EMBER_MAX_STACK_DEPTH ? EMBER_USTACK_TRUNC : 0);
		} else {
			b->hdr.user_err = r ? (__s32)r : -EFAULT;
		}
	} else if (tid) {
		/* user registers: the sample's own when it interrupted user mode, else those the
		 * task entered the kernel with (at the top of its kernel stack) */
		/* read in two places with a constant regs_kernel, not one with a pointer chosen
		 * before it: clang then shared the context's word loads between both pointers, which
		 * Debian 12's 6.1 verifier refuses ("same insn cannot be used with different
		 * pointers"); into the record's words (scratch until the stack is copied there) */
		if (kstack)
			r = user_regs((const __u64 *)bpf_task_pt_regs(bpf_get_current_task_btf()),
				      true, b->words);
		else
			r = user_regs((const __u64 *)ctx, false, b->words);
		/* walked from one place (the walk itself is a global function, unwind.bpf.h) */
		b->hdr.user_err = r ? (__s32)r : walk_from(pid, b->words, kind == EMBER_KIND_CPU, &us);
	}
	if (us && !b->hdr.user_err) {
		/* native frames from ips[0], Python words from the top of ips (python.bpf.h) */
		nu = us->nr;
		if (nu > EMBER_MAX_STACK_DEPTH)
			nu = EMBER_MAX_STACK_DEPTH;
		npy = EMBER_PY_WORDS * EMBER_USTACK_PY_NR(us->flags);
		if (npy > EMBER_MAX_STACK_DEPTH - nu)
			npy = 0;
		b->hdr.user_flags = npy ? us->flags : us->flags & ~(0xffu << EMBER_USTACK_PY_NR_SHIFT);
		/* bounded copies: each offset and size masked, ember_ustack.room keeps the source
		 * and EMBER_SAMPLE_WORDS the destination inside its map value */
		bpf_probe_read_kernel(b->words, (nu & 127) * 8, us->ips);
		if (npy)
			bpf_probe_read_kernel(&b->words[nu & 127], (npy & 127) * 8,
					      &us->ips[(EMBER_MAX_STACK_DEPTH - npy) & 127]);
	}
	if (kstack) {
		r = bpf_get_stack(ctx, &b->words[(nu + npy) & 255],
				  EMBER_MAX_STACK_DEPTH * sizeof(__u64), 0);
		if (r > 0) {
			nk = (__u32)r / sizeof(__u64);
			b->hdr.kern_err = 0;
		} else {
			b->hdr.kern_err = r ? (__s32)r : -EFAULT;
		}
	}
	b->hdr.nr_user = nu;
	b->hdr.nr_py = npy;
	b->hdr.nr_kernel = nk;
	if (kind != EMBER_KIND_CPU) {
		/* not an on-CPU sample: its weight in the cpu field, counted apart */
		b->hdr.cpu = weight;
		size = sizeof(b->hdr) +
		       ((nu + npy + nk) & (EMBER_SAMPLE_WORDS - 1)) * sizeof(__u64);
		memio_sent(MEMIO_OF(kind), weight, size,
			   bpf_ringbuf_output(&samples, b, size, memio_wake(MEMIO_OF(kind))));
		return 0;
	}
	st->samples++;
	if (tid == 0)
		st->idle++;
	count_err(b->hdr.kern_err, &st->kern_efault, &st->kern_other);
	count_err(b->hdr.user_err, &st->user_efault, &st->user_other);
	if (!b->hdr.user_err) {
		if (b->hdr.user_flags & EMBER_USTACK_FP)
			st->user_fp_walks++;
		if (b->hdr.user_flags & EMBER_USTACK_TRUNC)
			st->user_truncated++;
	}
	/*
	 * No user stack (kernel thread): no mappings to capture, no wake-up. The process this CPU
	 * sampled last (and no exec since) is known to be in "seen": skip the LRU lookup, the
	 * common case on a busy CPU.
	 */
	seq = *(volatile __u32 *)&exec_seq;
	if (pid && b->hdr.user_err != -EFAULT &&
	    (pid != st->last_pid || seq != st->last_exec_seq)) {
		if (!bpf_map_lookup_elem(&seen, &pid)) {
			bpf_map_update_elem(&seen, &pid, &yes, BPF_ANY);
			/* (sharing the execs' window here, one wake-up for a shell child's fork
			 * sample, exec and new image's sample, cost do_sample 8 bytes of stack:
			 * past 6.1's 512 for the walker's deepest chain with the HotSpot step) */
			wake = BPF_RB_FORCE_WAKEUP;
		}
		st->last_pid = pid;
		st->last_exec_seq = seq;
	}
	/* half full: wake userspace now rather than drop records before the next tick. Asked
	 * every 32nd sample of a CPU (the positions are cold cache lines): the other half of the
	 * ring holds what all CPUs write meanwhile */
	if (wake == BPF_RB_NO_WAKEUP && !(st->samples & 31) &&
	    bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) > ring_half)
		wake = BPF_RB_FORCE_WAKEUP;
	size = sizeof(b->hdr) + ((nu + npy + nk) & (EMBER_SAMPLE_WORDS - 1)) * sizeof(__u64);
	if (bpf_ringbuf_output(&samples, b, size, wake)) {
		st->ringbuf_drops++; /* lost here, counted */
		return 0;
	}
	st->ring_bytes += size;
	if (!kstack && tid) /* interrupted user mode */
		offcpu_sample(b, nu + npy);
	return 0;
}

SEC("perf_event")
int do_sample(struct bpf_perf_event_data *ctx)
{
	return NEST_RUN(sample(ctx, true, EMBER_KIND_CPU, 0));
}

/* Loaded instead of do_sample where the kernel has no bpf_loop() (sampler.c): user stacks by
 * frame pointer only. */
SEC("perf_event")
int do_sample_fp(struct bpf_perf_event_data *ctx)
{
	return NEST_RUN(sample(ctx, false, EMBER_KIND_CPU, 0));
}

/* off-CPU events, through the same ring, scratch and walkers */
#include "offcpu.bpf.h"
/* memory and I/O events: page faults, vm growth, block I/O, malloc */
#include "memio.bpf.h"

/* Puts a process event (EMBER_REC_EXEC or _EXIT) for @pid on the ring buffer, counted. */
static __always_inline void tell(__u32 pid, __u32 kind, __u64 wake, __u64 time_ns)
{
	struct ember_exec_rec *rec;
	struct ember_bpf_stats *st;
	__u32 zero = 0;

	st = bpf_map_lookup_elem(&stats, &zero);
	if (!st)
		return;
	rec = bpf_ringbuf_reserve(&samples, sizeof(*rec), 0);
	if (!rec) {
		if (kind == EMBER_REC_EXIT)
			st->exit_drops++;
		else
			st->exec_drops++;
		return;
	}
	if (kind == EMBER_REC_EXIT)
		st->exits++;
	else
		st->execs++;
	rec->time_ns = time_ns;
	rec->pid = pid;
	rec->kind = kind;
	/* not urgent, but past the watermark: read now rather than lose what follows */
	if (wake == BPF_RB_NO_WAKEUP && bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) > ring_half)
		wake = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(rec, wake);
}

/* @rec's image: the mapping holding the new mm's start_code (the executable's text), its file's
 * device and inode; ino stays 0 when the kernel could not tell. Returns the file's inode (the
 * kernel's object, for exec_seed()), 0 with ino. */
static __always_inline __u64 exec_image(struct ember_exec_img_rec *rec)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct vma_found vf = {};
	__u64 mm = 0, code = 0, inode = 0, sb = 0, ino = 0;
	__u32 dev = 0;

	if (bpf_probe_read_kernel(&mm, 8, (void *)((__u64)task + task_mm_off)) || !mm ||
	    bpf_probe_read_kernel(&code, 8, (void *)(mm + mm_start_code_off)) || !code ||
	    bpf_find_vma(task, code, vma_cb, &vf, 0) || !vf.end || !vf.file ||
	    bpf_probe_read_kernel(&inode, 8, (void *)(vf.file + file_inode_off)) || !inode ||
	    bpf_probe_read_kernel(&ino, 8, (void *)(inode + inode_ino_off)) ||
	    bpf_probe_read_kernel(&sb, 8, (void *)(inode + inode_sb_off)) || !sb ||
	    bpf_probe_read_kernel(&dev, 4, (void *)(sb + sb_dev_off)) || !ino)
		return 0;
	rec->start = vf.start;
	rec->end = vf.end;
	rec->pgoff = vf.pgoff;
	rec->ino = ino;
	rec->dev = dev;
	return inode;
}

/*
 * @pid's walks find its new executable without asking the kernel: when the file of @rec's text
 * mapping has a built table (unwind_files), the mapping goes into the process's vma_cache (the
 * exec emptied it). Until userspace lists the process (a busy or starved worker: tens of ms),
 * the walk's one mapping lookup is then left for the library the sample fell in (libc's
 * clock_gettime, ld.so), and the walk from there still reaches main through the executable's
 * table. True when seeded. @inode: the kernel's inode of @rec's file, still the file the table
 * was read from (file_same()), not another that got a deleted file's inode number.
 */
static __always_inline bool exec_seed(__u32 pid, const struct ember_exec_img_rec *rec,
				      __u64 inode)
{
	struct ember_unwind_file_key k = { .ino = rec->ino, .dev = rec->dev };
	const struct ember_unwind_file *f;
	struct vma_cache *c, *fresh;
	__u32 zero = 0;

	if (!vma_fallback)
		return false;
	f = bpf_map_lookup_elem(&unwind_files, &k);
	fresh = bpf_map_lookup_elem(&vma_fresh, &zero);
	if (!f || !f->row_count || !fresh || !file_same(inode, f) ||
	    bpf_map_update_elem(&vma_cache, &pid, fresh, BPF_ANY))
		return false;
	c = bpf_map_lookup_elem(&vma_cache, &pid);
	if (!c)
		return false;
	c->m[0].start = rec->start;
	c->m[0].end = rec->end;
	c->m[0].row_start = f->row_start;
	c->m[0].row_count = f->row_count;
	c->m[0].bias = rec->start - (rec->pgoff << 12) - f->vdelta;
	c->n = 1;
	c->next = 0;
	return true;
}

/* The path exec @bprm was given, kept for @pid with @time_ns (exec_paths). */
static __always_inline void keep_exec_path(__u32 pid, __u64 bprm, __u64 time_ns)
{
	struct ember_exec_path *ep;
	__u64 name = 0;

	ep = bpf_map_lookup_elem(&exec_path_scratch, NEST_KEY);
	if (!ep || !bprm || !bprm_interp_off ||
	    bpf_probe_read_kernel(&name, 8, (void *)(bprm + bprm_interp_off)) || !name ||
	    bpf_probe_read_kernel_str(ep->path, sizeof(ep->path), (void *)name) <= 1)
		return;
	ep->time_ns = time_ns;
	bpf_map_update_elem(&exec_paths, &pid, ep, BPF_ANY);
}

/* An exec's wake-up: a sampled process's at once; the first exec of a burst wakes userspace,
 * the others of its window go with it; a @quiet one (seeded, not sampled) wakes nobody and opens
 * no window. */
static __always_inline __u64 exec_wake(bool sampled, bool quiet, __u64 now)
{
	if (sampled)
		return BPF_RB_FORCE_WAKEUP;
	if (quiet || now - *(volatile __u64 *)&exec_wake_ns < exec_batch_ns)
		return BPF_RB_NO_WAKEUP;
	exec_wake_ns = now;
	return BPF_RB_FORCE_WAKEUP;
}

/* An exec's record with its image (exec_images): as tell() does for the others; the path of an
 * image found kept (keep_exec_path). A seeded exec of a process not sampled wakes nobody and
 * opens no window: its walks need no list from userspace (exec_seed()), and its first sample
 * wakes the drain as any new process's does; it goes with the next batch. */
static __always_inline void tell_exec(__u32 pid, bool sampled, __u64 time_ns, __u64 bprm)
{
	struct ember_exec_img_rec *rec;
	__u64 wake, inode;
	struct ember_bpf_stats *st;
	__u32 zero = 0;

	st = bpf_map_lookup_elem(&stats, &zero);
	if (!st)
		return;
	rec = bpf_ringbuf_reserve(&samples, sizeof(*rec), 0);
	if (!rec) {
		st->exec_drops++;
		return;
	}
	st->execs++;
	__builtin_memset(rec, 0, sizeof(*rec));
	rec->time_ns = time_ns;
	rec->pid = pid;
	rec->kind = EMBER_REC_EXEC | (sampled ? EMBER_REC_SAMPLED : 0);
	inode = exec_image(rec);
	if (inode) {
		keep_exec_path(pid, bprm, time_ns);
		if (exec_seed(pid, rec, inode)) {
			st->exec_seeds++;
			rec->kind |= EMBER_REC_SEEDED;
		}
	}
	wake = exec_wake(sampled, rec->kind & EMBER_REC_SEEDED, time_ns);
	if (wake == BPF_RB_NO_WAKEUP && bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) > ring_half)
		wake = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(rec, wake);
}

/*
 * exec of any process (the process tracker knows every process from its first
 * instruction, and lists its new image for the walker before its first sample). A process sampled
 * before is forgotten here (its next sample wakes userspace as a new process's); userspace is
 * told within exec_batch_ns, so that a process that lives a few milliseconds is walked with its
 * tables, and one that lived less costs nothing but its two records.
 */
static __always_inline int on_exec_run(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	__u64 now;
	bool sampled;

	if (target_pid && pid != target_pid)
		return 0; /* an ad hoc capture's sampler: its process only */
	/* any CPU's "last pid" may name this process, even one the LRU evicted: make them all
	 * ask "seen" again */
	__sync_fetch_and_add(&exec_seq, 1);
	/* absent: never sampled (or long ago); present: worth a wake-up of its own */
	sampled = !bpf_map_delete_elem(&seen, &pid);
	/* the record's time is taken before the list's delete: userspace skips its own delete
	 * of a list it wrote before that time (unwinder__forget_pid_at) */
	now = bpf_ktime_get_ns();
	/* the old image's list walks the new image wrong: frame pointers until userspace lists
	 * the new one (absent: not listed) */
	bpf_map_delete_elem(&unwind_procs, &pid);
	/* the new image is not that V8, nor that JVM */
	if (!bpf_map_delete_elem(&v8_procs, &pid) | !bpf_map_delete_elem(&hs_procs, &pid))
		__sync_fetch_and_add(&rt_gen, 1);
	bpf_map_delete_elem(&vma_cache, &pid); /* nor are those its mappings */
	if (exec_images) {
		tell_exec(pid, sampled, now, RAW_TP_ARG(ctx, 2) /* sched_process_exec(p, old_pid, bprm) */);
		return 0;
	}
	tell(pid, EMBER_REC_EXEC | (sampled ? EMBER_REC_SAMPLED : 0), exec_wake(sampled, false, now),
	     now);
	return 0;
}

SEC("raw_tp/sched_process_exec") /* raw: needs no tracefs mounted */
int on_exec(struct bpf_raw_tracepoint_args *ctx)
{
	return NEST_RUN(on_exec_run(ctx));
}

/*
 * A new process by fork: a forking server's worker runs its parent's image, so
 * it is listed for the walker here with a copy of its parent's list, from its first instruction,
 * and userspace adopts that list (the same tables) without reading /proc. A
 * new thread (tgid != pid) is not a new process. Wakes nobody: read with the next
 * batch; a fork followed by exec or exit within the batch costs userspace nothing more.
 */
static __always_inline int on_fork_run(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 child = RAW_TP_ARG(ctx, 1), now, wake = BPF_RB_NO_WAKEUP;
	__u32 zero = 0, pid = 0, tgid = 0, parent = bpf_get_current_pid_tgid() >> 32;
	struct ember_unwind_proc *list;
	struct vma_cache *vc;
	struct ember_fork_rec *rec;
	struct ember_bpf_stats *st;

	if (target_pid || !task_pid_off || !task_tgid_off)
		return 0; /* an ad hoc capture's sampler: its process only */
	if (bpf_probe_read_kernel(&pid, sizeof(pid), (void *)(child + task_pid_off)) ||
	    bpf_probe_read_kernel(&tgid, sizeof(tgid), (void *)(child + task_tgid_off)) ||
	    pid != tgid || !pid)
		return 0;
	/* the mappings its parent's walks found are its own (a copy of its parent's); those
	 * another process found under a reused pid are not */
	vc = bpf_map_lookup_elem(&vma_cache, &parent);
	if (!vc || bpf_map_update_elem(&vma_cache, &pid, vc, BPF_ANY))
		bpf_map_delete_elem(&vma_cache, &pid);
	st = bpf_map_lookup_elem(&stats, &zero);
	if (!st)
		return 0;
	/* listed from its first instruction: its parent's list (userspace adopts it, with the
	 * same tables, when the record is read; the child's exec or exit deletes it here) */
	list = bpf_map_lookup_elem(&unwind_procs, &parent);
	if (list)
		bpf_map_update_elem(&unwind_procs, &pid, list, BPF_ANY);
	now = bpf_ktime_get_ns();
	/* the list is copied above: userspace's adoption waits for the next wake-up (the child's
	 * first sample or exec, which come after this record in the ring; another process's; the
	 * tick), and an exec or exit meanwhile supersedes it; a wake-up only past the watermark */
	if (bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) > ring_half)
		wake = BPF_RB_FORCE_WAKEUP;
	rec = bpf_ringbuf_reserve(&samples, sizeof(*rec), 0);
	if (!rec) {
		st->fork_drops++;
		return 0;
	}
	st->forks++;
	rec->time_ns = now;
	rec->pid = pid;
	rec->kind = EMBER_REC_FORK;
	rec->parent = parent;
	rec->pad = 0;
	bpf_ringbuf_submit(rec, wake);
	return 0;
}

SEC("raw_tp/sched_process_fork")
int on_fork(struct bpf_raw_tracepoint_args *ctx)
{
	return NEST_RUN(on_fork_run(ctx));
}

/*
 * Exit of a process's leader (any process: the tracker knew it from its exec): userspace drops
 * its state then (the process is gone, or other threads still run) instead of reading the start
 * time of every process it knows every few seconds. Forgotten here, so that a process that
 * reuses the pid is captured at its first sample. Not worth a wake-up: read at the next tick.
 */
static __always_inline int on_exit_run(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), now;
	__u32 pid = id >> 32;

	python_thread_exit((__u32)id); /* its cached Python thread state goes */
	offcpu_thread_exit((__u32)id); /* its off-CPU slot */
	if ((__u32)id != pid || (target_pid && pid != target_pid))
		return 0; /* another thread: the process lives on; or not a capture's process */
	/* sampled: a CPU's "last pid" may be this one: make them ask "seen" again */
	if (!bpf_map_delete_elem(&seen, &pid))
		__sync_fetch_and_add(&exec_seq, 1);
	/* its list (a forked child's copy is not userspace's until adopted); the record's time
	 * is taken first (see on_exec) */
	now = bpf_ktime_get_ns();
	bpf_map_delete_elem(&unwind_procs, &pid);
	if (!bpf_map_delete_elem(&v8_procs, &pid) | !bpf_map_delete_elem(&hs_procs, &pid))
		__sync_fetch_and_add(&rt_gen, 1);
	bpf_map_delete_elem(&vma_cache, &pid); /* its pid's next process is not it */
	tell(pid, EMBER_REC_EXIT, BPF_RB_NO_WAKEUP, now);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int on_exit(void *ctx)
{
	return NEST_RUN(on_exit_run(ctx));
}
