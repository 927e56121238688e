// SPDX-License-Identifier: MIT
/* emberd's main() entry into the HTTP side: config -> server, and --replay files -> recording. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ember/config.h"
#include "ember/http.h"
#include "ember/http_export.h"
#include "ember/log.h"
#include "ember/recording.h"
#include "ember/replay.h"

int emberd_http_setup(const struct ember_config *cfg, struct store *store, char **files,
		      int nfiles, struct http_server **ret_srv, struct recording **ret_rec)
{
	struct http_config hc;
	struct http_server *srv = NULL;
	struct recording *rec = NULL;
	struct replay_stats st = { 0 };
	char err[512];
	int i, r;

	http_config_init(&hc);
	snprintf(hc.listen, sizeof(hc.listen), "%s", cfg->listen);
	if (nfiles > 0) {
		rec = recording__new(cfg->memory_limit_bytes);
		if (!rec)
			return log_errno(-ENOMEM, "cannot allocate the replay recording");
		for (i = 0; i < nfiles; i++) {
			r = replay_load_file(rec, files[i], &st, err, sizeof(err));
			if (r) {
				log_error("replay: %s", err);
				goto fail;
			}
		}
		(void)recording__freeze(rec);
		log_info("replay: %lu file(s), %llu samples, %zu unique stacks%s", st.files,
			 st.samples, recording__nr_stacks(rec), st.skipped ? "" : "");
		if (st.skipped)
			log_warn("replay: %llu malformed line(s) skipped", st.skipped);
		if (st.no_time)
			log_warn("replay: %llu record(s) without a time skipped (perf script -F time)",
				 st.no_time);
		if (!recording__nr_samples(rec))
			log_warn("replay: no samples loaded");
		store = NULL;
	} else if (!store) {
		log_warn("http: no store to serve yet: HTTP server not started");
		return 0;
	}
	srv = http_server__new(&hc, store, rec);
	if (!srv) {
		r = log_errno(-errno, "cannot create the HTTP server");
		goto fail;
	}
	r = http_export__register(srv, cfg->frequency_hz); /* /debug/pprof/profile, /metrics */
	if (r) {
		log_errno(r, "cannot add the export endpoints");
		goto fail;
	}
	r = http_server__start(srv);
	if (r) {
		log_errno(r, "cannot listen on '%s'", hc.listen);
		goto fail;
	}
	log_info("http: listening on %s (port %u)%s", hc.listen, http_server__port(srv),
		 rec ? ", replaying" : "");
	*ret_srv = srv;
	*ret_rec = rec;
	return 0;
fail:
	http_server__free(srv);
	http_export__unregister();
	recording__free(rec);
	return r;
}
