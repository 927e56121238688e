// SPDX-License-Identifier: MIT
/*
 * emberd: the always-on profiler daemon. main() parses the command line and the configuration,
 * creates every stage's object from it and connects them; pipeline/ runs them (drain.c: the
 * drain thread's epoll loop; worker.c: the worker's jobs; procevents.c: process events to their
 * stages). The HTTP server (libmicrohttpd) runs its own threads and reads the store.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ember/core/base/clock.h"
#include "ember/core/base/log.h"
#include "ember/core/base/strtab.h"
#include "ember/core/base/version.h"
#include "ember/core/base/workq.h"
#include "ember/core/model/recording.h"
#include "ember/daemon/elf/dbgfetch.h"
#include "ember/daemon/elf/elfsym.h"
#include "ember/daemon/elf/filecache.h"
#include "ember/daemon/export/export_config.h"
#include "ember/daemon/export/exporter.h"
#include "ember/daemon/export/identity.h"
#include "ember/daemon/http/http.h"
#include "ember/daemon/ingest/capture.h"
#include "ember/daemon/ingest/ingest.h"
#include "ember/daemon/ingest/replay.h"
#include "ember/daemon/pipeline/emberd.h"
#include "ember/daemon/proc/proctrack.h"
#include "ember/daemon/sample/sampler.h"
#include "ember/daemon/service/config.h"
#include "ember/daemon/service/liveness.h"
#include "ember/daemon/service/security.h"
#include "ember/daemon/service/service.h"
#include "ember/daemon/service/shutdown.h"
#include "ember/daemon/store/offcpu_sink.h"
#include "ember/daemon/store/store.h"
#include "ember/daemon/store/store_sink.h"
#include "ember/daemon/symbols/kresolve.h"
#include "ember/daemon/symbols/symbolizer.h"
#include "ember/daemon/unwind/python.h"
#include "ember/daemon/unwind/runtime.h"
#include "ember/daemon/unwind/hotspot.h"
#include "ember/daemon/unwind/v8.h"
#include "ember/daemon/unwind/unwind.h"

static int sampling_setup(struct emberd *d)
{
	struct sampler_opts so;
	struct symbolizer_opts yo;
	struct unwind_opts uo = UNWIND_OPTS_DEFAULT;
	struct sampler_stats st;
	char err[512];
	int r;

	sampler_opts_from_config(&d->cfg, &so);
	d->store = store__new(d->cfg.retention_s, d->cfg.memory_limit_bytes);
	if (!d->store)
		return log_errno(-errno, "cannot create the sample store");
	d->sym_st = strtab__new();
	if (!d->sym_st || strtab__set_limit(d->sym_st, d->cfg.max_names_bytes, "[name refused]"))
		return log_errno(-ENOMEM, "cannot create the symbol table");
	/* one process's share of it (proc/proctrack.h: charged per process, per generation) */
	strtab__set_share_limit(d->sym_st, d->cfg.max_names_bytes / 100 * d->cfg.max_names_share);
	symbolizer_opts_from_config(&d->cfg, &yo);
	uo.debug_dir = d->cfg.debug_dirs; /* the CFI of a debug file found by build-id too */
	/* debug files from the host's debuginfod servers (DEBUGINFOD_URLS, as perf and gdb read
	 * it), fetched on the worker into a folder searched as one more debug dir */
	d->fetch = dbgfetch__from_config(&d->cfg, d->debug_dirs, sizeof(d->debug_dirs));
	if (d->fetch) {
		yo.debug_dirs = uo.debug_dir = d->debug_dirs;
		yo.fetch = uo.fetch = d->fetch;
	}
	/* kernel frames through the kernel's own lookup; /proc/kallsyms where it cannot run */
	d->kres = kresolve__new(err, sizeof(err));
	if (d->kres) {
		yo.kernel_resolve = kresolve__resolve;
		yo.kernel_resolve_ctx = d->kres;
	} else {
		log_info("kernel symbols from /proc/kallsyms: %s", err);
	}
	/* one reader of the processes' mappings for the symbolizer, the unwinder and CPython's */
	d->procs = proc_tracker__new(&(struct proc_tracker_opts){
		.force_maps_read = !d->cfg.process_maps_query });
	if (!d->procs)
		return log_errno(-errno, "cannot create the process tracker");
	yo.procs = uo.procs = d->procs;
	/* one cache of what each mapped file says, for every reader of it ([files]) */
	d->files = filecache__new(&(struct filecache_opts){ .max_files = d->cfg.files_max,
							     .max_bytes = d->cfg.files_max_bytes });
	if (!d->files)
		return log_errno(-errno, "cannot create the file cache");
	yo.files = uo.files = d->files;
	/* the symbolizer's images, borrowed by the exporter's frameloc */
	d->share = elfshare__new();
	if (!d->share)
		return log_errno(-errno, "cannot create the shared images' registry");
	yo.share = d->share;
	if (d->cfg.export_otlp_endpoint[0] || d->cfg.export_pyroscope_url[0]) {
		/* the exporter borrows images a round behind the symbolizer: an image let go (its
		 * processes gone) is kept for two rounds, within 64 MiB, not parsed again */
		uint64_t ms = d->cfg.export_otlp_interval_ms > d->cfg.export_pyroscope_interval_ms
				      ? d->cfg.export_otlp_interval_ms
				      : d->cfg.export_pyroscope_interval_ms;

		elfshare__keep(d->share, (2 * ms + 10000) * 1000000ull, 64ull << 20);
	}
	d->sym = symbolizer__new(&yo, d->sym_st);
	if (!d->sym)
		return log_errno(-errno, "cannot create the symbolizer");
	d->ingest = ingest__new(d->sym, d->sym_st);
	if (!d->ingest)
		return log_errno(-errno, "cannot create the ingest");
	r = ingest__set_procs(d->ingest, d->procs);
	if (r)
		return log_errno(r, "cannot keep [filter]'s answers with the process tracker");
	if (ingest__set_filter(d->ingest, d->cfg.exclude_comms, d->cfg.exclude_cgroups))
		return log_errno(-EINVAL, "[filter] lists too long");
	d->sink = store_sink__new(d->store, d->sym_st);
	if (!d->sink)
		return log_errno(-errno, "cannot create the store's sink");
	r = offcpu_sink__from_config(&d->cfg, d->sym_st, &so.offcpu, &d->offcpu_sink, err,
				     sizeof(err));
	if (r)
		return log_errno(r, "[offcpu]: %s", err);
	if (d->cfg.pmc && sampler_pmc_probe(err, sizeof(err)) != 1) {
		log_warn("[pmc]: %s: off", err); /* event=cycles answers with the reason */
		d->cfg.pmc = false;
	}
	r = memio_sink__from_config(&d->cfg, d->sym_st, &so.memio, &d->memio_sink, err, sizeof(err));
	if (r)
		return log_errno(r, "%s", err);
	sampler_opts_probe(&so, d->pretend_no_loop);
	so.pretend_hs_refused = d->pretend_hs_refused;
	r = sampler__new(&so, &d->sampler, err, sizeof(err));
	if (r) {
		log_error("cannot start sampling: %s", err);
		return r;
	}
	if (so.unwind_rows) {
		uo.max_procs = (uint32_t)d->cfg.unwind_procs;
		uo.max_section_bytes = d->cfg.max_section_bytes;
		d->unwind = unwinder__new(d->sampler, &uo);
		if (!d->unwind)
			log_warn("user stacks by frame pointer only: cannot set up the unwind tables: "
				 "%s", strerror(errno));
		ingest__set_unwinder(d->ingest, d->unwind);
	}
	if (d->cfg.python && !so.fp_only) {
		struct python_opts po = PYTHON_OPTS_DEFAULT;

		po.lines = d->cfg.python_lines;
		po.max_procs = (uint32_t)d->cfg.python_procs;
		po.max_codes = (uint32_t)d->cfg.python_codes;
		po.max_code_bytes = d->cfg.python_code_memory_bytes;
		po.procs = d->procs;
		po.files = d->files;
		po.images = (struct elfsym_source){ symbolizer__image_get, d->sym };
		d->py = python__new(d->sampler, d->sym_st, &po);
		if (!d->py)
			log_warn("no Python frames: %s", strerror(errno));
		(void)ingest__add_runtime(d->ingest, &python_runtime_ops, d->py);
		sampler__set_pyname_fn(d->sampler, emberd_on_pyname, d);
	}
	if (d->cfg.v8 && !so.fp_only) {
		struct v8_opts vo = V8_OPTS_DEFAULT;

		vo.procs = d->procs;
		vo.files = d->files;
		vo.images = (struct elfsym_source){ symbolizer__image_get, d->sym };
		d->v8 = v8__new(d->sampler, d->sym_st, &vo);
		if (!d->v8)
			log_warn("no JavaScript frames: %s", strerror(errno));
		(void)ingest__add_runtime(d->ingest, &v8_runtime_ops, d->v8);
	}
	if (d->cfg.hotspot && !so.fp_only && !sampler__hs_walk_on(d->sampler))
		log_warn("no Java frames: the kernel refused the BPF program with the HotSpot step "
			 "(%s%s); everything else loaded without it",
			 strerror(-sampler__hs_walk_err(d->sampler)),
			 so.pretend_hs_refused ? " [EMBERD_PRETEND_HS_REFUSED]"
					       : ": the verifier's log is above");
	else if (d->cfg.hotspot && !so.fp_only) {
		struct hotspot_opts ho = HOTSPOT_OPTS_DEFAULT;

		ho.procs = d->procs;
		ho.files = d->files;
		ho.images = (struct elfsym_source){ symbolizer__image_get, d->sym };
		ho.lines = d->cfg.hotspot_lines;
		d->hs = hotspot__new(d->sampler, d->sym_st, &ho);
		if (!d->hs)
			log_warn("no Java frames: %s", strerror(errno));
		(void)ingest__add_runtime(d->ingest, &hotspot_runtime_ops, d->hs);
	}
	sampler__set_pid_fn(d->sampler, emberd_on_new_pid, d);
	sampler__set_exec_fn(d->sampler, emberd_on_exec, d);
	sampler__set_exit_fn(d->sampler, emberd_on_exit_pid, d);
	sampler__set_fork_fn(d->sampler, emberd_on_fork, d);
	r = emberd_watch_ring(d);
	if (r)
		return r;
	sampler__stats(d->sampler, &st);
	d->report.last = st;
	log_info("sampling %llu CPUs at %llu Hz with the %s event (BPF program id %u, %u "
		 "instructions verified; whole stacks through a %u KiB ring buffer)",
		 (unsigned long long)st.cpus_attached, (unsigned long long)d->cfg.frequency_hz,
		 st.hardware_event ? "cpu-cycles" : "cpu-clock", st.prog_id, st.prog_verified_insns,
		 st.ringbuf_bytes / 1024);
	return 0;
}

static void emberd_fini(struct emberd *d)
{
	workq__free(d->wq); /* first: the worker uses everything below */
	/* HTTP: stop the server here, before the store goes. */
	http_server__free(d->http);
	d->http = NULL;
	exporter__free(d->exporter); /* its thread reads the store */
	identity__free(d->identity);
	capture_mgr__free(d->captures); /* after the server: it uses the manager */
	recording__free(d->replay);
	free(d->replay_files);
	unwinder__free(d->unwind);
	python__free(d->py);
	v8__free(d->v8);
	hotspot__free(d->hs);
	ingest__free(d->ingest); /* its extension of the tracker's */
	sampler__free(d->sampler);
	symbolizer__free(d->sym);
	proc_tracker__free(d->procs);
	filecache__free(d->files); /* after its users */
	elfshare__free(d->share); /* after the symbolizer, the exporter and the file cache */
	dbgfetch__free(d->fetch); /* after its two users */
	kresolve__free(d->kres);
	store_sink__free(d->sink);
	offcpu_sink__free(d->offcpu_sink);
	memio_sink__free(d->memio_sink);
	strtab__free(d->sym_st);
	store__free(d->store);
	security_files_fini(&d->sec);
	if (d->epfd >= 0)
		close(d->epfd);
	if (d->tfd >= 0)
		close(d->tfd);
	if (d->sfd >= 0)
		close(d->sfd);
}

int main(int argc, char **argv)
{
	struct emberd d = { .epfd = -1, .tfd = -1, .sfd = -1, .rbfd = -1, .gfd = -1,
			    .wpub_lock = PTHREAD_MUTEX_INITIALIZER };
	char err[1024];
	int r;

	log_set_prog("emberd");
	ember_config_init(&d.cfg);
	/* --replay FILE...: serve recorded profiles; taken out before getopt sees it */
	d.nr_replay_files = replay_args_extract(&argc, argv, &d.replay_files);
	if (d.nr_replay_files < 0) {
		log_error("--replay needs at least one file (perf script text or ember-samples)");
		return 2;
	}
	r = ember_config_from_args(&d.cfg, argc, argv, stdout, err, sizeof(err));
	if (r > 0)
		return 0;
	if (r < 0) {
		log_error("%s", err);
		return 2;
	}
	log_set_level((enum log_level)d.cfg.log_level);
	if (d.cfg.check_config) { /* --check-config: files, token, policy; print; exit */
		r = service_check_config(&d.cfg);
		return r ? r : export_check_config(&d.cfg) ? 2 : 0;
	}
	if (export_check_config(&d.cfg))
		return 2;
	/* a listen address the policy refuses (non-loopback without TLS and a token) is a
	 * configuration error: exit 2, which the unit does not retry, before loading anything */
	if (security_check_listen(&d.cfg, err, sizeof(err))) {
		log_error("%s", err);
		return 2;
	}
	d.argc = argc; /* SIGHUP re-reads them */
	d.argv = argv;
	service_watchdog_init(&d.wd);
	sampler_log_libbpf();
	d.start_ns = mono_ns();
	liveness_init(&d.live, d.cfg.tick_ms * 1000000ULL, d.cfg.include_idle);
	d.pretend_no_loop = getenv("EMBERD_PRETEND_NO_BPF_LOOP") &&
			    !strcmp(getenv("EMBERD_PRETEND_NO_BPF_LOOP"), "1");
	d.pretend_hs_refused = getenv("EMBERD_PRETEND_HS_REFUSED") &&
			       !strcmp(getenv("EMBERD_PRETEND_HS_REFUSED"), "1");
	d.pause_path = getenv("EMBERD_TEST_PAUSE_DRAIN");
	if (d.pause_path && !d.pause_path[0])
		d.pause_path = NULL;

	r = emberd_loop_setup(&d);
	if (r)
		goto out;
	if (!d.nr_replay_files) {
		r = sampling_setup(&d);
		if (r)
			goto out;
	}
	/* HTTP: the listen policy, the token and TLS files, then the server on d.cfg.listen */
	r = security_files_load(&d.cfg, &d.sec);
	if (r)
		goto out;
	r = emberd_http_setup(&d.cfg, &d.sec, d.store, d.replay_files, d.nr_replay_files, &d.http,
			      &d.replay);
	if (r)
		goto out;
	if (d.sampler && d.http)
		http_server__set_liveness(d.http, &d.live);
	if (d.offcpu_sink && d.http)
		http_server__set_offcpu(d.http, d.offcpu_sink, d.cfg.offcpu_quantum_us,
					d.cfg.frequency_hz);
	if (d.memio_sink && d.http)
		http_server__set_memio(d.http, d.memio_sink);
	if (d.sampler && d.http) {
		char why[160] = "";

		/* detected at start (emberd_start turned [pmc] off without them) */
		if (sampler_pmc_probe(why, sizeof(why)) == 1)
			snprintf(why, sizeof(why), "hardware counters need [pmc] enabled");
		http_server__set_pmc(d.http, why);
	}
	if (d.sampler && d.http) { /* captures with a frequency or pid get their own sampler */
		d.captures = capture_mgr__new(&d.cfg, d.ingest, d.sym, d.sampler);
		if (d.captures)
			http_server__set_captures(d.http, d.captures);
		else
			log_warn("captures will use the live store only: out of memory");
	}
	r = export_from_config(&d.cfg, d.store, d.procs, d.share, &d.identity, &d.exporter);
	if (r)
		goto out;
	if (d.exporter && d.memio_sink) /* memory and I/O events pushed as OTLP too */
		exporter__set_memio(d.exporter, d.memio_sink);
	if (d.http)
		http_server__set_identity(d.http, d.identity);
	r = emberd_drop_privileges(&d.cfg); /* BPF attached, socket bound: keep what is needed */
	if (r)
		goto out;
	/* the worker after the drop: it inherits the capabilities this thread kept */
	r = d.sampler ? emberd_worker_start(&d) : 0;
	if (r)
		goto out;
	log_info("emberd %s started: %llu Hz, tick %llu ms; start-up took %.1f ms of CPU",
		 EMBER_VERSION, (unsigned long long)d.cfg.frequency_hz,
		 (unsigned long long)d.cfg.tick_ms, (double)clock_ns(CLOCK_PROCESS_CPUTIME_ID) / 1e6);
	service_notify_ready(d.sampler ? "sampling, serving HTTP" : "replaying, serving HTTP");
	service_watchdog_ping(&d.wd); /* the first ping now, not a tick later */
	r = emberd_run(&d);
	service_notify_stopping();
	if (!r && d.sampler)
		r = emberd_finish(&d);
out:
	liveness_busy(&d.live, "exit");
	emberd_fini(&d);
	shutdown_guard__free(d.guard); /* last: it covers the frees above */
	return r ? 1 : 0;
}
