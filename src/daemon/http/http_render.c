// SPDX-License-Identifier: MIT
/*
 * The render pool: every request of a route that is not cheap is rendered here, off MHD's
 * threads, so that a flood of expensive requests never delays /healthz or /metrics (measured:
 * 40 concurrent flame graphs kept /healthz away for 10 s when they rendered on MHD's two
 * threads). MHD suspends the connection (MHD_suspend_connection()) when the request is queued
 * and a worker resumes it with the answer.
 *
 * Bounds: http.render_threads renders at once, http.render_queue more waiting, then 503 with
 * Retry-After; the body's memory is charged as it grows (an sbuf watch: http_body.c), and past
 * http.response_memory the render fails with -ENOBUFS (503).
 *
 * A suspended connection is not watched by MHD, so a watcher thread polls the sockets of the
 * suspended requests for the peer's hang-up (POLLRDHUP): a queued request whose client has gone
 * is dropped, a running one stops at its next checkpoint (the body's watch fails with
 * -ECANCELED every 64 KiB appended; handlers check http_request__cancelled() between phases),
 * a waiting one is dropped. The watcher also moves the requests that wait for the clock
 * (http_request__call_again_at(): pprof's wait=1) to the queue when their time comes, and closes
 * connections past their deadlines (http_conn_reap()).
 *
 * Stopping (http_render_stop()): no new jobs, the waiting ones are answered at once with what
 * there is, the queued ones get 503, the running ones stop at their next checkpoint; then every
 * suspended connection has been resumed and MHD may stop.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <microhttpd.h>
#include <zlib.h>

#include "ember/core/base/clock.h"
#include "ember/core/base/log.h"
#include "ember/core/model/query.h"
#include "http_internal.h"

#define WATCH_PERIOD_MS 250
#define GZIP_MIN_BYTES	512	   /* gzip's header would eat the gain below this */
#define GZIP_CHUNK	(1u << 20) /* deflated per call: a cancellation check in between */

/* --- the set of suspended requests the watcher polls (jobs_lock) --------------------------- */

static void watch_add_locked(struct http_server *s, struct http_request *req)
{
	req->wprev = NULL;
	req->wnext = s->watched;
	if (s->watched)
		s->watched->wprev = req;
	s->watched = req;
	req->in_watch = true;
}

static void watch_del_locked(struct http_server *s, struct http_request *req)
{
	if (!req->in_watch)
		return;
	if (req->wprev)
		req->wprev->wnext = req->wnext;
	else
		s->watched = req->wnext;
	if (req->wnext)
		req->wnext->wprev = req->wprev;
	req->wprev = req->wnext = NULL;
	req->in_watch = false;
}

static void wake_watcher(struct http_server *s)
{
	uint64_t one = 1;

	if (s->wake_fd >= 0 && write(s->wake_fd, &one, sizeof(one)) < 0) {
		/* the counter is full: the watcher has a wakeup pending anyway */
	}
}

void http_render_resume(struct http_server *s, struct http_request *req)
{
	/* an answer while stopping (a waiting profile): counted before MHD's thread can see it,
	 * so that the stop waits for it to go out (on_completed() uncounts it) */
	if (req->answered && http_server__stopping(s)) {
		req->stop_answer = true;
		atomic_fetch_add(&s->in_flight, 1);
	}
	req->suspended = false;
	MHD_resume_connection(req->conn);
}

/* Without any lock: the request belongs to MHD again and may be freed at once. */
static void resume(struct http_request *req)
{
	http_render_resume(req->srv, req);
}

static void free_state(struct http_request *req)
{
	if (req->state_free)
		req->state_free(req->state);
	req->state = NULL;
	req->state_free = NULL;
}

/* Takes @req off the queue (singly linked, under jobs_lock). */
static void unqueue_locked(struct http_server *s, struct http_request *req)
{
	struct http_request **pp, *prev = NULL;

	for (pp = &s->queue_head; *pp; prev = *pp, pp = &(*pp)->next) {
		if (*pp != req)
			continue;
		*pp = req->next;
		if (s->queue_tail == req)
			s->queue_tail = prev;
		req->next = NULL;
		s->nr_queued--;
		return;
	}
}

static void undefer_locked(struct http_server *s, struct http_request *req)
{
	struct http_request **pp;

	for (pp = &s->deferred; *pp; pp = &(*pp)->next) {
		if (*pp != req)
			continue;
		*pp = req->next;
		req->next = NULL;
		s->nr_deferred--;
		return;
	}
}

static void enqueue_locked(struct http_server *s, struct http_request *req)
{
	req->next = NULL;
	req->phase = REQ_QUEUED;
	if (s->queue_tail)
		s->queue_tail->next = req;
	else
		s->queue_head = req;
	s->queue_tail = req;
	s->nr_queued++;
	pthread_cond_signal(&s->jobs_cond);
}

/* --- answers ------------------------------------------------------------------------------- */

bool http_accepts_gzip(struct MHD_Connection *conn)
{
	const char *ae =
	    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	const char *p;

	if (!ae)
		return false;
	for (p = ae; (p = strcasestr(p, "gzip")); p += 4) {
		const char *q = p + 4;

		if (p > ae && p[-1] != ' ' && p[-1] != ',')
			continue;
		while (*q == ' ')
			q++;
		/* "gzip;q=0" refuses it */
		if (*q == ';') {
			q++;
			while (*q == ' ')
				q++;
			if (!strncmp(q, "q=0", 3) &&
			    (q[3] == '\0' || q[3] == ',' || q[3] == ' ' ||
			     (q[3] == '.' && strspn(q + 4, "0") == strcspn(q + 4, ", "))))
				return false;
		}
		return true;
	}
	return false;
}

static bool compressible(const char *ct)
{
	return ct &&
	       (!strncmp(ct, "text/", 5) || !strncmp(ct, "application/json", 16) ||
		!strncmp(ct, "image/svg+xml", 13) || !strncmp(ct, "application/javascript", 22));
}

/*
 * Gzips @in into a new buffer charged to the response memory (*@ret_charged bytes). NULL when
 * the budget or memory is short, or the request was cancelled: the caller sends it plain.
 */
static char *gzip_buf(struct http_server *s, const struct http_request *req, const char *in,
		      size_t len, size_t *ret_len, size_t *ret_charged)
{
	z_stream zs = { 0 };
	size_t bound, off = 0;
	char *out, *shrunk;
	int zr = Z_OK;

	if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return NULL;
	bound = deflateBound(&zs, (uLong)len) + 32;
	if (!http_mem_charge(s, bound, false)) {
		deflateEnd(&zs);
		return NULL;
	}
	out = malloc(bound);
	if (!out)
		goto fail;
	zs.next_out = (Bytef *)out;
	zs.avail_out = (uInt)bound;
	while (zr == Z_OK) {
		size_t n = len - off < GZIP_CHUNK ? len - off : GZIP_CHUNK;

		if (http_request__cancelled(req))
			goto fail;
		zs.next_in = (Bytef *)in + off;
		zs.avail_in = (uInt)n;
		off += n;
		zr = deflate(&zs, off == len ? Z_FINISH : Z_NO_FLUSH);
		if (off == len && zr == Z_OK)
			goto fail; /* the bound was too small: cannot happen */
	}
	if (zr != Z_STREAM_END)
		goto fail;
	*ret_len = zs.total_out;
	deflateEnd(&zs);
	shrunk = realloc(out, *ret_len + 1);
	if (shrunk)
		out = shrunk;
	http_mem_uncharge(s, bound);
	http_mem_charge(s, *ret_len + 1, true);
	*ret_charged = *ret_len + 1;
	return out;
fail:
	deflateEnd(&zs);
	free(out);
	http_mem_uncharge(s, bound);
	return NULL;
}

void http_answer_error(struct http_server *s, struct http_answer *a, int status, const char *reason,
		       unsigned int retry_after_s)
{
	struct http_response r = { .body = SBUF_INIT };
	size_t len;
	char *data;

	http_response__error(&r, status, NULL, reason);
	data = sbuf_detach(&r.body, &len);
	*a = (struct http_answer){ .status = status,
				   .content_type = "application/json",
				   .cache_control = "no-store",
				   .retry_after_s = retry_after_s };
	if (data) {
		http_mem_charge(s, len + 1, true);
		a->body = http_body_new(s, data, len, len + 1);
	}
}

void http_render_finish(struct http_server *s, struct http_request *req, struct http_response *resp,
			int err, struct http_answer *ret)
{
	size_t len = 0, charged, zlen, zcharged;
	char *data, *z, *shrunk;
	bool gz = false;

	*ret = (struct http_answer){ 0 };
	sbuf_set_watch(&resp->body, NULL);
	if (!err)
		err = sbuf_error(&resp->body);
	if (atomic_load(&req->cancelled)) {
		/* the client has gone: nobody to answer */
		sbuf_fini(&resp->body);
		http_mem_uncharge(s, req->charged);
		req->charged = 0;
		s->renders_cancelled++;
		return;
	}
	if (err == -ECANCELED || (err && http_server__stopping(s) && !req->deferred_call)) {
		http_response__error(resp, 503, NULL, "emberd is stopping");
		resp->retry_after_s = 1;
		s->rejected_stopping++;
	} else if (err < 0) {
		log_debug("http: %s %s failed: %s", req->method, req->path, strerror(-err));
		switch (err) {
		case -ENOBUFS:
			http_response__error(resp, 503, NULL,
					     "the memory for responses is in use: retry later");
			resp->retry_after_s = 1;
			s->rejected_memory++;
			break;
		case -E2BIG:
			http_response__error(resp, 413, NULL,
					     "response exceeds the configured size limit");
			break;
		case -QUERY_ECOMM_LIMIT:
			http_response__error(resp, 400, "comm",
					     "the pattern reached its match limit: simplify it");
			break;
		case -QUERY_EFRAME_LIMIT:
			http_response__error(resp, 400, NULL,
					     "a focus, ignore or function pattern reached its match "
					     "limit on a frame: simplify it");
			break;
		case -ENOMEM:
			http_response__error(resp, 503, NULL, "out of memory");
			break;
		default:
			http_response__error(resp, 500, NULL, strerror(-err));
			break;
		}
	}
	if (resp->body.len > s->cfg.max_response_bytes)
		http_response__error(resp, 413, NULL, "response exceeds the configured size limit");
	/* what was charged while it grew becomes exactly what the body holds */
	data = sbuf_detach(&resp->body, &len);
	http_mem_uncharge(s, req->charged);
	req->charged = 0;
	if (!data) {
		http_answer_error(s, ret, 503, "out of memory", 0);
		return;
	}
	shrunk = realloc(data, len + 1);
	if (shrunk)
		data = shrunk;
	charged = len + 1;
	http_mem_charge(s, charged, true);
	if (!resp->no_gzip && len >= GZIP_MIN_BYTES && compressible(resp->content_type) &&
	    req->gzip_ok) {
		z = gzip_buf(s, req, data, len, &zlen, &zcharged);
		if (z) {
			free(data);
			http_mem_uncharge(s, charged);
			data = z;
			len = zlen;
			charged = zcharged;
			gz = true;
			s->gzipped++;
		}
	}
	*ret = (struct http_answer){ .status = resp->status,
				     .body = http_body_new(s, data, len, charged),
				     .gz = gz,
				     .content_type = resp->content_type,
				     .cache_control = resp->cache_control,
				     .retry_after_s = resp->retry_after_s };
	memcpy(ret->disposition, resp->disposition, sizeof(ret->disposition));
	memcpy(ret->location, resp->location, sizeof(ret->location));
	if (!ret->body) {
		http_answer_fini(ret);
		http_answer_error(s, ret, 503, "out of memory", 0);
	}
}

/* --- jobs ----------------------------------------------------------------------------------- */

bool http_request__cancelled(const struct http_request *req)
{
	return atomic_load(&req->cancelled) ||
	       (http_server__stopping(req->srv) && !req->deferred_call);
}

bool http_server__stopping(const struct http_server *s)
{
	return atomic_load(&s->stopping);
}

int http_request__call_again_at(struct http_request *req, int64_t until_ns, void *state,
				void (*free_fn)(void *))
{
	if (req->phase != REQ_RUNNING || req->deferred_call || req->defer_armed) {
		if (free_fn)
			free_fn(state);
		return -EBUSY;
	}
	req->defer_armed = true;
	req->defer_until_ns = until_ns;
	req->state = state;
	req->state_free = free_fn;
	return 0;
}

void *http_request__state(const struct http_request *req)
{
	return req->deferred_call ? req->state : NULL;
}

/*
 * resp.body's watch: the memory budget, the size limit and the client's presence. What is
 * charged is the content (in steps of BODY_CHARGE_STEP), not the capacity: the buffer doubles,
 * but the pages past the content are not touched (glibc grows large blocks with mremap) and
 * the body is trimmed to its content when done, so a 100 MB body needs 100 MB of the budget,
 * not 128 MiB.
 */
#define BODY_CHARGE_STEP (1u << 20)

static int body_watch(struct sbuf *sb, size_t need, size_t new_cap, void *ctx)
{
	struct http_request *req = ctx;
	struct http_server *s = req->srv;
	size_t more;

	(void)sb;
	(void)new_cap;
	if (http_request__cancelled(req))
		return -ECANCELED;
	/* bigger than the limit, or than all the memory for responses: it can never fit */
	if (need > s->cfg.max_response_bytes + 1 || need > s->cfg.response_memory_bytes)
		return -E2BIG;
	if (need > req->charged) {
		more = need - req->charged + BODY_CHARGE_STEP - 1;
		more -= more % BODY_CHARGE_STEP;
		if (!http_mem_charge(s, more, false))
			return -ENOBUFS;
		req->charged += more;
	}
	return 0;
}

/* Marks @req answered (or gone) and hands its connection back to MHD. */
static void done_and_resume(struct http_server *s, struct http_request *req)
{
	pthread_mutex_lock(&s->jobs_lock);
	if (req->phase == REQ_RUNNING)
		s->nr_running--;
	req->phase = REQ_DONE;
	watch_del_locked(s, req);
	pthread_mutex_unlock(&s->jobs_lock);
	resume(req);
}

/* The answer of a render: to the requests that waited for the same view, then to its own. */
static void complete(struct http_server *s, struct http_request *req, struct http_answer *ans)
{
	struct http_request *w, *wn;
	bool retry;

	if (req->cache_key) {
		w = http_cache_fill(s, req->cache_key, ans->status ? ans : NULL, true, &retry);
		free(req->cache_key);
		req->cache_key = NULL;
		for (; w; w = wn) {
			wn = w->next;
			w->next = NULL;
			if (retry) {
				w->retry = true;
			} else {
				http_answer_copy(&w->ans, ans);
				w->answered = true;
			}
			done_and_resume(s, w);
		}
	}
	req->ans = *ans; /* the reference moves */
	req->answered = ans->status != 0;
	done_and_resume(s, req);
}

static void run_job(struct http_server *s, struct http_request *req)
{
	struct http_response resp = { .status = 200,
				      .content_type = "application/json",
				      .body = SBUF_INIT };
	struct http_answer ans;
	int err;

	if (http_request__cancelled(req)) {
		err = -ECANCELED;
	} else {
		s->renders++;
		req->body_watch = (struct sbuf_watch){ .fn = body_watch, .ctx = req };
		sbuf_set_watch(&resp.body, &req->body_watch);
		req->defer_armed = false;
		err = req->rt->fn(s, req, &resp);
		if (req->defer_armed) {
			sbuf_set_watch(&resp.body, NULL);
			sbuf_fini(&resp.body);
			http_mem_uncharge(s, req->charged);
			req->charged = 0;
			pthread_mutex_lock(&s->jobs_lock);
			s->nr_running--;
			req->deferred_call = true; /* the next call is the one it asked for */
			if (s->pool_closed) {
				enqueue_locked(s, req); /* stopping: now, with what there is */
			} else {
				req->phase = REQ_DEFERRED;
				req->next = s->deferred;
				s->deferred = req;
				s->nr_deferred++;
			}
			pthread_mutex_unlock(&s->jobs_lock);
			wake_watcher(s);
			return;
		}
	}
	http_render_finish(s, req, &resp, err, &ans);
	sbuf_fini(&resp.body);
	if (req->deferred_call)
		free_state(req);
	complete(s, req, &ans);
}

static void *worker_main(void *arg)
{
	struct http_server *s = arg;
	struct http_request *req;

	for (;;) {
		pthread_mutex_lock(&s->jobs_lock);
		while (!s->queue_head && !s->pool_closed)
			pthread_cond_wait(&s->jobs_cond, &s->jobs_lock);
		req = s->queue_head;
		if (!req) { /* closed and empty */
			pthread_mutex_unlock(&s->jobs_lock);
			return NULL;
		}
		s->queue_head = req->next;
		if (!s->queue_head)
			s->queue_tail = NULL;
		req->next = NULL;
		s->nr_queued--;
		req->phase = REQ_RUNNING;
		s->nr_running++;
		pthread_mutex_unlock(&s->jobs_lock);
		run_job(s, req);
	}
}

bool http_render_submit(struct http_server *s, struct http_request *req, struct http_answer *ret)
{
	unsigned int cap = s->cfg.render_threads + s->cfg.render_queue;

	pthread_mutex_lock(&s->jobs_lock);
	if (s->pool_closed) {
		pthread_mutex_unlock(&s->jobs_lock);
		s->rejected_stopping++;
		http_answer_error(s, ret, 503, "emberd is stopping", 1);
		return false;
	}
	if (s->nr_queued + s->nr_running >= cap) {
		pthread_mutex_unlock(&s->jobs_lock);
		s->rejected_renders++;
		http_answer_error(s, ret, 503, "too many renders at once: retry later", 1);
		return false;
	}
	if (atomic_load(&s->resp_bytes) >= s->cfg.response_memory_bytes) {
		pthread_mutex_unlock(&s->jobs_lock);
		s->rejected_memory++;
		http_answer_error(s, ret, 503, "the memory for responses is in use: retry later",
				  1);
		return false;
	}
	req->id = ++s->next_req_id;
	req->suspended = true;
	/* suspended before a worker can see it (and resume it); MHD never calls us with its
	 * own locks held, so the order jobs_lock -> MHD's is the only one */
	MHD_suspend_connection(req->conn);
	enqueue_locked(s, req);
	watch_add_locked(s, req);
	pthread_mutex_unlock(&s->jobs_lock);
	wake_watcher(s);
	return true;
}

void http_render_wait(struct http_server *s, struct http_request *req)
{
	pthread_mutex_lock(&s->jobs_lock);
	req->id = ++s->next_req_id;
	req->phase = REQ_WAITING;
	req->suspended = true;
	MHD_suspend_connection(req->conn);
	watch_add_locked(s, req);
	pthread_mutex_unlock(&s->jobs_lock);
	wake_watcher(s);
}

/* --- the watcher ---------------------------------------------------------------------------- */

/*
 * The client of @req has gone (under jobs_lock): a request not yet running is taken off and put
 * on @resume to be resumed without an answer; a running one stops at its next checkpoint; one
 * waiting for another's render is handed back with the answer (MHD then finds the socket closed).
 */
static void gone_locked(struct http_server *s, struct http_request *req,
			struct http_request **resume_list)
{
	atomic_store(&req->cancelled, true);
	watch_del_locked(s, req);
	switch (req->phase) {
	case REQ_QUEUED:
		unqueue_locked(s, req);
		break;
	case REQ_DEFERRED:
		undefer_locked(s, req);
		break;
	default:
		return;
	}
	s->renders_cancelled++;
	req->phase = REQ_DONE;
	req->next = *resume_list;
	*resume_list = req;
}

struct watch_buf {
	struct pollfd *pfd;
	uint64_t *ids;
	size_t cap;
};

/* Under jobs_lock: the deferred requests due go to the queue; returns the poll timeout (ms). */
static int due_locked(struct http_server *s)
{
	struct http_request **pp, *req;
	int64_t now = http_now_ns(), left;
	int timeout = WATCH_PERIOD_MS;

	for (pp = &s->deferred; (req = *pp);) {
		left = req->defer_until_ns - now;
		if (left > 0 && !s->pool_closed) {
			if (left / 1000000 + 1 < timeout)
				timeout = (int)(left / 1000000 + 1);
			pp = &req->next;
			continue;
		}
		*pp = req->next;
		s->nr_deferred--;
		enqueue_locked(s, req);
	}
	return timeout;
}

static void *watcher_main(void *arg)
{
	struct http_server *s = arg;
	struct watch_buf wb = { 0 };
	struct http_request *req, *resume_list;
	size_t n, i;
	int timeout;
	bool stop;

	for (;;) {
		pthread_mutex_lock(&s->jobs_lock);
		stop = s->pool_closed && !s->nr_workers;
		timeout = due_locked(s);
		n = 1;
		for (req = s->watched; req; req = req->wnext) {
			if (n + 1 > wb.cap) {
				size_t c = wb.cap ? wb.cap * 2 : 64;
				struct pollfd *p = realloc(wb.pfd, c * sizeof(*p));
				uint64_t *ids = p ? realloc(wb.ids, c * sizeof(*ids)) : NULL;

				if (p)
					wb.pfd = p;
				if (!ids)
					break; /* the rest at the next round */
				wb.ids = ids;
				wb.cap = c;
			}
			wb.pfd[n] = (struct pollfd){ .fd = req->fd, .events = POLLRDHUP };
			wb.ids[n++] = req->id;
		}
		pthread_mutex_unlock(&s->jobs_lock);
		if (stop)
			break;
		if (!wb.pfd) {
			wb.pfd = calloc(64, sizeof(*wb.pfd));
			wb.ids = calloc(64, sizeof(*wb.ids));
			wb.cap = wb.pfd && wb.ids ? 64 : 0;
			if (!wb.cap) {
				(void)poll(NULL, 0, WATCH_PERIOD_MS);
				continue;
			}
		}
		wb.pfd[0] = (struct pollfd){ .fd = s->wake_fd, .events = POLLIN };
		if (poll(wb.pfd, n, timeout) > 0) {
			uint64_t v;

			if (wb.pfd[0].revents & POLLIN)
				(void)!read(s->wake_fd, &v, sizeof(v));
			resume_list = NULL;
			pthread_mutex_lock(&s->jobs_lock);
			for (i = 1; i < n; i++) {
				if (!(wb.pfd[i].revents & (POLLRDHUP | POLLHUP | POLLERR)))
					continue;
				/* still the same request? (it may have been answered meanwhile) */
				for (req = s->watched; req && req->id != wb.ids[i];
				     req = req->wnext)
					;
				if (req)
					gone_locked(s, req, &resume_list);
			}
			pthread_mutex_unlock(&s->jobs_lock);
			for (req = resume_list; req; req = resume_list) {
				resume_list = req->next;
				req->next = NULL;
				free_state(req);
				resume(req);
			}
		}
		http_conn_reap(s, (int64_t)mono_ns());
	}
	free(wb.pfd);
	free(wb.ids);
	return NULL;
}

int http_render_start(struct http_server *s)
{
	unsigned int i, n = s->cfg.render_threads ? s->cfg.render_threads : 1;
	int err;

	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->wake_fd < 0)
		return -errno;
	s->workers = calloc(n, sizeof(*s->workers));
	if (!s->workers)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		err = -pthread_create(&s->workers[i], NULL, worker_main, s);
		if (err)
			return err;
		s->nr_workers++;
	}
	err = -pthread_create(&s->watcher, NULL, watcher_main, s);
	if (err)
		return err;
	s->watcher_started = true;
	return 0;
}

void http_render_stop(struct http_server *s)
{
	struct http_request *req;
	unsigned int i, n;

	atomic_store(&s->stopping, true);
	pthread_mutex_lock(&s->jobs_lock);
	s->pool_closed = true;
	/* the requests waiting for the clock are answered now, with what there is */
	while ((req = s->deferred)) {
		s->deferred = req->next;
		s->nr_deferred--;
		enqueue_locked(s, req);
	}
	pthread_cond_broadcast(&s->jobs_cond);
	n = s->nr_workers;
	pthread_mutex_unlock(&s->jobs_lock);
	/* the workers go when the queue is empty: running renders stop at their next checkpoint */
	for (i = 0; i < n; i++)
		pthread_join(s->workers[i], NULL);
	pthread_mutex_lock(&s->jobs_lock);
	s->nr_workers = 0;
	pthread_mutex_unlock(&s->jobs_lock);
	if (s->watcher_started) {
		wake_watcher(s);
		pthread_join(s->watcher, NULL);
		s->watcher_started = false;
	}
	free(s->workers);
	s->workers = NULL;
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	s->wake_fd = -1;
}
