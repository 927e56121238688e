/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Memory and I/O events, included once by sampler.bpf.c: they share its ring buffer, its
 * per-CPU record scratch and its user stack walkers. Each is off (not loaded) unless its config
 * section is enabled; the sampler sets the programs' autoload (src/daemon/sample/memio.c).
 *
 * - page faults: the "page-faults" software perf event, one sample every N faults per CPU,
 *   through sample() (sampler.bpf.c) with EMBER_KIND_PAGEFAULT and weight N;
 * - vm growth: successful mmap() and brk() growth at the system call's return (raw sys_exit: one
 *   program run per system call of the host, two compares for the others), weight in pages;
 * - block I/O: a bio's submission (block_bio_queue, in the submitter's context: a user thread's
 *   stacks, or a kernel thread's kernel stack: writeback) sends its bytes; the record is kept in
 *   an LRU map by the bio's address until its request's completion (block_rq_complete,
 *   before the request's bios are ended: each of them), which sends it again as
 *   EMBER_KIND_BLOCKIO_LAT weighed by the time from submission to completion;
 * - malloc: a uprobe on the C library's malloc of chosen processes, sampled by bytes: a thread's
 *   allocated bytes are summed and a record sent at each crossing of a multiple of the interval,
 *   weighed by the intervals crossed (exact totals, as Go's and jemalloc's heap profilers do).
 *
 * A process that faults, maps or allocates as fast as it can spends its own budget: at most
 * memio_max_rate[kind] records a second per process; past it its events are counted
 * (throttled, with their weight) and not recorded, so that the ring buffer keeps room for the
 * others.
 */
#ifndef EMBER_MEMIO_BPF_H
#define EMBER_MEMIO_BPF_H

/* Knobs (memio.c, from the config sections). */
/* records per second per process, by EMBER_MEMIO_* (0: unbounded) */
const volatile __u64 memio_max_rate[EMBER_MEMIO_NR] = {};
const volatile __u64 memio_malloc_interval = 524288; /* bytes between malloc samples */
/* struct bio's fields (the kernel's BTF, by userspace: no CO-RE relocation, see sampler.bpf.c) */
const volatile __u32 bio_opf_off = 0;
const volatile __u32 bio_size_off = 0; /* bi_iter.bi_size */
const volatile __u32 bio_next_off = 0; /* bi_next: a request's bios */
const volatile __u32 rq_bio_off = 0; /* struct request's bio: its first */
const volatile bool bio_fields = false; /* the offsets above were found */
const volatile __u32 bio_rahead_mask = 0; /* REQ_RAHEAD's bit in bi_opf (0: unknown) */
const volatile __u32 bio_background_mask = 0; /* REQ_BACKGROUND's */
const volatile __u32 memio_flags_off = 0; /* task_struct.flags: a kernel thread issuer */
/* [malloc] comm: only this comm's calls (the uprobe is then on every process of the library);
 * "": every call that reaches the program (attached to one process, or to all) */
const volatile char memio_malloc_comm[TASK_COMM_LEN] = {};

#define MEMIO_PF_KTHREAD 0x00200000
#define MEMIO_NR_MMAP 9 /* x86-64 system call numbers */
#define MEMIO_NR_BRK 12
#define MEMIO_REGS_SI 13 /* UAPI pt_regs words: the second argument, the system call's number */
#define MEMIO_REGS_DI 14
#define MEMIO_REGS_ORIG_AX 15

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct ember_memio_stats);
	__uint(max_entries, 1);
} memio_stats SEC(".maps");

/* Budgets by (tgid, EMBER_MEMIO_*): an LRU, a process not seen for a while starts afresh. */
struct memio_rate_key {
	__u32 pid;
	__u32 m;
};
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct memio_rate_key);
	__type(value, struct ember_memio_rate);
	__uint(max_entries, 1); /* 4096 with any kind on (memio.c) */
} memio_rate SEC(".maps");

/* The program break of each process seen calling brk() (glibc's first call asks it: brk(0)). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1); /* 8192 with [vmgrow] on */
} memio_brk SEC(".maps");

/* Block I/O in flight: the submission's record by the bio's address (4 KiB each, preallocated:
 * max_entries = [blockio] inflight, 1 when off). A completion that finds none is counted. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u64);
	__type(value, struct ember_sample_buf);
	__uint(max_entries, 1);
} memio_inflight SEC(".maps");

/* malloc: bytes allocated by each thread since its last sample, by tid. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1); /* 65536 with [malloc] on */
} memio_malloc_acc SEC(".maps");

/* Whether @pid may send one more record of kind @m of weight @w this second; counted if not. */
static __always_inline bool memio_admit(__u32 pid, __u32 m, __u64 w)
{
	struct memio_rate_key key = { .pid = pid, .m = m };
	struct ember_memio_stats *st;
	struct ember_memio_rate *r, nr = {};
	__u32 zero = 0;
	__u64 sec;

	m &= EMBER_MEMIO_NR - 1;
	st = bpf_map_lookup_elem(&memio_stats, &zero);
	if (!st)
		return false;
	st->events[m]++;
	st->weight[m] += w;
	if (!memio_max_rate[m])
		return true;
	sec = bpf_ktime_get_ns() / 1000000000ULL;
	r = bpf_map_lookup_elem(&memio_rate, &key);
	if (!r) {
		nr.sec = sec;
		nr.n = 1;
		bpf_map_update_elem(&memio_rate, &key, &nr, BPF_ANY);
		return true;
	}
	if (r->sec != sec) {
		r->sec = sec;
		r->n = 0;
	}
	if (__sync_fetch_and_add(&r->n, 1) < memio_max_rate[m])
		return true;
	st->throttled[m]++;
	st->throttled_weight[m] += w;
	return false;
}

/* Counts a record of kind @m, weight @w, @size bytes, whose bpf_ringbuf_output() returned @err. */
static __always_inline void memio_sent(__u32 m, __u64 w, __u64 size, long err)
{
	struct ember_memio_stats *st;
	__u32 zero = 0;

	m &= EMBER_MEMIO_NR - 1;
	st = bpf_map_lookup_elem(&memio_stats, &zero);
	if (!st)
		return;
	if (err) {
		st->lost[m]++;
		st->lost_weight[m] += w;
		return;
	}
	st->recorded[m]++;
	st->ring_bytes += size;
}

SEC("perf_event")
int memio_pagefault(struct bpf_perf_event_data *ctx)
{
	/* one sample per period of faults: its weight is the period */
	return NEST_RUN(sample(ctx, true, EMBER_KIND_PAGEFAULT, (__u32)PERF_SAMPLE_PERIOD(ctx)));
}

SEC("perf_event")
int memio_pagefault_fp(struct bpf_perf_event_data *ctx)
{
	return NEST_RUN(sample(ctx, false, EMBER_KIND_PAGEFAULT, (__u32)PERF_SAMPLE_PERIOD(ctx)));
}

/* Hardware counters ([pmc], where the kernel offers them): a sample every period events. */
SEC("perf_event")
int memio_cycles(struct bpf_perf_event_data *ctx)
{
	return NEST_RUN(sample(ctx, true, EMBER_KIND_CYCLES, (__u32)PERF_SAMPLE_PERIOD(ctx)));
}

SEC("perf_event")
int memio_instructions(struct bpf_perf_event_data *ctx)
{
	return NEST_RUN(sample(ctx, true, EMBER_KIND_INSTRUCTIONS, (__u32)PERF_SAMPLE_PERIOD(ctx)));
}

/*
 * The current thread's header and user stack into @b (kind @kind, weight @w); @regs its user
 * registers, @in_user: they are the context's own (a uprobe), else the task's saved ones.
 * Returns the words written (user and Python).
 */
static __always_inline __u32 memio_fill(struct ember_sample_buf *b, __u32 kind, __u32 w,
					const __u64 *regs, const bool in_user)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct ember_ustack *us = NULL;
	__u32 nu = 0, npy = 0, pid = id >> 32;

	b->hdr.time_ns = bpf_ktime_get_ns();
	b->hdr.cgroup_id = bpf_get_current_cgroup_id();
	b->hdr.pid = pid;
	b->hdr.tid = (__u32)id;
	b->hdr.cpu = w;
	b->hdr.kind = kind;
	b->hdr.user_flags = 0;
	b->hdr.kern_err = -EFAULT;
	b->hdr.user_err = -EFAULT;
	b->hdr.nr_user = 0;
	b->hdr.nr_py = 0;
	b->hdr.nr_kernel = 0;
	bpf_get_current_comm(b->hdr.comm, sizeof(b->hdr.comm));
	if (!regs)
		return 0;
	b->hdr.user_err = walk_user(pid, regs, !in_user, false, b->words, &us);
	if (us && !b->hdr.user_err) {
		nu = us->nr;
		if (nu > EMBER_MAX_STACK_DEPTH)
			nu = EMBER_MAX_STACK_DEPTH;
		npy = EMBER_PY_WORDS * EMBER_USTACK_PY_NR(us->flags);
		if (npy > EMBER_MAX_STACK_DEPTH - nu)
			npy = 0;
		b->hdr.user_flags = npy ? us->flags : us->flags & ~(0xffu << EMBER_USTACK_PY_NR_SHIFT);
		/* bounded copies, their masks kept (offcpu_wake()) */
		barrier_var(nu);
		barrier_var(npy);
		bpf_probe_read_kernel(b->words, (nu & 127) * 8, us->ips);
		if (npy)
			bpf_probe_read_kernel(&b->words[nu & 127], (npy & 127) * 8,
					      &us->ips[(EMBER_MAX_STACK_DEPTH - npy) & 127]);
	}
	b->hdr.nr_user = nu;
	b->hdr.nr_py = npy;
	return nu + npy;
}

/* No default wake-up (a record each would wake the drain at each), but past half full, asked
 * every 16th record of the CPU, as the other records do. */
static __always_inline __u64 memio_wake(__u32 m)
{
	struct ember_memio_stats *st;
	__u32 zero = 0;

	st = bpf_map_lookup_elem(&memio_stats, &zero);
	if (st && !(st->recorded[m & (EMBER_MEMIO_NR - 1)] & 15) &&
	    bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) > ring_half)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

/* Sends @b with @nw words, kind @m's weight @w. */
static __always_inline void memio_send(struct ember_sample_buf *b, __u32 m, __u64 w, __u32 nw)
{
	__u64 size;

	barrier_var(nw);
	size = sizeof(b->hdr) + (nw & (EMBER_SAMPLE_WORDS - 1)) * sizeof(__u64);
	memio_sent(m, w, size, bpf_ringbuf_output(&samples, b, size, memio_wake(m)));
}

/*
 * vm growth: a successful mmap() (its length, in pages) or a brk() that moved the break up (by
 * how much), with the caller's user stack.
 */
static __always_inline int memio_sys_exit_run(struct bpf_raw_tracepoint_args *ctx)
{
	const __u64 *regs = (const __u64 *)RAW_TP_ARG(ctx, 0);
	__u64 nr = 0, len = 0, id = bpf_get_current_pid_tgid(), *last, pages;
	__s64 ret = (__s64)RAW_TP_ARG(ctx, 1);
	__u32 pid = id >> 32, sub;
	struct ember_sample_buf *b;

	if (bpf_probe_read_kernel(&nr, sizeof(nr), regs + MEMIO_REGS_ORIG_AX))
		return 0;
	if (nr == MEMIO_NR_MMAP) {
		if (ret < 0 && ret > -4096)
			return 0; /* failed */
		if (bpf_probe_read_kernel(&len, sizeof(len), regs + MEMIO_REGS_SI))
			return 0;
		sub = EMBER_VM_MMAP;
	} else if (nr == MEMIO_NR_BRK) {
		last = bpf_map_lookup_elem(&memio_brk, &pid);
		if (!last) {
			bpf_map_update_elem(&memio_brk, &pid, &ret, BPF_ANY);
			return 0;
		}
		if ((__u64)ret <= *last) {
			*last = (__u64)ret;
			return 0; /* shrunk, or asked */
		}
		len = (__u64)ret - *last;
		*last = (__u64)ret;
		sub = EMBER_VM_BRK;
	} else {
		return 0;
	}
	pages = (len + 4095) >> 12;
	if (!pages)
		return 0;
	if (pages > 0xffffffffULL)
		pages = 0xffffffffULL;
	if (!memio_admit(pid, EMBER_MEMIO_VMGROW, pages))
		return 0;
	b = bpf_map_lookup_elem(&sample_buf, NEST_KEY);
	if (!b)
		return 0;
	memio_send(b, EMBER_MEMIO_VMGROW, pages,
		   memio_fill(b, EMBER_KIND_VMGROW | sub << 8, (__u32)pages,
			      (const __u64 *)bpf_task_pt_regs(bpf_get_current_task_btf()), false));
	return 0;
}

SEC("raw_tp/sys_exit")
int memio_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	return NEST_RUN(memio_sys_exit_run(ctx));
}

/*
 * A bio submitted (in the submitter's context): its bytes, with the user stack of a user thread
 * and the kernel stack (who submitted it: a write(), a page fault's read-ahead, the flusher's
 * writeback work); kept for its completion.
 */
static __always_inline int memio_bio_queue_run(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 bio = RAW_TP_ARG(ctx, 0), id = bpf_get_current_pid_tgid();
	__u32 opf = 0, size = 0, pf = 0, sub, nw, nk = 0;
	struct ember_sample_buf *b;
	bool kthread;
	long r;

	if (!bio || bpf_probe_read_kernel(&opf, sizeof(opf), (void *)(bio + bio_opf_off)) ||
	    bpf_probe_read_kernel(&size, sizeof(size), (void *)(bio + bio_size_off)) || !size)
		return 0;
	if ((opf & 0xff) > 1)
		return 0; /* not a read or a write (flush, discard...) */
	kthread = !(id >> 32) ||
		  (memio_flags_off &&
		   !bpf_probe_read_kernel(&pf, sizeof(pf),
					  (void *)((__u64)bpf_get_current_task_btf() + memio_flags_off)) &&
		   (pf & MEMIO_PF_KTHREAD));
	if ((opf & 0xff) == 0)
		sub = bio_rahead_mask && (opf & bio_rahead_mask) ? EMBER_BIO_READAHEAD : EMBER_BIO_READ;
	else
		sub = kthread || (bio_background_mask && (opf & bio_background_mask))
			  ? EMBER_BIO_WRITEBACK
			  : EMBER_BIO_WRITE;
	if (!memio_admit(id >> 32, EMBER_MEMIO_BLOCKIO, size))
		return 0;
	b = bpf_map_lookup_elem(&sample_buf, NEST_KEY);
	if (!b)
		return 0;
	nw = memio_fill(b, EMBER_KIND_BLOCKIO | sub << 8, size,
			kthread ? NULL
				: (const __u64 *)bpf_task_pt_regs(bpf_get_current_task_btf()),
			false);
	/* the kernel stack after the user words; this program's own two frames skipped */
	barrier_var(nw);
	r = bpf_get_stack(ctx, &b->words[nw & 255], EMBER_MAX_STACK_DEPTH * sizeof(__u64),
			  2 & BPF_F_SKIP_FIELD_MASK);
	if (r > 0) {
		nk = (__u32)r / sizeof(__u64);
		b->hdr.kern_err = 0;
	} else {
		b->hdr.kern_err = r ? (__s32)r : -EFAULT;
	}
	b->hdr.nr_kernel = nk;
	memio_send(b, EMBER_MEMIO_BLOCKIO, size, nw + nk);
	/* kept for the completion's latency record (an LRU: one never completed goes in time) */
	bpf_map_update_elem(&memio_inflight, &bio, b, BPF_ANY);
	return 0;
}

SEC("raw_tp/block_bio_queue")
int memio_bio_queue(struct bpf_raw_tracepoint_args *ctx)
{
	return NEST_RUN(memio_bio_queue_run(ctx));
}

/* Sends bio @bio's kept record again, weighed by its time in flight (us); forgets it. */
static __always_inline void memio_bio_done(__u64 bio, __u64 now)
{
	struct ember_memio_stats *st;
	struct ember_sample_buf *b;
	__u32 zero = 0, nw;
	__u64 us;

	b = bpf_map_lookup_elem(&memio_inflight, &bio);
	st = bpf_map_lookup_elem(&memio_stats, &zero);
	if (!st)
		return;
	if (!b) {
		st->inflight_miss++;
		return;
	}
	us = now > b->hdr.time_ns ? (now - b->hdr.time_ns) / 1000 : 0;
	if (!us)
		us = 1; /* under a microsecond still took time */
	if (us > 0xffffffffULL)
		us = 0xffffffffULL;
	b->hdr.kind = EMBER_KIND_BLOCKIO_LAT | (b->hdr.kind & 0xff00);
	b->hdr.cpu = (__u32)us;
	nw = (__u32)b->hdr.nr_user + b->hdr.nr_py + b->hdr.nr_kernel;
	st->events[EMBER_MEMIO_BLOCKIO_LAT]++;
	st->weight[EMBER_MEMIO_BLOCKIO_LAT] += us;
	memio_send(b, EMBER_MEMIO_BLOCKIO_LAT, us, nw);
	bpf_map_delete_elem(&memio_inflight, &bio);
}

/*
 * A request completes (all or part of it; before its bios are ended): each of its bios (up to
 * 16: a merged request's others are counted as misses) is done.
 */
#define MEMIO_RQ_BIOS 16
static __always_inline int memio_rq_complete_run(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 rq = RAW_TP_ARG(ctx, 0), bio = 0, now = bpf_ktime_get_ns();
	int i;

	if (!rq || bpf_probe_read_kernel(&bio, sizeof(bio), (void *)(rq + rq_bio_off)))
		return 0;
	for (i = 0; i < MEMIO_RQ_BIOS && bio; i++) {
		memio_bio_done(bio, now);
		if (bpf_probe_read_kernel(&bio, sizeof(bio), (void *)(bio + bio_next_off)))
			break;
	}
	return 0;
}

SEC("raw_tp/block_rq_complete")
int memio_rq_complete(struct bpf_raw_tracepoint_args *ctx)
{
	return NEST_RUN(memio_rq_complete_run(ctx));
}

/*
 * malloc(size) of a chosen process (the uprobe is attached to it only): sampled by bytes. The
 * thread's sum crosses k multiples of the interval: one record of k intervals, with its stack.
 */
static __always_inline int memio_malloc_run(struct pt_regs *ctx)
{
	__u64 size = ((const __u64 *)ctx)[MEMIO_REGS_DI], *acc, sum, k, w, iv = memio_malloc_interval;
	__u32 zero = 0, tid = (__u32)bpf_get_current_pid_tgid();
	struct ember_memio_stats *st;
	struct ember_sample_buf *b;

	st = bpf_map_lookup_elem(&memio_stats, &zero);
	if (!st || !iv)
		return 0;
	if (memio_malloc_comm[0]) {
		char comm[TASK_COMM_LEN];
		int i;

		bpf_get_current_comm(comm, sizeof(comm));
		for (i = 0; i < TASK_COMM_LEN; i++) {
			if (comm[i] != memio_malloc_comm[i])
				return 0;
			if (!comm[i])
				break;
		}
	}
	st->calls++;
	acc = bpf_map_lookup_elem(&memio_malloc_acc, &tid);
	if (!acc) {
		sum = 0;
		bpf_map_update_elem(&memio_malloc_acc, &tid, &sum, BPF_ANY);
		acc = bpf_map_lookup_elem(&memio_malloc_acc, &tid);
		if (!acc)
			return 0;
	}
	sum = *acc + size;
	if (sum < iv) {
		*acc = sum;
		return 0;
	}
	k = sum / iv;
	*acc = sum - k * iv;
	w = k * iv;
	if (w > 0xffffffffULL)
		w = 0xffffffffULL / iv * iv;
	if (!memio_admit(bpf_get_current_pid_tgid() >> 32, EMBER_MEMIO_MALLOC, w))
		return 0;
	b = bpf_map_lookup_elem(&sample_buf, NEST_KEY);
	if (!b)
		return 0;
	memio_send(b, EMBER_MEMIO_MALLOC, w,
		   memio_fill(b, EMBER_KIND_MALLOC, (__u32)w, (const __u64 *)ctx, true));
	return 0;
}

SEC("uprobe")
int memio_malloc(struct pt_regs *ctx)
{
	return NEST_RUN(memio_malloc_run(ctx));
}

#endif
