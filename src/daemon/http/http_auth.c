// SPDX-License-Identifier: MIT
/*
 * http_auth: the bearer-token check on every request (docs/security.md). The token lives in the
 * server (http_server__set_token(), at start and on SIGHUP); compared in constant time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <microhttpd.h>

#include "ember/daemon/http/http.h"

#include "http_internal.h"

void http_auth_init(struct http_server *s)
{
	pthread_rwlock_init(&s->auth_lock, NULL);
	s->auth_len = 0;
}

void http_auth_fini(struct http_server *s)
{
	explicit_bzero(s->auth_token, sizeof(s->auth_token));
	pthread_rwlock_destroy(&s->auth_lock);
}

int http_server__set_token(struct http_server *s, const char *token)
{
	size_t n = token ? strlen(token) : 0;

	if (n >= sizeof(s->auth_token))
		return -EINVAL;
	pthread_rwlock_wrlock(&s->auth_lock);
	explicit_bzero(s->auth_token, sizeof(s->auth_token));
	if (n)
		memcpy(s->auth_token, token, n);
	s->auth_len = n;
	pthread_rwlock_unlock(&s->auth_lock);
	return 0;
}

bool http_server__auth_enabled(struct http_server *s)
{
	bool on;

	pthread_rwlock_rdlock(&s->auth_lock);
	on = s->auth_len > 0;
	pthread_rwlock_unlock(&s->auth_lock);
	return on;
}

/* Compares all of @want whatever @got is: the time depends on the token's length only. */
static bool equal_ct(const char *got, size_t got_len, const char *want, size_t want_len)
{
	volatile unsigned char d = got_len != want_len;
	size_t i;

	for (i = 0; i < want_len; i++)
		d |= (unsigned char)((i < got_len ? (unsigned char)got[i] : 0) ^
				     (unsigned char)want[i]);
	return d == 0;
}

bool http_server__auth_check(struct http_server *s, const char *path, const char *authorization)
{
	const char *p;
	size_t n;
	bool ok;

	/* /healthz, and the dashboard's page and its static files: they hold no data, and a
	 * browser cannot send the header when it opens the page (the page asks for the token
	 * and sends it on its API requests) */
	if (path &&
	    (!strcmp(path, "/healthz") || !strcmp(path, "/") || !strncmp(path, "/assets/", 8)))
		return true;
	pthread_rwlock_rdlock(&s->auth_lock);
	if (!s->auth_len) {
		pthread_rwlock_unlock(&s->auth_lock);
		return true;
	}
	ok = false;
	if (authorization && !strncasecmp(authorization, "Bearer ", 7)) {
		p = authorization + 7;
		while (*p == ' ')
			p++;
		n = strlen(p);
		while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		ok = equal_ct(p, n, s->auth_token, s->auth_len);
	}
	pthread_rwlock_unlock(&s->auth_lock);
	if (!ok)
		atomic_fetch_add(&s->auth_fails, 1);
	return ok;
}

uint64_t http_server__auth_failures(struct http_server *s)
{
	return atomic_load(&s->auth_fails);
}

int http_auth_deny(struct MHD_Connection *conn)
{
	static const char body[] = "{\"error\": \"unauthorized\", \"status\": 401}\n";
	struct MHD_Response *r;
	char *copy = strdup(body);
	enum MHD_Result ret;

	if (!copy)
		return MHD_NO;
	r = MHD_create_response_from_buffer_with_free_callback(strlen(copy), copy, free);
	if (!r) {
		free(copy);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"emberd\"");
	ret = MHD_queue_response(conn, MHD_HTTP_UNAUTHORIZED, r);
	MHD_destroy_response(r);
	return ret;
}
