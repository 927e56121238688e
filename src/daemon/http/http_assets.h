/* SPDX-License-Identifier: MIT */
/* The dashboard's files, compiled in by scripts/gen-assets.sh into $(OUTPUT)/gen/dashboard_assets.c. */
#ifndef EMBER_HTTP_ASSETS_H
#define EMBER_HTTP_ASSETS_H

#include <stddef.h>

struct http_asset {
	const char *path;		/* "/assets/index.html" */
	const char *content_type;
	const unsigned char *data;	/* NUL-terminated for convenience; @len excludes it */
	size_t len;
};

extern const struct http_asset http_assets[];
extern const size_t http_nr_assets;

#endif
