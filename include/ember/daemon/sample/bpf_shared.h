/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Types shared by the BPF program (bpf/sampler.bpf.c) and the sampler. Includes nothing:
 * userspace includes <linux/types.h> first, the BPF side vmlinux.h. Only fixed-size fields,
 * explicit padding.
 *
 * Two generations of (stack map, counts map): the program writes to generation `gen` (a .bss
 * variable the sampler flips each tick) and the sampler drains the other one, which has been
 * idle for a whole tick, so no sample is still writing into it. Each sample also emits a time
 * record into one ring buffer; the sampler joins records and counts on (pid, tid, stack ids).
 */
#ifndef EMBER_BPF_SHARED_H
#define EMBER_BPF_SHARED_H

#ifndef TASK_COMM_LEN
#define TASK_COMM_LEN 16
#endif

#define EMBER_MAX_STACK_DEPTH 127
/* A stack id >= 0 in a key or record: bucket | stack-map generation << this (maps <= 2^20). */
#define EMBER_STACK_GEN_SHIFT 30
#define EMBER_STACK_ID_MASK ((1 << EMBER_STACK_GEN_SHIFT) - 1)

/* Aggregation key: one per distinct (process, thread, comm, stacks) in a generation. */
struct ember_key {
	__u32 pid;		/* tgid; 0 for the idle task */
	__u32 tid;
	__s32 user_stack_id;	/* < 0: -errno from bpf_get_stackid() (-EFAULT: no user stack) */
	__s32 kern_stack_id;
	char comm[TASK_COMM_LEN];
};

/* One per sample, in the ring buffer: the time the counts map cannot keep. 32 bytes. */
struct ember_time_rec {
	__u64 time_ns;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 pid;
	__u32 tid;
	__s32 user_stack_id;
	__s32 kern_stack_id;
	__u32 cpu;
	__u32 gen;		/* generation (of counts) the sample was counted in */
};

/* Per-CPU counters (a PERCPU_ARRAY of one element). Nothing is dropped without a count here. */
struct ember_bpf_stats {
	__u64 samples;		/* program runs that recorded a sample */
	__u64 idle;		/* ... of which the idle task */
	__u64 kern_eexist;	/* kernel stack lost: stack map bucket taken (map too small) */
	__u64 user_eexist;
	__u64 kern_efault;	/* no kernel stack in this context (data, not an error) */
	__u64 user_efault;	/* no user stack (kernel thread, or user stack unreadable) */
	__u64 kern_other;	/* other stack errors (-ENOMEM...) */
	__u64 user_other;
	__u64 counts_full;	/* counts map update failed (map full): sample kept via its record */
	__u64 ringbuf_drops;	/* no room in the ring buffer: sample kept in counts, time coarse */
	__u64 execs;		/* exec of a sampled process notified (struct ember_exec_rec) */
	__u64 exec_drops;	/* ... not notified: no room in the ring buffer */
	__u64 exits;		/* exit of a sampled process's leader notified (kind EXIT) */
	__u64 exit_drops;	/* ... not notified: no room in the ring buffer */
	/* not a counter: the process this CPU sampled last, known to be in the "seen" map while
	 * exec_seq (sampler.bpf.c) is unchanged; saves the LRU lookup on a busy CPU */
	__u32 last_pid;
	__u32 last_exec_seq;
};

/*
 * In the same ring buffer as the time records, told apart by its size (16 bytes, not 32): a
 * process that was sampled before (in the "seen" map) called exec. Userspace drops its cached
 * mappings; its next sample counts as a new process's and captures the new image's.
 */
/* A process event: exec, or its leader's exit (16 bytes: told from a time record by size). */
struct ember_exec_rec {
	__u64 time_ns;
	__u32 pid;		/* tgid */
	__u32 kind;		/* EMBER_REC_EXEC or EMBER_REC_EXIT */
};

#define EMBER_REC_EXEC 0
#define EMBER_REC_EXIT 1

/*
 * Kernel symbols without /proc/kallsyms (bpf/kresolve.bpf.c, src/daemon/symbols/kresolve.c): userspace writes up
 * to EMBER_KSYM_BATCH addresses into the program's .bss and runs it (BPF_PROG_TEST_RUN); it
 * formats each with the kernel's "%pS" ("name+0xoff/0xsize [module]", or "0x..." for no symbol)
 * into a slot of EMBER_KSYM_TEXT bytes (KSYM_NAME_LEN is 512 since Linux 6.1, plus the offsets).
 */
#define EMBER_KSYM_BATCH 64
#define EMBER_KSYM_TEXT 600

#endif
