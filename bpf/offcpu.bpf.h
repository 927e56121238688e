/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Off-CPU events (issue 30), included once by sampler.bpf.c: they share its ring buffer, its
 * per-CPU record scratch and its user stack walkers (unwind.bpf.h, python.bpf.h).
 *
 * At sched_switch the thread leaving the CPU (still `current`) has its switch-out time and state
 * noted in its slot of offcpu_tasks: a map update, no stack walk, so that the cost of a switch
 * does not depend on the stack. When it runs again, finish_task_switch() runs first in its own
 * context, with its user registers and user memory mapped and its kernel stack still the blocked
 * one: there the period ends and, when it is to be recorded (bpf_shared.h: at least min_blocked,
 * or short periods' time reaching it), the stacks are walked as a sample's are and the record
 * goes to the ring buffer with its weight. A stack walk at switch-out would pay for every short
 * block (a pipe ping-pong blocks ~100 000 times a second) and could not know the period's length;
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

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32); /* tid */
	__type(value, struct ember_offcpu_task);
	__uint(max_entries, 1); /* offcpu.threads, set before load */
} offcpu_tasks SEC(".maps");

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

/* A switch-out: note when and why @prev (current) left the CPU. */
static __always_inline int offcpu_switch(bool preempt, __u32 prev_state)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, zero = 0, kind;
	struct ember_offcpu_task *t, nt = {};
	struct ember_offcpu_stats *st;

	if (!tid)
		return 0; /* the idle task */
	st = bpf_map_lookup_elem(&offcpu_stats, &zero);
	if (!st)
		return 0;
	st->switches++;
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
	if (!kind || !(offcpu_states & (1u << (kind - 1))) || !offcpu_selected(id >> 32)) {
		if (t)
			t->out_ns = 0;
		return 0;
	}
	if (t) {
		if (t->out_ns)
			st->unended++; /* resumed without a system call's return: not known */
		t->out_ns = bpf_ktime_get_ns();
		t->kind = kind;
		return 0;
	}
	nt.out_ns = bpf_ktime_get_ns();
	nt.kind = kind;
	if (bpf_map_update_elem(&offcpu_tasks, &tid, &nt, BPF_NOEXIST))
		st->no_slot++;
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_switch_btf, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	return offcpu_switch(preempt, prev_state);
}

/* Without BTF: the same arguments, untyped (sched_switch's 4th since Linux 5.18). */
SEC("raw_tp/sched_switch")
int offcpu_switch_raw(struct bpf_raw_tracepoint_args *ctx)
{
	return offcpu_switch(ctx->args[0] != 0, (__u32)ctx->args[3]);
}

/*
 * The thread is back, returning from the system call it blocked in (sys_exit, in its own
 * context, its user registers and stack untouched since it blocked): ends its period and records
 * it when due. Not finish_task_switch() or schedule(), where the kernel stack would still be the
 * blocked one: this kernel has no kprobes (CONFIG_KPROBES off) and refuses BPF trampolines
 * (fentry/fexit: EPERM), so the record carries no kernel stack (kern_err -EFAULT). Periods that
 * do not end in a system call's return (page faults, preemption) are counted at the thread's next
 * switch-out as "unended" (struct ember_offcpu_stats) and not recorded.
 */
SEC("raw_tp/sys_exit")
int offcpu_resume(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), now, d, w, q;
	__u32 zero = 0, pid = id >> 32, tid = (__u32)id, nu = 0, npy = 0, nk = 0, k;
	struct ember_offcpu_task *t;
	struct ember_offcpu_stats *st;
	struct ember_ustack *us = NULL;
	struct ember_sample_buf *b;
	__u64 start, size;

	if (!tid)
		return 0;
	t = bpf_map_lookup_elem(&offcpu_tasks, &tid);
	if (!t || !t->out_ns)
		return 0;
	st = bpf_map_lookup_elem(&offcpu_stats, &zero);
	if (!st)
		return 0;
	now = bpf_ktime_get_ns();
	start = t->out_ns;
	t->out_ns = 0;
	k = t->kind & (EMBER_KIND_NR - 1);
	d = now > start ? now - start : 0;
	st->periods[k]++;
	st->blocked_ns[k] += d;
	if (d > offcpu_max_ns) {
		st->over_max[k]++;
		st->over_max_ns[k] += d;
		return 0;
	}
	if (d >= offcpu_min_ns) {
		w = d;
	} else {
		/* short: its time waits in the accumulator until they reach min_blocked */
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
	w = q * offcpu_quantum_ns;
	if (!q)
		return 0;

	b = bpf_map_lookup_elem(&sample_buf, &zero);
	if (!b) {
		st->lost[k]++;
		st->lost_ns[k] += w;
		return 0;
	}
	b->hdr.time_ns = start;
	b->hdr.cgroup_id = bpf_get_current_cgroup_id();
	b->hdr.pid = pid;
	b->hdr.tid = tid;
	b->hdr.cpu = (__u32)q; /* the weight, in quanta */
	b->hdr.kind = k;
	b->hdr.user_flags = 0;
	b->hdr.kern_err = -EFAULT;
	b->hdr.user_err = walk_user(pid, (const __u64 *)bpf_task_pt_regs(bpf_get_current_task_btf()),
				    true, &us);
	bpf_get_current_comm(b->hdr.comm, sizeof(b->hdr.comm));
	if (us && !b->hdr.user_err) {
		nu = us->nr;
		if (nu > EMBER_MAX_STACK_DEPTH)
			nu = EMBER_MAX_STACK_DEPTH;
		npy = EMBER_PY_WORDS * EMBER_USTACK_PY_NR(us->flags);
		if (npy > EMBER_MAX_STACK_DEPTH - nu)
			npy = 0;
		b->hdr.user_flags = npy ? us->flags : us->flags & ~(0xffu << EMBER_USTACK_PY_NR_SHIFT);
		/* bounded copies, as in do_sample() */
		bpf_probe_read_kernel(b->words, (nu & 127) * 8, us->ips);
		if (npy)
			bpf_probe_read_kernel(&b->words[nu & 127], (npy & 127) * 8,
					      &us->ips[(EMBER_MAX_STACK_DEPTH - npy) & 127]);
	}
	b->hdr.nr_user = nu;
	b->hdr.nr_py = npy;
	b->hdr.nr_kernel = nk;
	size = sizeof(b->hdr) + ((nu + npy + nk) & (EMBER_SAMPLE_WORDS - 1)) * sizeof(__u64);
	if (bpf_ringbuf_output(&samples, b, size, 0)) {
		st->lost[k]++;
		st->lost_ns[k] += w;
		return 0;
	}
	st->recorded[k]++;
	st->recorded_ns[k] += w;
	st->ring_bytes += size;
	return 0;
}

/* A thread exits: its slot goes; what its accumulators held is counted as not recorded. */
static __always_inline void offcpu_thread_exit(__u32 tid)
{
	struct ember_offcpu_task *t = bpf_map_lookup_elem(&offcpu_tasks, &tid);
	struct ember_offcpu_stats *st;
	__u32 zero = 0;
	int k;

	if (!t)
		return;
	st = bpf_map_lookup_elem(&offcpu_stats, &zero);
	if (st)
		for (k = 0; k < EMBER_KIND_NR; k++)
			st->acc_out_ns[k] += t->acc_ns[k], st->lost_ns[k] += t->acc_ns[k];
	bpf_map_delete_elem(&offcpu_tasks, &tid);
}

#endif
