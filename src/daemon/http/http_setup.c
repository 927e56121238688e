// SPDX-License-Identifier: MIT
/* emberd's main() entry into the HTTP side: config -> server, and --replay files -> recording. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ember/daemon/service/config.h"
#include "ember/daemon/http/http.h"
#include "ember/daemon/http/http_export.h"
#include "ember/core/base/log.h"
#include "ember/core/model/recording.h"
#include "ember/daemon/ingest/replay.h"
#include "ember/daemon/sample/sampler.h"
#include "ember/core/base/sbuf.h"
#include "ember/daemon/service/security.h"
#include "ember/daemon/ingest/ingest.h"
#include "ember/daemon/symbols/symbolizer.h"
#include "ember/core/base/clock.h"

#define U(x) (unsigned long long)(x)

/* The files profiled processes map, opened the one way (proc/mapfile.h) by the symbolizer, the
 * unwinder and the Python reader: opened, and refused by reason. */
static void files_json(struct sbuf *j, const struct http_published *pub)
{
	struct mapfile_stats f = pub->symbols.files;
	int i;

	if (pub->have_unwind)
		mapfile_stats_add(&f, &pub->unwind.files);
	if (pub->have_python)
		mapfile_stats_add(&f, &pub->python.files);
	sbuf_addf(j, "\"mapped_files\": {\"opened\": %llu, \"via_map_files\": %llu, "
		     "\"via_root\": %llu, \"refused\": {", U(f.opened), U(f.via_map_files), U(f.via_root));
	for (i = 0; i < MAPFILE__NR; i++)
		sbuf_addf(j, "%s\"%s\": %llu", i ? ", " : "", mapfile_refusal_name(i),
			  U(f.refused[i]));
	sbuf_addf(j, "}}, ");
}

/* What would name the frames of a file that stayed unresolved, by reason (issue 28). */
static const char *unresolved_hint(const struct unresolved_file *u, const struct symbolizer_stats *y)
{
	switch (u->reason) {
	case UNRESOLVED_STRIPPED:
		return "stripped (no .symtab) and no separate debug file found: install its debug "
		       "symbols (Debian: the package's -dbgsym, see find-dbgsym-packages; Fedora: "
		       "debuginfo-install) so that /usr/lib/debug/.build-id/ holds its build-id, give "
		       "emberd DEBUGINFOD_URLS (symbols.debuginfod), or build it without stripping";
	case UNRESOLVED_NOT_READ:
		return u->deleted ? "the file was deleted or replaced since the process mapped it: "
				    "restart the process to name its frames"
				  : "its symbols could not be read: see symbols.elf_errors, "
				    "elf_too_big (the [symbols] bounds) and mapped_files.refused";
	case UNRESOLVED_NO_SYMBOL:
		return "full symbols were read but none covers these addresses (assembly or code "
		       "between functions): nothing more to install";
	case UNRESOLVED_JIT:
		return "JIT code in anonymous memory that no perf map names: start the runtime with "
		       "its perf map (node --perf-basic-prof, python3 -X perf, Java's "
		       "perf-map-agent, DOTNET_PerfMapEnabled=1) and keep symbols.perf_maps on";
	case UNRESOLVED_KERNEL:
		return y->kallsyms_restricted
			       ? "kernel addresses are hidden (kernel.kptr_restrict): run emberd as "
				 "root or set kernel.kptr_restrict=0"
			       : "a kernel address no symbol covers (BPF code, a trampoline, a "
				 "module's code not in kallsyms)";
	default:
		return "the address is in no mapping of the process: a return address the "
		       "unwinder got wrong (code without frame pointers or CFI) or a process that "
		       "exited before its mappings were read";
	}
}

/* The files behind unresolved frames, most frames first, each with why and what would name it. */
static void unresolved_json(struct sbuf *j, const struct symbolizer_stats *y)
{
	uint32_t i;

	sbuf_adds(j, "\"unresolved_files\": [");
	for (i = 0; i < y->nr_unresolved_files && i < SYMBOLIZER_UNRESOLVED_FILES; i++) {
		const struct unresolved_file *u = &y->unresolved_files[i];
		const char *hint = unresolved_hint(u, y);

		sbuf_adds(j, i ? ", {\"frame\": \"" : "{\"frame\": \"");
		sbuf_add_json(j, u->frame, strnlen(u->frame, sizeof(u->frame)));
		sbuf_adds(j, "\", \"path\": \"");
		sbuf_add_json(j, u->path, strnlen(u->path, sizeof(u->path)));
		sbuf_adds(j, "\", \"build_id\": \"");
		sbuf_add_json(j, u->build_id, strnlen(u->build_id, sizeof(u->build_id)));
		sbuf_addf(j, "\", \"reason\": \"%s\", \"deleted\": %s, \"frames\": %llu, \"hint\": \"",
			  unresolved_reason_name(u->reason), u->deleted ? "true" : "false",
			  U(u->frames));
		sbuf_add_json(j, hint, strlen(hint));
		sbuf_adds(j, "\"}");
	}
	sbuf_adds(j, "], ");
}

static void stats_hook(struct sbuf *j, void *ctx)
{
	struct http_server *srv = ctx;
	struct http_published pub;
	const struct sampler_stats *a = &pub.sampler;
	const struct symbolizer_stats *y = &pub.symbols;
	const struct unwind_stats *w = &pub.unwind;
	uint64_t frames, unresolved;
	unsigned int i;
	double age;

	if (!http_server__published(srv, &pub))
		return;
	age = (double)(mono_ns() - http_server__published_at(srv)) / 1e9;
	/* age_s: the counters are the main loop's copy of its last tick */
	sbuf_addf(j, "\"sampler\": {\"age_s\": %.3f, ", age);
	sbuf_addf(j,
		  "\"samples\": %llu, \"idle\": %llu, \"delivered\": %llu, "
		  "\"lost\": %llu, \"kern_efault\": "
		  "%llu, \"user_efault\": %llu, \"kern_other\": %llu, \"user_other\": %llu, "
		  "\"ringbuf_drops\": %llu, \"untimed\": %llu, \"bad_records\": %llu, "
		  "\"pending_drops\": %llu, \"events_lost\": %llu, \"groups\": %llu, "
		  "\"drains\": %llu, "
		  "\"drain_ns_total\": %llu, \"cpus_attached\": %llu, \"hardware_event\": %s, "
		  "\"ringbuf_bytes\": %u, \"ring_bytes\": %llu, \"ring_bytes_per_sample\": %.1f, "
		  "\"bpf_calls\": %llu, \"bpf_calls_per_s\": %.2f, "
		  "\"user_fp_walks\": %llu, \"user_truncated\": %llu, "
		  "\"lost_in_bpf\": %llu, ",
		  U(a->samples), U(a->idle), U(a->delivered), U(a->lost), U(a->kern_efault),
		  U(a->user_efault), U(a->kern_other), U(a->user_other), U(a->ringbuf_drops),
		  U(a->untimed), U(a->bad_records), U(a->pending_drops), U(a->events_lost),
		  U(a->groups),
		  U(a->drains), U(a->drain_ns_total), U(a->cpus_attached),
		  a->hardware_event ? "true" : "false", a->ringbuf_bytes, U(a->ring_bytes),
		  a->samples > a->ringbuf_drops
		      ? (double)a->ring_bytes / (double)(a->samples - a->ringbuf_drops)
		      : 0.0,
		  U(a->bpf_calls), a->bpf_calls_per_s, U(a->user_fp_walks), U(a->user_truncated),
		  U(a->lost_in_bpf));
	/* why user walks stopped short: the [truncated] stacks, by reason */
	/* how user stacks are walked: the BPF walker, or frame pointers (no bpf_loop()) */
	sbuf_addf(j, "\"user_walker\": \"%s\", ", a->fp_only ? "frame_pointer" : "bpf");
	sbuf_addf(j, "\"user_stops\": {");
	for (i = 0; i < SAMPLER_STOP_REASONS; i++)
		sbuf_addf(j, "%s\"%s\": %llu", i ? ", " : "", sampler_stop_name(i),
			  U(a->user_stops[i]));
	sbuf_addf(j, "}}, ");
	frames = y->kernel_frames + y->user_frames;
	unresolved = y->kernel_unresolved + y->user_unresolved;
	sbuf_addf(j,
		  "\"symbols\": {\"frames\": %llu, \"unresolved\": %llu, \"unresolved_share\": "
		  "%.4f, \"kernel_unresolved\": %llu, \"user_unresolved\": %llu, "
		  "\"user_no_mapping\": %llu, \"jit_frames\": %llu, \"pids_cached\": %llu, "
		  "\"elfs_cached\": %llu, \"elf_symbols\": %llu, \"kallsyms_symbols\": %llu, "
		  "\"kallsyms_loads\": %llu, \"kernel_source\": \"%s\", \"kernel_lookups\": %llu, "
		  "\"kernel_functions\": %llu, "
		  "\"perfmap_symbols\": %llu, \"pid_evictions\": %llu, \"elf_evictions\": %llu, "
		  "\"mem_bytes\": %llu, \"pid_reuses\": %llu, \"pid_execs\": %llu, "
		  "\"pid_gone\": %llu, \"maps_errors\": %llu, \"elf_errors\": %llu, "
		  "\"perfmap_loads\": %llu, \"perfmap_bad_lines\": %llu, \"perfmap_skipped\": "
		  "{\"missing\": %llu, \"not_regular\": %llu, \"too_big\": %llu, "
		  "\"owner\": %llu, \"error\": %llu}, \"elf_too_big\": %llu, "
		  "\"elf_short_reads\": %llu, \"elf_debug_refused\": %llu, \"elf_changed\": %llu, "
		  "\"elf_mem_evictions\": %llu, \"elf_mem_refused\": %llu, ",
		  U(frames), U(unresolved), frames ? (double)unresolved / (double)frames : 0.0,
		  U(y->kernel_unresolved), U(y->user_unresolved), U(y->user_no_mapping),
		  U(y->jit_frames), U(y->pids_cached), U(y->elfs_cached), U(y->elf_symbols),
		  U(y->kallsyms_symbols), U(y->kallsyms_loads),
		  y->kernel_resolver ? "bpf" : "kallsyms", U(y->kernel_lookups),
		  U(y->kernel_functions), U(y->perfmap_symbols),
		  U(y->pid_evictions),
		  U(y->elf_evictions), U(y->mem_bytes), U(y->pid_reuses), U(y->pid_execs),
		  U(y->pid_gone), U(y->maps_errors), U(y->elf_errors), U(y->perfmap_loads),
		  U(y->perfmap_bad_lines), U(y->perfmap_skip_missing), U(y->perfmap_skip_not_regular),
		  U(y->perfmap_skip_too_big), U(y->perfmap_skip_owner), U(y->perfmap_skip_error),
		  U(y->elf_too_big), U(y->elf_short_reads), U(y->elf_debug_refused),
		  U(y->elf_changed), U(y->elf_mem_evictions), U(y->elf_mem_refused));
	unresolved_json(j, y);
	sbuf_addf(j, "\"kallsyms_restricted\": %s}, ", y->kallsyms_restricted ? "true" : "false");
	/* debuginfod (dbgfetch.h): null when DEBUGINFOD_URLS is unset or symbols.debuginfod off */
	if (y->debuginfod)
		sbuf_addf(j,
			  "\"debuginfod\": {\"fetches\": %llu, \"fetched_bytes\": %llu, "
			  "\"cached\": %llu, \"not_found\": %llu, \"timeouts\": %llu, "
			  "\"errors\": %llu, \"skipped\": %llu, \"evictions\": %llu, "
			  "\"cache_bytes\": %llu, \"fetch_ms_total\": %.1f, "
			  "\"images_named\": %llu}, ",
			  U(y->fetch.fetches), U(y->fetch.fetched_bytes), U(y->fetch.cached),
			  U(y->fetch.not_found), U(y->fetch.timeouts), U(y->fetch.errors),
			  U(y->fetch.skipped), U(y->fetch.evictions), U(y->fetch.cache_bytes),
			  (double)y->fetch.fetch_ns / 1e6, U(y->elf_debuginfod));
	else
		sbuf_addf(j, "\"debuginfod\": null, ");
	files_json(j, &pub);
	/* the ingest's [filter] and the server's bearer check: samples excluded, requests refused
	 */
	sbuf_addf(j, "\"service\": {\"filtered_samples\": %llu, \"auth_failures\": %llu}, ",
		  U(pub.ingest.filtered), U(http_server__auth_failures(srv)));
	if (pub.have_exporter) {
		static const char *const names[EXPORTER_KINDS] = { "otlp", "pyroscope" };
		int k, x;

		sbuf_adds(j, "\"export\": {");
		for (k = 0; k < EXPORTER_KINDS; k++) {
			const struct exporter_stats *e = &pub.exporters[k];

			sbuf_addf(j,
				  "%s\"%s\": {\"enabled\": %s, \"requests\": %llu, \"samples\": %llu, "
				  "\"bytes\": %llu, \"retries\": %llu, \"splits\": %llu, "
				  "\"queued\": %llu, \"queued_bytes\": %llu, \"queued_samples\": %llu, "
				  "\"dropped\": %llu, \"dropped_samples\": %llu, \"batches\": %llu, "
				  "\"build_ms\": %.1f, \"last_success_ns\": %llu, "
				  "\"frames_located\": %llu, \"frames_unlocated\": %llu, "
				  "\"frame_files\": %llu, \"frame_files_deferred\": %llu, "
				  "\"frame_lookups_deferred\": %llu, "
				  "\"frame_files_ms\": %.1f, \"failed\": {",
				  k ? ", " : "", names[k], e->enabled ? "true" : "false",
				  U(e->requests), U(e->samples), U(e->bytes), U(e->retries),
				  U(e->splits), U(e->queued), U(e->queued_bytes), U(e->queued_samples),
				  U(e->dropped), U(e->dropped_samples), U(e->batches),
				  (double)e->build_ns / 1e6, U(e->last_success_ns),
				  U(e->frames_located), U(e->frames_unlocated), U(e->frame_files),
				  U(e->frame_files_deferred), U(e->frame_procs_deferred),
				  (double)e->frame_files_ns / 1e6);
			for (x = 0; x < EXPORT_FAILS; x++)
				sbuf_addf(j, "%s\"%s\": %llu", x ? ", " : "", exporter_fail_names[x],
					  U(e->failed[x]));
			sbuf_adds(j, "}}");
		}
		sbuf_addf(j, ", \"identity\": {\"cgroups\": %llu, \"scans\": %llu, "
			  "\"unknown\": %llu, \"processes\": %llu, \"process_events\": %llu, "
			  "\"stale_images\": %llu, \"regex_errors\": %llu}}, ",
			  U(pub.identity.cgroups), U(pub.identity.scans), U(pub.identity.unknown),
			  U(pub.identity.procs), U(pub.identity.proc_events), U(pub.identity.stale),
			  U(pub.identity.regex_errors));
	}
	if (pub.have_unwind)
		sbuf_addf(j,
			  "\"unwind\": {\"rows_capacity\": %llu, \"rows_used\": %llu, \"bytes\": %llu, "
			  "\"tables\": %llu, \"tables_empty\": %llu, \"builds\": %llu, "
			  "\"build_ms_total\": %.1f, \"build_failures\": %llu, \"build_shared\": %llu, "
			  "\"debuginfod\": %llu, "
			  "\"evictions\": %llu, \"refused\": %llu, \"too_big\": %llu, \"procs\": %llu, "
			  "\"procs_pending\": %llu, \"procs_dropped\": %llu, \"procs_swept\": %llu, "
			  "\"files_changed\": %llu, \"lists\": %llu, \"exec_lists\": %llu, "
			  "\"exec_unbuilt\": %llu, "
			  "\"maps_overflow\": %llu, \"maps_errors\": %llu, \"rows_lossy\": %llu, "
			  "\"ready_ms_avg\": %.2f}, ",
			  U(w->rows_capacity), U(w->rows_used), U(w->bytes), U(w->tables),
			  U(w->tables_empty), U(w->builds), (double)w->build_ns / 1e6,
			  U(w->build_failures), U(w->build_shared), U(w->debuginfod), U(w->evictions),
			  U(w->refused),
			  U(w->too_big),
			  U(w->procs), U(w->procs_pending), U(w->procs_dropped), U(w->procs_swept),
			  U(w->files_changed), U(w->lists), U(w->exec_lists), U(w->exec_unbuilt),
			  U(w->maps_overflow), U(w->maps_errors), U(w->rows_lossy),
			  w->ready_count ? (double)w->ready_ns_total / (double)w->ready_count / 1e6
					 : 0.0);
	if (pub.offcpu.attached) {
		const struct sampler_offcpu_stats *o = &pub.offcpu;

		sbuf_addf(j,
			  "\"offcpu\": {\"switches\": %llu, \"periods\": %llu, \"blocked_ms\": %.3f, "
			  "\"blocked_s_ms\": %.3f, \"blocked_d_ms\": %.3f, \"blocked_r_ms\": %.3f, \"recorded\": %llu, "
			  "\"recorded_ms\": %.3f, \"held_ms\": %.3f, \"inflight_ms\": %.3f, \"over_max\": %llu, "
			  "\"over_max_ms\": %.3f, \"lost\": %llu, \"lost_ms\": %.3f, "
			  "\"no_slot\": %llu, \"unended\": %llu, \"wakeups\": %llu, \"wakeup_records\": %llu, \"wakeup_lost\": %llu, \"wake_remote\": %llu, \"wake_late\": %llu, \"runq_ms\": %.3f, \"user_preempt\": %llu, \"ring_bytes\": %llu, "
			  "\"switch_run_ns\": %llu, \"switch_runs\": %llu, \"resume_run_ns\": %llu, "
			  "\"resume_runs\": %llu, \"wakeup_run_ns\": %llu, \"wakeup_runs\": %llu, \"stored_events\": %llu, \"stored_quanta\": %llu, "
			  "\"stored_wakers\": %llu, \"stored_waker_quanta\": %llu, \"chain_nowaker_quanta\": %llu, "
			  "\"chain_dropped_quanta\": %llu}, ",
			  U(o->switches), U(o->periods), (double)o->blocked_ns / 1e6,
			  (double)o->blocked_ns_s / 1e6, (double)o->blocked_ns_d / 1e6,
			  (double)o->blocked_ns_r / 1e6, U(o->recorded),
			  (double)o->recorded_ns / 1e6, (double)o->held_ns / 1e6, (double)o->inflight_ns / 1e6, U(o->over_max),
			  (double)o->over_max_ns / 1e6, U(o->lost), (double)o->lost_ns / 1e6,
			  U(o->no_slot), U(o->unended), U(o->wakeups), U(o->wakeup_records), U(o->wakeup_lost), U(o->wake_remote), U(o->wake_late), (double)o->runq_ns / 1e6, U(o->user_preempt), U(o->ring_bytes), U(o->switch_run_ns),
			  U(o->switch_run_cnt), U(o->resume_run_ns), U(o->resume_run_cnt), U(o->wakeup_run_ns), U(o->wakeup_run_cnt),
			  U(pub.offcpu_sink.events), U(pub.offcpu_sink.quanta),
			  U(pub.offcpu_sink.wakeup_events), U(pub.offcpu_sink.wakeup_quanta),
			  U(pub.offcpu_sink.chain_nowaker), U(pub.offcpu_sink.chain_dropped));
	}
	{
		const struct proc_tracker_stats *t = &pub.procs;

		sbuf_addf(j,
			  "\"processes\": {\"procmap_query\": %s, \"procs\": %llu, "
			  "\"mappings\": %llu, \"mem_bytes\": %llu, \"reads\": %llu, "
			  "\"query_reads\": %llu, \"text_reads\": %llu, \"query_ioctls\": %llu, "
			  "\"read_errors\": %llu, \"reused\": %llu, \"stale_used\": %llu, "
			  "\"events\": %llu, \"execs\": %llu, \"execs_gone\": %llu, "
			  "\"forks\": %llu, \"forks_gone\": %llu, \"fork_copies\": %llu, "
			  "\"fork_lists\": %llu, "
			  "\"exits\": %llu, \"swept\": %llu, \"not_kept\": %llu}, ",
			  t->procmap_query ? "true" : "false", U(t->procs), U(t->mappings),
			  U(t->mem_bytes), U(t->reads), U(t->query_reads), U(t->text_reads),
			  U(t->query_ioctls), U(t->read_errors), U(t->reused), U(t->stale_used),
			  U(t->events), U(t->execs), U(t->execs_gone), U(t->forks),
			  U(t->forks_gone), U(t->fork_copies), U(t->fork_lists), U(t->exits), U(t->swept),
			  U(t->not_kept));
	}
	if (pub.have_python) {
		const struct python_stats *p = &pub.python;

		sbuf_addf(
		    j,
		    "\"python\": {\"procs\": %llu, \"procs_unsupported\": %llu, "
		    "\"procs_dropped\": %llu, \"procs_swept\": %llu, \"detections\": %llu, "
		    "\"detect_errors\": %llu, "
		    "\"detect_ms\": %.1f, \"samples\": %llu, \"samples_unsupported\": %llu, "
		    "\"frames\": %llu, "
		    "\"frames_unknown\": %llu, \"names\": %llu, \"code_reads\": %llu, "
		    "\"codes\": %llu, \"code_evictions\": %llu, \"merged\": %llu, "
		    "\"merged_aligned\": %llu, \"lines_unknown\": %llu, \"fsbase_off\": %lld, "
		    "\"fsbase_ms\": %.1f, \"walks\": %llu, \"no_thread\": %llu, "
		    "\"walk_frames\": %llu, \"truncated\": %llu, \"bad_frames\": %llu, "
		    "\"searches\": %llu, \"search_steps\": %llu, \"name_records\": %llu, "
		    "\"name_drops\": %llu, \"walk_ms\": %.1f, \"merge_ms\": %.1f, "
		    "\"names_ms\": %.1f, \"walk_p50_us\": %.2f, \"walk_p90_us\": %.2f, "
		    "\"walk_p99_us\": %.2f}, ",
		    U(p->procs), U(p->procs_unsupported), U(p->procs_dropped), U(p->procs_swept),
		    U(p->detections),
		    U(p->detect_errors), (double)p->detect_ns / 1e6, U(p->samples),
		    U(p->samples_unsupported), U(p->frames), U(p->frames_unknown), U(p->names),
		    U(p->code_reads), U(p->codes), U(p->code_evictions), U(p->merged),
		    U(p->merged_aligned), U(p->lines_unknown), (long long)p->fsbase_off,
		    (double)p->fsbase_ns / 1e6, U(p->bpf.walks), U(p->bpf.no_thread),
		    U(p->bpf.frames), U(p->bpf.truncated), U(p->bpf.bad_frames), U(p->bpf.searches),
		    U(p->bpf.search_steps), U(p->bpf.names), U(p->bpf.name_drops),
		    (double)p->bpf.walk_ns / 1e6, (double)p->merge_ns / 1e6,
		    (double)p->names_ns / 1e6, (double)p->walk_p50_ns / 1e3,
		    (double)p->walk_p90_ns / 1e3, (double)p->walk_p99_ns / 1e3);
	}
}

int emberd_http_setup(const struct ember_config *cfg, const struct security_files *sec,
		      struct store *store, char **files, int nfiles, struct http_server **ret_srv,
		      struct recording **ret_rec)
{
	struct http_config hc;
	struct http_server *srv = NULL;
	struct recording *rec = NULL;
	struct replay_stats st = { 0 };
	char err[512];
	int i, r;

	http_config_init(&hc);
	snprintf(hc.listen, sizeof(hc.listen), "%s", cfg->listen);
	hc.max_connections = (unsigned int)cfg->http_max_connections;
	hc.threads = (unsigned int)cfg->http_threads;
	hc.max_range_s = cfg->http_max_range_s;
	hc.max_response_bytes = cfg->http_max_response_bytes;
	hc.max_captures = (unsigned int)cfg->http_max_captures;
	hc.max_capture_bytes = cfg->http_capture_memory_bytes;
	hc.max_capture_s = cfg->http_max_capture_s;
	hc.timeout_s = (unsigned int)cfg->http_timeout_s;
	hc.max_body_bytes = cfg->http_max_body_bytes;
	hc.max_request_bytes = cfg->http_max_request_bytes;
	hc.max_connections_per_ip = (unsigned int)cfg->http_max_connections_per_ip;
	hc.reserved_connections = (unsigned int)cfg->http_reserved_connections;
	hc.request_timeout_s = (unsigned int)cfg->http_request_timeout_s;
	hc.render_threads = (unsigned int)cfg->http_render_threads;
	hc.render_queue = (unsigned int)cfg->http_render_queue;
	hc.response_memory_bytes = cfg->http_response_memory_bytes;
	hc.tls_cert_pem = sec->tls_cert_pem; /* security.c read them */
	hc.tls_key_pem = sec->tls_key_pem;
	if (nfiles > 0) {
		rec = recording__new(cfg->memory_limit_bytes);
		if (!rec)
			return log_errno(-ENOMEM, "cannot allocate the replay recording");
		for (i = 0; i < nfiles; i++) {
			r = replay_load_file(rec, files[i], &st, err, sizeof(err));
			if (r) {
				log_error("replay: %s", err);
				goto fail;
			}
		}
		(void)recording__freeze(rec);
		log_info("replay: %lu file(s), %llu samples, %zu unique stacks%s", st.files,
			 st.samples, recording__nr_stacks(rec), st.skipped ? "" : "");
		if (st.skipped)
			log_warn("replay: %llu malformed line(s) skipped", st.skipped);
		if (st.no_time)
			log_warn("replay: %llu record(s) without a time skipped (perf script -F time)",
				 st.no_time);
		if (!recording__nr_samples(rec))
			log_warn("replay: no samples loaded");
		store = NULL;
	} else if (!store) {
		log_warn("http: no store to serve yet: HTTP server not started");
		return 0;
	}
	srv = http_server__new(&hc, store, rec);
	if (!srv) {
		r = log_errno(-errno, "cannot create the HTTP server");
		goto fail;
	}
	r = http_server__set_token(srv, sec->token);
	if (r) {
		log_errno(r, "cannot set the bearer token");
		goto fail;
	}
	if (!rec)
		http_server__set_stats_hook(srv, stats_hook, srv);
	r = http_export__register(srv, cfg->frequency_hz); /* /debug/pprof/profile, /metrics */
	if (r) {
		log_errno(r, "cannot add the export endpoints");
		goto fail;
	}
	r = http_server__start(srv);
	if (r) {
		log_errno(r, "cannot listen on '%s'", hc.listen);
		goto fail;
	}
	log_info("http: listening on %s (port %u)%s", hc.listen, http_server__port(srv),
		 rec ? ", replaying" : "");
	*ret_srv = srv;
	*ret_rec = rec;
	return 0;
fail:
	http_server__free(srv);
	recording__free(rec);
	return r;
}
