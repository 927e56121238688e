/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Types shared by the BPF program (bpf/sampler.bpf.c) and the sampler. Includes nothing:
 * userspace includes <linux/types.h> first, the BPF side vmlinux.h. Only fixed-size fields,
 * explicit padding.
 *
 * Each sample leaves the kernel whole, as one variable-length record in one ring buffer (struct
 * ember_sample_rec and its words): no stack maps, no counts map, no per-stack system calls. The
 * sampler hashes and groups the records of a drain; ingest names each distinct stack once.
 */
#ifndef EMBER_BPF_SHARED_H
#define EMBER_BPF_SHARED_H

#ifndef TASK_COMM_LEN
#define TASK_COMM_LEN 16
#endif

#define EMBER_MAX_STACK_DEPTH 127

/*
 * One per sample in the ring buffer, 64 bytes, followed by nr_user + nr_py + nr_kernel words:
 * the native user frames (leaf first), the Python words (EMBER_PY_WORDS per frame, ROOT first,
 * see below), the kernel frames (leaf first). Told from a process event by its size (>= 64).
 */
struct ember_sample_rec {
	__u64 time_ns;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 cgroup_id;	/* bpf_get_current_cgroup_id(): the task's cgroup v2 inode */
	__u32 pid;		/* tgid; 0 for the idle task */
	__u32 tid;
	__u32 cpu;
	__u32 user_flags;	/* how the user walk ended: EMBER_USTACK_* */
	__s32 kern_err;		/* 0, or -errno: -EFAULT no kernel stack in that context */
	__s32 user_err;		/* 0, or -errno: -EFAULT no user context (kernel thread) */
	__u16 nr_user;		/* native user frames */
	__u16 nr_py;		/* Python words (2 per frame) */
	__u16 nr_kernel;	/* kernel frames */
	__u16 kind;		/* EMBER_KIND_*: 0 an on-CPU sample; else an off-CPU event, whose
				   cpu field holds its weight in quanta (below) */
	char comm[TASK_COMM_LEN];
};

/*
 * --- off-CPU events (bpf/offcpu.bpf.h; userspace: src/daemon/sample/offcpu.c) ---------------
 *
 * A thread that leaves the CPU (sched_switch) gets its switch-out time and state noted; when it
 * runs again (finish_task_switch, in its own context, its blocked stacks intact) the blocked
 * period ends. A period of at least min_blocked is recorded with its own stacks; shorter ones
 * add their time to the thread's accumulator of that state, which is recorded with the stacks of
 * the period that makes it reach min_blocked (duration-weighted sampling: a short period is
 * recorded with a probability proportional to its length, carrying the time of the ones before).
 * The record is an ember_sample_rec with kind != 0: time_ns the period's start, cpu the weight
 * in quanta (quantum_ns, a whole number of them; the remainder stays in the accumulator), so
 * that the recorded time plus what the accumulators hold plus what was counted and not recorded
 * is exactly the time the threads were off the CPU (struct ember_offcpu_stats).
 */
#define EMBER_KIND_CPU		0
#define EMBER_KIND_OFFCPU_S	1 /* blocked, interruptible (TASK_INTERRUPTIBLE): sleeps, waits */
#define EMBER_KIND_OFFCPU_D	2 /* blocked, uninterruptible (TASK_UNINTERRUPTIBLE): I/O, locks */
#define EMBER_KIND_OFFCPU_R	3 /* preempted while runnable: waiting for a CPU */
#define EMBER_KIND_NR		4
/*
 * The waker of a recorded blocked period (sched_waking, in the waker's context): the waker's
 * pid, tid, comm and stacks (user, Python, kernel), its weight in quanta (cpu field) the
 * wakee's blocked time it ended, then EMBER_WAKEE_WORDS words: the wakee's tid | kind << 32,
 * its comm (16 bytes), and its period's first switch-out (the time_ns of the wakee's off-CPU
 * record of that system call: how userspace joins the two for chain graphs).
 */
#define EMBER_KIND_WAKEUP	4
/* R preempted in user mode (runnable, outside a system call): its time, recorded at the thread's
 * next on-CPU sample in user mode (that sample's user stack) or system call return (that call's
 * stack), under a "[preempted in user mode]" marker; weighed and counted as R */
#define EMBER_KIND_OFFCPU_RU	5
#define EMBER_WAKEE_WORDS	4

/*
 * --- memory and I/O events (bpf/memio.bpf.h; userspace: src/daemon/sample/memio.c, the sink
 * src/daemon/store/memio_sink.c) ---------------------------------------------------------------
 *
 * Records like an on-CPU sample's (ember_sample_rec and its words) with one of these kinds; the
 * kind's high byte is its subtype (below); the cpu field holds the event's weight in the kind's
 * raw unit: page faults (the sampling period: each record stands for that many), vm growth in
 * pages of 4 KiB, block I/O in bytes, block I/O latency in microseconds, malloc in bytes.
 */
#define EMBER_KIND_PAGEFAULT	6
#define EMBER_KIND_VMGROW	7 /* subtype: EMBER_VM_MMAP, EMBER_VM_BRK */
#define EMBER_KIND_BLOCKIO	8 /* subtype: EMBER_BIO_* */
#define EMBER_KIND_BLOCKIO_LAT	9 /* subtype: EMBER_BIO_*; the bytes record's stack, at completion */
#define EMBER_KIND_MALLOC	10
#define EMBER_KIND_CYCLES	11 /* hardware counters ([pmc]): weight the sampling period */
#define EMBER_KIND_INSTRUCTIONS	12
#define EMBER_KIND_BASE(k)	((k) & 0xff)
#define EMBER_KIND_SUB(k)	(((k) >> 8) & 0xff)
#define EMBER_VM_MMAP		0
#define EMBER_VM_BRK		1
#define EMBER_BIO_READ		0
#define EMBER_BIO_WRITE		1
#define EMBER_BIO_READAHEAD	2 /* a read flagged REQ_RAHEAD */
#define EMBER_BIO_WRITEBACK	3 /* a write issued by a kernel thread, or flagged REQ_BACKGROUND */

/* The counters' index by event kind (struct ember_memio_stats). */
#define EMBER_MEMIO_PAGEFAULT	0
#define EMBER_MEMIO_VMGROW	1
#define EMBER_MEMIO_BLOCKIO	2
#define EMBER_MEMIO_BLOCKIO_LAT	3
#define EMBER_MEMIO_MALLOC	4
#define EMBER_MEMIO_CYCLES	5
#define EMBER_MEMIO_INSTRUCTIONS 6
#define EMBER_MEMIO_NR		8 /* a power of 2: the verifier's bound */

/* Per-CPU counters of the memory and I/O programs, by EMBER_MEMIO_*; weights in the raw unit. */
struct ember_memio_stats {
	__u64 events[EMBER_MEMIO_NR];		/* events seen (page faults: samples) */
	__u64 weight[EMBER_MEMIO_NR];		/* ... their weight */
	__u64 recorded[EMBER_MEMIO_NR];		/* records sent */
	__u64 lost[EMBER_MEMIO_NR];		/* ... lost: the ring buffer was full */
	__u64 lost_weight[EMBER_MEMIO_NR];
	__u64 throttled[EMBER_MEMIO_NR];	/* over the process's budget (max_rate): counted only */
	__u64 throttled_weight[EMBER_MEMIO_NR];
	__u64 ring_bytes;
	__u64 calls;				/* malloc calls seen (the uprobe's runs) */
	__u64 inflight_miss;			/* block I/O completions of no tracked request (the
						   in-flight map was full, or queued before the start) */
	__u64 pad;
};

/* A process's budget of records per second and kind (the "memio_rate" LRU map). */
struct ember_memio_rate {
	__u64 sec;	/* the second (bpf_ktime_get_ns() / 1e9) of the count */
	__u64 n;	/* records in it */
};

/* states selected (offcpu_states knob) */
#define EMBER_OFFCPU_STATE_S (1u << 0)
#define EMBER_OFFCPU_STATE_D (1u << 1)
#define EMBER_OFFCPU_STATE_R (1u << 2)

/* Per thread (a HASH by tid): the open period, the system call's periods, the accumulators. */
struct ember_offcpu_task {
	__u64 out_ns;			/* switch-out time of the open period; 0: none */
	__u64 wake_ns;			/* its wakeup (sched_waking, else sched_wakeup); 0: none */
	__u64 first_ns;			/* the first switch-out since the last system call's return;
					   0: nothing pending */
	__u64 pend_ns[EMBER_KIND_NR];	/* this system call's closed periods, by kind: blocked S or
					   D (switch-out to wakeup), R (wakeup, or preemption, to
					   switch-in) */
	__u64 acc_ns[EMBER_KIND_NR];	/* short periods' time not recorded yet, by kind */
	__u64 recq[EMBER_KIND_NR];	/* quanta weighed at the wakeup (its waker recorded), sent
					   with the thread's own stacks at the system call's return */
	__u32 kind;			/* of the open period */
	__u32 waker_tid;		/* who woke it (sched_waking's current) */
	__u32 kstack;			/* 1: offcpu_kstacks holds the kernel stack of this system
					   call's first blocked (S or D) period */
	__u32 user;			/* the open R period was a preemption in user mode */
	__u64 upend_ns;			/* preempted in user mode, not weighed yet: recorded as R
					   (EMBER_KIND_OFFCPU_RU) at the thread's next on-CPU sample
					   in user mode or system call return, whichever comes first */
	__u64 ufirst_ns;		/* the first of those preemptions (the record's time) */
	__u64 last_ns;			/* the recent longest S or D time weighed (decaying): whether the next
					   one will be recorded (its kernel stack is worth taking) */
};

/* Per thread (a HASH by tid, not preallocated; [offcpu] kernel_stacks): the kernel stack of the
 * system call's first blocked period, taken at its switch-out (sched_switch, prev = current). */
struct ember_offcpu_kstack {
	__u32 nr;			/* frames in ips */
	__u32 first;			/* 1: ips[0] is the tracepoint's __traceiter_sched_switch
					   (more than one program attached): not the task's */
	__u64 ips[EMBER_MAX_STACK_DEPTH]; /* leaf first */
};

/* Per-CPU counters of the off-CPU programs; nanoseconds by kind. */
struct ember_offcpu_stats {
	__u64 switches;			/* sched_switch runs */
	__u64 periods[EMBER_KIND_NR];	/* blocked periods ended (selected threads and states) */
	__u64 blocked_ns[EMBER_KIND_NR];	/* their total time: what the threads were off CPU */
	__u64 recorded[EMBER_KIND_NR];	/* records sent */
	__u64 recorded_ns[EMBER_KIND_NR];	/* their weight (quanta x quantum_ns) */
	__u64 acc_in_ns[EMBER_KIND_NR];	/* time added to accumulators (short periods) */
	__u64 acc_out_ns[EMBER_KIND_NR];	/* ... taken out by records (acc_in - acc_out: held) */
	__u64 over_max[EMBER_KIND_NR];	/* periods longer than max_blocked: counted, not recorded */
	__u64 over_max_ns[EMBER_KIND_NR];
	__u64 lost[EMBER_KIND_NR];	/* records lost (ring full, no scratch): counted */
	__u64 lost_ns[EMBER_KIND_NR];
	__u64 no_slot;			/* threads not tracked: the task map was full */
	__u64 unended;			/* switch-outs with a period still open (no switch-in seen) */
	__u64 wakeups;			/* sched_wakeup of a thread with an open period */
	__u64 runq_ns;			/* wakeup to switch-in of selected S/D periods: the wait for a
					   CPU once woken (recorded as R when R is selected) */
	__u64 wakeup_records;		/* wakers recorded (EMBER_KIND_WAKEUP) */
	__u64 inflight_ns;		/* weighed at a wakeup, not sent yet (the wakee has not returned
					   from its system call): += on one CPU, -= on another, the sum
					   over CPUs is right (mod 2^64) */
	__u64 wakeup_lost;		/* ... lost: the ring buffer was full */
	__u64 user_preempt;		/* preempted in user mode (R outside a system call): counted,
					   not recorded (no system call return to end it) */
	__u64 ring_bytes;
	__u64 wake_remote;		/* sched_wakeup ran in another task than the waker seen at
					   sched_waking (the wakee's CPU completed it: an idle CPU's
					   wake list, an interrupt): the waker is sched_waking's */
	__u64 wake_late;		/* wakeups sched_waking did not see open (the wakee had not
					   switched out yet): taken at sched_wakeup, its current */
	__u64 user_preempt_ns;		/* ... their time, switch-out to switch-in (with R selected:
					   weighed as R at the next system call return) */
	__u64 kstacks;			/* kernel stacks taken at a blocking switch-out */
	__u64 kstack_err;		/* ... not taken (no map slot, bpf_get_stack() failed): that
					   system call's records carry none (kern_err) */
	__u64 kstack_skip;		/* blocking switch-outs whose stack was not taken: not
					   predicted to be recorded (offcpu_kstack_wanted) */
	__u64 kstack_miss;		/* S or D records sent without a kernel stack: predicted
					   wrong (or kstack_err) */
};

/* Words a record can carry: 127 + 96 + 127 fit; the verifier's bounds need the power of 2. */
#define EMBER_SAMPLE_WORDS 512

/* The record being built, per CPU (a PERCPU_ARRAY): 4 KiB, too big for the BPF stack. */
struct ember_sample_buf {
	struct ember_sample_rec hdr;
	__u64 words[EMBER_SAMPLE_WORDS];
};

/* Per-CPU counters (a PERCPU_ARRAY of one element). Nothing is dropped without a count here. */
/* The per-CPU nesting state of ember's programs (bpf/nest.bpf.h), read for its counter. */
struct ember_nest_state {
	__u32 depth;	/* programs of ember's running on this CPU */
	__u32 key;	/* the running one's level: depth - 1 (0 when none) */
	__u64 refused;	/* programs not run: EMBER_NEST_MAX already running on the CPU */
};
#define EMBER_NEST_MAX 4 /* task, softirq, hardirq, NMI: a power of two */

struct ember_bpf_stats {
	__u64 samples;		/* program runs that took a sample */
	__u64 idle;		/* ... of which the idle task */
	__u64 kern_efault;	/* no kernel stack in this context (data, not an error) */
	__u64 user_efault;	/* no user stack (kernel thread, or user stack unreadable) */
	__u64 kern_other;	/* other stack errors (-ENOMEM...) */
	__u64 user_other;
	__u64 ringbuf_drops;	/* no room in the ring buffer: the sample is lost (counted) */
	__u64 ring_bytes;	/* bytes of the sample records written to the ring buffer */
	__u64 execs;		/* exec of a process notified (struct ember_exec_rec) */
	__u64 exec_drops;	/* ... not notified: no room in the ring buffer */
	__u64 exits;		/* exit of a process's leader notified (kind EXIT) */
	__u64 exit_drops;	/* ... not notified: no room in the ring buffer */
	__u64 user_fp_walks;	/* user stacks walked by frame pointer: no tables for the process yet */
	__u64 user_truncated;	/* user stacks the walk could not finish (EMBER_USTACK_TRUNC) */
	__u64 forks;		/* a new process by fork notified (struct ember_fork_rec) */
	__u64 fork_drops;	/* ... not notified: no room in the ring buffer */
	__u64 exec_seeds;	/* execs whose executable had a built table: in vma_cache at once */
	__u64 timer_misses;	/* CPU timer firings the program did not see (a gap between two) */
	/* not counters: this CPU's last CPU-clock firing, the thread it found (0: idle) and that
	 * thread's context switches then (count_misses() in sampler.bpf.c) */
	__u64 last_fire_ns;
	__u64 last_csw;
	__u64 fire_csw[2];	/* scratch: the thread's nvcsw, nivcsw */
	__u32 last_fire_tid;
	__u32 pad_fire;
	/* not a counter: the process this CPU sampled last, known to be in the "seen" map while
	 * exec_seq (sampler.bpf.c) is unchanged; saves the LRU lookup on a busy CPU */
	__u32 last_pid;
	__u32 last_exec_seq;
	/* not counters: the runtimes (EMBER_RT_*) of the process this CPU walked last, as
	 * py_procs, v8_procs and hs_procs had them at generation rt_gen (sampler.bpf.c's
	 * rt_gen, bumped at each change of those maps), and a sum of the three (a cache entry
	 * written half by a program that interrupted another is a miss, not a wrong answer) */
	__u32 rt_pid;
	__u32 rt_flags;
	__u64 rt_gen;
	__u64 rt_sum;
};
#define EMBER_RT_PY (1u << 0) /* in py_procs */
#define EMBER_RT_V8 (1u << 1) /* in v8_procs */
#define EMBER_RT_HS (1u << 2) /* in hs_procs */

/*
 * In the same ring buffer as the samples, told apart by its size (16 bytes): a process that was
 * sampled before (in the "seen" map) called exec, or its leader exited. Userspace drops its
 * cached mappings; its next sample counts as a new process's and captures the new image's.
 */
struct ember_exec_rec {
	__u64 time_ns;
	__u32 pid;		/* tgid */
	__u32 kind;		/* EMBER_REC_EXEC (| EMBER_REC_SAMPLED) or EMBER_REC_EXIT */
};

/*
 * An exec record with what the kernel knows of the new image (its size, 56 bytes, tells it
 * apart; below a sample record's 64): the mapping of the executable's text, from the new mm's
 * start_code. A process that exits before emberd reads its /proc/PID/maps (a starved daemon, a
 * program living milliseconds) is still named from it: the file by device and inode, as another
 * process that mapped it was read (proc/proctrack.h). ino 0: the kernel could not tell.
 */
struct ember_exec_img_rec {
	__u64 time_ns;
	__u32 pid;		/* tgid */
	__u32 kind;		/* EMBER_REC_EXEC (| EMBER_REC_SAMPLED | EMBER_REC_SEEDED) */
	__u64 start, end;	/* the executable's text mapping, [start, end) */
	__u64 pgoff;		/* its file offset, in pages */
	__u64 ino;
	__u32 dev;		/* the kernel's encoding: major << 20 | minor */
	__u32 pad;
};

/* The path an exec with an image was given (its linux_binprm's interp: the file the kernel ran,
 * a script's interpreter), in the exec_paths map by pid: looked up by userspace when it handles
 * the exec, with the record's time (a pid reused since has another). */
#define EMBER_EXEC_PATH_MAX 256
struct ember_exec_path {
	__u64 time_ns;
	char path[EMBER_EXEC_PATH_MAX];
};

#define EMBER_REC_EXEC 0
#define EMBER_REC_EXIT 1
#define EMBER_REC_FORK 2
#define EMBER_REC_KIND_MASK 0xff
/* or'ed into an exec's kind: the process was sampled recently (in "seen"): handled at once, not
 * with its burst (a sampled process is worth its wake-up; a burst of unsampled ones
 * shares one) */
#define EMBER_REC_SAMPLED 0x100
/* or'ed into an exec's kind (ember_exec_img_rec): the program put the new executable's mapping,
 * with its built table, in the process's vma_cache: its walks reach main without a list from
 * userspace, which lists it at its first sample, not at the exec */
#define EMBER_REC_SEEDED 0x200

/*
 * Told apart by its size (24 bytes): a new process by fork (sched_process_fork, not a thread):
 * it runs its parent's image until an exec, so userspace lists it for the walker with a copy of
 * its parent's list (no /proc read).
 */
struct ember_fork_rec {
	__u64 time_ns;
	__u32 pid;		/* the child (its tgid) */
	__u32 kind;		/* EMBER_REC_FORK */
	__u32 parent;		/* the parent's tgid */
	__u32 pad;
};

/*
 * --- user stacks without frame pointers (bpf/unwind.bpf.h; tables: src/daemon/unwind/) ------
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
/* EMBER_CFA_NONE rows: rule 0 is a gap in the CFI (no FDE), this one a rule the row cannot
 * hold or the walker cannot express (cfi_none_reason other than the gap, or lossy) */
#define EMBER_PROW_NONE_RULE   (EMBER_CFA_NONE | 1u << 16)

/*
 * A file's table in the rows array, elements [row_start, + row_count) (struct ember_unwind_prow
 * each): a header of EMBER_UNWIND_HDR elements, an index by address block, then the rows sorted
 * by pc. Header [0] {pc: the table's id (never 0, never reused: the rule cache's key), rule: the
 * index's blocks (nblocks)}; [1] {pc: the first block's file address, rule: the block size's
 * shift}. Index [EMBER_UNWIND_HDR + k] {pc: the row covering block k's first address (the last
 * with row.pc <= it; 0 when none), rule: the row covering its last address}, both relative to
 * the first row; an address past the last block is in the last. A search thus touches one
 * block's rows (a few halvings), not the file's. Userspace picks the shift so that nblocks <=
 * rows / 16 + 2: the index costs at most 1/16 of the rows.
 */
#define EMBER_UNWIND_HDR 2

/* An executable mapping of a process: [start, end), its table [row_start, +row_count) (0:
 * frame pointers here, e.g. JIT code), file address = ip - bias. 32 bytes. */
struct ember_unwind_map {
	__u64 start, end;
	__u64 bias;
	__u32 row_start, row_count;
};

/*
 * A built table by the file it was built from, for the walk of an address that is in no mapping
 * of the process's list (a process not listed yet: exec'd while the worker was busy; a library
 * mapped since the list): the walk asks the kernel for the mapping (bpf_find_vma), keys this map
 * with its file's device (the kernel's dev_t: major << 20 | minor) and inode, and computes the
 * bias as start - pgoff - vdelta, vdelta being p_vaddr - p_offset of the file's executable
 * segment (only files whose executable segments share one are entered). CPU samples only.
 * A device and inode name a file only while it exists: the next file made on that filesystem
 * may get a deleted file's inode (ext4, tmpfs), so the walk takes the table only when the
 * inode's size and mtime are still those of the file the table was read from (the one "same
 * file" rule: elf/filecache.h); another file there is walked by frame pointer.
 */
struct ember_unwind_file_key {
	__u64 ino;
	__u32 dev;
	__u32 pad;
};

struct ember_unwind_file {
	__u32 row_start, row_count;
	__u64 vdelta;
	__u64 size;	/* the file's, when the table was read: i_size */
	__s64 mtime_ns;	/* and its mtime, seconds * 1e9 + nanoseconds */
};

/* A process's executable mappings, sorted by start (more are counted and left out). */
#define EMBER_UNWIND_MAX_MAPS 256
struct ember_unwind_proc {
	__u32 nr;
	__u32 gen;	/* changes with every write of a list */
	struct ember_unwind_map maps[EMBER_UNWIND_MAX_MAPS];
};

/*
 * A user stack as the walk leaves it, in a per-CPU scratch (bpf/unwind.bpf.h); do_sample copies
 * it into the sample's record.
 */
struct ember_ustack {
	__u64 hash;		/* of ips[0..nr) */
	__u32 nr;
	__u32 flags;		/* EMBER_USTACK_* */
	__u64 ips[EMBER_MAX_STACK_DEPTH]; /* leaf first */
	/* never written: the bounded copies out of ips (a masked offset plus a masked size) must
	 * stay inside the map value on every path the verifier sees */
	__u64 room[EMBER_MAX_STACK_DEPTH + 1];
};

#define EMBER_USTACK_END    (1u << 0) /* reached the outermost frame: the stack is whole */
#define EMBER_USTACK_TRUNC  (1u << 1) /* stopped early: depth, unreadable memory, no rule, a
					 loop; the outer frames are missing */
#define EMBER_USTACK_FP	    (1u << 2) /* the process had no unwind tables yet: frame pointers */
#define EMBER_USTACK_SIGNAL (1u << 3) /* went through a signal frame */

/*
 * Why a user walk stopped short (EMBER_USTACK_TRUNC), counted per CPU by reason in the
 * "walk_stops" array (bpf/unwind.bpf.h: one struct ember_walk_stops). A frame walked by frame
 * pointer for want of a rule that then fails counts as the reason it had no rule.
 */
#define EMBER_STOP_OTHER      0 /* flagged truncated with no reason (a bug if it moves) */
#define EMBER_STOP_NO_TABLE   1 /* no unwind table yet for the process or the mapping's file:
				   the frame pointer step that replaced it failed */
#define EMBER_STOP_NO_ROW     2 /* the file's table has no row for the address (a gap in the
				   CFI, code without CFI): likewise */
#define EMBER_STOP_NO_RULE    3 /* the row's rule is one the walker cannot express (written as
				   "frame pointer here"): likewise */
#define EMBER_STOP_UNMAPPED   4 /* a run of frames outside every known mapping (JIT code or a
				   list older than the mapping) */
#define EMBER_STOP_UNREADABLE 5 /* the stack memory a rule points to could not be read */
#define EMBER_STOP_DEPTH      6 /* EMBER_MAX_STACK_DEPTH frames (less Python's) stored */
#define EMBER_STOP_LOOP	      7 /* loop guard: a CFA not above the frame's rsp */
#define EMBER_STOP_NR	      8

/*
 * The user walks' work, summed per CPU beside the stops (walk[], one read for both), by what each
 * frame cost: frames walked, their rules found in the rule cache, row searches (a block of the
 * file's index) and the halvings they took, mapping searches (the frame not in the previous
 * frame's mapping), frame pointer steps.
 */
#define EMBER_WALK_FRAMES	0
#define EMBER_WALK_CACHE_HITS	1
#define EMBER_WALK_SEARCHES	2
#define EMBER_WALK_HALVINGS	3
#define EMBER_WALK_MAP_SEARCHES 4
#define EMBER_WALK_FP_STEPS	5
#define EMBER_WALK_VMA_LOOKUPS	6 /* the kernel's mapping of an address the list lacks */
#define EMBER_WALK_VMA_TABLES	7 /* ... whose file had a table: the frame walked by it */
#define EMBER_WALK_VMA_STALE	8 /* a table keyed by the file's inode not taken: the inode is
				   * another file's now (its size or mtime differ; exec seeds too) */
#define EMBER_WALK_NR		9

struct ember_walk_stops {
	__u64 n[EMBER_STOP_NR];
	__u64 walk[EMBER_WALK_NR];
};

/*
 * --- Python frames (bpf/python.bpf.h; userspace: src/daemon/unwind/python.c) ----------------
 *
 * For a process userspace found to run a CPython it knows (struct ember_py_proc, per tgid), the
 * walk of a user stack first reads the sampled thread's Python frames and stores them at the top
 * of the same ember_ustack.ips array, EMBER_PY_WORDS words each, the leaf frame highest:
 * frame i (0 = leaf) at ips[EMBER_MAX_STACK_DEPTH - 2 - 2i] (code word) and [... - 1 - 2i] (tag
 * word); the native walk fills ips from 0 with what is left. Their number is in the flags
 * (EMBER_USTACK_PY_NR); the sample's record carries them after the native frames, root first.
 */
#define EMBER_PY_MAX_FRAMES  48 /* Python frames kept per stack (the leaf ones) */
#define EMBER_PY_WORDS	     2
#define EMBER_PY_MAX_THREADS 512 /* threads of an interpreter searched for the sampled one */

#define EMBER_USTACK_PY (1u << 4) /* the thread has a Python thread state: frames follow */
#define EMBER_USTACK_PY_TRUNC                                                                      \
	(1u << 5)		    /* its frames were cut short (depth, unreadable memory,        \
				      not a code object): the outer ones are missing */
#define EMBER_USTACK_PY_NR_SHIFT  8 /* bits 8..15: Python frames at the top of ips */
#define EMBER_USTACK_PY_NR(flags) (((flags) >> EMBER_USTACK_PY_NR_SHIFT) & 0xff)

/* The code word: the code object's address, and above it */
#define EMBER_PYF_ENTRY                                                                            \
	(1ull << 63) /* the first frame its C-level eval call ran: the outermost                   \
			of the frames one _PyEval_EvalFrameDefault executed */
#define EMBER_PYF_ADDR_MASK ((1ull << 56) - 1)
/* The tag word: the code object's tag (low 32 bits: EMBER_PY_TAG of its file, name and first
 * line, read at sample time, so that a reused address is not misnamed) and, with lines, where
 * the frame was (high 32 bits: 3.10 f_lasti; 3.11+ the instruction pointer minus the code
 * object's address, in bytes). */
#define EMBER_PY_TAG(file, name, line)                                                             \
	((__u32)(((file) ^ ((name)*0x9e3779b97f4a7c15ULL) ^                                        \
		  ((__u64)(__u32)(line)*0xff51afd7ed558ccdULL)) >>                                 \
		 17))

/* How a version chains its frames (ember_py_proc.kind). */
#define EMBER_PY_FRAMEOBJ 1 /* 3.10: PyFrameObject from tstate->frame; one C eval call each */
#define EMBER_PY_ENTRY_FLAG                                                                        \
	2 /* 3.11: _PyInterpreterFrame; a byte (is_entry) marks the first                          \
	     frame of a C eval call */
#define EMBER_PY_ENTRY_SHIM                                                                        \
	3 /* 3.12+: each C eval call links a shim frame (owner ==                                  \
	     entry_value) below the first frame it runs */

/* A CPython process, as userspace read it (python.c): addresses in it and its version's
 * offsets. 64 bytes. */
struct ember_py_proc {
	__u64 runtime;	  /* &_PyRuntime */
	__u64 code_type;  /* &PyCode_Type: frames whose code is not a code object end the walk */
	__u32 fsbase_off; /* task_struct.thread.fsbase (pthread_self() = tstate->thread_id) */
	__u8 kind;	  /* EMBER_PY_* */
	__u8 entry_value; /* ENTRY_SHIM: the owner value of shim frames */
	__u8 instr_ptr;	  /* frame_instr holds a pointer (3.11+), not an int (3.10) */
	__u8 pad;
	__u16 interp_head;  /* _PyRuntime.interpreters.head */
	__u16 threads_head; /* PyInterpreterState.threads.head (tstate_head) */
	__u16 tstate_next;
	__u16 tstate_thread_id;
	__u16 tstate_frame;   /* frame (3.10), cframe (3.11, 3.12), current_frame (3.13) */
	__u16 cframe_frame;   /* _PyCFrame.current_frame; 0xffff: tstate_frame is the frame */
	__u16 frame_size;     /* bytes of a frame read (<= 128) */
	__u16 frame_previous; /* f_back, previous */
	__u16 frame_code;     /* f_code, f_executable */
	__u16 frame_instr;    /* f_lasti, prev_instr, instr_ptr */
	__u16 frame_entry;    /* is_entry or owner (a byte) */
	__u16 code_size;      /* bytes of a code object read (<= 192) */
	__u16 code_firstlineno;
	__u16 code_filename;
	__u16 code_name;       /* co_qualname (3.11+), co_name (3.10) */
	__u16 str_length;      /* PyASCIIObject.length */
	__u16 str_state;       /* ... state: kind in bits 2-4, compact bit 5, ascii bit 6 */
	__u8 str_ascii_size;   /* sizeof(PyASCIIObject): ASCII data follows */
	__u8 str_compact_size; /* sizeof(PyCompactUnicodeObject): other compact data follows */
};

/* A code object's names, read at its first sample in a process (a "py_names" ring buffer), so
 * that processes that exit before a drain are named. */
#define EMBER_PY_NAME_MAX 128
#define EMBER_PY_FILE_MAX 256
struct ember_py_name_rec {
	__u64 code; /* address of the code object */
	__u32 pid;
	__u32 tag; /* its tag (as in the tag word) */
	__s32 firstlineno;
	__u32 name_len; /* characters of co_qualname (co_name) */
	__u32 file_len; /* characters of co_filename */
	__u8 name_kind; /* bytes per character (1, 2, 4); 0: not read */
	__u8 file_kind;
	__u8 name_ascii; /* the string is ASCII (kind 1 may be Latin-1 otherwise) */
	__u8 file_ascii;
	char name[EMBER_PY_NAME_MAX]; /* min(len * kind, size) bytes of the data */
	char file[EMBER_PY_FILE_MAX];
};

#define EMBER_PY_HIST 16
/* Per-CPU counters of the Python walk. */
struct ember_py_bpf_stats {
	__u64 walks;	    /* user stacks of a Python process walked */
	__u64 no_thread;    /* ... whose thread has no Python thread state (not found) */
	__u64 frames;	    /* Python frames stored */
	__u64 truncated;    /* walks cut short by EMBER_PY_MAX_FRAMES or the native stack's room */
	__u64 bad_frames;   /* walks cut short: a frame or code object unreadable, or not code */
	__u64 searches;	    /* thread list searches (the thread's state was not cached) */
	__u64 search_steps; /* thread states read by them */
	__u64 names;	    /* name records sent */
	__u64 name_drops;   /* ... lost: the ring buffer was full (sent again next time) */
	__u64 walk_ns;	    /* time spent in the walks (bpf_ktime_get_ns()) */
	__u64 walk_hist[EMBER_PY_HIST]; /* walks by time: [0] < 256 ns, [b] < 2^(b+8) ns */
};

/*
 * --- V8 (Node) frames (bpf/v8.bpf.h; userspace: src/daemon/unwind/v8.c) ----------------------
 *
 * For a process userspace found to run a V8 whose postmortem data (v8dbg_*) checks out, each
 * frame the native walk steps by frame pointer (JIT code, V8's builtins: no CFI) is looked at,
 * once the walk is done, as a V8 frame: its context slot a tagged pointer (not a frame-type
 * marker) and its function slot a JSFunction whose SharedFunctionInfo's map says so. Each such
 * frame adds a word after the native ips (leaf first): EMBER_V8F_MARK | its native ip's index
 * (EMBER_V8F_IDX) | the SharedFunctionInfo's address (untagged). Native ips are user addresses
 * (< 2^47): a word with bit 63 set is never one. Userspace names the frame by the SFI, or by
 * its native ip when it cannot.
 */
#define EMBER_USTACK_V8 (1u << 6) /* V8 words after the native ips */
#define EMBER_V8F_MARK	(1ull << 63)
#define EMBER_V8F_ADDR_MASK ((1ull << 47) - 1)
#define EMBER_V8F_IDX_SHIFT 47 /* bits 47..53: the index of the frame's native ip */
#define EMBER_V8F_IDX(w) ((unsigned int)(((w) >> EMBER_V8F_IDX_SHIFT) & 127))
#define EMBER_V8F_IS(w) (((w) & EMBER_V8F_MARK) != 0)

/* A V8 process as userspace read its binary's v8dbg_* data (v8.c). 32 bytes. */
struct ember_v8_proc {
	__s8 fp_context;      /* off_fp_context: -8 */
	__s8 fp_function;     /* off_fp_function: -16 */
	__u8 heap_tag;	      /* HeapObjectTag: 1 */
	__u8 heap_tag_mask;   /* HeapObjectTagMask: 3 */
	__u16 map_off;	      /* HeapObject::map: 0 */
	__u16 instance_type_off; /* Map::instance_type */
	__u16 shared_off;     /* JSFunction::shared */
	__u16 type_sfi;	      /* SHARED_FUNCTION_INFO_TYPE */
	__u16 pad[2];
	__u64 pad2[2];
};

/* Per-CPU counters of the V8 frame checks. */
struct ember_v8_bpf_stats {
	__u64 checks;	 /* frames looked at: the sum of the three below (userspace's) */
	__u64 frames;	 /* ... found to be JS frames (a word stored) */
	__u64 markers;	 /* ... typed frames (a frame-type marker in the context slot), or
			    its slot unreadable */
	__u64 not_js;	 /* ... neither: no SFI at the function slot, unreadable */
	__u64 no_room;	 /* JS frames not stored: the stack's depth was reached */
	__u64 walk_ns;	 /* time in the walks of V8 processes (bpf_ktime_get_ns()) */
	__u64 walks;	 /* walks of V8 processes */
};

/*
 * --- HotSpot (Java) frames (bpf/hotspot.bpf.h; userspace: src/daemon/unwind/hotspot.c) ---------
 *
 * For a process userspace found to run a HotSpot whose vmStructs data checks out, a frame whose
 * pc falls in one of its code heaps is stepped by the JVM's own rules (an interpreted frame by
 * its frame pointer, a compiled one or a stub by the code blob's frame size) and its ip is
 * replaced in place by a word: EMBER_HSF_MARK | kind | an auxiliary 14 bits (the bytecode index
 * of an interpreted frame, the pc's offset in a compiled method's code; EMBER_HSF_AUX_NONE when
 * it does not fit) | an address (47 bits): the Method* (interpreted), the nmethod (compiled) or
 * the code blob (stub). Native ips are user addresses (< 2^47): bit 63 is never theirs.
 */
#define EMBER_USTACK_HS (1u << 7) /* HotSpot words in place of some native ips */
#define EMBER_HSF_MARK (1ull << 63)
#define EMBER_HSF_ADDR_MASK ((1ull << 47) - 1)
#define EMBER_HSF_AUX_SHIFT 47
#define EMBER_HSF_AUX_NONE 0x3fffu
#define EMBER_HSF_KIND_SHIFT 61
#define EMBER_HSF_INTERP 1ull	/* Method* + bci */
#define EMBER_HSF_COMPILED 2ull /* nmethod* + pc offset */
#define EMBER_HSF_STUB 3ull	/* CodeBlob* (a stub, an adapter, the call stub) */
#define EMBER_HSF_KIND(w) ((unsigned int)(((w) >> EMBER_HSF_KIND_SHIFT) & 3))
#define EMBER_HSF_AUX(w) ((unsigned int)(((w) >> EMBER_HSF_AUX_SHIFT) & 0x3fff))
#define EMBER_HSF_IS(w) (((w) & EMBER_HSF_MARK) != 0)

#define EMBER_HS_MAX_HEAPS 4

/* A JVM as userspace read it (hotspot.c): its code heaps and the offsets the walk reads. */
struct ember_hs_proc {
	__u64 low[EMBER_HS_MAX_HEAPS];	  /* a code heap's reserved [low, high) */
	__u64 high[EMBER_HS_MAX_HEAPS];
	__u64 segmap[EMBER_HS_MAX_HEAPS]; /* its segment map: one byte per segment */
	__u8 log2_seg[EMBER_HS_MAX_HEAPS];
	__u32 nr_heaps;
	__u16 blob_name;	  /* CodeBlob::_name */
	__u16 blob_frame_size;	  /* CodeBlob::_frame_size (int, words) */
	__u16 blob_frame_complete; /* CodeBlob::_frame_complete_offset (int, bytes) */
	__u16 blob_code_begin;	  /* CodeBlob::_code_begin (a pointer) */
	__u16 heapblock_size;	  /* sizeof(HeapBlock): the blob follows it */
	__u16 method_constmethod; /* Method::_constMethod */
	__u16 constmethod_size;	  /* sizeof(ConstMethod): the bytecodes follow it */
	__s8 interp_method;	  /* interpreter frame slots, in words from rbp: -3 */
	__s8 interp_bcp;	  /* -8 */
	__s8 interp_sender_sp;	  /* -1 */
	__u8 pad[3];
};

/* Per-CPU counters of the HotSpot walk. */
struct ember_hs_bpf_stats {
	__u64 interp;	 /* interpreted frames stepped */
	__u64 compiled;	 /* compiled frames (nmethods) stepped */
	__u64 stubs;	 /* stubs, adapters stepped */
	__u64 no_blob;	 /* a pc in a code heap whose blob was not found (free, too far) */
	__u64 bad;	 /* a blob or frame unreadable or out of bounds: the walk stopped */
	__u64 walks;	 /* walks of JVM processes */
	__u64 walk_ns;	 /* their time (bpf_ktime_get_ns()) */
};

/*
 * Kernel symbols without /proc/kallsyms (bpf/kresolve.bpf.c, src/daemon/symbols/kresolve.c): userspace writes up
 * to EMBER_KSYM_BATCH addresses into the program's .bss and runs it (BPF_PROG_TEST_RUN); it
 * formats each with the kernel's "%pS" ("name+0xoff/0xsize [module]", or "0x..." for no symbol)
 * into a slot of EMBER_KSYM_TEXT bytes (KSYM_NAME_LEN is 512 since Linux 6.1, plus the offsets).
 */
#define EMBER_KSYM_BATCH 64
#define EMBER_KSYM_TEXT 600

#endif
