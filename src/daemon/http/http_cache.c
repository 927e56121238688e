// SPDX-License-Identifier: MIT
/*
 * A micro-cache for emberd's rendered responses. Dashboards and scripts ask for the same view
 * at once (one flame graph, many viewers), and each render costs a store query plus a layout:
 * identical GETs of the data endpoints within a short time share one render, and one body (a
 * reference, not a copy: http_body.c). Concurrent identical requests wait for the first one
 * (single flight), suspended: they hold no thread, and are handed back to the renderer to answer
 * when it is done. Live entries live HTTP_CACHE_LIVE_NS (data then is at most that stale),
 * replay entries longer (the data never changes). Bounded by entry count and bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http_internal.h"

#define HTTP_CACHE_LIVE_NS (1000 * 1000000LL)
#define HTTP_CACHE_REPLAY_NS (60 * 1000000000LL)
#define HTTP_CACHE_MAX_ENTRIES 64
#define HTTP_CACHE_MAX_BYTES   (64u << 20)

struct http_cache_entry {
	char *key;
	bool pending;		      /* being rendered by one request; others wait */
	bool stale;		      /* pending when the cache was flushed: not kept when filled */
	struct http_request *waiters; /* suspended, linked by ->next */
	struct http_answer ans;	      /* when not pending */
	int64_t expires_ns;
	struct http_cache_entry *next;
};

void http_cache_init(struct http_server *s)
{
	pthread_mutex_init(&s->cache_lock, NULL);
}

static void entry_free(struct http_cache_entry *e)
{
	if (!e)
		return;
	free(e->key);
	http_answer_fini(&e->ans);
	free(e);
}

void http_cache_fini(struct http_server *s)
{
	struct http_cache_entry *e, *n;

	for (e = s->cache; e; e = n) {
		n = e->next;
		entry_free(e);
	}
	s->cache = NULL;
	pthread_mutex_destroy(&s->cache_lock);
}

/* Under the lock: drops expired entries, then the oldest while over the bounds. */
static void evict_locked(struct http_server *s, int64_t now)
{
	struct http_cache_entry **pp, *e;
	size_t n = 0, bytes = 0;

	for (pp = &s->cache; (e = *pp);) {
		if (!e->pending && e->expires_ns <= now) {
			*pp = e->next;
			entry_free(e);
			continue;
		}
		n++;
		bytes += http_body_len(e->ans.body);
		pp = &e->next;
	}
	/* newest first in the list: trim from the tail */
	while (n > HTTP_CACHE_MAX_ENTRIES || bytes > HTTP_CACHE_MAX_BYTES) {
		struct http_cache_entry **last = NULL;

		for (pp = &s->cache; *pp; pp = &(*pp)->next)
			if (!(*pp)->pending)
				last = pp;
		if (!last)
			return;
		e = *last;
		*last = e->next;
		n--;
		bytes -= http_body_len(e->ans.body);
		entry_free(e);
	}
}

static struct http_cache_entry *find_locked(struct http_server *s, const char *key)
{
	struct http_cache_entry *e;

	for (e = s->cache; e; e = e->next)
		if (!strcmp(e->key, key))
			return e;
	return NULL;
}

int http_cache_lookup(struct http_server *s, const char *key, struct http_request *req,
		      struct http_answer *ret)
{
	struct http_cache_entry *e;
	int64_t now = http_now_ns();
	int r;

	pthread_mutex_lock(&s->cache_lock);
	evict_locked(s, now);
	e = find_locked(s, key);
	if (e && e->pending) {
		/* someone renders this very view: wait for it rather than render it again,
		 * suspended before the renderer can see it (and resume it: it takes this lock) */
		req->next = e->waiters;
		e->waiters = req;
		http_render_wait(s, req);
		pthread_mutex_unlock(&s->cache_lock);
		s->cache_hits++;
		return HTTP_CACHE_WAIT;
	}
	if (e) {
		http_answer_copy(ret, &e->ans);
		pthread_mutex_unlock(&s->cache_lock);
		s->cache_hits++;
		return HTTP_CACHE_HIT;
	}
	/* a miss: this request renders, the next identical ones wait for it */
	r = -ENOMEM;
	e = calloc(1, sizeof(*e));
	if (e)
		e->key = strdup(key);
	if (e && e->key) {
		e->pending = true;
		e->next = s->cache;
		s->cache = e;
		r = HTTP_CACHE_MISS;
	} else {
		entry_free(e);
	}
	pthread_mutex_unlock(&s->cache_lock);
	s->cache_misses++;
	return r;
}

struct http_request *http_cache_fill(struct http_server *s, const char *key,
				     const struct http_answer *a, bool keep, bool *ret_retry)
{
	struct http_cache_entry *e, **pp;
	struct http_request *waiters = NULL;

	*ret_retry = !a;
	pthread_mutex_lock(&s->cache_lock);
	e = find_locked(s, key);
	if (e && e->pending) {
		waiters = e->waiters;
		e->waiters = NULL;
		if (e->stale) /* rendered under the settings before a reload */
			*ret_retry = true;
		if (a && keep && !e->stale && a->status == 200 &&
		    http_body_len(a->body) <= HTTP_CACHE_MAX_BYTES / 4) {
			http_answer_copy(&e->ans, a);
			e->expires_ns =
			    http_now_ns() +
			    (http_server__is_replay(s) ? HTTP_CACHE_REPLAY_NS : HTTP_CACHE_LIVE_NS);
			e->pending = false;
		} else {
			/* not kept (an error, too big): the waiters get this answer all the same
			 * (not after a flush: they look again), the next identical request renders
			 */
			for (pp = &s->cache; *pp; pp = &(*pp)->next)
				if (*pp == e) {
					*pp = e->next;
					break;
				}
			entry_free(e);
		}
	}
	pthread_mutex_unlock(&s->cache_lock);
	return waiters;
}

void http_cache_flush(struct http_server *s)
{
	struct http_cache_entry **pp, *e;

	pthread_mutex_lock(&s->cache_lock);
	for (pp = &s->cache; (e = *pp);) {
		if (e->pending) {
			e->stale = true; /* its renderer answers its waiters, and nobody else */
			pp = &e->next;
			continue;
		}
		*pp = e->next;
		entry_free(e);
	}
	pthread_mutex_unlock(&s->cache_lock);
}

uint64_t http_cache_bytes(struct http_server *s)
{
	struct http_cache_entry *e;
	uint64_t n = 0;

	pthread_mutex_lock(&s->cache_lock);
	for (e = s->cache; e; e = e->next)
		n += http_body_len(e->ans.body);
	pthread_mutex_unlock(&s->cache_lock);
	return n;
}
