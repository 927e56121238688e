/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Off-CPU events, included once by sampler.bpf.c: they share its ring buffer, its
 * per-CPU record scratch and its user stack walkers (unwind.bpf.h, python.bpf.h).
 *
 * At sched_switch the thread leaving the CPU (still `current`) has its switch-out time and state
 * noted in its slot of offcpu_tasks: a map update and no user stack walk, so that the cost of a
 * switch does not depend on the user stack; with [offcpu] kernel_stacks, the kernel stack of a
 * system call's first blocked (S, D) period is taken there (the only place it is the blocked
 * one on a kernel without kprobes and trampolines). When the thread returns from its system
 * call (sys_exit, in its own context, its user registers and memory mapped) the periods end
 * and, when they are to be recorded (bpf_shared.h: at least min_blocked, or short periods' time
 * reaching it), the user stack is walked as a sample's is and the record goes to the ring buffer
 * with its weight. A user stack walk at switch-out would pay for every short block (a pipe
 * ping-pong blocks ~100 000 times a second) and could not know the period's length;
 * sched_switch cannot walk the user stack of `next` (another address space).
 *
 * Everything is off (not loaded) unless [offcpu] enabled: the programs' autoload is set by the
 * sampler.
 */
#ifndef EMBER_OFFCPU_BPF_H
#define EMBER_OFFCPU_BPF_H

/* Knobs (sampler.c from [offcpu]). */
const volatile __u64 offcpu_min_ns = 1000000;		/* min_blocked */
const volatile __u64 offcpu_max_ns = 60000000000ULL;	/* max_blocked */
const volatile __u64 offcpu_quantum_ns = 1000000;	/* weight unit: <= min_ns */
const volatile __u32 offcpu_states = EMBER_OFFCPU_STATE_S | EMBER_OFFCPU_STATE_D;
const volatile __u32 offcpu_pid = 0;			/* only this tgid; 0: any */
const volatile __u64 offcpu_cgroup = 0;			/* only this cgroup v2 id; 0: any */
const volatile char offcpu_comm[TASK_COMM_LEN] = {};	/* only this comm; "": any */
/* task_struct.pid's offset, from the kernel's BTF by userspace (no CO-RE: libbpf would parse the
 * BTF at every start, off-CPU or not); 0: unknown, periods then end at sys_exit */
const volatile __u32 offcpu_pid_off = 0;
const volatile __u32 offcpu_comm_off = 0; /* task_struct.comm's: the wakee's name */
const volatile __u32 offcpu_flags_off = 0; /* task_struct.flags': kernel threads are skipped */
#define OFF_PF_KTHREAD 0x00200000
/* [offcpu] kernel_stacks: the blocked kernel stack, taken at the switch-out (below) */
const volatile bool offcpu_kstack_on = false;
/* __traceiter_sched_switch's address range (/proc/kallsyms, by userspace; 0: unknown): with
 * more than one program on sched_switch the tracepoint calls them through it, a frame more
 * between them and __schedule (with one, through a static call: no frame) */
const volatile __u64 offcpu_trace_lo = 0;
const volatile __u64 offcpu_trace_hi = 0;
/* [offcpu] enabled with R in states: on-CPU samples record user-mode preemption (offcpu_sample) */
const volatile bool offcpu_user_sample = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32); /* tid */
	__type(value, struct ember_offcpu_task);
	__uint(max_entries, 1); /* offcpu.threads, set before load */
} offcpu_tasks SEC(".maps");

/* The blocked kernel stacks by tid: one per thread that blocked with kernel_stacks on, allocated
 * at its first (not preallocated: ~1 KiB a thread, only for threads that block), freed at its
 * exit; max_entries = offcpu.threads (1 when off). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32); /* tid */
	__type(value, struct ember_offcpu_kstack);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} offcpu_kstacks SEC(".maps");

/* Scratch for a thread's first kernel stack (the map's value is too big for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct ember_offcpu_kstack);
	__uint(max_entries, NEST_MAX); /* one per level (nest.bpf.h) */
} offcpu_kscratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct ember_offcpu_stats);
	__uint(max_entries, 1);
} offcpu_stats SEC(".maps");

/* The kernel's task states, as sched_switch reports prev_state (include/linux/sched.h). */
#define OFF_TASK_INTERRUPTIBLE	 0x1
#define OFF_TASK_UNINTERRUPTIBLE 0x2
#define OFF_TASK_NOLOAD		 0x400 /* with UNINTERRUPTIBLE: TASK_IDLE, a kernel thread idling */

static __always_inline bool offcpu_selected(__u32 pid)
{
	char comm[TASK_COMM_LEN];
	int i;

	if (offcpu_pid && pid != offcpu_pid)
		return false;
	if (offcpu_cgroup && bpf_get_current_cgroup_id() != offcpu_cgroup)
		return false;
	if (offcpu_comm[0]) {
		bpf_get_current_comm(comm, sizeof(comm));
		for (i = 0; i < TASK_COMM_LEN; i++) {
			if (comm[i] != offcpu_comm[i])
				return false;
			if (!comm[i])
				break;
		}
	}
	return true;
}

/*
 * The kernel stack of the thread blocking (current, at sched_switch: leaf __schedule, then
 * schedule and what called it: pipe_read, do_nanosleep, futex_wait ...) into its slot of
 * offcpu_kstacks; 0 when taken. Skipped: this program's own two frames (bpf_prog_...,
 * bpf_trace_run4), for the tp_btf and the raw_tp program alike. One bpf_get_stack() per
 * system call that blocks (its first blocked period's stack stands for the call's): ~0.5-1 us
 * on this host's ORC unwinder, measured in docs/benchmarks.md ("Off-CPU kernel stacks").
 */
#define OFF_KSTACK_SKIP 2
static __always_inline int offcpu_take_kstack(void *ctx, __u32 tid)
{
	struct ember_offcpu_kstack *ks;
	long r;

	ks = bpf_map_lookup_elem(&offcpu_kstacks, &tid);
	if (ks) {
		r = bpf_get_stack(ctx, ks->ips, sizeof(ks->ips), OFF_KSTACK_SKIP & BPF_F_SKIP_FIELD_MASK);
		ks->nr = r > 0 ? (__u32)r / sizeof(__u64) : 0;
		ks->first = ks->nr > 1 && ks->ips[0] >= offcpu_trace_lo && ks->ips[0] < offcpu_trace_hi;
		return r > 0 ? 0 : -1;
	}
	ks = bpf_map_lookup_elem(&offcpu_kscratch, NEST_KEY);
	if (!ks)
		return -1;
	r = bpf_get_stack(ctx, ks->ips, sizeof(ks->ips), OFF_KSTACK_SKIP & BPF_F_SKIP_FIELD_MASK);
	if (r <= 0)
		return -1;
	ks->nr = (__u32)r / sizeof(__u64);
	ks->first = ks->nr > 1 && ks->ips[0] >= offcpu_trace_lo && ks->ips[0] < offcpu_trace_hi;
	return bpf_map_update_elem(&offcpu_kstacks, &tid, ks, BPF_NOEXIST) ? -1 : 0;
}

/*
 * Is the kernel stack of @t's period of kind @k, opening now, worth taking: will its system
 * call's blocked time of that kind likely be recorded? It is when the accumulator with the
 * call's time so far and twice the thread's recent longest (last_ns, a maximum decaying by 1/8
 * a period) reaches min_blocked (a period of at least min_blocked always is recorded; a short
 * one is when it makes the accumulator reach it). In a pipe ping-pong (~10 us periods, 1 ms
 * min_blocked) that is ~2 of the ~100 periods per record, not all 100; a period much longer
 * than the thread's recent ones is recorded without a kernel stack (kstack_miss).
 */
static __always_inline bool offcpu_kstack_wanted(struct ember_offcpu_task *t, __u32 k)
{
	k &= EMBER_KIND_NR - 1;
	return t->acc_ns[k] + t->pend_ns[k] + 2 * t->last_ns >= offcpu_min_ns;
}

/* pt_regs.orig_ax (UAPI word 15): the system call's number, or < 0 (an interrupt's entry) */
#define REGS_ORIG_AX 15

/*
 * @next got the CPU back: closes its open period into the system call's pending time, split at
 * its wakeup: switch-out to wakeup blocked (S or D), wakeup to switch-in waiting for a CPU (R).
 */
static __always_inline void offcpu_switch_in(struct ember_offcpu_stats *st, __u64 next, __u64 now)
{
	struct ember_offcpu_task *t;
	__u64 w, r;
	__u32 ntid = 0, k;

	if (!offcpu_pid_off || !next ||
	    bpf_probe_read_kernel(&ntid, sizeof(ntid), (void *)(next + offcpu_pid_off)) || !ntid)
		return;
	t = bpf_map_lookup_elem(&offcpu_tasks, &ntid);
	if (!t || !t->out_ns)
		return;
	k = t->kind & (EMBER_KIND_NR - 1);
	if (k == EMBER_KIND_OFFCPU_R && t->user) {
		/* preempted in user mode: its own pending time (EMBER_KIND_OFFCPU_RU) */
		t->upend_ns += now - t->out_ns;
		st->user_preempt_ns += now - t->out_ns;
	} else if (k == EMBER_KIND_OFFCPU_R) {
		t->pend_ns[EMBER_KIND_OFFCPU_R] += now - t->out_ns;
	} else {
		w = t->wake_ns > t->out_ns && t->wake_ns <= now ? t->wake_ns : now;
		r = now - w;
		/* switch-out to wakeup: weighed at the wakeup already (offcpu_wakeup) */
		if (w == now)
			t->pend_ns[k] += w - t->out_ns;
		st->runq_ns += r;
		if (offcpu_states & EMBER_OFFCPU_STATE_R)
			t->pend_ns[EMBER_KIND_OFFCPU_R] += r;
	}
	t->out_ns = 0;
	t->wake_ns = 0;
	t->user = 0;
}

/*
 * A switch: @next's period closes (above); @prev (current) leaving the CPU opens one when its
 * state and process are selected. Preemption (R) inside a system call is that call's (its
 * return ends it, with the call's stack); preempted in user mode, its time waits apart
 * (upend_ns) for the next system call's return, recorded as EMBER_KIND_OFFCPU_RU with that
 * call's stack under a marker: the time preempted is not lost, the stack is not where it was.
 */
static __always_inline int offcpu_switch(void *ctx, bool preempt, __u32 prev_state, __u64 next)
{
	__u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns(), orig_ax = 0;
	__u32 tid = (__u32)id, zero = 0, kind, user = 0;
	struct ember_offcpu_task *t, nt = {};
	struct ember_offcpu_stats *st;

	st = bpf_map_lookup_elem(&offcpu_stats, &zero);
	if (!st)
		return 0;
	st->switches++;
	offcpu_switch_in(st, next, now);
	if (!tid)
		return 0; /* the idle task */
	if (preempt || !(prev_state & 0xff))
		kind = EMBER_KIND_OFFCPU_R;
	else if (prev_state & OFF_TASK_INTERRUPTIBLE)
		kind = EMBER_KIND_OFFCPU_S;
	else if ((prev_state & OFF_TASK_UNINTERRUPTIBLE) && (prev_state & OFF_TASK_NOLOAD))
		kind = EMBER_KIND_OFFCPU_S; /* TASK_IDLE: waits, as "I" in ps, not on I/O */
	else if (prev_state & OFF_TASK_UNINTERRUPTIBLE)
		kind = EMBER_KIND_OFFCPU_D;
	else
		kind = 0; /* stopped, traced, dead, parked: not blocked time */
	t = bpf_map_lookup_elem(&offcpu_tasks, &tid);
	if (t && t->out_ns) {
		st->unended++; /* no switch-in seen since its switch-out: cannot be */
		t->out_ns = 0;
	}
	if (!kind || !(offcpu_states & (1u << (kind - 1))) || !offcpu_selected(id >> 32))
		return 0;
	/* kernel threads make no system call whose return would end a period: not tracked */
	if (offcpu_flags_off) {
		__u32 pf = 0;

		if (!bpf_probe_read_kernel(&pf, sizeof(pf),
					   (void *)((__u64)bpf_get_current_task_btf() + offcpu_flags_off)) &&
		    (pf & OFF_PF_KTHREAD))
			return 0;
	}
	if (kind == EMBER_KIND_OFFCPU_R) {
		/* in a system call? (user mode, or a kernel thread: no return to end it) */
		if (bpf_probe_read_kernel(&orig_ax, sizeof(orig_ax),
					  (const __u64 *)bpf_task_pt_regs(bpf_get_current_task_btf()) +
					      REGS_ORIG_AX) ||
		    (__s64)orig_ax < 0) {
			st->user_preempt++;
			user = 1;
		}
	}
	if (t) {
		if (user && !t->ufirst_ns)
			t->ufirst_ns = now;
		else if (!user && !t->first_ns)
			t->first_ns = now;
		t->out_ns = now;
		t->wake_ns = 0;
		t->kind = kind;
		t->user = user;
		/* the system call's first blocked period gives its records their kernel stack */
		if (offcpu_kstack_on && kind != EMBER_KIND_OFFCPU_R && !t->kstack) {
			if (!offcpu_kstack_wanted(t, kind)) {
				st->kstack_skip++;
			} else if (offcpu_take_kstack(ctx, tid)) {
				st->kstack_err++;
			} else {
				t->kstack = 1;
				st->kstacks++;
			}
		}
		return 0;
	}
	nt.out_ns = now;
	if (user)
		nt.ufirst_ns = now;
	else
		nt.first_ns = now;
	nt.kind = kind;
	nt.user = user;
	if (offcpu_kstack_on && kind != EMBER_KIND_OFFCPU_R) {
		if (offcpu_take_kstack(ctx, tid)) {
			st->kstack_err++;
		} else {
			nt.kstack = 1;
			st->kstacks++;
		}
	}
	if (bpf_map_update_elem(&offcpu_tasks, &tid, &nt, BPF_NOEXIST))
		st->no_slot++;
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_switch_btf, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	return NEST_RUN(offcpu_switch(ctx, preempt, prev_state, (__u64)next));
}

/* Without BTF: the same arguments, untyped (sched_switch's 4th since Linux 5.18). */
SEC("raw_tp/sched_switch")
int offcpu_switch_raw(struct bpf_raw_tracepoint_args *ctx)
{
	return NEST_RUN(offcpu_switch(ctx, RAW_TP_ARG(ctx, 0) != 0, (__u32)RAW_TP_ARG(ctx, 3), RAW_TP_ARG(ctx, 2)));
}

/*
 * The weight to record for kind @k of a system call's @d ns off the CPU: whole quanta, 0 when the
 * time waits in the accumulator (duration-weighted sampling, bpf_shared.h). Exact accounting.
 */
static __always_inline __u64 offcpu_weigh(struct ember_offcpu_task *t,
					  struct ember_offcpu_stats *st, __u32 k, __u64 d)
{
	__u64 w, q;

	k &= EMBER_KIND_NR - 1;
	if (!d)
		return 0;
	/* a decaying maximum: a thread whose long periods come now and then keeps taking stacks */
	if (k != EMBER_KIND_OFFCPU_R)
		t->last_ns = d > t->last_ns - (t->last_ns >> 3) ? d : t->last_ns - (t->last_ns >> 3);
	st->periods[k]++;
	st->blocked_ns[k] += d;
	if (d > offcpu_max_ns) {
		st->over_max[k]++;
		st->over_max_ns[k] += d;
		return 0;
	}
	if (d >= offcpu_min_ns) {
		/* with what the accumulator holds: the remainders of whole quanta go out too */
		w = d + t->acc_ns[k];
		st->acc_out_ns[k] += t->acc_ns[k];
		t->acc_ns[k] = 0;
	} else {
		/* short: its time waits in the accumulator until it reaches min_blocked */
		t->acc_ns[k] += d;
		st->acc_in_ns[k] += d;
		if (t->acc_ns[k] < offcpu_min_ns)
			return 0;
		w = t->acc_ns[k];
		t->acc_ns[k] = 0;
		st->acc_out_ns[k] += w;
	}
	/* whole quanta recorded, the rest back to the accumulator (min >= quantum: q >= 1) */
	q = offcpu_quantum_ns ? w / offcpu_quantum_ns : 0;
	if (q > 0xffffffffULL)
		q = 0xffffffffULL;
	t->acc_ns[k] += w - q * offcpu_quantum_ns;
	st->acc_in_ns[k] += w - q * offcpu_quantum_ns;
	return q;
}

/*
 * A wakeup: the woken thread's open period gets its wakeup time (its R part starts there), and
 * its blocked part (switch-out to now, with the system call's earlier blocked periods) is
 * weighed here rather than at the switch-in: when it is to be recorded, its waker (`current`,
 * the thread that woke it, in its own context) is recorded with the same weight, its stacks
 * and the wakee's identity (EMBER_KIND_WAKEUP), and the quanta wait in recq for the wakee's own
 * record at its system call's return. Wakeups from interrupts (timers) record the interrupted
 * task as the waker: its kernel stack shows the interrupt.
 *
 * Taken at sched_waking (try_to_wake_up(), always in the waker's context), not at sched_wakeup:
 * when the wakee's CPU is idle (or shares no cache with the waker's), the kernel queues the
 * wakeup to that CPU's wake list and completes it there, from its idle loop, where
 * sched_wakeup's `current` is the idle task (swapper), not the waker. On a quiet host that is
 * nearly every cross-CPU wakeup (the chain graph of fresh-clone runs: 0.6 % and 25 % of the
 * consumer's time under its producer). sched_wakeup (@late) only takes the wakeups that
 * sched_waking could not (the wakee was still switching out), and counts those completed
 * elsewhere (wake_remote).
 */
static __always_inline int offcpu_wake(void *ctx, struct task_struct *p, bool late)
{
	__u64 id = bpf_get_current_pid_tgid(), now, q, size, wake = BPF_RB_NO_WAKEUP;
	__u32 tid = 0, zero = 0, k, nu = 0, npy = 0, nk = 0, base;
	struct ember_offcpu_task *t;
	struct ember_offcpu_stats *st;
	struct ember_ustack *us = NULL;
	struct ember_sample_buf *b;
	__u64 *wk;
	long r;

	if (!offcpu_pid_off ||
	    bpf_probe_read_kernel(&tid, sizeof(tid), (void *)((__u64)p + offcpu_pid_off)) || !tid)
		return 0;
	t = bpf_map_lookup_elem(&offcpu_tasks, &tid);
	if (!t || !t->out_ns)
		return 0;
	st = bpf_map_lookup_elem(&offcpu_stats, &zero);
	if (!st)
		return 0;
	if (t->wake_ns) {
		if (late && t->waker_tid != (__u32)id)
			st->wake_remote++;
		return 0;
	}
	if (late)
		st->wake_late++;
	t->waker_tid = (__u32)id;
	now = bpf_ktime_get_ns();
	t->wake_ns = now;
	st->wakeups++;
	k = t->kind & (EMBER_KIND_NR - 1);
	if (k == EMBER_KIND_OFFCPU_R || now <= t->out_ns)
		return 0;
	q = offcpu_weigh(t, st, k, now - t->out_ns + t->pend_ns[k]);
	t->pend_ns[k] = 0;
	if (!q)
		return 0;
	t->recq[k] += q;
	st->inflight_ns += q * offcpu_quantum_ns;
	b = bpf_map_lookup_elem(&sample_buf, NEST_KEY);
	if (!b)
		return 0;
	b->hdr.time_ns = now;
	b->hdr.cgroup_id = bpf_get_current_cgroup_id();
	b->hdr.pid = id >> 32;
	b->hdr.tid = (__u32)id;
	b->hdr.cpu = (__u32)q;
	b->hdr.kind = EMBER_KIND_WAKEUP;
	b->hdr.user_flags = 0;
	b->hdr.kern_err = -EFAULT;
	b->hdr.user_err = -EFAULT;
	bpf_get_current_comm(b->hdr.comm, sizeof(b->hdr.comm));
	if ((__u32)id) {
		b->hdr.user_err = walk_user(id >> 32,
					    (const __u64 *)bpf_task_pt_regs(bpf_get_current_task_btf()),
					    true, false, b->words, &us);
		if (us && !b->hdr.user_err) {
			nu = us->nr;
			if (nu > EMBER_MAX_STACK_DEPTH)
				nu = EMBER_MAX_STACK_DEPTH;
			npy = EMBER_PY_WORDS * EMBER_USTACK_PY_NR(us->flags);
			if (npy > EMBER_MAX_STACK_DEPTH - nu)
				npy = 0;
			b->hdr.user_flags =
			    npy ? us->flags : us->flags & ~(0xffu << EMBER_USTACK_PY_NR_SHIFT);
			/* the masks kept (barrier_var: clang knew nu <= 127 and dropped them,
			 * and Debian 12's 6.1 verifier lost the bound of the spilled value:
			 * "R2 unbounded memory access") */
			barrier_var(nu);
			barrier_var(npy);
			bpf_probe_read_kernel(b->words, (nu & 127) * 8, us->ips);
			if (npy)
				bpf_probe_read_kernel(&b->words[nu & 127], (npy & 127) * 8,
						      &us->ips[(EMBER_MAX_STACK_DEPTH - npy) & 127]);
		}
	}
	/* skip this program's own two frames (bpf_prog_..., bpf_trace_run1) */
	base = nu + npy;
	barrier_var(base);
	r = bpf_get_stack(ctx, &b->words[base & 255], EMBER_MAX_STACK_DEPTH * sizeof(__u64),
			  2 & BPF_F_SKIP_FIELD_MASK);
	if (r > 0) {
		nk = (__u32)r / sizeof(__u64);
		b->hdr.kern_err = 0;
	} else {
		b->hdr.kern_err = r ? (__s32)r : -EFAULT;
	}
	b->hdr.nr_user = nu;
	b->hdr.nr_py = npy;
	b->hdr.nr_kernel = nk;
	/* the wakee, after the frames (bounded index: <= 127 + 127 + 127 + 4 < 512) */
	base = nu + npy + nk;
	barrier_var(base); /* the compare kept: 6.1's verifier bounds the words by it */
	if (base > EMBER_SAMPLE_WORDS - EMBER_WAKEE_WORDS)
		return 0;
	wk = &b->words[base];
	wk[0] = tid | (__u64)k << 32;
	bpf_probe_read_kernel(&wk[1], 16, (void *)((__u64)p + offcpu_comm_off));
	wk[3] = t->first_ns;
	size = base + EMBER_WAKEE_WORDS; /* <= 127 * 3 + 4 */
	barrier_var(size);
	size = sizeof(b->hdr) + (size & (EMBER_SAMPLE_WORDS - 1)) * 8;
	if (!(st->wakeup_records & 31) && bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) > ring_half)
		wake = BPF_RB_FORCE_WAKEUP;
	if (bpf_ringbuf_output(&samples, b, size, wake)) {
		st->wakeup_lost++;
		return 0;
	}
	st->wakeup_records++;
	st->ring_bytes += size;
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(offcpu_waking, struct task_struct *p)
{
	return NEST_RUN(offcpu_wake(ctx, p, false));
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(offcpu_wakeup, struct task_struct *p)
{
	return NEST_RUN(offcpu_wake(ctx, p, true));
}

/* Sends the record in @b as kind @hk with weight @q quanta; counts it as kind @k. */
static __always_inline void offcpu_send(struct ember_sample_buf *b, struct ember_offcpu_stats *st,
					__u32 k, __u32 hk, __u64 q, __u64 size)
{
	__u64 wake = BPF_RB_NO_WAKEUP, w = q * offcpu_quantum_ns;

	k &= EMBER_KIND_NR - 1;
	if (!q)
		return;
	b->hdr.kind = hk;
	b->hdr.cpu = (__u32)q; /* the weight, in quanta */
	/* no default wake-up (it wakes the drain at each record after it caught up: a batch each,
	 * past the work queue's bound), but past half full, asked every 32nd record */
	if (!(st->recorded[k] & 31) && bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) > ring_half)
		wake = BPF_RB_FORCE_WAKEUP;
	if (bpf_ringbuf_output(&samples, b, size, wake)) {
		st->lost[k]++;
		st->lost_ns[k] += w;
		return;
	}
	st->recorded[k]++;
	st->recorded_ns[k] += w;
	st->ring_bytes += size;
}

/*
 * The thread returns from the system call it was off the CPU in (sys_exit, in its own context,
 * its user registers and stack untouched since it blocked): its pending time by kind is weighed
 * and recorded, one stack walk for up to three records (S or D, and R). Not finish_task_switch()
 * or schedule(), where the kernel stack would still be the blocked one: this kernel has no
 * kprobes (CONFIG_KPROBES off) and refuses BPF trampolines (fentry/fexit: EPERM). The blocked
 * kernel stack was taken at the switch-out instead ([offcpu] kernel_stacks, offcpu_take_kstack:
 * the system call's first S or D period) and goes after the user words of the S and D records,
 * as a sample's; the R record has none (kern_err -EFAULT). Blocking outside a system call (a
 * page fault) is added to the thread's next system call: the totals stay whole, the user stack
 * is that call's.
 */
static __always_inline int offcpu_resume_run(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), qs, qd, qr, qu, size;
	__u32 pid = id >> 32, tid = (__u32)id, nu = 0, npy = 0, nk = 0, base;
	struct ember_offcpu_kstack *ks = NULL;
	struct ember_offcpu_task *t;
	struct ember_offcpu_stats *st;
	struct ember_ustack *us = NULL;
	struct ember_sample_buf *b;

	if (!tid)
		return 0;
	t = bpf_map_lookup_elem(&offcpu_tasks, &tid);
	if (!t || !(t->first_ns | t->upend_ns))
		return 0;
	st = bpf_map_lookup_elem(&offcpu_stats, &nest_key0);
	if (!st)
		return 0;
	/* with what the wakeups weighed (their wakers are recorded with the same quanta) */
	qs = offcpu_weigh(t, st, EMBER_KIND_OFFCPU_S, t->pend_ns[EMBER_KIND_OFFCPU_S]) +
	     t->recq[EMBER_KIND_OFFCPU_S];
	qd = offcpu_weigh(t, st, EMBER_KIND_OFFCPU_D, t->pend_ns[EMBER_KIND_OFFCPU_D]) +
	     t->recq[EMBER_KIND_OFFCPU_D];
	qr = offcpu_weigh(t, st, EMBER_KIND_OFFCPU_R, t->pend_ns[EMBER_KIND_OFFCPU_R]);
	qu = offcpu_weigh(t, st, EMBER_KIND_OFFCPU_R, t->upend_ns); /* preempted in user mode */
	t->upend_ns = 0;
	st->inflight_ns -= (t->recq[EMBER_KIND_OFFCPU_S] + t->recq[EMBER_KIND_OFFCPU_D]) *
			   offcpu_quantum_ns;
	t->recq[EMBER_KIND_OFFCPU_S] = 0;
	t->recq[EMBER_KIND_OFFCPU_D] = 0;
	t->pend_ns[EMBER_KIND_OFFCPU_S] = 0;
	t->pend_ns[EMBER_KIND_OFFCPU_D] = 0;
	t->pend_ns[EMBER_KIND_OFFCPU_R] = 0;
	if (t->kstack) {
		t->kstack = 0;
		ks = bpf_map_lookup_elem(&offcpu_kstacks, &tid);
	}
	b = bpf_map_lookup_elem(&sample_buf, NEST_KEY);
	if (!b || !(qs | qd | qr | qu)) {
		t->ufirst_ns = 0;
		if (b)
			t->first_ns = 0;
		else if (qs | qd | qr | qu) { /* cannot happen: a one-element array */
			st->lost[EMBER_KIND_OFFCPU_S] += !!qs;
			st->lost_ns[EMBER_KIND_OFFCPU_S] += qs * offcpu_quantum_ns;
			st->lost[EMBER_KIND_OFFCPU_D] += !!qd;
			st->lost_ns[EMBER_KIND_OFFCPU_D] += qd * offcpu_quantum_ns;
			st->lost[EMBER_KIND_OFFCPU_R] += !!qr + !!qu;
			st->lost_ns[EMBER_KIND_OFFCPU_R] += (qr + qu) * offcpu_quantum_ns;
			t->first_ns = 0;
		}
		return 0;
	}
	b->hdr.time_ns = t->first_ns;
	t->first_ns = 0;
	b->hdr.cgroup_id = bpf_get_current_cgroup_id();
	b->hdr.pid = pid;
	b->hdr.tid = tid;
	b->hdr.user_flags = 0;
	b->hdr.kern_err = -EFAULT;
	b->hdr.user_err = walk_user(pid, (const __u64 *)bpf_task_pt_regs(bpf_get_current_task_btf()),
				    true, false, b->words, &us);
	bpf_get_current_comm(b->hdr.comm, sizeof(b->hdr.comm));
	if (us && !b->hdr.user_err) {
		nu = us->nr;
		if (nu > EMBER_MAX_STACK_DEPTH)
			nu = EMBER_MAX_STACK_DEPTH;
		npy = EMBER_PY_WORDS * EMBER_USTACK_PY_NR(us->flags);
		if (npy > EMBER_MAX_STACK_DEPTH - nu)
			npy = 0;
		b->hdr.user_flags = npy ? us->flags : us->flags & ~(0xffu << EMBER_USTACK_PY_NR_SHIFT);
		/* bounded copies, as in do_sample(), their masks kept (offcpu_wake()) */
		barrier_var(nu);
		barrier_var(npy);
		bpf_probe_read_kernel(b->words, (nu & 127) * 8, us->ips);
		if (npy)
			bpf_probe_read_kernel(&b->words[nu & 127], (npy & 127) * 8,
					      &us->ips[(EMBER_MAX_STACK_DEPTH - npy) & 127]);
	}
	b->hdr.nr_user = nu;
	b->hdr.nr_py = npy;
	b->hdr.nr_kernel = 0;
	/* the blocked kernel stack (kernel_stacks) after the user words, as a sample's */
	base = nu + npy;
	if (!ks && (qs | qd) && offcpu_kstack_on)
		st->kstack_miss++;
	if (ks && (qs | qd)) {
		nk = ks->nr - (ks->first & 1); /* first: nr >= 2 */
		if (nk > EMBER_MAX_STACK_DEPTH)
			nk = EMBER_MAX_STACK_DEPTH;
		barrier_var(base);
		barrier_var(nk);
		if (nk && !bpf_probe_read_kernel(&b->words[base & 255], (nk & 127) * 8,
						 &ks->ips[ks->first & 1])) {
			b->hdr.nr_kernel = nk;
			b->hdr.kern_err = 0;
		} else {
			nk = 0;
		}
	}
	size = nu + npy + nk;
	barrier_var(size);
	size = sizeof(b->hdr) + (size & (EMBER_SAMPLE_WORDS - 1)) * sizeof(__u64);
	offcpu_send(b, st, EMBER_KIND_OFFCPU_S, EMBER_KIND_OFFCPU_S, qs, size);
	offcpu_send(b, st, EMBER_KIND_OFFCPU_D, EMBER_KIND_OFFCPU_D, qd, size);
	/* waiting for a CPU: not the blocked stack (it was taken for S or D) */
	if (nk) {
		b->hdr.nr_kernel = 0;
		b->hdr.kern_err = -EFAULT;
		size = nu + npy;
		barrier_var(size);
		size = sizeof(b->hdr) + (size & (EMBER_SAMPLE_WORDS - 1)) * sizeof(__u64);
	}
	offcpu_send(b, st, EMBER_KIND_OFFCPU_R, EMBER_KIND_OFFCPU_R, qr, size);
	/* its time: the first preemption's (the stack size bars a local: 6.1's combined 512) */
	if (t->ufirst_ns)
		b->hdr.time_ns = t->ufirst_ns;
	t->ufirst_ns = 0;
	offcpu_send(b, st, EMBER_KIND_OFFCPU_R, EMBER_KIND_OFFCPU_RU, qu, size);
	return 0;
}

SEC("raw_tp/sys_exit")
int offcpu_resume(struct bpf_raw_tracepoint_args *ctx)
{
	return NEST_RUN(offcpu_resume_run(ctx));
}

/*
 * An on-CPU sample of a thread in user mode (sampler.bpf.c's sample(), after its record went
 * out; @nw: its user and Python words in @b): time the thread was preempted in user mode since
 * it was last recorded is weighed as R and recorded with this sample's user stack, under
 * "[preempted in user mode]" (EMBER_KIND_OFFCPU_RU): a burner that never makes a system call
 * has its waits for a CPU recorded too. Only samples that interrupted user mode: then no
 * off-CPU program of this thread is running on this CPU (they run in the kernel), and no other
 * CPU touches the slot of a running thread's R time.
 */
static __always_inline void offcpu_sample(struct ember_sample_buf *b, __u32 nw)
{
	struct ember_offcpu_stats *st;
	struct ember_offcpu_task *t;
	__u32 tid = b->hdr.tid, zero = 0;
	__u64 q, ut, size;

	if (!offcpu_user_sample || !tid)
		return;
	t = bpf_map_lookup_elem(&offcpu_tasks, &tid);
	if (!t || !t->upend_ns || t->out_ns)
		return;
	st = bpf_map_lookup_elem(&offcpu_stats, &zero);
	if (!st)
		return;
	q = offcpu_weigh(t, st, EMBER_KIND_OFFCPU_R, t->upend_ns);
	ut = t->ufirst_ns;
	t->upend_ns = 0;
	t->ufirst_ns = 0;
	if (!q)
		return;
	if (ut)
		b->hdr.time_ns = ut;
	b->hdr.nr_kernel = 0;
	b->hdr.kern_err = -EFAULT;
	size = sizeof(b->hdr) + (nw & (EMBER_SAMPLE_WORDS - 1)) * sizeof(__u64);
	offcpu_send(b, st, EMBER_KIND_OFFCPU_R, EMBER_KIND_OFFCPU_RU, q, size);
}

/*
 * A thread exits (sched_process_exit, in its context): its time preempted in user mode since its
 * last sample or system call is recorded without a stack (its memory is gone by then), under
 * its marker; its slot goes; what its accumulators held is counted as not recorded.
 */
static __always_inline void offcpu_thread_exit(__u32 tid)
{
	struct ember_offcpu_task *t = bpf_map_lookup_elem(&offcpu_tasks, &tid);
	struct ember_offcpu_stats *st;
	struct ember_sample_buf *b;
	__u32 zero = 0;
	__u64 q;
	int k;

	if (!t)
		return;
	st = bpf_map_lookup_elem(&offcpu_stats, &zero);
	b = bpf_map_lookup_elem(&sample_buf, NEST_KEY);
	if (st && b && offcpu_user_sample && t->upend_ns) {
		q = offcpu_weigh(t, st, EMBER_KIND_OFFCPU_R, t->upend_ns);
		b->hdr.time_ns = t->ufirst_ns ? t->ufirst_ns : bpf_ktime_get_ns();
		t->upend_ns = 0;
		t->ufirst_ns = 0;
		b->hdr.cgroup_id = bpf_get_current_cgroup_id();
		b->hdr.pid = bpf_get_current_pid_tgid() >> 32;
		b->hdr.tid = tid;
		b->hdr.user_flags = 0;
		b->hdr.kern_err = -EFAULT;
		b->hdr.user_err = -EFAULT;
		b->hdr.nr_user = 0;
		b->hdr.nr_py = 0;
		b->hdr.nr_kernel = 0;
		bpf_get_current_comm(b->hdr.comm, sizeof(b->hdr.comm));
		offcpu_send(b, st, EMBER_KIND_OFFCPU_R, EMBER_KIND_OFFCPU_RU, q, sizeof(b->hdr));
	}
	if (st)
		for (k = 0; k < EMBER_KIND_NR; k++) {
			st->acc_out_ns[k] += t->acc_ns[k];
			st->lost_ns[k] += t->acc_ns[k] + t->recq[k] * offcpu_quantum_ns;
			st->inflight_ns -= t->recq[k] * offcpu_quantum_ns;
		}
	bpf_map_delete_elem(&offcpu_tasks, &tid);
	if (offcpu_kstack_on)
		bpf_map_delete_elem(&offcpu_kstacks, &tid);
}

#endif
