/* SPDX-License-Identifier: MIT */
/*
 * export_config: [export] of struct ember_config as the exporter's options and the workload
 * identity's rules, at start-up, --check-config and SIGHUP.
 */
#ifndef EMBER_DAEMON_EXPORT_CONFIG_H
#define EMBER_DAEMON_EXPORT_CONFIG_H

struct ember_config;
struct exporter;
struct exporter_opts;
struct identity;
struct proc_tracker;
struct store;

/* [export] as the exporter's options (and this host's name). */
void export_opts_from_config(const struct ember_config *c, struct exporter_opts *o);

/* [export] checked (--check-config and start-up). 0 or -EINVAL, logged. */
int export_check_config(const struct ember_config *c);

/*
 * The workload identity always (the HTTP filters use it), in *@ret_id; the exporter's thread
 * when [export] names a receiver and there is a @store, in *@ret_x (else NULL). 0 or -errno,
 * logged; what was created is in the out-params either way (the caller frees it).
 */
struct elfshare;
int export_from_config(const struct ember_config *c, struct store *store,
		       struct proc_tracker *procs, struct elfshare *share, struct identity **ret_id,
		       struct exporter **ret_x);

/* SIGHUP changed [export]: new rules, new options; the exporter started if it now has a
 * receiver. A configuration that does not check is ignored (logged). */
void export_reload(const struct ember_config *c, struct store *store,
		   struct proc_tracker *procs, struct elfshare *share, struct identity *id,
		   struct exporter **x);

#endif
