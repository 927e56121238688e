// SPDX-License-Identifier: MIT
/*
 * Response bodies and their memory. A rendered body is one malloc'ed buffer with a reference
 * count: the micro-cache holds one reference, every connection sending it another (MHD frees
 * nothing of ours: its free callback drops the reference), so 30 readers of one 100 MB response
 * hold 100 MB, not 3 GB. Every byte of every body (while it is rendered, cached or sent) is
 * charged to one budget, http.response_memory: a render that would pass it fails with -ENOBUFS
 * (a 503 with Retry-After), so the server's memory is bounded whatever the clients do.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "http_internal.h"

struct http_body {
	atomic_uint refs;
	struct http_server *srv;
	char *data;
	size_t len;
	size_t charged;
};

bool http_mem_charge(struct http_server *s, size_t n, bool force)
{
	unsigned long long cur = atomic_load(&s->resp_bytes), peak;

	do {
		if (!force && cur + n > s->cfg.response_memory_bytes)
			return false;
	} while (!atomic_compare_exchange_weak(&s->resp_bytes, &cur, cur + n));
	peak = atomic_load(&s->resp_bytes_peak);
	while (cur + n > peak && !atomic_compare_exchange_weak(&s->resp_bytes_peak, &peak, cur + n))
		;
	return true;
}

void http_mem_uncharge(struct http_server *s, size_t n)
{
	atomic_fetch_sub(&s->resp_bytes, n);
}

struct http_body *http_body_new(struct http_server *s, char *data, size_t len, size_t charged)
{
	struct http_body *b = malloc(sizeof(*b));

	if (!b) {
		free(data);
		http_mem_uncharge(s, charged);
		return NULL;
	}
	atomic_init(&b->refs, 1);
	b->srv = s;
	b->data = data;
	b->len = len;
	b->charged = charged;
	return b;
}

struct http_body *http_body_ref(struct http_body *b)
{
	if (b)
		atomic_fetch_add(&b->refs, 1);
	return b;
}

void http_body_unref(struct http_body *b)
{
	if (!b || atomic_fetch_sub(&b->refs, 1) != 1)
		return;
	http_mem_uncharge(b->srv, b->charged);
	free(b->data);
	free(b);
}

size_t http_body_len(const struct http_body *b)
{
	return b ? b->len : 0;
}

static void body_free_cb(void *cls)
{
	http_body_unref(cls);
}

struct MHD_Response *http_body_response(struct http_body *b)
{
	static char empty[1];
	struct MHD_Response *r;

	if (!b) /* MHD_RESPMEM_PERSISTENT: nothing to free */
		return MHD_create_response_from_buffer(0, empty, MHD_RESPMEM_PERSISTENT);
	http_body_ref(b);
	/* 0.9.73+: the callback gets our cls, so the buffer is shared, not copied */
	r = MHD_create_response_from_buffer_with_free_callback_cls(b->len, b->data, body_free_cb,
								   b);
	if (!r)
		http_body_unref(b);
	return r;
}

void http_answer_copy(struct http_answer *ret, const struct http_answer *a)
{
	*ret = *a;
	http_body_ref(ret->body);
}

void http_answer_fini(struct http_answer *a)
{
	http_body_unref(a->body);
	*a = (struct http_answer){ 0 };
}
