// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ember's sampler: attached to a perf event on every CPU. Per sample it takes the kernel stack id
 * of the running task (the kernel's frame-pointer walk, bpf_get_stackid) and walks its user stack
 * with the unwind tables userspace loaded (unwind.bpf.h) into a user stack map, counts (pid,
 * tid, comm, stacks) in the active generation's hash map and emits a 32-byte time record into
 * the ring buffer. Everything else is userspace's job.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "ember/daemon/sample/bpf_shared.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define EEXIST 17
#define EFAULT 14
#define ENOMEM 12

/* issue 21: the sampled thread's Python frames, stored with its user stack by walk_user() */
#include "python.bpf.h"
#include "unwind.bpf.h"

/* Knobs, set between open and load. */
const volatile bool include_idle = true;
/* Walk the idle task's kernel stack; else its samples carry no stack (userspace shows "[idle]"). */
const volatile bool idle_stacks = false;
/* Only this process (tgid) when not 0: an ad hoc capture's second sampler (capture.c). */
const volatile __u32 target_pid = 0;
/* Half the ring buffer's size: past it, a sample wakes userspace at once. */
const volatile __u64 ring_half = 1 << 19;

/* Flipped by userspace each tick (0 or 1): the generation of counts samples go to. */
__u32 gen = 0;
/*
 * The generation of stack maps (0 or 1), flipped by userspace when the active map fills up or
 * ages: stack ids stay valid across ticks, so userspace reads each stack once per generation.
 * Ids carry it in bit EMBER_STACK_GEN_SHIFT.
 */
__u32 sgen = 0;
/* Bumped by each exec notification: invalidates the per-CPU "last pid" shortcut below. */
__u32 exec_seq = 0;

/* Map sizes below are defaults; the sampler sets them from the config before load. */
#define STACK_MAP(name)                                                                        \
	struct {                                                                               \
		__uint(type, BPF_MAP_TYPE_STACK_TRACE);                                        \
		__uint(key_size, sizeof(__u32));                                               \
		__uint(value_size, EMBER_MAX_STACK_DEPTH * sizeof(__u64));                    \
		__uint(max_entries, 16384);                                                    \
	} name SEC(".maps")

#define COUNTS_MAP(name)                                                                       \
	struct {                                                                               \
		__uint(type, BPF_MAP_TYPE_HASH);                                               \
		__type(key, struct ember_key);                                                 \
		__type(value, __u64);                                                          \
		__uint(max_entries, 16384);                                                    \
	} name SEC(".maps")

STACK_MAP(stacks0);
STACK_MAP(stacks1);
COUNTS_MAP(counts0);
COUNTS_MAP(counts1);

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} times SEC(".maps");

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

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct ember_bpf_stats);
	__uint(max_entries, 1);
} stats SEC(".maps");

static __always_inline void count_err(__s32 id, __u64 *eexist, __u64 *efault, __u64 *other)
{
	if (id >= 0)
		return;
	if (id == -EEXIST)
		(*eexist)++;
	else if (id == -EFAULT)
		(*efault)++;
	else
		(*other)++;
}

SEC("perf_event")
int do_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct ember_key key = {};
	struct ember_time_rec *rec;
	struct ember_bpf_stats *st;
	__u64 one = 1, *val, wake = BPF_RB_NO_WAKEUP;
	__u32 zero = 0, g, sg, seq;
	__u8 yes = 1;
	__u32 uflags = 0;
	bool kstack = true; /* walk the kernel stack */
	void *counts, *stacks;

	st = bpf_map_lookup_elem(&stats, &zero);
	if (!st) /* cannot happen for a one-element array; the verifier wants the check */
		return 0;
	key.pid = id >> 32;
	key.tid = (__u32)id;
	if (target_pid && key.pid != target_pid)
		return 0;
	if (key.tid == 0 && !include_idle)
		return 0;
	/* one read of gen: the stack ids and the count must land in the same generation */
	g = *(volatile __u32 *)&gen & 1;
	sg = *(volatile __u32 *)&sgen & 1;
	bpf_get_current_comm(&key.comm, sizeof(key.comm));
	key.cgroup_id = bpf_get_current_cgroup_id();
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
	if (key.tid == 0 && !idle_stacks)
		kstack = false;
	key.kern_stack_id = -EFAULT;
	key.user_stack_id = -EFAULT;
	/* the helper needs a map the verifier knows: it follows each of the two through its path
	 * (a call site per generation cost ~0.6 ms more verification at start) */
	stacks = sg ? (void *)&stacks1 : (void *)&stacks0;
	if (kstack)
		key.kern_stack_id = bpf_get_stackid(ctx, stacks, 0);
	if (key.tid) {
		/* user registers: the sample's own when it interrupted user mode, else those the
		 * task entered the kernel with (at the top of its kernel stack) */
		const __u64 *regs = (const __u64 *)ctx;

		if (kstack)
			regs = (const __u64 *)bpf_task_pt_regs(bpf_get_current_task_btf());
		key.user_stack_id = walk_user(key.pid, regs, kstack, sg, &uflags);
	}
	counts = g ? (void *)&counts1 : (void *)&counts0;
	st->samples++;
	if (key.tid == 0)
		st->idle++;
	count_err(key.kern_stack_id, &st->kern_eexist, &st->kern_efault, &st->kern_other);
	count_err(key.user_stack_id, &st->user_eexist, &st->user_efault, &st->user_other);
	if (key.user_stack_id >= 0) {
		if (uflags & EMBER_USTACK_FP)
			st->user_fp_walks++;
		if (uflags & EMBER_USTACK_TRUNC)
			st->user_truncated++;
	}
	/* an id names a bucket of its generation's map */
	if (key.kern_stack_id >= 0)
		key.kern_stack_id |= sg << EMBER_STACK_GEN_SHIFT;
	if (key.user_stack_id >= 0)
		key.user_stack_id |= sg << EMBER_STACK_GEN_SHIFT;

	val = bpf_map_lookup_elem(counts, &key);
	if (val)
		__sync_fetch_and_add(val, 1);
	else if (bpf_map_update_elem(counts, &key, &one, BPF_NOEXIST)) {
		/* -EEXIST: another CPU added the key meanwhile; otherwise the map is full */
		val = bpf_map_lookup_elem(counts, &key);
		if (val)
			__sync_fetch_and_add(val, 1);
		else
			st->counts_full++;
	}

	rec = bpf_ringbuf_reserve(&times, sizeof(*rec), 0);
	if (!rec) {
		st->ringbuf_drops++;
		if (!val)
			st->both_full++; /* neither counted nor recorded: lost here, counted */
		return 0;
	}
	rec->time_ns = bpf_ktime_get_ns();
	rec->pid = key.pid;
	rec->tid = key.tid;
	rec->user_stack_id = key.user_stack_id;
	rec->kern_stack_id = key.kern_stack_id;
	rec->cpu = bpf_get_smp_processor_id();
	rec->gen = g;
	/*
	 * No user stack (kernel thread): no mappings to capture, no wake-up. The process this CPU
	 * sampled last (and no exec since) is known to be in "seen": skip the LRU lookup, the
	 * common case on a busy CPU.
	 */
	seq = *(volatile __u32 *)&exec_seq;
	if (key.pid && key.user_stack_id != -EFAULT &&
	    (key.pid != st->last_pid || seq != st->last_exec_seq)) {
		if (!bpf_map_lookup_elem(&seen, &key.pid)) {
			bpf_map_update_elem(&seen, &key.pid, &yes, BPF_ANY);
			wake = BPF_RB_FORCE_WAKEUP;
		}
		st->last_pid = key.pid;
		st->last_exec_seq = seq;
	}
	/* half full: wake userspace now rather than drop records before the next tick. Asked
	 * every 32nd sample of a CPU (the positions are cold cache lines): the other half of the
	 * ring holds what all CPUs write meanwhile, up to 400 CPUs */
	if (wake == BPF_RB_NO_WAKEUP && !(st->samples & 31) &&
	    bpf_ringbuf_query(&times, BPF_RB_AVAIL_DATA) > ring_half)
		wake = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(rec, wake);
	return 0;
}

/* Puts a process event (EMBER_REC_EXEC or _EXIT) for @pid on the ring buffer, counted. */
static __always_inline void tell(__u32 pid, __u32 kind, __u64 wake)
{
	struct ember_exec_rec *rec;
	struct ember_bpf_stats *st;
	__u32 zero = 0;

	st = bpf_map_lookup_elem(&stats, &zero);
	if (!st)
		return;
	rec = bpf_ringbuf_reserve(&times, sizeof(*rec), 0);
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
	rec->time_ns = bpf_ktime_get_ns();
	rec->pid = pid;
	rec->kind = kind;
	bpf_ringbuf_submit(rec, wake);
}

/*
 * exec of a process sampled before: its cached mappings describe the old image. Forget it here
 * (its next sample wakes userspace as a new process's) and tell userspace at once, so a process
 * that forks, execs and exits within a tick still resolves.
 */
SEC("raw_tp/sched_process_exec") /* raw: needs no tracefs mounted */
int on_exec(void *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;

	/* any CPU's "last pid" may name this process, even one the LRU evicted: make them all
	 * ask "seen" again */
	__sync_fetch_and_add(&exec_seq, 1);
	if (bpf_map_delete_elem(&seen, &pid))
		return 0; /* never sampled (or long ago): nothing cached */
	tell(pid, EMBER_REC_EXEC, BPF_RB_FORCE_WAKEUP);
	return 0;
}

/*
 * Exit of a sampled process's leader: userspace checks it then (the process is gone, or other
 * threads still run) instead of reading the start time of every process it knows every few
 * seconds. Forgotten here, so that a process that reuses the pid is captured at its first
 * sample. Not worth a wake-up: read at the next tick.
 */
SEC("raw_tp/sched_process_exit")
int on_exit(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32;

	python_thread_exit((__u32)id); /* issue 21: its cached Python thread state goes */
	if ((__u32)id != pid)
		return 0; /* another thread: the process lives on */
	if (bpf_map_delete_elem(&seen, &pid))
		return 0; /* never sampled (or long ago): nothing cached */
	/* a CPU's "last pid" may be this one: make them ask "seen" again */
	__sync_fetch_and_add(&exec_seq, 1);
	tell(pid, EMBER_REC_EXIT, BPF_RB_NO_WAKEUP);
	return 0;
}
