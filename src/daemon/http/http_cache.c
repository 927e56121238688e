// SPDX-License-Identifier: MIT
/*
 * A micro-cache for emberd's rendered responses. Dashboards and scripts ask for the same view
 * at once (one flame graph, many viewers), and each render costs a store query plus a layout:
 * identical GETs of the data endpoints within a short time share one render. Concurrent
 * identical requests wait for the first one (single flight) instead of rendering in parallel.
 * Live entries live HTTP_CACHE_LIVE_NS (data then is at most that stale), replay entries
 * longer (the data never changes). Bounded by entry count and bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http_internal.h"

#define HTTP_CACHE_LIVE_NS (1000 * 1000000LL)
#define HTTP_CACHE_REPLAY_NS (60 * 1000000000LL)
#define HTTP_CACHE_MAX_ENTRIES 64
#define HTTP_CACHE_MAX_BYTES (64u << 20)
#define HTTP_CACHE_WAIT_S 30

struct http_cache_entry {
	char *key;
	bool pending;		/* being rendered by one request; others wait */
	bool stale;		/* pending when the cache was flushed: not kept when filled */
	char *body;
	size_t len;
	bool gz;
	const char *content_type, *cache_control;
	char disposition[160];
	int64_t expires_ns;
	struct http_cache_entry *next;
};

void http_cache_init(struct http_server *s)
{
	pthread_mutex_init(&s->cache_lock, NULL);
	pthread_cond_init(&s->cache_cond, NULL);
}

static void entry_free(struct http_cache_entry *e)
{
	if (!e)
		return;
	free(e->key);
	free(e->body);
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
	pthread_cond_destroy(&s->cache_cond);
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
		bytes += e->len;
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
		bytes -= e->len;
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

int http_cache_lookup(struct http_server *s, const char *key, struct http_cached *ret)
{
	struct http_cache_entry *e;
	struct timespec deadline;
	int64_t now = http_now_ns();
	int r = 0;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += HTTP_CACHE_WAIT_S;
	pthread_mutex_lock(&s->cache_lock);
	evict_locked(s, now);
	for (;;) {
		e = find_locked(s, key);
		if (!e || !e->pending)
			break;
		/* someone renders this very view: wait for it rather than render it again */
		if (pthread_cond_timedwait(&s->cache_cond, &s->cache_lock, &deadline) == ETIMEDOUT) {
			e = NULL;
			r = -ETIMEDOUT;
			break;
		}
	}
	if (e && !e->pending && e->expires_ns > http_now_ns()) {
		ret->body = malloc(e->len ? e->len : 1);
		if (ret->body) {
			memcpy(ret->body, e->body, e->len);
			ret->len = e->len;
			ret->gz = e->gz;
			ret->content_type = e->content_type;
			ret->cache_control = e->cache_control;
			memcpy(ret->disposition, e->disposition, sizeof(ret->disposition));
			pthread_mutex_unlock(&s->cache_lock);
			s->cache_hits++;
			return 1;
		}
	}
	/* a miss: this request renders, the next identical ones wait for it */
	if (!e && r == 0) {
		e = calloc(1, sizeof(*e));
		if (e)
			e->key = strdup(key);
		if (e && e->key) {
			e->pending = true;
			e->next = s->cache;
			s->cache = e;
		} else {
			entry_free(e);
			r = -ENOMEM;
		}
	}
	pthread_mutex_unlock(&s->cache_lock);
	s->cache_misses++;
	return r == 0 && e ? 0 : r;
}

void http_cache_fill(struct http_server *s, const char *key, const struct http_response *resp,
		     const char *body, size_t len, bool gz)
{
	struct http_cache_entry *e, **pp;

	pthread_mutex_lock(&s->cache_lock);
	e = find_locked(s, key);
	if (e && e->pending) {
		if (!e->stale && body && resp && resp->status == 200 &&
		    len <= HTTP_CACHE_MAX_BYTES / 4 &&
		    (e->body = malloc(len ? len : 1))) {
			memcpy(e->body, body, len);
			e->len = len;
			e->gz = gz;
			e->content_type = resp->content_type;
			e->cache_control = resp->cache_control;
			memcpy(e->disposition, resp->disposition, sizeof(e->disposition));
			e->expires_ns = http_now_ns() + (http_server__is_replay(s) ? HTTP_CACHE_REPLAY_NS :
										   HTTP_CACHE_LIVE_NS);
			e->pending = false;
		} else {
			/* not cacheable (an error, too big, rendered before a flush): waiters
			 * render for themselves */
			for (pp = &s->cache; *pp; pp = &(*pp)->next)
				if (*pp == e) {
					*pp = e->next;
					break;
				}
			entry_free(e);
		}
	}
	pthread_cond_broadcast(&s->cache_cond);
	pthread_mutex_unlock(&s->cache_lock);
}

void http_cache_flush(struct http_server *s)
{
	struct http_cache_entry **pp, *e;

	pthread_mutex_lock(&s->cache_lock);
	for (pp = &s->cache; (e = *pp);) {
		if (e->pending) {
			e->stale = true; /* its renderer answers its own request, and nobody else */
			pp = &e->next;
			continue;
		}
		*pp = e->next;
		entry_free(e);
	}
	pthread_mutex_unlock(&s->cache_lock);
}
