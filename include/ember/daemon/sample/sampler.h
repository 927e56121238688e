/* SPDX-License-Identifier: MIT */
/*
 * sampler: owns the BPF skeleton (bpf/sampler.bpf.c), one perf event + link per online CPU, and
 * the drain. open -> rodata and map sizes -> load -> attach; then sampler__drain() once per tick.
 *
 * Drain: each sample arrives whole in the ring buffer (struct ember_sample_rec: time, task,
 * cgroup, comm, kernel and user frames, Python words). The records read since the last drain
 * (at wake-ups and at the drain) are grouped by hash into (task, comm, cgroup, stacks) groups,
 * each with the times and CPUs of its samples, and handed to a callback. No map is read per
 * stack or per tick: a drain makes no bpf() system call. A sample that found the ring buffer
 * full is lost in BPF, counted; stack errors are passed on as data, never dropped.
 *
 * CPU hotplug: sampler__take() re-reads the online CPU mask (at most once a second) and attaches
 * to CPUs that came online, detaches from those that went away.
 *
 * Threads: one thread reads the ring buffer (sampler__take(), sampler__poll(): they only copy
 * records and note process events, they read no file and make no map call) and another may
 * deliver what it took (sampler_batch__deliver(): the callbacks, which read processes' files,
 * run there) and write the unwind and Python maps; sampler__stats() from either. Other calls
 * from the reading thread. Non-logging: failures return -errno plus a one-line reason.
 */
#ifndef EMBER_SAMPLER_H
#define EMBER_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ember/core/base/counters.h"

struct sampler_opts {
	uint64_t freq_hz;		/* samples per second per CPU */
	bool include_idle;		/* sample the idle task (pid 0) */
	bool idle_stacks;		/* ... and walk its kernel stack; else "[idle]" only */
	uint32_t pid;			/* only this process (tgid); 0: every process */
	bool hardware_event;		/* try PERF_COUNT_HW_CPU_CYCLES before cpu-clock */
	uint32_t tick_ms;		/* drain interval */
	uint32_t ringbuf_bytes;		/* power of 2, >= page size */
	uint32_t unwind_rows;		/* rows of unwind tables the BPF walker can hold; 0: none,
					   every user stack by frame pointer */
	uint32_t unwind_procs;		/* processes with a mapping list (max_entries) */
	const struct sampler *unwind_from; /* a capture's sampler: walk with this one's tables */
	uint32_t python_procs; /* Python processes the walker knows (max_entries); 0: 4096 */
	bool python_lines;     /* record where each Python frame was (for file:line) */
	struct sampler_offcpu_opts {	/* off-CPU events ([offcpu]); bpf_shared.h */
		bool enabled;		/* false: the programs are not even loaded */
		uint32_t states;	/* EMBER_OFFCPU_STATE_* */
		uint64_t min_ns;	/* periods shorter: duration-weighted sampling */
		uint64_t max_ns;	/* periods longer: counted, not recorded */
		uint64_t quantum_ns;	/* the weight's unit, <= min_ns */
		uint32_t pid;		/* only this tgid; 0: any */
		uint64_t cgroup_id;	/* only this cgroup v2 id; 0: any */
		char comm[16];		/* only this comm; "": any */
		uint32_t threads;	/* threads tracked at once (the task map's size) */
		bool kernel_stacks;	/* the blocked kernel stack, taken at the switch-out */
	} offcpu;
	/* memory and I/O events ([pagefault], [vmgrow], [blockio], [malloc]; bpf/memio.bpf.h):
	 * each off (its programs not loaded) unless enabled */
	struct sampler_memio_opts {
		bool pagefault;		/* the page-faults software event, one sample every
					   pagefault_period faults per CPU */
		uint64_t pagefault_period;
		bool vmgrow;		/* mmap() and brk() growth at the system call's return */
		bool blockio;		/* bios at submission, and again at completion (latency) */
		uint32_t blockio_inflight; /* bios tracked at once (4 KiB each) */
		bool malloc;		/* the C library's malloc through a uprobe */
		uint32_t malloc_pid;	/* ... of this process (0: any process with malloc_comm) */
		char malloc_comm[16];	/* ... or of this comm ("": malloc_pid only) */
		char malloc_lib[256];	/* the library's path or name ("libc.so.6") */
		uint64_t malloc_interval; /* bytes between malloc samples */
		bool pmc;		/* hardware counters: cycles and instructions, one
					   sample every pmc_period events per CPU */
		uint64_t pmc_period;
		uint64_t max_rate[8];	/* records per second per process, by EMBER_MEMIO_*;
					   0: unbounded */
	} memio;
	uint64_t exec_batch_ns;	/* execs wake the drain at most once per this window and are handed
				   to the worker this long after they happened; 0: at once */
	uint64_t drain_period_ns; /* forks (listed by the BPF program itself) wake nobody; once
				     read they are handed to the worker this long after they
				     happened, with what came meanwhile (their exec or exit
				     supersedes them); 0: with the batch they were read in */
	bool pretend_hs_refused; /* test knob (EMBERD_PRETEND_HS_REFUSED=1): the load with the
				    HotSpot step fails as if the verifier refused it */
	bool fp_only;	       /* no BPF walker (sampler_probe_walker() == 0): user stacks by the
				  kernel's frame-pointer walk, no unwind tables, no Python frames;
				  a capture's sampler follows unwind_from's */
};

/* One (pid, tid, comm, cgroup, kernel stack, user stack) with the times of its samples in this
 * drain. */
struct sampler_group {
	uint32_t pid, tid;
	char comm[16];			/* NUL-terminated */
	uint64_t cgroup_id;		/* the tasks's cgroup v2 id (bpf_get_current_cgroup_id()) */
	const uint64_t *kernel_ips;	/* leaf first; NULL when kernel_err */
	size_t nr_kernel;
	const uint64_t *user_ips;	/* leaf first; NULL when user_err */
	size_t nr_user;
	uint32_t user_flags;		/* how the walk ended: EMBER_USTACK_* (bpf_shared.h) */
	const uint64_t *py_words;	/* the thread's Python frames (EMBER_USTACK_PY), ROOT FIRST,
					   EMBER_PY_WORDS each (code word, tag word); NULL: none */
	size_t nr_py;
	int kernel_err;			/* 0, or -EFAULT (no stack in that context), other -errno */
	int user_err;
	const uint64_t *times_ns;	/* CLOCK_MONOTONIC, one per timed sample */
	const uint32_t *cpus;		/* parallel to times_ns */
	size_t nr_times;
	uint32_t kind;			/* EMBER_KIND_*: 0 on-CPU samples; else off-CPU events, whose
					   cpus[] hold each one's weight in quanta (bpf_shared.h) */
	/* EMBER_KIND_WAKEUP: the group's task woke this one (blocked in wakee_kind: S or D);
	 * period_ns: the wakee's period (its off-CPU record's time) */
	uint32_t wakee_tid, wakee_kind;
	char wakee_comm[16];
	uint64_t period_ns;
	uint32_t untimed;		/* samples without a time of their own (the drain's time):
					   none from the sampler, whose records all carry theirs */
};

/* Borrowed data: valid during the call only. Return 0 to go on, < 0 to abort the drain. */
typedef int (*sampler_group_fn)(const struct sampler_group *g, void *ctx);

/* Reasons a user walk stops short (EMBER_STOP_* in bpf_shared.h), for sampler_stats.user_stops. */
#define SAMPLER_STOP_REASONS 8

/* The reason's name in /api/v1/stats and /metrics ("no_table", "depth", ...): static. */
const char *sampler_stop_name(unsigned int reason);

/* What emberd's bpf() map calls were for (sampler_stats.bpf_calls_by): reading the BPF side's
 * counters, writing unwind table rows, listing and forgetting processes for the walkers
 * (unwind_procs, py_procs, seen). */
#define SAMPLER_BPF_CALL_KINDS 3
/* The kind's name in /api/v1/stats and /metrics ("counters", "unwind_rows", "process_lists"):
 * static. */
const char *sampler_bpf_call_name(unsigned int kind);

#define SAMPLER_WALK_COUNTS 9
/* The name of sampler_stats.user_walk[@i] ("frames", "cache_hits", ...): static. */
const char *sampler_walk_name(unsigned int i);

struct sampler_stats {
	uint64_t samples;		/* BPF program samples (sum over CPUs) */
	uint64_t idle;
	uint64_t kern_efault, user_efault;	/* no stack of that kind (data) */
	uint64_t kern_other, user_other;
	uint64_t ringbuf_drops;		/* samples lost in BPF: the ring buffer was full */
	uint64_t ring_bytes;		/* bytes of sample records the program wrote */
	uint64_t execs;			/* exec of a sampled process notified */
	uint64_t exec_drops;		/* ... lost (ring buffer full): found later by the checks */
	uint64_t exits;			/* exit of a sampled process's leader notified */
	uint64_t exit_drops;		/* ... lost (ring buffer full): found later by the checks */
	uint64_t forks;			/* new processes by fork notified (not threads) */
	uint64_t fork_drops;		/* ... lost (ring buffer full): listed at their first sample */
	uint64_t exec_seeds;		/* execs whose executable's table was put in vma_cache by BPF */
	uint64_t timer_misses;		/* CPU-clock firings the BPF program did not see (gaps) */
	uint64_t nest_refused;		/* BPF programs not run: four of ember's already running on
					   their CPU, one interrupting the other (bpf/nest.bpf.h) */
	uint64_t user_fp_walks;		/* user stacks by frame pointer: the process had no tables */
	uint64_t user_truncated;	/* user stacks the walk could not finish */
	uint64_t user_stops[SAMPLER_STOP_REASONS]; /* ... by why: sampler_stop_name() */
	/* the user walks' work: frames, rule cache hits, row searches, their halvings, mapping
	 * searches, frame pointer steps (EMBER_WALK_* in bpf_shared.h; sampler_walk_name()) */
	uint64_t user_walk[SAMPLER_WALK_COUNTS];
	bool exec_notify;		/* gauge: the sched_process_exec program is attached */
	bool exit_notify;		/* gauge: the sched_process_exit program is attached */
	bool fork_notify;		/* gauge: the sched_process_fork program is attached */
	uint64_t untimed;		/* samples delivered with the drain's time (none: kept for the
					   exit line's and the API's stability) */
	uint64_t bad_records;		/* records of a size that does not add up: skipped, lost */
	uint64_t pending_drops;		/* records read but not kept (the pending bound, no memory):
					   lost, counted in lost too */
	uint64_t groups;		/* groups delivered (distinct task and stacks per drain) */
	uint64_t events_lost;		/* process events not kept (no memory, a batch dropped): the
					   symbolizer's periodic checks find them */
	uint64_t delivered;		/* samples handed to the callback */
	uint64_t offcpu_delivered;	/* off-CPU events handed to it (not in delivered) */
	uint64_t lost;			/* not delivered: lost in BPF (ring buffer full), not kept
					   (pending_drops, bad_records), or the callback failed */
	uint64_t lost_in_bpf;		/* ... of which the first (= ringbuf_drops) */
	uint64_t drains;
	uint64_t drain_ns_total;	/* time spent in sampler__drain() */
	uint64_t bpf_calls;		/* bpf() system calls this sampler made after its start-up:
					   the kernel skips the program on a CPU while one runs */
	double bpf_calls_per_s;		/* ... over the last 10 s or so */
	uint64_t bpf_calls_by[SAMPLER_BPF_CALL_KINDS]; /* ... by what for: sampler_bpf_call_name() */
	uint64_t ring_wakeups;		/* sampler__poll(): the drain woke for the ring buffer */
	uint64_t event_checks;		/* sampler__take(events_only): reads at an exec window's end
					   or when process events were due */
	uint64_t event_batches;		/* ... that handed process events to the worker ahead of
					   the tick (the others wait for it) */
	uint64_t procs_coalesced;	/* processes born and gone within one batch of events, never
					   sampled: none of their events delivered */
	uint64_t procev_run_ns, procev_run_cnt; /* the exec, fork and exit programs' run time */
	uint64_t rows_mapped_writes;	/* unwind rows written through a mapping of the array (no
					   bpf() call); batches of them otherwise count in bpf_calls */
	uint64_t cpus_attached;		/* gauge */
	uint64_t cpu_attaches, cpu_detaches; /* hotplug events handled (after the start) */
	uint64_t prog_run_ns, prog_run_cnt; /* from the kernel: emberd holds bpf_enable_stats() */
	bool hardware_event;		/* gauge: cycles instead of cpu-clock */
	bool hs_walk_refused;		/* gauge: the verifier refused the HotSpot step; the
					   programs were loaded without it (no Java frames) */
	uint32_t prog_id;		/* the BPF program's id (bpftool prog show id N) */
	uint32_t prog_verified_insns;	/* instructions the verifier processed to accept it */
	uint32_t ringbuf_bytes;		/* the ring buffer's size */
	bool fp_only;			/* gauge: sampler_opts.fp_only (no BPF walker) */
};

/* struct sampler_stats described once (sampler_counters.c): its /api/v1/stats keys, its /metrics
 * families and the exit line's values (core/base/counters.h) */
extern const struct counter_desc sampler_counters[];
extern const size_t sampler_counters_n;
/* struct sampler_memio_stats, the same way: "memio" in /api/v1/stats */
extern const struct counter_desc sampler_memio_counters[];
extern const size_t sampler_memio_counters_n;
/* struct sampler_offcpu_stats, the same way: "offcpu" in /api/v1/stats */
extern const struct counter_desc sampler_offcpu_counters[];
extern const size_t sampler_offcpu_counters_n;

struct sampler; /* opaque */
struct ember_config;

/*
 * Whether the kernel can run the BPF walker of user stacks: 1 yes, 0 no (it lacks bpf_loop(),
 * Linux < 5.17: sampler_opts.fp_only then), -errno when the probe itself failed.
 */
int sampler_probe_walker(void);

/*
 * Opens, sizes, loads and attaches on every online CPU. 0 and *ret_s, or -errno with a one-line
 * reason in @err that names the cause (missing privileges, no BTF, perf_event_paranoid, ...).
 * Free with sampler__free().
 */
/* [sampling] of @c as options (sampler_config.c); [offcpu] is offcpu_sink__from_config()'s. */
void sampler_opts_from_config(const struct ember_config *c, struct sampler_opts *so);
/* Probes the walker (sampler_probe_walker(); @pretend_no_loop: as if the kernel had no
 * bpf_loop()) and turns what it cannot run off in @so, saying so in the log. */
void sampler_opts_probe(struct sampler_opts *so, bool pretend_no_loop);

int sampler__new(const struct sampler_opts *o, struct sampler **ret_s, char *err, size_t errlen);
void sampler__free(struct sampler *s); /* NULL is a no-op; detaches everything */

/*
 * One tick: hotplug check, read the ring buffer, group the records read since the last drain,
 * call @fn for each group. Returns the number of samples delivered, or -errno. A negative return
 * of @fn stops the deliveries of this drain: the samples not delivered are counted in
 * sampler_stats.lost.
 */
int sampler__drain(struct sampler *s, sampler_group_fn fn, void *ctx);

/*
 * The same in two halves, for two threads. sampler__take(): hotplug check, read the ring buffer;
 * returns what was read since the last take (records and process events, in order), NULL when
 * nothing was; with @events_only, the process events only (at a wake-up: a new process's
 * mappings are read at once), the records wait for the next take. Its records count against
 * the pending bound until freed.
 * sampler_batch__deliver(): calls the process event callbacks (pid_fn, exec_fn, exit_fn,
 * pyname_fn) in the order read, then groups the records and calls @fn per group; returns the
 * samples delivered or -errno (as sampler__drain()). sampler_batch__drop(): not delivered (a
 * full queue): its samples counted lost, and freed. sampler__events(): per tick, on the thread
 * that delivers (the bpf() call rate).
 */
struct sampler_batch;
struct sampler_batch *sampler__take(struct sampler *s, bool events_only);
int sampler_batch__deliver(struct sampler *s, struct sampler_batch *b, sampler_group_fn fn,
			   void *ctx);
size_t sampler_batch__samples(const struct sampler_batch *b);
size_t sampler_batch__events(const struct sampler_batch *b);	/* process events it holds */
void sampler_batch__free(struct sampler *s, struct sampler_batch *b); /* NULL: no-op */
void sampler_batch__drop(struct sampler *s, struct sampler_batch *b);
void sampler__events(struct sampler *s);

/*
 * The ring buffer's epoll fd: readable when a sample of a process not seen recently arrived
 * (other samples wait for the tick). Then call sampler__poll(). Borrowed, owned by @s.
 */
int sampler__epoll_fd(struct sampler *s);

/* The time of the newest sample read from the ring buffer (CLOCK_MONOTONIC; 0: none yet), and
 * in *@ret_cpus the CPUs sampled. No system call. */
uint64_t sampler__newest_ns(const struct sampler *s, uint64_t *ret_cpus);

/* Reads the records waiting in the ring buffer (kept for the next take). >= 0 or -errno. */
int sampler__poll(struct sampler *s);

/*
 * When to call sampler__take(s, true) next (CLOCK_MONOTONIC; 0: no need until a wake-up): the
 * process events read are due to the worker (a new process's first sample at once, an exec
 * exec_batch_ns after it), or an exec window is over (execs that did not wake the ring). No
 * system call. sampler__take(s, true) returns the events when due and one of them wants the
 * worker (an exec or a first sample whose exit is not in the batch); else NULL, and they go
 * with the tick's take.
 */
uint64_t sampler__events_due_ns(const struct sampler *s);

/* Called with each pid (not 0) the sampler sees for the first time in a while with a user
 * stack, as soon as its first record is read: the daemon captures the process's mappings then.
 * @exec_follows: an exec of the pid comes later in the same batch of events, so the sample is
 * of the image before it, and /proc may show the new one already (a shell's fork).
 * @ips: that record's native user frames (leaf first; at most SAMPLER_FIRST_IPS, @n of them),
 * the files its walk reached (unwinder__reached(): their tables before the tick delivers the
 * record). Borrowed for the call. */
#define SAMPLER_FIRST_IPS 32
typedef void (*sampler_pid_fn)(uint32_t pid, bool exec_follows, const uint64_t *ips, size_t n,
			       void *ctx);
void sampler__set_pid_fn(struct sampler *s, sampler_pid_fn fn, void *ctx);

/* What the kernel told of an exec'd process's executable at its exec (struct
 * ember_exec_img_rec): the mapping of its text and its file's device and inode. ino 0: nothing
 * told (the kernel could not, or an older kernel without bpf_find_vma()). */
struct sampler_image {
	uint64_t start, end;		/* [start, end) */
	uint64_t pgoff;			/* the file offset of start, in bytes */
	uint64_t ino;
	uint32_t dev_major, dev_minor;
	bool seeded;			/* its table in the BPF program's mapping cache already */
};

/* Called with the pid of a process that called exec (any process), when the drain hands the
 * process events to the worker (sampler_opts.exec_batch_ns after the exec at the latest, with
 * the others of its burst): the daemon drops the old image's state and lists the new one.
 * @gone: the process's exit is in the same batch (it lived less than the batch's delay):
 * there is nothing to read. @img: the new image's executable as the kernel told it at the
 * exec (borrowed; ino 0: not told), which names its samples when /proc comes too late. pid_fn
 * is called again with its next sample. */
typedef void (*sampler_exec_fn)(uint32_t pid, uint64_t time_ns, bool gone,
				const struct sampler_image *img, void *ctx);
void sampler__set_exec_fn(struct sampler *s, sampler_exec_fn fn, void *ctx);
/* Called with the pid of a sampled process whose leader thread exited (at the next tick): the
 * daemon checks whether the process is gone then. pid_fn is called again with the pid's next
 * sample (a new process may have it). */
/* The path exec was given for @pid's exec at @time_ns (the sampler's exec_paths map: one
 * bpf() call), into @buf (NUL-terminated): its length, or -ENOENT (none kept: no image, another
 * exec's since), -ENAMETOOLONG, -errno. */
int sampler__exec_path(struct sampler *s, uint32_t pid, uint64_t time_ns, char *buf, size_t cap);
typedef void (*sampler_exit_fn)(uint32_t pid, uint64_t time_ns, bool gone, void *ctx);
void sampler__set_exit_fn(struct sampler *s, sampler_exit_fn fn, void *ctx);
/* Called with a new process made by fork (not a thread) and its parent, with the execs (at
 * most exec_batch_ns after it): it runs its parent's image. @gone: its exec or exit is in the
 * same batch (nothing to copy). */
typedef void (*sampler_fork_fn)(uint32_t parent, uint32_t child, uint64_t time_ns, bool gone,
				void *ctx);
void sampler__set_fork_fn(struct sampler *s, sampler_fork_fn fn, void *ctx);

/*
 * Detaches from every CPU: no sample is taken after this returns, so that two more drains
 * deliver exactly what was sampled (used at exit). Hotplug checks no longer re-attach.
 */
void sampler__stop(struct sampler *s);

/* Re-reads the online CPUs now; returns the number of CPUs attached or -errno. */
int sampler__update_cpus(struct sampler *s);

void sampler__stats(struct sampler *s, struct sampler_stats *ret);

/* The drops and hotplug events since the last report, in the log (sampler_log.c). */
struct sampler_report {
	struct sampler_stats last;
	uint64_t last_ns;		/* CLOCK_MONOTONIC of the last report */
};
/* Drops at most once per 10 s, unless @force; CPU hotplug changes at the first call after them. */
void sampler_report_drops(struct sampler *s, struct sampler_report *rep, bool force);
/* libbpf's messages through our log: WARN -> warn, INFO -> info, DEBUG only with -v. */
void sampler_log_libbpf(void);

/*
 * Memory and I/O counters (bpf_shared.h's struct ember_memio_stats summed over CPUs), per kind
 * ("memio" in /api/v1/stats, ember_memio_* in /metrics): events seen and their weight in the
 * kind's raw unit (page faults, pages, bytes, microseconds, bytes), records sent, lost (ring
 * full), throttled (over a process's max_rate: counted, not recorded).
 */
#define SAMPLER_MEMIO_KINDS 7
struct sampler_memio_stats {
	bool attached;			/* gauge: any memory or I/O program attached */
	bool pmc;			/* gauge: the kernel offers hardware counters (cycles) */
	uint64_t events[SAMPLER_MEMIO_KINDS];
	uint64_t weight[SAMPLER_MEMIO_KINDS];
	uint64_t recorded[SAMPLER_MEMIO_KINDS];
	uint64_t lost[SAMPLER_MEMIO_KINDS];
	uint64_t lost_weight[SAMPLER_MEMIO_KINDS];
	uint64_t throttled[SAMPLER_MEMIO_KINDS];
	uint64_t throttled_weight[SAMPLER_MEMIO_KINDS];
	uint64_t ring_bytes;
	uint64_t malloc_calls;		/* malloc calls the uprobe saw */
	uint64_t inflight_miss;		/* block I/O completions of no tracked bio */
	uint64_t run_ns[SAMPLER_MEMIO_KINDS]; /* the programs' run time (bpf_enable_stats) */
	uint64_t run_cnt[SAMPLER_MEMIO_KINDS]; /* ... and runs (vmgrow: every system call) */
};
/* The name of kind @i in the counters ("pagefault", "vmgrow", "blockio", "blockio_latency",
 * "malloc", "cycles", "instructions"): static. */
const char *sampler_memio_name(unsigned int i);
int sampler__memio_stats(struct sampler *s, struct sampler_memio_stats *ret);
/*
 * Whether the kernel offers hardware counters: 1 yes, 0 no with the reason in @why (perf
 * itself says "not supported": no PMU in a VM without one), -errno when the probe failed.
 */
int sampler_pmc_probe(char *why, size_t whylen);

/* Off-CPU counters (bpf_shared.h's struct ember_offcpu_stats summed over CPUs and kinds). */
struct sampler_offcpu_stats {
	bool attached;			/* the off-CPU programs run */
	uint64_t switches;		/* sched_switch runs */
	uint64_t periods;		/* blocked periods ended (selected threads and states) */
	uint64_t blocked_ns;		/* their time: recorded + held + over_max + lost */
	uint64_t blocked_ns_s, blocked_ns_d, blocked_ns_r; /* ... in S, in D, waiting for a CPU */
	uint64_t recorded, recorded_ns;	/* records sent and their weight */
	uint64_t held_ns;		/* short periods' time in the accumulators, not recorded yet */
	uint64_t inflight_ns;		/* weighed at a wakeup, sent at the system call's return */
	uint64_t over_max, over_max_ns;	/* periods longer than max_blocked: counted only */
	uint64_t lost, lost_ns;		/* records lost (ring full), time of exited accumulators */
	uint64_t no_slot;		/* threads not tracked: the task map was full */
	uint64_t unended;		/* switch-outs with a period open and no switch-in seen */
	uint64_t wakeups;		/* sched_wakeup of threads in a period */
	uint64_t runq_ns;		/* their wait for a CPU once woken (in blocked_ns_r with R) */
	uint64_t user_preempt;		/* preempted in user mode (with R: recorded as R at the
					   next system call return, "[preempted in user mode]") */
	uint64_t user_preempt_ns;	/* ... their time */
	uint64_t kstacks;		/* blocked kernel stacks taken ([offcpu] kernel_stacks) */
	uint64_t kstack_err;		/* ... not taken: those system calls' records have none */
	uint64_t kstack_skip;		/* ... not taken: not predicted to be recorded */
	uint64_t kstack_miss;		/* S/D records sent without one (predicted wrong) */
	uint64_t wakeup_records, wakeup_lost; /* wakers recorded, lost (ring full) */
	uint64_t wake_remote;		/* sched_wakeup completed in another task than the waker's */
	uint64_t wake_late;		/* wakeups taken at sched_wakeup (sched_waking saw none open) */
	uint64_t ring_bytes;
	uint64_t switch_run_ns, switch_run_cnt; /* the kernel's run time of the two programs */
	uint64_t resume_run_ns, resume_run_cnt;
	uint64_t wakeup_run_ns, wakeup_run_cnt; /* sched_waking's and sched_wakeup's together */
};

/* Fills @ret (zeros when off). 0 or -errno. Four bpf() calls. Any thread. */
int sampler__offcpu_stats(struct sampler *s, struct sampler_offcpu_stats *ret);

/*
 * The unwind tables the BPF walker reads (bpf_shared.h), written by the symbols stage
 * (unwind.h): an array of sampler_opts.unwind_rows rows, mapped into this process, and a list of
 * executable mappings per process. Main thread. The capacity is 0 without tables (a capture's
 * sampler, which reads the daemon's, or unwind_rows 0).
 */
struct ember_unwind_prow;
struct ember_unwind_proc;
uint32_t sampler__unwind_capacity(const struct sampler *s);
/* Copies @n packed rows to [@start, @start + @n) of the array. 0 or -EINVAL (out of it). */
int sampler__unwind_write_rows(struct sampler *s, uint32_t start,
			       const struct ember_unwind_prow *r, size_t n);
/* Sets (or replaces) @pid's list; 0 or -errno (-E2BIG: unwind_procs are all taken). */
int sampler__unwind_set_proc(struct sampler *s, uint32_t pid, const struct ember_unwind_proc *p);
/* Enters (or replaces) the table of the file (@dev: the kernel's dev_t, @ino) for addresses a
 * list lacks; removes it. 0 or -errno (-E2BIG: full; -ENOENT). No-ops when the walker has no
 * mapping lookup (a kernel without the offsets, frame pointers only). */
struct ember_unwind_file;
int sampler__unwind_set_file(struct sampler *s, uint64_t dev, uint64_t ino,
			     const struct ember_unwind_file *f);
int sampler__unwind_del_file(struct sampler *s, uint64_t dev, uint64_t ino);
/* Removes @pid's list: its stacks are walked by frame pointer. 0 or -ENOENT. */
int sampler__unwind_del_proc(struct sampler *s, uint32_t pid);

/*
 * Python: the CPython processes the BPF walker reads Python frames of (bpf_shared.h,
 * written by the symbols stage, python.h). Main thread. A capture's sampler shares the daemon's
 * maps and callback.
 */
struct ember_py_proc;
struct ember_py_name_rec;
struct ember_py_bpf_stats;
/* Sets (or replaces) @pid's entry; 0 or -errno (-E2BIG: python_procs are all taken). */
int sampler__python_set_proc(struct sampler *s, uint32_t pid, const struct ember_py_proc *p);
/* Removes @pid's entry: its stacks have native frames only. 0 or -ENOENT. */
int sampler__python_del_proc(struct sampler *s, uint32_t pid);
/* The next sample of @pid counts as a new process's again (a wake-up, pid_fn): for a process
 * examined while ld.so was still mapping its libraries. */
void sampler__renote_pid(struct sampler *s, uint32_t pid);
/* Called with each code object's names, sent by the program at its first sample in a process
 * (borrowed for the call), as the ring buffers are read (sampler__poll(), sampler__drain()). */
typedef void (*sampler_pyname_fn)(const struct ember_py_name_rec *r, void *ctx);
void sampler__set_pyname_fn(struct sampler *s, sampler_pyname_fn fn, void *ctx);
/* The Python walk's counters, summed over CPUs. 0 or -errno. */
int sampler__python_stats(struct sampler *s, struct ember_py_bpf_stats *ret);

/*
 * V8: the processes whose frames stepped by frame pointer are looked at as JavaScript frames
 * (bpf_shared.h, written by the unwind stage, v8.h). A capture's sampler shares the daemon's map.
 */
struct ember_v8_proc;
struct ember_v8_bpf_stats;
/* Sets (or replaces) @pid's entry; 0 or -errno (-E2BIG: the map is full). */
int sampler__v8_set_proc(struct sampler *s, uint32_t pid, const struct ember_v8_proc *p);
/* Removes @pid's entry. 0 or -ENOENT. */
int sampler__v8_del_proc(struct sampler *s, uint32_t pid);
/* The V8 frame checks' counters, summed over CPUs. 0 or -errno. */
int sampler__v8_stats(struct sampler *s, struct ember_v8_bpf_stats *ret);

/*
 * HotSpot: the JVMs whose code heaps the walk steps through (bpf_shared.h, written by the
 * unwind stage, hotspot.h). A capture's sampler shares the daemon's map.
 */
struct ember_hs_proc;
struct ember_hs_bpf_stats;
/* Sets (or replaces) @pid's entry; 0 or -errno (-E2BIG: the map is full). */
int sampler__hs_set_proc(struct sampler *s, uint32_t pid, const struct ember_hs_proc *p);
/* The walk steps Java frames at all: off with frame pointers only, and where the kernel's
 * verifier refused the step (the programs were then loaded without it). */
bool sampler__hs_walk_on(const struct sampler *s);
/* How the load with the HotSpot step failed (-errno, for the log), 0 when it did not. */
int sampler__hs_walk_err(const struct sampler *s);
/* task_struct.thread.fsbase's offset, read with the sampler's other kernel offsets from the
 * kernel's BTF at its set-up (the CPython reader's thread lookup); -1 when not read. */
int64_t sampler__task_fsbase_off(const struct sampler *s);
/* The HotSpot walk's counters, summed over CPUs. 0 or -errno. */
int sampler__hs_stats(struct sampler *s, struct ember_hs_bpf_stats *ret);

#endif
