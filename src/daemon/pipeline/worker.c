// SPDX-License-Identifier: MIT
/*
 * The worker: what reads processes' files, names frames, builds tables, in the order
 * queued (a new process's events and the unwind-table work first); the tick's housekeeping and
 * the counters it publishes; the dump; the final report.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/types.h>

#include "ember/core/base/clock.h"
#include "ember/core/base/counters.h"
#include "ember/core/base/heap.h"
#include "ember/core/base/log.h"
#include "ember/core/base/timeexpr.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"
#include "ember/core/base/workq.h"
#include "ember/daemon/export/exporter.h"
#include "ember/daemon/export/identity.h"
#include "ember/daemon/http/http.h"
#include "ember/daemon/sample/bpf_shared.h"
#include "ember/daemon/ingest/capture.h"
#include "ember/daemon/store/store.h"
#include "ember/daemon/store/store_sink.h"
#include "ember/daemon/unwind/runtime.h"
#include "pipeline_internal.h"

/* heap_trim() once a second when malloc keeps more than this free (and an eighth of what is used) */
#define HEAP_TRIM_MIN_FREE (8u << 20)

static int on_group(const struct sampler_group *g, void *ctx)
{
	struct emberd *d = ctx;

	if (EMBER_KIND_BASE(g->kind) >= EMBER_KIND_PAGEFAULT) /* a memory or I/O event */
		return d->memio_sink ? ingest__group(d->ingest, g, memio_sink__put, d->memio_sink) : 0;
	if (g->kind) /* an off-CPU event */
		return d->offcpu_sink ? ingest__group(d->ingest, g, offcpu_sink__put, d->offcpu_sink)
				      : 0;
	return ingest__group(d->ingest, g, store_sink__put, d->sink);
}
/* The exit lines: their values from the counters' one description (core/base/counters.h). */
static const char totals_fmt[] =
	"sampled {s.samples} (idle {s.idle}), delivered {s.delivered}, untimed {s.untimed}, lost "
	"{s.lost}; {s.drains} drains of {s.drain_us_avg:.0f} us avg; BPF {s.bpf_ns_per_sample:.0f} "
	"ns/sample; ring {s.ring_bytes_per_sample:.0f} B/sample; {s.bpf_calls} bpf() calls; store "
	"{st.samples} samples in {st.bytes} bytes ({st.record_bytes_per_sample:.2f} B/sample "
	"records), {st.stacks} stacks; stack cache {in.cache_hit_pct:.0f}% hits ({in.cache_file_hits} named for "
	"another process of the same files)";
static const char unwind_totals_fmt[] =
	"user stacks: {s.user_fp_walks} by frame pointer (no tables yet), {s.user_truncated} cut "
	"short; unwind tables: {u.rows_used} of {u.rows_capacity} rows in {u.tables} files, "
	"{u.builds} builds in {u.build_ms_total:.0f} ms, {u.evictions} evictions, {u.procs} "
	"processes listed, {u.ready_ms_avg:.1f} ms to a process's list on average";

/* One line at exit: what was sampled, delivered, dropped, and what it cost. */
static void log_sampler_totals(struct emberd *d)
{
	struct sampler_stats st;
	struct store_stats ss;
	struct ingest_stats in;
	struct unwind_stats us;
	struct counter_source src[] = {
		{ "s", sampler_counters, sampler_counters_n, &st },
		{ "st", store_counters, store_counters_n, &ss },
		{ "in", ingest_counters, ingest_counters_n, &in },
		{ "u", unwind_counters, unwind_counters_n, &us },
	};
	struct sbuf sb = SBUF_INIT;

	sampler__stats(d->sampler, &st);
	store__stats(d->store, &ss);
	ingest__stats(d->ingest, &in);
	(void)counters_format(&sb, totals_fmt, src, COUNTERS_N(src));
	log_info("%s", sb.buf ? sb.buf : "");
	/* how far back the history reached: "lost 0" above says nothing of what was evicted */
	{
		char when[40] = "none";

		if (ss.samples)
			timeexpr_format_rfc3339((int64_t)ss.oldest_ns, when, sizeof(when));
		log_info("history: oldest sample held %s (%.0f s before the newest); %llu samples "
			 "evicted since start (%llu for memory, %llu for age)",
			 when, ss.samples ? (double)(ss.newest_ns - ss.oldest_ns) / 1e9 : 0.0,
			 (unsigned long long)(ss.evicted_memory + ss.evicted_time),
			 (unsigned long long)ss.evicted_memory, (unsigned long long)ss.evicted_time);
	}
	if (d->unwind) {
		unwinder__stats(d->unwind, &us);
		sbuf_reset(&sb);
		(void)counters_format(&sb, unwind_totals_fmt, src, COUNTERS_N(src));
		log_info("%s", sb.buf ? sb.buf : "");
	}
	sbuf_fini(&sb);
}

/*
 * Samples evicted for memory shorten the history below [store] retention: said when it starts,
 * then at most once a minute, with how far back it now reaches (evictions for age are the retention at work).
 */
static void report_evictions(struct emberd *d)
{
	struct store_stats ss;
	uint64_t now = mono_ns();
	char when[40] = "none";

	if (now - d->report_evicted_ns < 60 * 1000000000ULL)
		return;
	store__stats(d->store, &ss);
	if (ss.evicted_memory > d->report_evicted_memory) {
		if (ss.samples)
			timeexpr_format_rfc3339((int64_t)ss.oldest_ns, when, sizeof(when));
		log_warn("store: %llu samples evicted for memory (store.memory_limit %llu bytes): the "
			 "history now reaches back to %s, %.0f s of the %llu s of retention",
			 (unsigned long long)(ss.evicted_memory - d->report_evicted_memory),
			 (unsigned long long)ss.max_bytes, when,
			 ss.samples ? (double)(ss.newest_ns - ss.oldest_ns) / 1e9 : 0.0,
			 (unsigned long long)ss.retention_s);
		d->report_evicted_memory = ss.evicted_memory;
		d->report_evicted_ns = now;
	}
}

/* --- the worker: what reads processes' files, names frames, builds tables -------- */

struct work {
	enum work_kind kind;
	struct sampler_batch *b;	/* W_BATCH */
	bool in_order_events;		/* W_BATCH: counted in d->queued_events */
	char comms[EMBER_LIST_MAX];	/* W_FILTER: the new [filter] lists */
	char cgroups[EMBER_LIST_MAX];
};

/* Queues work for the worker; a full queue drops it, counted (a batch's samples as lost). */
int pipeline_push_work(struct emberd *d, enum work_kind kind, struct sampler_batch *b)
{
	struct work *w = calloc(1, sizeof(*w));
	int r = w ? 0 : -ENOMEM;

	if (w) {
		*w = (struct work){ .kind = kind, .b = b };
		if (kind == W_FILTER) {
			snprintf(w->comms, sizeof(w->comms), "%s", d->cfg.exclude_comms);
			snprintf(w->cgroups, sizeof(w->cgroups), "%s", d->cfg.exclude_cgroups);
		}
		/* a new process's events and its tables first: its mappings and interpreter are read
		 * while it lives, its tables built (under their budget) while the single loop would
		 * have, not after the naming of the tick's samples queued before them */
		/* ...unless a batch queued before holds process events too: they are handled in
		 * the order they happened (a deep shell's subshell's children's forks were handled
		 * before the subshell's own fork, queued with the tick's samples before them: the
		 * children got no copy of its mappings, their samples 115 frames of "[unknown]") */
		bool urgent = (kind == W_BATCH && b && !sampler_batch__samples(b) &&
			       !__atomic_load_n(&d->queued_events, __ATOMIC_ACQUIRE)) ||
			      kind == W_UNWIND;

		w->in_order_events = kind == W_BATCH && !urgent && sampler_batch__events(b);
		if (w->in_order_events)
			__atomic_fetch_add(&d->queued_events, 1, __ATOMIC_ACQ_REL);
		r = urgent ? workq__push_urgent(d->wq, w) : workq__push(d->wq, w);
		if (r && w->in_order_events)
			__atomic_fetch_sub(&d->queued_events, 1, __ATOMIC_ACQ_REL);
	}
	if (r) {
		free(w);
		if (b)
			sampler_batch__drop(d->sampler, b);
		__atomic_fetch_add(&d->work_dropped, 1, __ATOMIC_RELAXED);
	}
	return r;
}

/* The worker's counters, for the drain thread to publish with the sampler's. */
static void copy_worker_stats(struct emberd *d)
{
	struct worker_pub p = { 0 };

	symbolizer__stats(d->sym, &p.symbols);
	proc_tracker__stats(d->procs, &p.procs);
	filecache__stats(d->files, &p.files);
	ingest__stats(d->ingest, &p.ingest);
	if (d->unwind)
		unwinder__stats(d->unwind, &p.unwind);
	if (d->py)
		python__stats(d->py, &p.python);
	if (d->v8)
		v8__stats(d->v8, &p.v8);
	if (d->hs)
		hotspot__stats(d->hs, &p.hotspot);
	if (d->offcpu_sink)
		offcpu_sink__stats(d->offcpu_sink, &p.offcpu);
	memio_sink__stats(d->memio_sink, &p.memio);
	p.names_bytes = strtab__mem_bytes(d->sym_st);
	pthread_mutex_lock(&d->wpub_lock);
	d->wpub = p;
	pthread_mutex_unlock(&d->wpub_lock);
}

/*
 * The frame names' table only grows: a name is interned once and its id kept by caches (the
 * symbolizer's, the stack cache, the sinks' maps to the stores' own tables) and by the Python
 * code objects and the off-CPU wakers waiting. No stored sample refers to it (the stores copy the
 * names into tables of their own, compacted as their samples go), so it starts over once it has
 * doubled since the working set was measured (a prune after the last renewal: what the host's
 * processes need again within 5 s), or holds three quarters of symbols.max_names_memory (names
 * are refused, or soon: a full table given back when its filler is gone), keeping what is held
 * for longer (carried): the names of processes gone and of code freed are given back. Never
 * below NAMES_RENEW_MIN (or a quarter of the bound, if less): a renewal costs naming every stack
 * again.
 */
#define NAMES_RENEW_MIN (4u << 20)

static void names_renew(struct emberd *d)
{
	size_t bytes = strtab__mem_bytes(d->sym_st);
	size_t floor = d->cfg.max_names_bytes / 4 < NAMES_RENEW_MIN ? d->cfg.max_names_bytes / 4
								    : NAMES_RENEW_MIN;
	uint64_t t0 = mono_ns();

	if (d->names_renewed) {
		d->names_base = bytes;
		d->names_renewed = false;
		return;
	}
	if (bytes <= floor ||
	    (bytes <= 2 * d->names_base && bytes <= d->cfg.max_names_bytes / 4 * 3))
		return;
	if (strtab__renew(d->sym_st))
		return; /* no memory for the new table: the old one stays */
	symbolizer__names_forget(d->sym);
	ingest__names_forget(d->ingest);
	{
		const char *failed;

		if (runtime_set_names_carry(ingest__runtimes(d->ingest), &failed))
			log_warn("%s: names not carried over (no memory), read again when sampled",
				 failed);
	}
	if (d->offcpu_sink && offcpu_sink__names_carry(d->offcpu_sink, d->sym_st))
		log_warn("off-cpu: wakers dropped (no memory to carry their names)");
	strtab__renew_done(d->sym_st);
	d->names_renewed = true;
	log_debug("names: the table started over, %zu -> %zu bytes in %llu us", bytes,
		  strtab__mem_bytes(d->sym_st), (unsigned long long)((mono_ns() - t0) / 1000));
}

/*
 * Expiry every 5 s (exited processes keep their state for a grace period, for the samples still
 * in flight). Exec and exit are notified by the BPF programs, so reading every cached process's
 * start time and executable (two /proc reads each) is a safety net: once a minute, or at once
 * after a notification was lost or without the programs.
 */
static void prune(struct emberd *d)
{
	struct sampler_stats st;
	uint64_t lost;

	if (mono_ns() - d->last_prune_ns < 5 * NSEC)
		return;
	sampler__stats(d->sampler, &st);
	lost = st.exec_drops + st.exit_drops + st.events_lost;
	if (!st.exec_notify || !st.exit_notify || lost != d->notify_lost ||
	    mono_ns() - d->last_check_ns >= 60 * NSEC) {
		(void)symbolizer__prune(d->sym);
		d->last_check_ns = mono_ns();
		d->notify_lost = lost;
	} else {
		(void)symbolizer__prune_gone(d->sym);
	}
	runtime_set_prune(ingest__runtimes(d->ingest));
	names_renew(d);
	if (d->unwind)
		(void)unwinder__sweep(d->unwind); /* processes gone, whatever was missed */
	(void)proc_tracker__sweep(d->procs);
	/* the symbolizer's images the sweep ended, beyond its bound: let go before the stats are
	 * published (past it for up to a prune's period, 1,586 of 1,024 in bench_soak, they made
	 * the heap's accounting at rest miss by 10-17 % once an event trimmed them) */
	symbolizer__trim_retired(d->sym);
	d->last_prune_ns = mono_ns();
}

static void unwind_work(struct emberd *d)
{
	if (!d->unwind)
		return;
	liveness_worker_busy(&d->live, "unwind tables");
	__atomic_store_n(&d->unwind_pending, unwinder__work(d->unwind) > 0, __ATOMIC_RELAXED);
}

/* Counters for /api/v1/stats: the sampler's now, the worker's as of its last tick. Either thread. */
void pipeline_publish(struct emberd *d)
{
	struct http_published pub = { .have_unwind = d->unwind != NULL, .have_python = d->py != NULL,
				     .have_v8 = d->v8 != NULL, .have_hotspot = d->hs != NULL };

	sampler__stats(d->sampler, &pub.sampler);
	(void)sampler__offcpu_stats(d->sampler, &pub.offcpu);
	(void)sampler__memio_stats(d->sampler, &pub.memio);
	pthread_mutex_lock(&d->wpub_lock);
	pub.offcpu_sink = d->wpub.offcpu;
	pub.memio_sink = d->wpub.memio;
	pub.symbols = d->wpub.symbols;
	pub.ingest = d->wpub.ingest;
	pub.unwind = d->wpub.unwind;
	pub.procs = d->wpub.procs;
	pub.file_cache = d->wpub.files;
	pub.python = d->wpub.python;
	pub.names_bytes = d->wpub.names_bytes;
	pub.v8 = d->wpub.v8;
	pub.hotspot = d->wpub.hotspot;
	pthread_mutex_unlock(&d->wpub_lock);
	if (d->exporter) { /* its own thread's counters, under its lock */
		exporter__stats(d->exporter, pub.exporters);
		pub.have_exporter = true;
	}
	if (d->identity)
		identity__stats(d->identity, &pub.identity);
	http_server__publish(d->http, &pub);
}

/* On the worker: one item, in the order queued. */
static void work_run(void *ctx, void *item)
{
	struct emberd *d = ctx;
	struct work *w = item;
	int r;

	switch (w->kind) {
	case W_BATCH:
		liveness_worker_busy(&d->live, "naming");
		d->real_off_ns = real_minus_mono_ns();
		store_sink__set_clock_offset(d->sink, d->real_off_ns);
		if (d->offcpu_sink)
			offcpu_sink__set_clock_offset(d->offcpu_sink, d->real_off_ns);
		if (d->memio_sink)
			memio_sink__set_clock_offset(d->memio_sink, d->real_off_ns);
		r = sampler_batch__deliver(d->sampler, w->b, on_group, d);
		if (w->in_order_events) /* its events handled: later ones may go first again */
			__atomic_fetch_sub(&d->queued_events, 1, __ATOMIC_ACQ_REL);
		if (r < 0)
			log_errno(r, "delivery failed, samples counted as lost");
		if (d->offcpu_sink && offcpu_sink__flush(d->offcpu_sink) < 0)
			log_debug("chain graph: store full");
		sampler_batch__free(d->sampler, w->b);
		liveness_worker_busy(&d->live, "store");
		(void)store__expire(d->store, clock_ns(CLOCK_REALTIME));
		if (d->offcpu_sink)
			offcpu_sink__expire(d->offcpu_sink, clock_ns(CLOCK_REALTIME));
		memio_sink__expire(d->memio_sink, clock_ns(CLOCK_REALTIME));
		/* new processes in it: their tables now (under the budget), not at the next tick */
		unwind_work(d);
		break;
	case W_TICK:
		unwind_work(d);
		liveness_worker_busy(&d->live, "prune");
		prune(d);
		liveness_worker_busy(&d->live, "captures");
		capture_mgr__tick(d->captures);
		if (d->http)
			http_server__tick(d->http); /* finishes due ad hoc captures */
		sampler__events(d->sampler);
		copy_worker_stats(d);
		if (d->http) {
			pipeline_publish(d);
			__atomic_store_n(&d->published_ns, mono_ns(), __ATOMIC_RELAXED);
		}
		sampler_report_drops(d->sampler, &d->report, false);
		report_evictions(d);
		/* free pages left in malloc's arenas by renders and batches back to the kernel */
		(void)heap_trim(mono_ns(), HEAP_TRIM_MIN_FREE);
		break;
	case W_UNWIND:
		__atomic_store_n(&d->unwind_queued, false, __ATOMIC_RELAXED);
		unwind_work(d);
		break;
	case W_DUMP:
		liveness_worker_busy(&d->live, "dump");
		(void)store__dump_folded(d->store, d->cfg.dump_idle,
					  (enum store_root)d->cfg.dump_root, d->cfg.dump_path);
		break;
	case W_FILTER:
		if (ingest__set_filter(d->ingest, w->comms, w->cgroups))
			log_warn("reload: [filter] lists too long, ignoring");
		if (d->http)
			http_server__flush_cache(d->http); /* answers rendered under the old filter */
		break;
	case W_FINAL:
		liveness_worker_busy(&d->live, "final report");
		sampler_report_drops(d->sampler, &d->report, true);
		log_sampler_totals(d);
		if (d->cfg.dump_after_s)
			d->final_err = store__dump_folded(d->store, d->cfg.dump_idle,
							   (enum store_root)d->cfg.dump_root,
							   d->cfg.dump_path);
		break;
	}
	liveness_worker_busy(&d->live, NULL);
	free(w);
}

int emberd_worker_start(struct emberd *d)
{
	struct heap_stats heap;
	uint64_t parts;

	/* the heap at start beyond what its parts hold (libraries, BPF objects, fixed tables):
	 * one more part of the heap's accounting, measured before anything is named */
	if (d->http) {
		copy_worker_stats(d);
		pipeline_publish(d);
		heap_stats(&heap);
		parts = http_server__memory_accounted(d->http);
		http_server__set_heap_start(d->http,
					    heap.in_use_bytes > parts ? heap.in_use_bytes - parts : 0);
	}
	d->wq = workq__new(work_run, d, 1024);
	if (!d->wq)
		return log_errno(-errno, "cannot start the worker thread");
	return 0;
}
