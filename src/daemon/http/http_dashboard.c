// SPDX-License-Identifier: MIT
/* The dashboard: GET / is index.html, GET /assets/NAME the other files; all compiled in. */
#include <string.h>

#include "ember/daemon/http/http.h"
#include "http_assets.h"
#include "http_internal.h"

int http_handle_asset(struct http_server *srv, struct http_request *req,
		      struct http_response *resp)
{
	const char *path = http_request__path(req);
	size_t i;

	(void)srv;
	if (!strcmp(path, "/"))
		path = "/assets/index.html";
	for (i = 0; i < http_nr_assets; i++) {
		if (strcmp(http_assets[i].path, path))
			continue;
		/* the page keeps its state in the fragment; a query string is ignored */
		resp->content_type = http_assets[i].content_type;
		/* the HTML names the other assets, so it is revalidated; they may be cached briefly */
		resp->cache_control = strstr(path, ".html") ? "no-cache" : "public, max-age=300";
		sbuf_add(&resp->body, http_assets[i].data, http_assets[i].len);
		return 0;
	}
	http_response__error(resp, 404, NULL, "no such file");
	return 0;
}
