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
#include "ember/core/base/counters.h"
#include "ember/daemon/proc/proctrack.h"
#include "ember/daemon/unwind/unwind.h"
#include "ember/daemon/store/offcpu_sink.h"

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
		     "\"via_root\": %llu, \"via_exec_path\": %llu, \"refused\": {", U(f.opened),
		  U(f.via_map_files), U(f.via_root), U(f.via_exec_path));
	for (i = 0; i < MAPFILE__NR; i++)
		sbuf_addf(j, "%s\"%s\": %llu", i ? ", " : "", mapfile_refusal_name(i),
			  U(f.refused[i]));
	sbuf_addf(j, "}}, ");
}

/* What would name the frames of a file that stayed unresolved, by reason. */
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
		return "JIT code in anonymous memory that no perf map names: Java: start it with "
		       "-XX:+PreserveFramePointer and run `jcmd PID Compiler.perfmap` while it "
		       "runs (again after warm-up; DumpPerfMapAtExit writes only at exit); node "
		       "--perf-basic-prof, python3 -X perf, DOTNET_PerfMapEnabled=1; keep "
		       "symbols.perf_maps on";
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

/* An object's end after its members (each followed by ", "): "}, ". */
static void json_close(struct sbuf *j)
{
	if (j->len >= 2 && !memcmp(j->buf + j->len - 2, ", ", 2))
		j->len -= 2; /* the last ", " */
	sbuf_adds(j, "}, ");
}

/* A table's counters (core/base/counters.h), then the object's end. */
static void json_counters(struct sbuf *j, const struct counter_desc *d, size_t n,
			  const void *stats)
{
	counters_json(j, d, n, stats);
	json_close(j);
}

static void stats_hook(struct sbuf *j, void *ctx)
{
	struct http_server *srv = ctx;
	struct http_published pub;
	const struct symbolizer_stats *y = &pub.symbols;
	double age;

	if (!http_server__published(srv, &pub))
		return;
	age = (double)(mono_ns() - http_server__published_at(srv)) / 1e9;
	/* age_s: the counters are the main loop's copy of its last tick */
	sbuf_addf(j, "\"sampler\": {\"age_s\": %.3f, ", age);
	json_counters(j, sampler_counters, sampler_counters_n, &pub.sampler);
	sbuf_adds(j, "\"symbols\": {");
	counters_json(j, symbolizer_counters, symbolizer_counters_n, y);
	unresolved_json(j, y);
	json_close(j);
	/* debuginfod (dbgfetch.h): null when DEBUGINFOD_URLS is unset or symbols.debuginfod off */
	if (y->debuginfod) {
		sbuf_adds(j, "\"debuginfod\": {");
		json_counters(j, symbolizer_debuginfod_counters, symbolizer_debuginfod_counters_n, y);
	} else {
		sbuf_addf(j, "\"debuginfod\": null, ");
	}
	files_json(j, &pub);
	/* the ingest's [filter] and the server's bearer check: samples excluded, requests refused
	 */
	sbuf_addf(j, "\"service\": {\"filtered_samples\": %llu, \"auth_failures\": %llu}, ",
		  U(pub.ingest.filtered), U(http_server__auth_failures(srv)));
	if (pub.have_exporter) {
		int k;

		sbuf_adds(j, "\"export\": {");
		for (k = 0; k < EXPORTER_KINDS; k++) {
			sbuf_addf(j, "\"%s\": {", exporter_kind_names[k]);
			json_counters(j, exporter_counters, exporter_counters_n, &pub.exporters[k]);
		}
		sbuf_adds(j, "\"identity\": {");
		json_counters(j, identity_counters, identity_counters_n, &pub.identity);
		json_close(j);
	}
	if (pub.have_unwind) {
		sbuf_adds(j, "\"unwind\": {");
		json_counters(j, unwind_counters, unwind_counters_n, &pub.unwind);
	}
	if (pub.offcpu.attached) {
		sbuf_adds(j, "\"offcpu\": {");
		counters_json(j, sampler_offcpu_counters, sampler_offcpu_counters_n, &pub.offcpu);
		json_counters(j, offcpu_sink_counters, offcpu_sink_counters_n, &pub.offcpu_sink);
	}
	if (pub.memio.attached || pub.memio.pmc) {
		sbuf_adds(j, "\"memio\": {");
		counters_json(j, sampler_memio_counters, sampler_memio_counters_n, &pub.memio);
		json_counters(j, memio_sink_counters, memio_sink_counters_n, &pub.memio_sink);
	}
	sbuf_adds(j, "\"processes\": {");
	json_counters(j, proc_tracker_counters, proc_tracker_counters_n, &pub.procs);
	/* mapped files' facts, read once and shared by processes (elf/filecache.h) */
	sbuf_adds(j, "\"file_cache\": {");
	json_counters(j, filecache_counters, filecache_counters_n, &pub.file_cache);
	if (pub.have_python) {
		sbuf_adds(j, "\"python\": {");
		json_counters(j, python_counters, python_counters_n, &pub.python);
	}
	if (pub.have_v8) {
		sbuf_adds(j, "\"v8\": {");
		json_counters(j, v8_counters, v8_counters_n, &pub.v8);
	}
	if (pub.have_hotspot) {
		sbuf_adds(j, "\"hotspot\": {");
		json_counters(j, hotspot_counters, hotspot_counters_n, &pub.hotspot);
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
