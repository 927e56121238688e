// SPDX-License-Identifier: MIT
/*
 * GET /api/v1/stats: the daemon's counters as JSON, from what main published (sampler,
 * symbolizer, ingest, unwinder, Python frames), the store, the server's own load and bounds, and
 * the captures'. A file of its own so that the data routes (http_api.c) and the captures
 * (http_capture.c, which serve their data through http_api.c) do not call each other.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/base/heap.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"
#include "ember/core/base/timeexpr.h"
#include "ember/daemon/http/http.h"
#include "ember/core/model/recording.h"
#include "ember/daemon/store/store.h"
#include "ember/core/base/clock.h"
#include "ember/core/base/counters.h"
#include "ember/daemon/service/liveness.h"
#include "ember/daemon/elf/filecache.h"
#include "http_internal.h"

#define NS 1000000000LL

static void http_load_json(struct http_server *srv, struct sbuf *sb);

/* Drops the ", " counters_json() leaves after the last member. */
static void trim_comma(struct sbuf *sb)
{
	if (sb->len >= 2 && sb->buf && !memcmp(sb->buf + sb->len - 2, ", ", 2)) {
		sb->len -= 2;
		sb->buf[sb->len] = '\0';
	}
}

static void json_time(struct sbuf *sb, const char *key, int64_t ns)
{
	char buf[40];

	sbuf_addf(sb, "\"%s\": %lld.%09lld, \"%s_rfc3339\": \"%s\", ", key,
		  (long long)(ns / NS), (long long)(ns % NS < 0 ? -(ns % NS) : ns % NS), key,
		  timeexpr_format_rfc3339(ns, buf, sizeof(buf)));
}

/* The parts of the heap, as their counters say, but the start's. Their sum. */
static uint64_t memory_parts(struct http_server *srv, uint64_t *part)
{
	struct http_published pub;
	struct http_load_stats l;
	struct store_stats st;
	uint64_t sum = 0;
	int i;

	memset(part, 0, HTTP_MEM__NR * sizeof(*part));
	if (srv->src.store) {
		store__stats(srv->src.store, &st);
		part[HTTP_MEM_STORE] = st.bytes;
	} else if (srv->src.rec) {
		part[HTTP_MEM_STORE] = recording__mem_bytes(srv->src.rec);
	}
	if (http_server__published(srv, &pub)) {
		part[HTTP_MEM_NAMES] = pub.names_bytes;
		part[HTTP_MEM_SYMBOLS] = pub.symbols.mem_bytes;
		/* the symbols' images are in the file cache too: counted once, as symbols */
		part[HTTP_MEM_FILE_CACHE] = pub.file_cache.bytes -
					    pub.file_cache.kind_bytes[FILECACHE_SYMBOLS];
		part[HTTP_MEM_PROCESSES] = pub.procs.mem_bytes;
		part[HTTP_MEM_STACK_CACHE] = pub.ingest.mem_bytes;
		part[HTTP_MEM_PYTHON] = pub.have_python ? pub.python.mem_bytes : 0;
		part[HTTP_MEM_V8] = pub.have_v8 ? pub.v8.mem_bytes : 0;
		part[HTTP_MEM_UNWIND] = pub.have_unwind ? pub.unwind.heap_bytes : 0;
		part[HTTP_MEM_OFFCPU] = pub.offcpu_sink.bytes;
		part[HTTP_MEM_MEMIO] = pub.memio_sink.bytes;
	}
	http_server__load_stats(srv, &l);
	part[HTTP_MEM_RESPONSES] = l.response_bytes;
	part[HTTP_MEM_RENDERS] = __atomic_load_n(&srv->render_bytes, __ATOMIC_RELAXED);
	part[HTTP_MEM_CAPTURES] = http_captures_bytes(srv);
	for (i = 0; i < HTTP_MEM__NR; i++)
		sum += part[i];
	return sum;
}

void http_server__memory_stats(struct http_server *s, struct http_memory_stats *ret)
{
	struct heap_stats heap;

	*ret = (struct http_memory_stats){ 0 };
	heap_stats(&heap);
	ret->heap_in_use = heap.in_use_bytes;
	ret->accounted = memory_parts(s, ret->parts);
	ret->parts[HTTP_MEM_START] = __atomic_load_n(&s->heap_start_bytes, __ATOMIC_RELAXED);
	ret->accounted += ret->parts[HTTP_MEM_START];
	ret->unaccounted = (int64_t)ret->heap_in_use - (int64_t)ret->accounted;
}

struct strtab *http_render_strtab(struct http_server *srv)
{
	struct strtab *st = strtab__new();

	if (st)
		strtab__charge_to(st, &srv->render_bytes);
	return st;
}

uint64_t http_server__memory_accounted(struct http_server *s)
{
	uint64_t part[HTTP_MEM__NR];

	return memory_parts(s, part);
}

void http_server__set_heap_start(struct http_server *s, uint64_t bytes)
{
	__atomic_store_n(&s->heap_start_bytes, bytes, __ATOMIC_RELAXED);
}

int http_handle_stats(struct http_server *srv, struct http_request *req,
		      struct http_response *resp)
{
	struct sbuf *sb = &resp->body;
	int64_t now = http_now_ns(), first, last;
	struct heap_stats heap;

	if (http_request__parse(req, NULL, 0, NULL, NULL, resp))
		return 0;
	resp->cache_control = "no-store";
	sbuf_addf(sb, "{\"mode\": \"%s\", ", http_server__is_replay(srv) ? "replay" : "live");
	sbuf_addf(sb, "\"uptime_s\": %.3f, ", (double)(now - srv->started_ns) / 1e9);
	json_time(sb, "now", req->now_ns);
	heap_stats(&heap);
	sbuf_adds(sb, "\"heap\": {");
	counters_json(sb, heap_counters, heap_counters_n, &heap);
	trim_comma(sb);
	sbuf_adds(sb, "}, ");
	if (!http_server__is_replay(srv)) {
		struct http_memory_stats ms;

		http_server__memory_stats(srv, &ms);
		sbuf_adds(sb, "\"memory\": {");
		counters_json(sb, http_memory_counters, http_memory_counters_n, &ms);
		trim_comma(sb);
		sbuf_adds(sb, "}, ");
	}
	if (srv->src.rec) {
		sbuf_addf(sb, "\"store\": {\"samples\": %zu, \"stacks\": %zu, \"total\": %.17g, "
			      "\"bytes\": %zu",
			  recording__nr_samples(srv->src.rec), recording__nr_stacks(srv->src.rec),
			  recording__total(srv->src.rec), recording__mem_bytes(srv->src.rec));
	} else {
		struct store_stats st;

		store__stats(srv->src.store, &st);
		sbuf_adds(sb, "\"store\": {");
		counters_json(sb, store_counters, store_counters_n, &st);
		trim_comma(sb);
		if (st.samples)
			sbuf_addf(sb, ", \"retained_s\": %.3f",
				  (double)(st.newest_ns - st.oldest_ns) / 1e9);
		/* how far back the history reaches, and what it lost to get there */
		sbuf_addf(sb, ", \"evicted\": %llu",
			  (unsigned long long)(st.evicted_time + st.evicted_memory));
	}
	if (!http_source_bounds(&srv->src, &first, &last)) {
		sbuf_adds(sb, ", ");
		json_time(sb, "oldest", first);
		json_time(sb, "newest", last);
		sb->len -= 2; /* the trailing ", " */
		sb->buf[sb->len] = '\0';
	}
	sbuf_adds(sb, "}, ");
	http_captures_stats(srv, sb);
	if (srv->live) {
		struct liveness_state ls;

		liveness_check(srv->live, mono_ns(), &ls);
		sbuf_adds(sb, "\"liveness\": {");
		counters_json(sb, liveness_counters, liveness_counters_n, &ls);
		trim_comma(sb);
		sbuf_adds(sb, "}, ");
	}
	if (srv->stats_fn)
		srv->stats_fn(sb, srv->stats_ctx);
	sbuf_addf(sb,
		  "\"http\": {\"requests\": %llu, \"responses_2xx\": %llu, \"responses_4xx\": "
		  "%llu, \"responses_5xx\": %llu, \"bytes_out\": %llu, \"gzipped\": %llu, "
		  "\"cache_hits\": %llu, \"cache_misses\": %llu, "
		  "\"max_connections\": %u, \"threads\": %u, ",
		  (unsigned long long)srv->requests, (unsigned long long)srv->responses_2xx,
		  (unsigned long long)srv->responses_4xx, (unsigned long long)srv->responses_5xx,
		  (unsigned long long)srv->bytes_out, (unsigned long long)srv->gzipped,
		  (unsigned long long)srv->cache_hits, (unsigned long long)srv->cache_misses,
		  srv->cfg.max_connections, srv->cfg.threads);
	http_load_json(srv, sb);
	sbuf_adds(sb, "}}\n");
	return 0;
}

/* The bounds at work (docs/security.md): connections, renders, response memory, the 503s. */
static void http_load_json(struct http_server *srv, struct sbuf *sb)
{
	struct http_load_stats l;

	http_server__load_stats(srv, &l);
	counters_json(sb, http_load_counters, http_load_counters_n, &l);
	sbuf_addf(sb,
		  "\"cache_bytes\": %llu, \"limits\": {\"max_connections_per_ip\": %u, "
		  "\"reserved_connections\": %u, \"request_timeout_s\": %u, "
		  "\"render_threads\": %u, \"render_queue\": %u}",
		  (unsigned long long)http_cache_bytes(srv), srv->cfg.max_connections_per_ip,
		  srv->cfg.reserved_connections, srv->cfg.request_timeout_s,
		  srv->cfg.render_threads, srv->cfg.render_queue);
}
