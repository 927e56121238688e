/* SPDX-License-Identifier: MIT */
/*
 * identity: who a sample ran for. The BPF program takes each sample's cgroup v2 id
 * (bpf_get_current_cgroup_id(): the inode of the cgroup's directory); here it becomes the
 * cgroup's path (a walk of the cgroup2 mount, at most once a second and only for an id not seen
 * yet, bounded), and the path a workload:
 *
 *   container id  the 64 hex digits of the last component, bare (cgroupfs drivers:
 *                 /docker/ID, /kubepods/burstable/podUID/ID, /default/ID) or in a systemd scope
 *                 (docker-ID.scope, cri-containerd-ID.scope, crio-ID.scope, libpod-ID.scope,
 *                 containerd-ID.scope, nerdctl-ID.scope; not crio-conmon-ID.scope);
 *   pod uid       a component "podUID" (cgroupfs) or "kubepods[-QOS]-podUID.slice" (systemd,
 *                 with '_' for '-');
 *   unit          the deepest component ending in ".service" (system.slice/nginx.service).
 *
 * service.name follows the configured rules, an ordered ','-list of sources, the first that
 * gives a name wins: "unit" (the unit without ".service"), "container" (the container id's first
 * 12 digits), "pod" (the pod uid), "exe" (the executable's name), "comm", "regex" (the NAME of
 * the first rule of export.service_regex, "NAME=ERE ...", whose POSIX extended regular
 * expression (ember_regex: bounded, PCRE2) matches the comm; a match over the regex limits
 * counts in regex_errors and gives nothing); the executable's name (else comm) when none does. Processes: the executable's path, name and GNU build id, read
 * from /proc/PID/exe once per process image (bounded cache; an exec or exit notified by the
 * sampler starts a new image at its time, so that samples taken before an exec are not named
 * with the executable /proc shows after it).
 *
 * Thread-safe (one mutex); identity__lookup() with @may_scan false and identity__cached_exe()
 * never do I/O, so the store's filter callbacks may call them under the store's lock.
 */
#ifndef EMBER_IDENTITY_H
#define EMBER_IDENTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ember/core/base/counters.h"

#define IDENTITY_PATH_MAX 512
#define IDENTITY_SERVICE_NAME_MAX 64 /* a name given by export.service_regex */

struct workload {
	char path[IDENTITY_PATH_MAX]; /* relative to the cgroup2 mount; "" unknown */
	char container_id[65];
	char pod_uid[40];
	char unit[128];
};

/* Parses a cgroup v2 path into @ret (path copied, the rest as found; "" when absent). */
void workload_from_path(const char *path, struct workload *ret);

struct proc_info {
	char exe_path[512];
	char exe_name[128];
	char build_id[81]; /* hex; "" unknown */
	/* cgroup v1: what the process's v1 hierarchies' paths (/proc/PID/cgroup) give, read with
	 * the executable; "" none */
	char v1_container_id[65];
	char v1_pod_uid[40];
	char v1_unit[128];
	/* set by identity__process(): the image's start (its last exec or exit notified, 0 none),
	 * and whether it is the one /proc shows now (false: an earlier image's sample) */
	uint64_t image_ns;
	bool current;
};

/*
 * cgroup v1: the BPF program's cgroup id is the v2 one (the root's, on a host whose containers
 * live in v1 hierarchies), so when @wl (from the v2 id) has no container nor pod, @pi's v1
 * identity completes it (and its unit, if @wl has none). @pi may be NULL.
 */
void identity_merge_v1(struct workload *wl, const struct proc_info *pi);

struct identity; /* opaque */

/*
 * @cgroup_root: the cgroup2 mount (NULL: found in /proc/mounts); @rules: service.name rules as above
 * (NULL or "": the default). NULL + errno (EINVAL: a bad rule, ENOMEM).
 */
struct identity *identity__new(const char *cgroup_root, const char *rules);
/* The same with a table of @max_cgroups cgroups (a power of two, >= 4; identity__new(): 65,536),
 * a quarter of it for each owner other than root, and walks of 4 x that many directories. */
struct identity *identity__new_sized(const char *cgroup_root, const char *rules, size_t max_cgroups);
void identity__free(struct identity *id); /* NULL is a no-op */
/* The process tracker (borrowed; set before any identity__process()): a process's cgroup file
 * is read through it (proc_tracker__cgroup(), counted there). NULL: read directly. */
struct proc_tracker;
/* Keeps what identity__process() reads of each process image as an extension of @pt (its exec
 * and exit events end an image). 0 or -errno (no room for an extension). */
int identity__set_procs(struct identity *id, struct proc_tracker *pt);
/* The images the symbolizer read (borrowed; NULL: none): an executable's build-id is taken from
 * its image there when the symbolizer has it, and read from the file only when not (counted:
 * build_ids_borrowed, build_ids_read). */
struct elfshare;
void identity__set_share(struct identity *id, struct elfshare *share);

/* Replaces the rules (a reload). 0 or -EINVAL (nothing changed). */
int identity__set_rules(struct identity *id, const char *rules);
/* Checks rules without an object (--check-config). 0 or -EINVAL. */
int identity_check_rules(const char *rules);
/*
 * export.service_regex: whitespace-separated NAME=PATTERN (NAME: letters, digits, '.', '_', '-',
 * < IDENTITY_SERVICE_NAME_MAX bytes; PATTERN: an extended regular expression without spaces, as
 * regex.h reads it), at most 16, tried in order; "" none. Replaces the previous ones (a reload).
 * 0, or -EINVAL / -E2BIG / -ENOMEM with a one-line reason in @err (nothing changed).
 */
int identity__set_service_regex(struct identity *id, const char *spec, char *err, size_t errlen);
int identity_check_service_regex(const char *spec, char *err, size_t errlen);

/*
 * The workload of @cgroup_id into @ret. An id not known yet, with @may_scan, walks the cgroup
 * mount again (at most once a second). false: unknown (@ret empty).
 */
bool identity__lookup(struct identity *id, uint64_t cgroup_id, struct workload *ret,
		      bool may_scan);

/* Walks the cgroup mount again if the last walk is older than a second (before a query whose
 * filter calls identity__lookup() without scanning). */
void identity__refresh(struct identity *id);

/*
 * The executable of @pid for its sample at @time_ns (the store's clock, Unix ns): read from /proc
 * the first time a sample of the image asks, kept as the process tracker's extension until the
 * image ends (its exec or exit, told by the tracker) and IDENT_KEEP_NS after, for the samples
 * taken before and exported later. 0, -ENOENT (gone, unreadable) or -ESTALE: the sample is older
 * than the last exec of @pid and the image before it was never read (its executable is unknown:
 * /proc shows the new one; counted). Without a tracker (identity__set_procs()): read each time.
 */
int identity__process(struct identity *id, uint32_t pid, uint64_t time_ns, struct proc_info *ret);
/* The executable's name of @pid if identity__process() read it already (no I/O), else NULL
 * (copied into @buf). */
const char *identity__cached_exe(struct identity *id, uint32_t pid, char *buf, size_t len);

/* service.name by the rules into @buf: @exe_name may be NULL (comm then). Returns @buf. */
const char *identity__service(struct identity *id, const struct workload *wl,
			      const char *exe_name, const char *comm, char *buf, size_t len);


struct identity_stats {
	uint64_t cgroups;	/* known cgroups */
	uint64_t scans;		/* walks of the cgroup mount */
	uint64_t unknown;	/* lookups of an id the walk did not find */
	uint64_t procs;		/* process images whose executable is kept (current and ended) */
	uint64_t proc_events;	/* ... ended by an exec or exit */
	uint64_t not_kept;	/* executables read and not kept: MAX_PROCS images held (read
				   again at the next sample) */
	uint64_t stale;		/* samples of an image before an exec, whose executable is unknown */
	uint64_t regex_errors;	/* export.service_regex matches stopped by a limit */
	uint64_t dropped;	/* cgroups a walk no longer found (removed): forgotten */
	uint64_t refused;	/* cgroups found with no room: the table full, or their owner's
				 * share (a quarter of it for each user but root) */
	uint64_t build_ids_read;     /* executables' build-ids read from the file */
	uint64_t build_ids_borrowed; /* ... taken from the symbolizer's image of it (no read) */
};
/* ... described once (exporter_counters.c, core/base/counters.h): "export.identity" */
extern const struct counter_desc identity_counters[];
extern const size_t identity_counters_n;
void identity__stats(struct identity *id, struct identity_stats *ret);

/* --- the store's identity filter (http: container=, service=, unit=, group_by=) ----------- */

enum identity_group { IDENTITY_GROUP_NONE, IDENTITY_GROUP_CONTAINER, IDENTITY_GROUP_POD,
		      IDENTITY_GROUP_SERVICE, IDENTITY_GROUP_UNIT };

struct identity_filter {
	struct identity *id;
	const char *container; /* a container id or a prefix of it (>= 4 digits); NULL: any */
	const char *service;   /* exact service.name; NULL: any */
	const char *unit;      /* exact unit ("nginx.service"; "nginx" also matches); NULL: any */
	enum identity_group group;
	char buf[256];	       /* the last group name */
};

/* "container", "pod", "service", "unit" -> @ret. 0 or -EINVAL. */
int identity_group_parse(const char *s, enum identity_group *ret);

/* store_filter.ident_match / group_name with @arg a struct identity_filter. */
bool identity_filter_match(uint64_t cgroup_id, uint32_t pid, const char *comm, void *arg);
const char *identity_filter_group(uint64_t cgroup_id, uint32_t pid, const char *comm, void *arg);

#endif
