// SPDX-License-Identifier: MIT
/*
 * struct sampler_stats described once (core/base/counters.h): the "sampler" object of
 * /api/v1/stats, its /metrics families and the exit line's values. A new counter: a field in
 * struct sampler_stats, one row here.
 */
#include <stddef.h>

#include "ember/core/base/counters.h"
#include "ember/daemon/sample/sampler.h"

#define F(f) .off = offsetof(struct sampler_stats, f)
#define U64(f) F(f), .value = COUNTER_U64

static double ring_bytes_per_sample(const void *p)
{
	const struct sampler_stats *a = p;

	return a->samples > a->ringbuf_drops
		       ? (double)a->ring_bytes / (double)(a->samples - a->ringbuf_drops)
		       : 0.0;
}

static double drain_us_avg(const void *p)
{
	const struct sampler_stats *a = p;

	return a->drains ? (double)a->drain_ns_total / (double)a->drains / 1e3 : 0.0;
}

static double bpf_ns_per_sample(const void *p)
{
	const struct sampler_stats *a = p;

	return a->prog_run_cnt ? (double)a->prog_run_ns / (double)a->prog_run_cnt : 0.0;
}

static const char *user_walker(const void *p)
{
	return ((const struct sampler_stats *)p)->fp_only ? "frame_pointer" : "bpf";
}

static const char *stop_name(unsigned int i)
{
	return sampler_stop_name(i);
}

static const char *bpf_call_name(unsigned int i)
{
	return sampler_bpf_call_name(i);
}

static const char *walk_name(unsigned int i)
{
	return sampler_walk_name(i);
}

#define EVENTS "ember_sampler_events_total"
#define STACK_ERRORS "ember_stack_errors_total"

const struct counter_desc sampler_counters[] = {
	{ .key = "samples", U64(samples), .unit = "samples", .metric = "ember_samples_total",
	  .type = COUNTER_COUNTER, .help = "Samples taken by the BPF program, all CPUs." },
	{ .key = "idle", U64(idle), .unit = "samples", .metric = "ember_idle_samples_total",
	  .type = COUNTER_COUNTER, .help = "Samples of the idle task." },
	{ .key = "delivered", U64(delivered), .unit = "samples",
	  .metric = "ember_delivered_samples_total", .type = COUNTER_COUNTER,
	  .help = "Samples drained and stored." },
	{ .key = "lost", U64(lost), .unit = "samples", .metric = "ember_lost_samples_total",
	  .type = COUNTER_COUNTER, .help = "Samples drained but not delivered." },
	{ .key = "kern_efault", U64(kern_efault), .unit = "stacks", .metric = STACK_ERRORS,
	  .type = COUNTER_COUNTER,
	  .help = "Stacks not taken, by stack (kernel, user) and error (efault: no stack of that "
		  "kind; other).",
	  .label = "stack", .label_value = "kernel", .label2 = "error", .label2_value = "efault" },
	{ .key = "user_efault", U64(user_efault), .unit = "stacks", .metric = STACK_ERRORS,
	  .label = "stack", .label_value = "user", .label2 = "error", .label2_value = "efault" },
	{ .key = "kern_other", U64(kern_other), .unit = "stacks", .metric = STACK_ERRORS,
	  .label = "stack", .label_value = "kernel", .label2 = "error", .label2_value = "other" },
	{ .key = "user_other", U64(user_other), .unit = "stacks", .metric = STACK_ERRORS,
	  .label = "stack", .label_value = "user", .label2 = "error", .label2_value = "other" },
	{ .key = "ringbuf_drops", U64(ringbuf_drops), .unit = "samples", .metric = EVENTS,
	  .type = COUNTER_COUNTER,
	  .help = "Sampler losses and fallbacks: ring buffer drops (samples lost in BPF), records "
		  "of a bad size, records over the pending bound, exec, exit and fork notifications.",
	  .label = "kind", .label_value = "ringbuf_drops" },
	{ .key = "untimed", U64(untimed), .unit = "samples" },
	{ .key = "bad_records", U64(bad_records), .unit = "records", .metric = EVENTS,
	  .label = "kind", .label_value = "bad_records" },
	{ .key = "pending_drops", U64(pending_drops), .unit = "records", .metric = EVENTS,
	  .label = "kind", .label_value = "pending_drops" },
	{ .key = "execs", U64(execs), .unit = "events", .metric = EVENTS, .label = "kind",
	  .label_value = "execs", .flags = COUNTER_NO_JSON },
	{ .key = "exec_drops", U64(exec_drops), .unit = "events", .metric = EVENTS,
	  .label = "kind", .label_value = "exec_drops", .flags = COUNTER_NO_JSON },
	{ .key = "exits", U64(exits), .unit = "events", .metric = EVENTS, .label = "kind",
	  .label_value = "exits", .flags = COUNTER_NO_JSON },
	{ .key = "exit_drops", U64(exit_drops), .unit = "events", .metric = EVENTS,
	  .label = "kind", .label_value = "exit_drops", .flags = COUNTER_NO_JSON },
	{ .key = "forks", U64(forks), .unit = "events", .metric = EVENTS, .label = "kind",
	  .label_value = "forks", .flags = COUNTER_NO_JSON },
	{ .key = "fork_drops", U64(fork_drops), .unit = "events", .metric = EVENTS,
	  .label = "kind", .label_value = "fork_drops", .flags = COUNTER_NO_JSON },
	{ .key = "exec_seeds", U64(exec_seeds), .unit = "events", .metric = EVENTS,
	  .label = "kind", .label_value = "exec_seeds" },
	{ .key = "timer_misses", U64(timer_misses), .unit = "samples",
	  .metric = "ember_sampler_timer_misses_total", .type = COUNTER_COUNTER,
	  .help = "CPU-clock firings the BPF program did not see, from the gaps between two that "
		  "found one thread running (a lower bound)." },
	{ .key = "nest_refused", U64(nest_refused), .unit = "runs",
	  .metric = "ember_bpf_nest_refused_total", .type = COUNTER_COUNTER,
	  .help = "BPF program runs not made: four of ember's programs already running on their "
		  "CPU, each interrupting the one before (cannot happen: task, softirq, hardirq, "
		  "NMI)." },
	{ .key = "events_lost", U64(events_lost), .unit = "events" },
	{ .key = "groups", U64(groups), .unit = "groups" },
	{ .key = "drains", U64(drains), .metric = "ember_sampler_drains_total",
	  .type = COUNTER_COUNTER, .help = "Drains of the ring buffer." },
	{ .key = "drain_ns_total", U64(drain_ns_total), .unit = "ns",
	  .metric = "ember_sampler_drain_seconds_total", .type = COUNTER_COUNTER,
	  .help = "Time spent draining.", .metric_scale = 1e-9 },
	{ .key = "drain_us_avg", .value = COUNTER_FN, .fn = drain_us_avg, .unit = "us",
	  .flags = COUNTER_NO_JSON },
	{ .key = "cpus_attached", U64(cpus_attached), .unit = "CPUs",
	  .metric = "ember_sampler_cpus", .type = COUNTER_GAUGE,
	  .help = "CPUs the sampler is attached to." },
	{ .key = "hardware_event", F(hardware_event), .value = COUNTER_BOOL },
	{ .key = "hs_walk_refused", F(hs_walk_refused), .value = COUNTER_BOOL },
	{ .key = "ringbuf_bytes", F(ringbuf_bytes), .value = COUNTER_U32, .unit = "bytes" },
	{ .key = "ring_bytes", U64(ring_bytes), .unit = "bytes",
	  .metric = "ember_ring_bytes_total", .type = COUNTER_COUNTER,
	  .help = "Bytes of sample records written to the ring buffer (whole stacks)." },
	{ .key = "ring_bytes_per_sample", .value = COUNTER_FN, .fn = ring_bytes_per_sample,
	  .unit = "bytes", .json_fmt = "%.1f" },
	{ .key = "bpf_calls", U64(bpf_calls), .unit = "calls", .metric = "ember_bpf_calls_total",
	  .type = COUNTER_COUNTER,
	  .help = "bpf() system calls emberd made after start-up (the kernel skips the sampling "
		  "program on a CPU while one runs)." },
	{ .key = "bpf_calls_per_s", F(bpf_calls_per_s), .value = COUNTER_DOUBLE,
	  .unit = "calls/s", .json_fmt = "%.2f", .metric = "ember_bpf_calls_per_second",
	  .type = COUNTER_GAUGE, .help = "bpf() system calls per second over the last 10 s or so." },
	{ .key = "bpf_calls_by", U64(bpf_calls_by), .unit = "calls", .nr = SAMPLER_BPF_CALL_KINDS,
	  .name = bpf_call_name, .array_label = "kind", .metric = "ember_bpf_calls_by_kind_total",
	  .type = COUNTER_COUNTER,
	  .help = "bpf() map calls by what for: counters (the BPF side's, read each tick), "
		  "unwind_rows (table rows not written through a mapping), process_lists (a "
		  "process listed or forgotten for the walkers)." },
	{ .key = "ring_wakeups", U64(ring_wakeups), .unit = "wake-ups",
	  .metric = "ember_drain_wakeups_total", .label = "reason", .label_value = "ring",
	  .type = COUNTER_COUNTER,
	  .help = "Wake-ups of the drain thread: by the ring buffer (a record asked for one), "
		  "or to read process events when due (events)." },
	{ .key = "event_checks", U64(event_checks), .unit = "wake-ups",
	  .metric = "ember_drain_wakeups_total", .label = "reason", .label_value = "events" },
	{ .key = "event_batches", U64(event_batches), .unit = "batches",
	  .metric = "ember_event_batches_total", .type = COUNTER_COUNTER,
	  .help = "Process events handed to the worker ahead of the tick (a worker wake-up "
		  "each); the others go with the tick's samples." },
	{ .key = "procs_coalesced", U64(procs_coalesced), .unit = "processes",
	  .metric = "ember_processes_coalesced_total", .type = COUNTER_COUNTER,
	  .help = "Processes born and gone within one batch of events and never sampled: their "
		  "fork, exec and exit records were read and none was handed to the worker." },
	{ .key = "rows_mapped_writes", U64(rows_mapped_writes), .unit = "writes",
	  .metric = "ember_unwind_rows_mapped_writes_total", .type = COUNTER_COUNTER,
	  .help = "Unwind table rows written through a mapping of the rows array instead of "
		  "bpf() calls." },
	{ .key = "user_fp_walks", U64(user_fp_walks), .unit = "stacks", .metric = EVENTS,
	  .label = "kind", .label_value = "user_fp_walks" },
	{ .key = "user_truncated", U64(user_truncated), .unit = "stacks", .metric = EVENTS,
	  .label = "kind", .label_value = "user_truncated" },
	{ .key = "lost_in_bpf", U64(lost_in_bpf), .unit = "samples", .metric = EVENTS,
	  .label = "kind", .label_value = "lost_in_bpf" },
	{ .key = "user_walker", .value = COUNTER_STR, .str = user_walker },
	{ .key = "user_stops", U64(user_stops), .unit = "stacks", .nr = SAMPLER_STOP_REASONS,
	  .name = stop_name, .array_label = "reason", .metric = "ember_user_walk_stops_total",
	  .type = COUNTER_COUNTER,
	  .help = "User stack walks cut short ([truncated]), by why: no_table, no_row, no_rule, "
		  "unmapped, unreadable, depth, loop, other." },
	{ .key = "user_walk", U64(user_walk), .nr = SAMPLER_WALK_COUNTS, .name = walk_name,
	  .array_label = "kind", .metric = "ember_user_walk_total", .type = COUNTER_COUNTER,
	  .help = "The user stack walks' work, by kind: frames, cache_hits (rules from the rule "
		  "cache), row_searches, row_halvings, map_searches, fp_steps." },
	{ .key = "prog_run_ns", U64(prog_run_ns), .unit = "ns",
	  .metric = "ember_bpf_run_time_seconds_total", .type = COUNTER_COUNTER,
	  .help = "CPU time spent in ember's BPF programs (kernel.bpf_stats_enabled=1).",
	  .metric_scale = 1e-9, .label = "prog", .label_value = "profiler",
	  .flags = COUNTER_NO_JSON },
	{ .key = "prog_run_cnt", U64(prog_run_cnt), .unit = "runs",
	  .metric = "ember_bpf_runs_total", .type = COUNTER_COUNTER,
	  .help = "Runs of ember's BPF programs.", .label = "prog", .label_value = "profiler",
	  .flags = COUNTER_NO_JSON },
	{ .key = "procev_run_ns", U64(procev_run_ns), .unit = "ns",
	  .metric = "ember_bpf_run_time_seconds_total", .metric_scale = 1e-9, .label = "prog",
	  .label_value = "process_events", .flags = COUNTER_NO_JSON },
	{ .key = "procev_run_cnt", U64(procev_run_cnt), .unit = "runs",
	  .metric = "ember_bpf_runs_total", .label = "prog", .label_value = "process_events",
	  .flags = COUNTER_NO_JSON },
	{ .key = "bpf_ns_per_sample", .value = COUNTER_FN, .fn = bpf_ns_per_sample, .unit = "ns",
	  .flags = COUNTER_NO_JSON },
};
const size_t sampler_counters_n = COUNTERS_N(sampler_counters);

/* struct sampler_offcpu_stats: the BPF side of "offcpu" in /api/v1/stats. */
#undef F
#undef U64
#define F(f) .off = offsetof(struct sampler_offcpu_stats, f)
#define U64(f) F(f), .value = COUNTER_U64
#define MS(f) U64(f), .unit = "ns", .json_scale = 1e-6, .json_fmt = "%.3f"

const struct counter_desc sampler_offcpu_counters[] = {
	{ .key = "switches", U64(switches) },
	{ .key = "periods", U64(periods) },
	{ .key = "blocked_ms", MS(blocked_ns) },
	{ .key = "blocked_s_ms", MS(blocked_ns_s) },
	{ .key = "blocked_d_ms", MS(blocked_ns_d) },
	{ .key = "blocked_r_ms", MS(blocked_ns_r) },
	{ .key = "recorded", U64(recorded) },
	{ .key = "recorded_ms", MS(recorded_ns) },
	{ .key = "held_ms", MS(held_ns) },
	{ .key = "inflight_ms", MS(inflight_ns) },
	{ .key = "over_max", U64(over_max) },
	{ .key = "over_max_ms", MS(over_max_ns) },
	{ .key = "lost", U64(lost) },
	{ .key = "lost_ms", MS(lost_ns) },
	{ .key = "no_slot", U64(no_slot) },
	{ .key = "unended", U64(unended) },
	{ .key = "wakeups", U64(wakeups) },
	{ .key = "wakeup_records", U64(wakeup_records) },
	{ .key = "wakeup_lost", U64(wakeup_lost) },
	{ .key = "wake_remote", U64(wake_remote) },
	{ .key = "wake_late", U64(wake_late) },
	{ .key = "runq_ms", MS(runq_ns) },
	{ .key = "user_preempt", U64(user_preempt) },
	{ .key = "user_preempt_ms", MS(user_preempt_ns) },
	{ .key = "kstacks", U64(kstacks) },
	{ .key = "kstack_err", U64(kstack_err) },
	{ .key = "kstack_skip", U64(kstack_skip) },
	{ .key = "kstack_miss", U64(kstack_miss) },
	{ .key = "ring_bytes", U64(ring_bytes), .unit = "bytes" },
	{ .key = "switch_run_ns", U64(switch_run_ns), .unit = "ns" },
	{ .key = "switch_runs", U64(switch_run_cnt) },
	{ .key = "resume_run_ns", U64(resume_run_ns), .unit = "ns" },
	{ .key = "resume_runs", U64(resume_run_cnt) },
	{ .key = "wakeup_run_ns", U64(wakeup_run_ns), .unit = "ns" },
	{ .key = "wakeup_runs", U64(wakeup_run_cnt) },
};
const size_t sampler_offcpu_counters_n = COUNTERS_N(sampler_offcpu_counters);

/* struct sampler_memio_stats: the BPF side of "memio" in /api/v1/stats, ember_memio_* metrics */
static const char *memio_name(unsigned int i)
{
	return sampler_memio_name(i);
}

#define MF(f) .off = offsetof(struct sampler_memio_stats, f)
#define MARR(f)                                                                                \
	MF(f), .value = COUNTER_U64, .nr = SAMPLER_MEMIO_KINDS, .name = memio_name,              \
	       .array_label = "kind"

const struct counter_desc sampler_memio_counters[] = {
	{ .key = "attached", MF(attached), .value = COUNTER_BOOL },
	{ .key = "hardware_counters", .metric = "ember_hardware_counters", .type = COUNTER_GAUGE,
	  .help = "1 when the kernel offers hardware counters (cycles).", MF(pmc),
	  .value = COUNTER_BOOL },
	{ .key = "events", .metric = "ember_memio_events_total", .type = COUNTER_COUNTER,
	  .help = "Memory and I/O events seen in BPF, by kind (page faults: samples).",
	  MARR(events) },
	{ .key = "weight", .metric = "ember_memio_weight_total", .type = COUNTER_COUNTER,
	  .help = "Their weight in the kind's raw unit (faults, pages, bytes, us, bytes).",
	  MARR(weight) },
	{ .key = "recorded", .metric = "ember_memio_recorded_total", .type = COUNTER_COUNTER,
	  .help = "Records sent to the ring buffer, by kind.", MARR(recorded) },
	{ .key = "lost", .metric = "ember_memio_lost_total", .type = COUNTER_COUNTER,
	  .help = "Records lost: the ring buffer was full, by kind.", MARR(lost) },
	{ .key = "lost_weight", .metric = "ember_memio_lost_weight_total", .type = COUNTER_COUNTER,
	  .help = "Their weight, by kind.", MARR(lost_weight) },
	{ .key = "throttled", .metric = "ember_memio_throttled_total", .type = COUNTER_COUNTER,
	  .help = "Events over their process's max_rate: counted, not recorded, by kind.",
	  MARR(throttled) },
	{ .key = "throttled_weight", .metric = "ember_memio_throttled_weight_total",
	  .type = COUNTER_COUNTER, .help = "Their weight, by kind.", MARR(throttled_weight) },
	{ .key = "ring_bytes", MF(ring_bytes), .value = COUNTER_U64 },
	{ .key = "malloc_calls", .metric = "ember_memio_malloc_calls_total", .type = COUNTER_COUNTER,
	  .help = "malloc calls the uprobe saw.", MF(malloc_calls), .value = COUNTER_U64 },
	{ .key = "inflight_miss", .metric = "ember_memio_inflight_miss_total", .type = COUNTER_COUNTER,
	  .help = "Block I/O completions of no tracked bio (no latency record).",
	  MF(inflight_miss), .value = COUNTER_U64 },
	{ .key = "run_ns", MARR(run_ns) },
	{ .key = "run_cnt", MARR(run_cnt) },
};
const size_t sampler_memio_counters_n = COUNTERS_N(sampler_memio_counters);
