// SPDX-License-Identifier: MIT
/* http_export: /debug/pprof/profile (pprof) and /metrics (Prometheus) for emberd. */
#include "ember/daemon/http/http_export.h"

#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ember/daemon/http/http.h"
#include "ember/core/base/heap.h"
#include "ember/core/base/clock.h"
#include "ember/core/base/log.h"
#include "ember/daemon/http/metrics.h"
#include "ember/core/formats/pprof.h"
#include "ember/core/model/profile.h"
#include "ember/daemon/sample/sampler.h"
#include "ember/daemon/ingest/ingest.h"
#include "ember/daemon/store/store.h"
#include "ember/core/base/strtab.h"
#include "ember/daemon/symbols/symbolizer.h"
#include "ember/core/base/version.h"
#include "ember/daemon/service/liveness.h"
#include "ember/daemon/export/identity.h"
#include "ember/daemon/proc/proctrack.h"
#include "ember/daemon/unwind/unwind.h"
#include "http_internal.h"

/* The exporter of one server: the routes' ctx, owned by the server once registered. */
struct http_export {
	struct metrics *m;
	uint64_t freq_hz;
	atomic_int waiters;
};

/* Latency buckets: from a cached /metrics (sub-ms) to a blocking 60 s capture. */
static const double latency_buckets[] = { 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
					  0.25,	 0.5,	 1,	2.5,  5,    10,	  30,	60 };

static const struct family_def {
	const char *name;
	enum metric_type type;
	const char *help;
} families[] = {
	{ "ember_build_info", METRIC_GAUGE, "emberd's version (the value is always 1)." },
	{ "ember_cpu_samples_total", METRIC_COUNTER,
	  "Samples stored, by CPU (\"unknown\": delivered without a time record)." },
	{ "ember_mapped_files_opened_total", METRIC_COUNTER,
	  "Files profiled processes map, opened by the one safe way, by route" },
	{ "ember_mapped_files_refused_total", METRIC_COUNTER,
	  "Files profiled processes map, refused by reason (symlink, not regular, another inode...)" },
	{ "ember_store_oldest_sample_timestamp_seconds", METRIC_GAUGE,
	  "Unix time of the oldest sample held." },
	{ "ember_http_requests_total", METRIC_COUNTER, "HTTP requests, by endpoint and status." },
	{ "ember_http_response_bytes_total", METRIC_COUNTER,
	  "HTTP response body bytes sent (responses taken to the end)." },
};

struct metrics *ember_metrics__new(void)
{
	struct metrics *m = metrics__new();
	const char *const version[] = { "version", EMBER_VERSION, NULL };
	const struct {
		const struct counter_desc *d;
		size_t n;
	} tables[] = { { sampler_counters, sampler_counters_n },
		       { store_counters, store_counters_n },
		       { unwind_counters, unwind_counters_n },
		       { proc_tracker_counters, proc_tracker_counters_n },
		       { filecache_counters, filecache_counters_n },
		       { python_counters, python_counters_n },
		       { v8_counters, v8_counters_n },
		       { hotspot_counters, hotspot_counters_n },
		       { symbolizer_counters, symbolizer_counters_n },
		       { symbolizer_debuginfod_counters, symbolizer_debuginfod_counters_n },
		       { exporter_counters, exporter_counters_n },
		       { heap_counters, heap_counters_n },
		       { http_load_counters, http_load_counters_n },
		       { http_memory_counters, http_memory_counters_n },
		       { liveness_counters, liveness_counters_n },
		       { sampler_memio_counters, sampler_memio_counters_n },
		       { memio_sink_counters, memio_sink_counters_n } };
	size_t i;
	int f;

	if (!m)
		return NULL;
	for (i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		if (metrics__family(m, families[i].name, families[i].type, families[i].help, NULL,
				    0) < 0)
			goto fail;
	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (metrics__declare_counters(m, tables[i].d, tables[i].n) < 0)
			goto fail;
	f = metrics__family(m, "ember_http_request_duration_seconds", METRIC_HISTOGRAM,
			    "HTTP request latency, by endpoint.", latency_buckets,
			    sizeof(latency_buckets) / sizeof(latency_buckets[0]));
	if (f < 0)
		goto fail;
	f = metrics__family(m, "ember_build_info", METRIC_GAUGE, "", NULL, 0);
	if (f < 0 || metrics__set(m, f, version, 1) < 0)
		goto fail;
	return m;
fail:
	metrics__free(m);
	errno = ENOMEM;
	return NULL;
}

/* The id of a declared family (declaring is idempotent); -errno if it was never declared. */
static int fam(struct metrics *m, const char *name, enum metric_type type)
{
	return metrics__family(m, name, type, "", NULL, 0);
}

static void set1(struct metrics *m, const char *name, enum metric_type type, const char *k,
		 const char *v, double value)
{
	const char *const labels[] = { k, v, NULL };
	int f = fam(m, name, type);

	if (f >= 0)
		(void)metrics__set(m, f, k ? labels : NULL, value);
}

void ember_metrics_store(struct metrics *m, const struct store_stats *st)
{
	metrics__set_counters(m, store_counters, store_counters_n, st, NULL);
	if (st->oldest_ns)
		set1(m, "ember_store_oldest_sample_timestamp_seconds", METRIC_GAUGE, NULL, NULL,
		     (double)st->oldest_ns / 1e9);
}

void ember_metrics_procs(struct metrics *m, const struct proc_tracker_stats *st)
{
	metrics__set_counters(m, proc_tracker_counters, proc_tracker_counters_n, st, NULL);
}

void ember_metrics_unwind(struct metrics *m, const struct unwind_stats *st)
{
	metrics__set_counters(m, unwind_counters, unwind_counters_n, st, NULL);
}

/* The exporters' counters: ember_export_*{exporter="otlp"|"pyroscope"}. */
static void ember_metrics_export(struct metrics *m, const struct exporter_stats *st)
{
	int k;

	for (k = 0; k < EXPORTER_KINDS; k++) {
		const char *const l[] = { "exporter", exporter_kind_names[k], NULL };

		if (st[k].enabled)
			metrics__set_counters(m, exporter_counters, exporter_counters_n, &st[k], l);
	}
}

void ember_metrics_python(struct metrics *m, const struct python_stats *st)
{
	metrics__set_counters(m, python_counters, python_counters_n, st, NULL);
}

static void ember_metrics_mapfiles(struct metrics *m, const struct mapfile_stats *f)
{
	int i;

	set1(m, "ember_mapped_files_opened_total", METRIC_COUNTER, "via", "map_files",
	     (double)f->via_map_files);
	set1(m, "ember_mapped_files_opened_total", METRIC_COUNTER, "via", "root",
	     (double)f->via_root);
	set1(m, "ember_mapped_files_opened_total", METRIC_COUNTER, "via", "exec_path",
	     (double)f->via_exec_path);
	for (i = 0; i < MAPFILE__NR; i++)
		set1(m, "ember_mapped_files_refused_total", METRIC_COUNTER, "reason",
		     mapfile_refusal_name(i), (double)f->refused[i]);
}

void ember_metrics_symbolizer(struct metrics *m, const struct symbolizer_stats *st)
{
	metrics__set_counters(m, symbolizer_counters, symbolizer_counters_n, st, NULL);
	if (st->debuginfod)
		metrics__set_counters(m, symbolizer_debuginfod_counters,
				      symbolizer_debuginfod_counters_n, st, NULL);
}

void ember_metrics_sampler(struct metrics *m, const struct sampler_stats *st)
{
	metrics__set_counters(m, sampler_counters, sampler_counters_n, st, NULL);
}

/* Copies the store's per-CPU tallies into the registry (at scrape time). */
static void collect_cpu_samples(struct metrics *m, struct store *store)
{
	uint64_t counts[STORE_MAX_CPUS], unknown;
	size_t n = store__cpu_samples(store, counts, STORE_MAX_CPUS, &unknown), cpu;
	char c[16];

	if (n > STORE_MAX_CPUS)
		n = STORE_MAX_CPUS;
	for (cpu = 0; cpu < n; cpu++) {
		snprintf(c, sizeof(c), "%zu", cpu);
		set1(m, "ember_cpu_samples_total", METRIC_COUNTER, "cpu", c, (double)counts[cpu]);
	}
	if (unknown)
		set1(m, "ember_cpu_samples_total", METRIC_COUNTER, "cpu", "unknown",
		     (double)unknown);
}

/* The bounds of the HTTP server at work (http.h: struct http_load_stats). */
static void collect_http_load(struct metrics *m, struct http_server *srv)
{
	struct http_load_stats l;

	http_server__load_stats(srv, &l);
	metrics__set_counters(m, http_load_counters, http_load_counters_n, &l, NULL);
}

/* The server's observer: per response, the request counters and the latency histogram. */
static void observe(void *ctx, const char *route, int status, double seconds)
{
	struct http_export *x = ctx;
	struct metrics *m = x->m;
	char st[8];
	int f;

	snprintf(st, sizeof(st), "%d", status);
	f = fam(m, "ember_http_requests_total", METRIC_COUNTER);
	if (f >= 0) {
		const char *const labels[] = { "endpoint", route, "status", st, NULL };

		(void)metrics__add(m, f, labels, 1);
	}
	f = metrics__family(m, "ember_http_request_duration_seconds", METRIC_HISTOGRAM, "",
			    latency_buckets, sizeof(latency_buckets) / sizeof(latency_buckets[0]));
	if (f >= 0) {
		const char *const labels[] = { "endpoint", route, NULL };

		(void)metrics__observe(m, f, labels, seconds < 0 ? 0 : seconds);
	}
}

/* ------------------------------------------------------------------------------------------ */
/* GET /debug/pprof/profile */

struct pprof_params {
	uint64_t seconds;	/* 0: not given */
	bool wait;
	bool label_pid, label_tid;	/* labels=pid,tid: per sample (live store only) */
};

static int pprof_param(const char *key, const char *value, void *ctx, struct query_error *err)
{
	struct pprof_params *pp = ctx;
	char *end;
	unsigned long long v;

	if (!strcmp(key, "seconds")) {
		errno = 0;
		v = strtoull(value, &end, 10);
		if (errno || end == value || *end || value[0] == '-' || v == 0) {
			snprintf(err->param, sizeof(err->param), "%s", key);
			err->reason = "seconds must be a whole number of seconds >= 1";
			err->status = 400;
			return -EINVAL;
		}
		pp->seconds = v;
		return 1;
	}
	if (!strcmp(key, "labels")) {
		const char *t = value;

		pp->label_pid = pp->label_tid = false;
		while (*t) {
			size_t n = strcspn(t, ",");

			if (n == 3 && !strncmp(t, "pid", 3)) {
				pp->label_pid = true;
			} else if (n == 3 && !strncmp(t, "tid", 3)) {
				pp->label_tid = true;
			} else if (n != 0) {
				snprintf(err->param, sizeof(err->param), "%s", key);
				err->reason = "labels takes a comma-separated list of pid, tid";
				err->status = 400;
				return -EINVAL;
			}
			t += n + (t[n] == ',');
		}
		return 1;
	}
	if (!strcmp(key, "wait")) {
		if (strcmp(value, "0") && strcmp(value, "1")) {
			snprintf(err->param, sizeof(err->param), "%s", key);
			err->reason = "wait must be 0 or 1";
			err->status = 400;
			return -EINVAL;
		}
		pp->wait = value[0] == '1';
		return 1;
	}
	return 0;
}

/* A blocking capture (wait=1) between its two calls: the window, and its place in the count. */
struct pprof_wait {
	struct http_export *x;
	int64_t from_ns, to_ns;
};

static void pprof_wait_free(void *p)
{
	struct pprof_wait *pw = p;

	if (pw)
		atomic_fetch_sub(&pw->x->waiters, 1);
	free(pw);
}

/* Most samples a per-sample-labels request walks (under the store's lock). */
#define EXPORT_MAX_LABELLED_SAMPLES (2u << 20)

struct labelled_ctx {
	struct pprof_writer *w;
	const struct pprof_params *pp;
	const struct query_common *q;
	size_t seen;
	int err;
};

/* Under the store's lock: only copies into the writer. */
static int labelled_sample(const struct store_sample_view *v, void *ctx)
{
	struct labelled_ctx *c = ctx;
	struct pprof_labels lb = { .pid = c->pp->label_pid ? (int64_t)v->pid : -1,
				   .tid = c->pp->label_tid ? (int64_t)v->tid : -1,
				   .comm = v->comm };
	int pass = http_frames_pass(c->q, v->frames, v->nr_frames); /* focus=, ignore= */

	if (pass <= 0) {
		c->err = pass;
		return pass < 0;
	}
	if (++c->seen > EXPORT_MAX_LABELLED_SAMPLES) {
		c->err = -E2BIG;
		return 1;
	}
	c->err = pprof_writer__add(c->w, v->frames, v->nr_frames, 1, &lb);
	return c->err ? 1 : 0;
}

/* The store's samples of @q, each with its pid and/or tid label, into @w. 0 or -errno. */
static int add_labelled_samples(const struct http_source *src, const struct query_common *q,
				const struct pprof_params *pp, struct pprof_writer *w)
{
	struct store_filter f = STORE_FILTER_INIT;
	struct labelled_ctx c = { .w = w, .pp = pp, .q = q };
	struct identity_filter idf;
	struct store *store = http_source_store(src, q);
	int r;

	/* the same filter as /api/v1/folded's (http_api.c) */
	if (q->to_ns <= 0 || q->to_ns <= q->from_ns)
		return 0;
	f.from_ns = q->from_ns > 0 ? (uint64_t)q->from_ns : 1;
	f.to_ns = (uint64_t)q->to_ns;
	f.pid = q->pid;
	f.tid = q->tid;
	f.comm_re = q->has_comm ? q->comm_re : NULL;
	f.kernel = q->kernel != QUERY_FLAG_OFF;
	f.user = q->user != QUERY_FLAG_OFF;
	f.include_idle = q->idle == QUERY_FLAG_ON;
	f.root = STORE_ROOT_COMM;
	http_identity_filter(src, q, &f, &idf);
	r = store__foreach_sample(store, &f, EXPORT_MAX_LABELLED_SAMPLES + 1, labelled_sample, &c);
	if (c.err)
		return c.err;
	return r < 0 ? r : 0;
}

static int handle_pprof(struct http_server *srv, struct http_request *req,
			struct http_response *resp)
{
	struct http_export *x = http_request__route_ctx(req);
	const struct http_config *cfg = http_server__config(srv);
	struct store *store = http_server__store(srv);
	struct pprof_params pp = { 0 };
	struct query_common q;
	struct strtab *st = NULL;
	struct profile *p = NULL;
	struct pprof_writer *w = NULL;
	int mi;
	const char **names = NULL;
	size_t cap = 0, i, k, depth;
	int64_t max_range_ns = (int64_t)cfg->max_range_s * 1000000000LL;
	struct pprof_wait *pw = http_request__state(req);
	int err = 0;

	query_common_init(&q);
	if (http_request__parse(req, &q, (int64_t)EXPORT_DEFAULT_SECONDS * 1000000000LL,
				pprof_param, &pp, resp) < 0)
		goto out; /* 400 already in resp */
	if (pw) {
		/* the call that wait=1 arranged: its window is over, or emberd is stopping and
		 * the profile is what there is until now */
		int64_t now = (int64_t)real_ns();

		q.from_ns = pw->from_ns;
		q.to_ns = now < pw->to_ns ? now : pw->to_ns;
		pp.wait = false;
		pp.seconds = 0;
	}
	if (pp.seconds && (q.has_from || q.has_to)) {
		http_response__error(resp, 400, "seconds", "give either seconds or from/to");
		goto out;
	}
	if (pp.seconds && pp.seconds > (uint64_t)max_range_ns / 1000000000ULL) {
		http_response__error(resp, 413, "seconds", "range exceeds the configured limit");
		goto out;
	}
	if (pp.wait) {
		if (http_server__is_replay(srv)) {
			http_response__error(resp, 400, "wait", "wait=1 needs a live daemon");
			goto out;
		}
		if (!pp.seconds)
			pp.seconds = EXPORT_DEFAULT_SECONDS;
		if (pp.seconds > cfg->max_capture_s) {
			http_response__error(resp, 413, "seconds",
					     "blocking capture longer than max_capture_s");
			goto out;
		}
		if (atomic_fetch_add(&x->waiters, 1) >= EXPORT_MAX_WAITERS) {
			atomic_fetch_sub(&x->waiters, 1);
			http_response__error(resp, 429, "wait",
					     "another blocking capture is running");
			goto out;
		}
		pw = malloc(sizeof(*pw));
		if (!pw) {
			atomic_fetch_sub(&x->waiters, 1);
			err = -ENOMEM;
			goto out;
		}
		pw->x = x;
		pw->from_ns = (int64_t)real_ns();
		pw->to_ns = pw->from_ns + (int64_t)pp.seconds * 1000000000LL;
		/* samples reach the store on the daemon's tick: one more second; no thread is
		 * held meanwhile, and a stop answers at once (the state is freed either way) */
		err =
		    http_request__call_again_at(req, pw->to_ns + 1000000000LL, pw, pprof_wait_free);
		goto out;
	} else if (pp.seconds) {
		q.to_ns = http_request__now_ns(req);
		q.from_ns = q.to_ns - (int64_t)pp.seconds * 1000000000LL;
	}
	/* off-CPU events count quanta of [offcpu] quantum_us, wall microseconds */
	/* memory and I/O events: their own type and unit, a count one quantum of it */
	mi = http_memio_index(&q);
	w = pprof_writer__new(&(struct pprof_opts){
	    .freq_hz = x->freq_hz,
	    .time_ns = q.from_ns,
	    .duration_ns = q.to_ns - q.from_ns,
	    .period_ns = mi >= 0		 ? srv->src.memio_quantum[mi]
			 : q.event == QUERY_EVENT_CPU	 ? 0
			 : q.event == QUERY_EVENT_WALL ? 1000
						       : srv->src.offcpu_us * 1000,
	    .sample_type = mi >= 0			? memio_sink_type((enum memio_store)mi)
			   : q.event == QUERY_EVENT_OFFCPU ? "off_cpu"
			   : q.event == QUERY_EVENT_WALL   ? "wall"
			   : q.event == QUERY_EVENT_WAKEUP ? "wakeup"
			   : q.event == QUERY_EVENT_CHAIN  ? "chain"
							   : NULL,
	    .unit = mi >= 0 ? memio_sink_unit((enum memio_store)mi) : NULL });
	if (!w) {
		err = -ENOMEM;
		goto out;
	}
	if (pp.label_pid || pp.label_tid) {
		if (q.event == QUERY_EVENT_WALL) {
			http_response__error(resp, 400, "labels",
					     "per-sample labels are not available with event=wall");
			goto out;
		}
		if (!store) {
			http_response__error(resp, 400, "labels",
					     "per-sample labels need a live daemon");
			goto out;
		}
		err = add_labelled_samples(&srv->src, &q, &pp, w);
		if (err == -E2BIG) {
			http_response__error(resp, 413, "labels",
					     "too many samples for per-sample labels; narrow the range");
			err = 0;
			goto out;
		}
		if (!err)
			err = pprof_writer__finish(w, &resp->body);
		if (err)
			goto out;
		goto done;
	}
	st = http_render_strtab(srv);
	p = st ? http_server__query_profile(srv, &q, st) : NULL;
	if (!p) {
		err = http_query_err(errno);
		goto out;
	}
	/* the root frame is the comm: a label too; pid and tid when the query selects one */
	for (i = 0; i < profile__nr_stacks(p) && !err; i++) {
		const uint32_t *f = profile__stack(p, i, &depth);
		struct pprof_labels lb = { .pid = q.pid, .tid = q.tid, .comm = NULL };

		if (profile__count(p, i) == 0)
			continue;
		if (depth + 1 > cap) {
			const char **nn = realloc(names, (depth + 1) * sizeof(*nn));

			if (!nn) {
				err = -ENOMEM;
				break;
			}
			names = nn;
			cap = depth + 1;
		}
		for (k = 0; k < depth; k++)
			names[k] = strtab__str(st, f[k]);
		if (depth)
			lb.comm = names[0];
		err = pprof_writer__add(w, names, depth, profile__count(p, i), &lb);
	}
	if (!err)
		err = pprof_writer__finish(w, &resp->body);
	if (err)
		goto out;
done:
	resp->content_type = "application/octet-stream";
	resp->cache_control = "no-store";
	resp->no_gzip = true; /* the profile is gzip-compressed already */
	snprintf(resp->disposition, sizeof(resp->disposition),
		 "attachment; filename=\"ember-%" PRId64 ".pb.gz\"", q.from_ns / 1000000000);
out:
	free(names);
	pprof_writer__free(w);
	profile__free(p);
	strtab__free(st);
	query_common_fini(&q);
	return err;
}

/* ------------------------------------------------------------------------------------------ */
/* GET /metrics */

static int handle_metrics(struct http_server *srv, struct http_request *req,
			  struct http_response *resp)
{
	struct http_export *x = http_request__route_ctx(req);
	struct store *store = http_server__store(srv);
	struct metrics *m = x->m;
	struct http_published pub;
	int err;

	if (http_request__parse(req, NULL, 0, NULL, NULL, resp) < 0)
		return 0;
	if (store) {
		struct store_stats st;

		store__stats(store, &st);
		ember_metrics_store(m, &st);
		collect_cpu_samples(m, store);
	}
	/* the main loop's counters, as last published (setting them is not done per tick) */
	if (http_server__published(srv, &pub)) {
		ember_metrics_sampler(m, &pub.sampler);
		ember_metrics_symbolizer(m, &pub.symbols);
		{
			struct mapfile_stats f = pub.symbols.files;

			if (pub.have_unwind)
				mapfile_stats_add(&f, &pub.unwind.files);
			if (pub.have_python)
				mapfile_stats_add(&f, &pub.python.files);
			if (pub.have_v8)
				mapfile_stats_add(&f, &pub.v8.files);
			if (pub.have_hotspot)
				mapfile_stats_add(&f, &pub.hotspot.files);
			ember_metrics_mapfiles(m, &f);
		}
		ember_metrics_procs(m, &pub.procs);
		metrics__set_counters(m, filecache_counters, filecache_counters_n,
				      &pub.file_cache, NULL);
		if (pub.have_unwind)
			ember_metrics_unwind(m, &pub.unwind);
		if (pub.have_python)
			ember_metrics_python(m, &pub.python);
		if (pub.have_v8)
			metrics__set_counters(m, v8_counters, v8_counters_n, &pub.v8, NULL);
		if (pub.have_hotspot)
			metrics__set_counters(m, hotspot_counters, hotspot_counters_n, &pub.hotspot,
					      NULL);
		if (pub.have_exporter)
			ember_metrics_export(m, pub.exporters);
		metrics__set_counters(m, sampler_memio_counters, sampler_memio_counters_n,
				      &pub.memio, NULL);
		if (pub.memio.attached)
			metrics__set_counters(m, memio_sink_counters, memio_sink_counters_n,
					      &pub.memio_sink, NULL);
	}
	{
		struct heap_stats h;

		heap_stats(&h);
		metrics__set_counters(m, heap_counters, heap_counters_n, &h, NULL);
	}
	if (!http_server__is_replay(srv)) {
		struct http_memory_stats ms;

		http_server__memory_stats(srv, &ms);
		metrics__set_counters(m, http_memory_counters, http_memory_counters_n, &ms, NULL);
	}
	if (http_server__liveness(srv)) {
		struct liveness_state ls;

		liveness_check(http_server__liveness(srv), mono_ns(), &ls);
		/* the ages: -1 for never (no drain, no sample yet) */
		metrics__set_counters(m, liveness_counters, liveness_counters_n, &ls, NULL);
	}
	set1(m, "ember_http_response_bytes_total", METRIC_COUNTER, NULL, NULL,
	     (double)http_server__bytes_out(srv));
	collect_http_load(m, srv);
	err = metrics__render(m, &resp->body);
	resp->content_type = METRICS_CONTENT_TYPE;
	resp->cache_control = "no-store";
	return err;
}

static void export_free(void *ctx)
{
	struct http_export *x = ctx;

	if (!x)
		return;
	metrics__free(x->m);
	free(x);
}

int http_export__register(struct http_server *srv, uint64_t freq_hz)
{
	struct http_route routes[] = {
		{ "GET", "/debug/pprof/profile", false, handle_pprof, NULL, false },
		{ "GET", "/metrics", false, handle_metrics, NULL,
		  true }, /* answers during a flood */
	};
	struct http_export *x = calloc(1, sizeof(*x));
	size_t i;
	int err;

	if (!x)
		return -ENOMEM;
	x->m = ember_metrics__new();
	if (!x->m) {
		free(x);
		return -ENOMEM;
	}
	x->freq_hz = freq_hz;
	atomic_store(&x->waiters, 0);
	err = http_server__own(srv, x, export_free);
	if (err) {
		export_free(x);
		return err;
	}
	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		routes[i].ctx = x;
		err = http_server__add_route(srv, &routes[i]);
		if (err)
			return err;
	}
	http_server__set_observer(srv, observe, x);
	return 0;
}
