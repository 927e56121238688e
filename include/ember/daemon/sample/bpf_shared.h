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
	__u64 both_full;	/* ... and the counts map full too: the sample is lost (counted) */
	__u64 execs;		/* exec of a sampled process notified (struct ember_exec_rec) */
	__u64 exec_drops;	/* ... not notified: no room in the ring buffer */
	__u64 exits;		/* exit of a sampled process's leader notified (kind EXIT) */
	__u64 exit_drops;	/* ... not notified: no room in the ring buffer */
	__u64 user_fp_walks;	/* user stacks walked by frame pointer: no tables for the process yet */
	__u64 user_truncated;	/* user stacks the walk could not finish (EMBER_USTACK_TRUNC) */
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
 * --- user stacks without frame pointers (bpf/unwind.bpf.h; tables: src/daemon/symbols/) ------
 *
 * Userspace compiles each executable file's call frame information into rows (cfi.c), writes
 * them into one array of rows (a range per file, shared by every process that maps it) and, per
 * process, the list of its executable mappings with the range of rows of each. At sample time
 * the program walks the user stack with them; a frame without rows (JIT code, a gap in the CFI)
 * is walked by its frame pointer; a process without a list yet wholly so (counted).
 */

/* One unwind row: from pc up to the next row's pc, how to find the caller's frame (x86-64).
 * The return address is at CFA - 8 in rows of type SP, BP, DEREF_BP and PLT, and the caller's
 * rsp is the CFA. 12 bytes, no padding. */
struct ember_unwind_row {
	__u32 pc;	/* the row's first address, as an ELF virtual address of the file: a runtime
			   ip minus the mapping's bias */
	__s32 cfa_off;	/* EMBER_CFA_NONE: the reason, enum cfi_none_reason (cfi.h) */
	__s16 bp_off;	/* EMBER_BP_SAVED: the caller's rbp is at CFA + bp_off; EMBER_BP_AT_RBP:
			   at rbp + bp_off; EMBER_CFA_PLT: the threshold */
	__u8 cfa_type;	/* EMBER_CFA_* */
	__u8 bp_type;	/* EMBER_BP_* */
};

#define EMBER_CFA_NONE	   0 /* no CFI here, or a rule we cannot express: frame pointer */
#define EMBER_CFA_SP	   1 /* CFA = rsp + cfa_off */
#define EMBER_CFA_BP	   2 /* CFA = rbp + cfa_off */
#define EMBER_CFA_DEREF_BP 3 /* CFA = *(rbp + cfa_off): gcc's stack realignment (DRAP) */
#define EMBER_CFA_PLT	   4 /* CFA = rsp + cfa_off + ((rip & 15) >= bp_off ? 8 : 0) */
#define EMBER_CFA_SIGNAL   5 /* a signal trampoline: rip/rsp/rbp from the ucontext at rsp */
#define EMBER_CFA_END	   6 /* the return address is undefined: the outermost frame */

#define EMBER_BP_SAME	0 /* rbp unchanged */
#define EMBER_BP_SAVED	1 /* the caller's rbp is at CFA + bp_off */
#define EMBER_BP_AT_RBP 2 /* the caller's rbp is at rbp + bp_off (gcc's DRAP functions) */

/*
 * The row as the BPF array holds it: 8 bytes (an array element is 8-byte aligned, so the 12-byte
 * row would take 16). rule: bits 0-2 cfa_type, 3-4 bp_type, 5-15 bp (11 bits, signed: bp_off / 8
 * for EMBER_BP_SAVED/AT_RBP, the threshold itself for EMBER_CFA_PLT), 16-31 cfa_off / 8 (16 bits,
 * signed: +-256 KiB). A row these cannot hold is written as EMBER_CFA_NONE (frame pointer there).
 */
struct ember_unwind_prow {
	__u32 pc;
	__u32 rule;
};

#define EMBER_PROW_CFA_TYPE(r) ((r) & 7)
#define EMBER_PROW_BP_TYPE(r)  (((r) >> 3) & 3)
#define EMBER_PROW_BP(r)       ((__s32)((r) << 16) >> 21)
#define EMBER_PROW_CFA_OFF(r)  ((__s32)(r) >> 16)

/* An executable mapping of a process: [start, end), its rows [row_start, +row_count) (0 rows:
 * frame pointers here, e.g. JIT code), file address = ip - bias. 32 bytes. */
struct ember_unwind_map {
	__u64 start, end;
	__u64 bias;
	__u32 row_start, row_count;
};

/* A process's executable mappings, sorted by start (more are counted and left out). */
#define EMBER_UNWIND_MAX_MAPS 256
struct ember_unwind_proc {
	__u32 nr;
	__u32 gen;	/* changes with every write of a list (the BPF side caches rules by it) */
	struct ember_unwind_map maps[EMBER_UNWIND_MAX_MAPS];
};

/*
 * A user stack as the walk left it, in a user stacks map (two generations, like the stack maps)
 * under its bucket: the id is the bucket, as a stack map's; a stack whose bucket (and the next)
 * holds another is lost, -EEXIST, counted as a collision.
 */
struct ember_ustack {
	__u64 hash;		/* of ips[0..nr) */
	__u32 nr;
	__u32 flags;		/* EMBER_USTACK_* */
	__u64 ips[EMBER_MAX_STACK_DEPTH]; /* leaf first */
};

#define EMBER_USTACK_END    (1u << 0) /* reached the outermost frame: the stack is whole */
#define EMBER_USTACK_TRUNC  (1u << 1) /* stopped early: depth, unreadable memory, no rule, a
					 loop; the outer frames are missing */
#define EMBER_USTACK_FP	    (1u << 2) /* the process had no unwind tables yet: frame pointers */
#define EMBER_USTACK_SIGNAL (1u << 3) /* went through a signal frame */

/*
 * Kernel symbols without /proc/kallsyms (bpf/kresolve.bpf.c, src/daemon/symbols/kresolve.c): userspace writes up
 * to EMBER_KSYM_BATCH addresses into the program's .bss and runs it (BPF_PROG_TEST_RUN); it
 * formats each with the kernel's "%pS" ("name+0xoff/0xsize [module]", or "0x..." for no symbol)
 * into a slot of EMBER_KSYM_TEXT bytes (KSYM_NAME_LEN is 512 since Linux 6.1, plus the offsets).
 */
#define EMBER_KSYM_BATCH 64
#define EMBER_KSYM_TEXT 600

#endif
