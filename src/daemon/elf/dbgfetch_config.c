// SPDX-License-Identifier: MIT
/* symbols.debuginfod of the configuration: the fetcher, and the debug dirs it adds to. */
#include "ember/daemon/elf/dbgfetch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/base/log.h"
#include "ember/daemon/service/config.h"

struct dbgfetch *dbgfetch__from_config(const struct ember_config *c, char *dirs, size_t dirs_len)
{
	struct dbgfetch_opts fo = { .cache_dir = c->debuginfod_cache,
				    .max_bytes = c->debuginfod_cache_bytes,
				    .timeout_ms = (uint32_t)c->debuginfod_timeout_ms,
				    .threads = (uint32_t)c->debuginfod_threads,
				    .max_queue = (uint32_t)c->debuginfod_queue,
				    .budget_ms = (uint32_t)c->debuginfod_budget_ms };
	struct dbgfetch *f;

	if (!c->debuginfod)
		return NULL;
	f = dbgfetch__new(&fo);
	if (!f) {
		if (errno != ENOENT)
			log_warn("no debuginfod: cannot use '%s' for its files: %s, ignoring",
				 c->debuginfod_cache, strerror(errno));
		return NULL;
	}
	snprintf(dirs, dirs_len, "%s%s%s", c->debug_dirs, c->debug_dirs[0] ? ":" : "",
		 dbgfetch__dir(f));
	log_info("debug files of stripped programs from debuginfod ('%s'), kept in '%s' (up to "
		 "%llu MiB, %llu ms a fetch, %llu at once, %llu queued, %llu ms of fetches a minute)",
		 getenv("DEBUGINFOD_URLS"), dbgfetch__dir(f),
		 (unsigned long long)(c->debuginfod_cache_bytes >> 20),
		 (unsigned long long)c->debuginfod_timeout_ms,
		 (unsigned long long)c->debuginfod_threads,
		 (unsigned long long)c->debuginfod_queue,
		 (unsigned long long)c->debuginfod_budget_ms);
	return f;
}
