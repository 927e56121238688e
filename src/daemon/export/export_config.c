// SPDX-License-Identifier: MIT
/* [export] of the configuration as the exporter's options and the identity's rules. */
#include "ember/daemon/export/export_config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ember/core/base/log.h"
#include "ember/daemon/export/exporter.h"
#include "ember/daemon/export/identity.h"
#include "ember/daemon/service/config.h"

void export_opts_from_config(const struct ember_config *c, struct exporter_opts *o)
{
	memset(o, 0, sizeof(*o));
	snprintf(o->otlp_endpoint, sizeof(o->otlp_endpoint), "%s", c->export_otlp_endpoint);
	o->otlp_interval_ms = c->export_otlp_interval_ms;
	snprintf(o->pyroscope_url, sizeof(o->pyroscope_url), "%s", c->export_pyroscope_url);
	o->pyroscope_interval_ms = c->export_pyroscope_interval_ms;
	snprintf(o->pyroscope_tenant, sizeof(o->pyroscope_tenant), "%s",
		 c->export_pyroscope_tenant);
	snprintf(o->basic_auth_file, sizeof(o->basic_auth_file), "%s", c->export_basic_auth_file);
	snprintf(o->bearer_token_file, sizeof(o->bearer_token_file), "%s",
		 c->export_bearer_token_file);
	snprintf(o->ca_file, sizeof(o->ca_file), "%s", c->export_ca_file);
	snprintf(o->client_cert, sizeof(o->client_cert), "%s", c->export_client_cert);
	snprintf(o->client_key, sizeof(o->client_key), "%s", c->export_client_key);
	o->queue_bytes = c->export_queue_bytes;
	o->max_message_bytes = c->export_max_message_bytes;
	o->timeout_ms = c->export_timeout_ms;
	o->retry_max_ms = c->export_retry_max_ms;
	o->freq_hz = c->frequency_hz;
	if (gethostname(o->host_name, sizeof(o->host_name) - 1))
		o->host_name[0] = '\0';
}

int export_check_config(const struct ember_config *c)
{
	struct exporter_opts o;
	char err[512];

	export_opts_from_config(c, &o);
	if (exporter_check_opts(&o, err, sizeof(err))) {
		log_error("%s", err);
		return -EINVAL;
	}
	if (identity_check_rules(c->export_service_rules)) {
		log_error("export.service_rules: '%s' is not a list of unit, container, pod, exe, "
			  "comm, regex", c->export_service_rules);
		return -EINVAL;
	}
	if (identity_check_service_regex(c->export_service_regex, err, sizeof(err))) {
		log_error("export.service_regex: %s", err);
		return -EINVAL;
	}
	return 0;
}

int export_from_config(const struct ember_config *c, struct store *store,
		       struct proc_tracker *procs, struct elfshare *share, struct identity **ret_id,
		       struct exporter **ret_x)
{
	struct exporter_opts o;
	char err[512];

	*ret_x = NULL;
	*ret_id = identity__new(NULL, c->export_service_rules);
	if (!*ret_id)
		return log_errno(-errno, "cannot create the workload identity");
	identity__set_share(*ret_id, share);
	if (identity__set_procs(*ret_id, procs))
		return log_errno(-ENOSPC, "cannot keep the processes' executables (the process "
					  "tracker's extensions)");
	if (identity__set_service_regex(*ret_id, c->export_service_regex, err, sizeof(err))) {
		log_error("export.service_regex: %s", err);
		return -EINVAL;
	}
	export_opts_from_config(c, &o);
	o.share = share;
	if (!store || (!o.otlp_endpoint[0] && !o.pyroscope_url[0]))
		return 0;
	*ret_x = exporter__new(store, *ret_id, procs, &o);
	if (!*ret_x)
		return log_errno(-errno, "cannot start the exporter");
	log_info("exporting%s%s%s%s", o.otlp_endpoint[0] ? " OTLP profiles to " : "",
		 o.otlp_endpoint, o.pyroscope_url[0] ? " Pyroscope profiles to " : "",
		 o.pyroscope_url);
	return 0;
}

void export_reload(const struct ember_config *c, struct store *store,
		   struct proc_tracker *procs, struct elfshare *share, struct identity *id,
		   struct exporter **x)
{
	struct exporter_opts o;

	if (export_check_config(c) || !id)
		return;
	export_opts_from_config(c, &o);
	o.share = share;
	(void)identity__set_rules(id, c->export_service_rules);
	(void)identity__set_service_regex(id, c->export_service_regex, NULL, 0);
	if (*x)
		(void)exporter__set_opts(*x, &o);
	else if (store && (o.otlp_endpoint[0] || o.pyroscope_url[0]))
		*x = exporter__new(store, id, procs, &o);
}
