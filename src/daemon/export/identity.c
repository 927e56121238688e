// SPDX-License-Identifier: MIT
#include "ember/daemon/export/identity.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ember/core/base/clock.h"
#include "ember/core/base/hash.h"
#include "ember/core/base/regex.h"
#include "ember/daemon/elf/elfsym.h"
#include "ember/daemon/elf/filecache.h"
#include "ember/daemon/proc/procfs.h"
#include "ember/daemon/proc/proctrack.h"
#include "ember/core/base/sbuf.h"

#define MAX_CGROUPS   65536u	/* paths kept (identity__new(); a power of two) */
/* A walk visits at most this many directories (a delegated subtree may hold any number) */
#define MAX_VISITS(id)   (4 * (id)->max_cgs)
/* The cgroups of one owner other than root (a subtree systemd delegated to a user) take at most
 * this share of the table: the rest stays for root's, where container runtimes make theirs */
#define OWNER_SHARE(id)  ((id)->max_cgs / 4)
#define MAX_OWNERS    64	/* owners counted apart; the others share the last count */
#define MAX_DEPTH     16
#define MAX_PROCS     4096u	/* images' executables kept (current and ended) */
#define IDENT_KEEP_NS (120ull * 1000000000ull) /* an ended image's, for samples exported late */
#define MAX_RULES     8
#define SCAN_EVERY_NS 1000000000ULL
#define MAX_REGEXES   16

enum rule { RULE_UNIT, RULE_CONTAINER, RULE_POD, RULE_EXE, RULE_COMM, RULE_REGEX };

/* export.service_regex: NAME=ERE, the first whose pattern matches the comm names the service */
struct svc_regex {
	char name[IDENTITY_SERVICE_NAME_MAX];
	struct ember_regex *re;
};

struct cg {
	uint64_t id;	/* 0: empty slot */
	char *path;
	uint32_t seen;	/* the walk that last found it */
	uint32_t uid;	/* its directory's owner */
};

/*
 * A process image's executable, the process tracker's extension (proc_tracker__ext_register()):
 * made when a sample of it asks (identity__process()), ended by the tracker's exec and exit
 * events, kept IDENT_KEEP_NS more for the samples taken before and exported after. Its fields
 * are read and written under the identity's lock (the exporter's and the HTTP threads ask, the
 * worker's events end it).
 */
struct iproc {
	uint64_t gen;	  /* this image's number (proc_info.image_ns), > 0 once read */
	uint64_t read_ns; /* when @info was read (CLOCK_MONOTONIC) */
	uint64_t from_ns; /* its exec's time as the tracker knew it then; 0: none known */
	uint64_t end_ns;  /* ended: its exec's or exit's time (CLOCK_MONOTONIC); 0: current */
	bool have;	  /* @info holds this image's executable */
	struct proc_info info;
};

struct identity {
	pthread_mutex_t lock;
	struct proc_tracker *tracker; /* /proc/PID/cgroup read through it (NULL: directly) */
	struct elfshare *share;	      /* the symbolizer's images (NULL: none) */
	char root[512];
	enum rule rules[MAX_RULES];
	size_t nr_rules;
	struct svc_regex regexes[MAX_REGEXES];
	size_t nr_regexes;
	struct cg *cgs; /* open addressing, max_cgs * 2 */
	size_t nr_cgs, max_cgs;
	pthread_mutex_t walk_lock; /* one walk at a time */
	uint32_t walk;	/* the current walk's number (cg.seen) */
	size_t refused_now; /* cgroups the current merge found no room for */
	struct { uint32_t uid, n; } owners[MAX_OWNERS]; /* non-root owners' cgroups kept */
	size_t nr_owners;
	int ext;	    /* the tracker's extension id of struct iproc (< 0: none) */
	uint64_t gen;	    /* images read (iproc.gen) */
	uint64_t pruned_ns; /* the last proc_tracker__ext_prune() */
	uint64_t last_scan_ns;
	struct identity_stats st;
	/* build-ids read and borrowed: counted without the lock (read_build_id()), atomically */
	uint64_t bid_read, bid_borrowed;
};

/* --- paths -> workloads ------------------------------------------------------------------- */

static bool is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

static bool starts(const char *s, size_t n, const char *p)
{
	size_t m = strlen(p);

	return n >= m && !memcmp(s, p, m);
}

static bool ends(const char *s, size_t n, const char *p)
{
	size_t m = strlen(p);

	return n >= m && !memcmp(s + n - m, p, m);
}

static void copy(char *dst, size_t cap, const char *s, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, s, n);
	dst[n] = '\0';
}

/* A container id in component @c (@n bytes), or false. */
static bool container_of(const char *c, size_t n, struct workload *ret)
{
	static const char *const prefixes[] = { "docker-", "cri-containerd-", "crio-",	 "libpod-",
						"containerd-", "nerdctl-", "cri-o-" };
	size_t i;

	if (n == 64 && is_hex(c, 64)) {
		copy(ret->container_id, sizeof(ret->container_id), c, 64);
		return true;
	}
	if (!ends(c, n, ".scope"))
		return false;
	n -= strlen(".scope");
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t m = strlen(prefixes[i]);

		if (starts(c, n, prefixes[i]) && n - m == 64 && is_hex(c + m, 64)) {
			copy(ret->container_id, sizeof(ret->container_id), c + m, 64);
			return true;
		}
	}
	return false;
}

/* A pod uid in component @c, or false. */
static bool pod_of(const char *c, size_t n, struct workload *ret)
{
	const char *p = NULL;
	size_t m, i;

	if (starts(c, n, "pod") && n > 3 && !ends(c, n, ".slice")) { /* cgroupfs: podUID */
		p = c + 3;
		m = n - 3;
	} else if (starts(c, n, "kubepods") && ends(c, n, ".slice")) {
		const char *q = NULL, *x;

		for (x = c; x + 4 <= c + n; x++)
			if (!memcmp(x, "-pod", 4))
				q = x;
		if (!q)
			return false;
		p = q + 4;
		m = (size_t)(c + n - strlen(".slice") - p);
	} else {
		return false;
	}
	if (m < 32 || m >= sizeof(ret->pod_uid))
		return false;
	for (i = 0; i < m; i++)
		if (!isxdigit((unsigned char)p[i]) && p[i] != '-' && p[i] != '_')
			return false;
	copy(ret->pod_uid, sizeof(ret->pod_uid), p, m);
	for (i = 0; i < m; i++)
		if (ret->pod_uid[i] == '_')
			ret->pod_uid[i] = '-';
	return true;
}

void workload_from_path(const char *path, struct workload *ret)
{
	const char *c = path, *e;
	size_t n;

	memset(ret, 0, sizeof(*ret));
	copy(ret->path, sizeof(ret->path), path, strlen(path));
	while (*c) {
		while (*c == '/')
			c++;
		if (!*c)
			break;
		e = strchr(c, '/');
		n = e ? (size_t)(e - c) : strlen(c);
		(void)pod_of(c, n, ret);
		if (!e) /* the container is the leaf */
			(void)container_of(c, n, ret);
		if (ends(c, n, ".service"))
			copy(ret->unit, sizeof(ret->unit), c, n);
		c += n;
	}
}

/* --- rules -------------------------------------------------------------------------------- */

static int parse_rules(const char *s, enum rule *ret, size_t *ret_n)
{
	static const char *const names[] = { "unit", "container", "pod", "exe", "comm", "regex" };
	size_t n = 0, i, len;

	while (s && *s) {
		len = strcspn(s, ",");
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (len == strlen(names[i]) && !memcmp(s, names[i], len))
				break;
		if (i == sizeof(names) / sizeof(names[0]) || n == MAX_RULES)
			return -EINVAL;
		ret[n++] = (enum rule)i;
		s += len;
		if (*s == ',')
			s++;
	}
	if (!n)
		ret[n++] = RULE_EXE;
	*ret_n = n;
	return 0;
}

int identity_check_rules(const char *rules)
{
	enum rule r[MAX_RULES];
	size_t n;

	return parse_rules(rules, r, &n);
}

int identity__set_rules(struct identity *id, const char *rules)
{
	enum rule r[MAX_RULES];
	size_t n;

	if (parse_rules(rules, r, &n))
		return -EINVAL;
	pthread_mutex_lock(&id->lock);
	memcpy(id->rules, r, sizeof(r));
	id->nr_rules = n;
	pthread_mutex_unlock(&id->lock);
	return 0;
}

/* Parses export.service_regex into @ret (compiled); *@ret_n of them. 0 or -EINVAL/-E2BIG/-ENOMEM
 * with a reason in @err. */
static int parse_regexes(const char *spec, struct svc_regex *ret, size_t *ret_n, char *err,
			 size_t errlen)
{
	const char *s = spec ? spec : "";
	size_t n = 0, len, nl, i;
	char why[256];
	int r = 0;

	while (*s) {
		const char *eq;

		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			break;
		len = strcspn(s, " \t");
		eq = memchr(s, '=', len);
		nl = eq ? (size_t)(eq - s) : 0;
		for (i = 0; i < nl; i++)
			if (!isalnum((unsigned char)s[i]) && !strchr("._-", s[i]))
				break;
		if (!eq || !nl || i < nl || nl >= IDENTITY_SERVICE_NAME_MAX || eq + 1 == s + len) {
			snprintf(err, errlen, "'%.*s' is not NAME=PATTERN (a name of letters, digits, "
				 "'.', '_', '-', then an extended regular expression)", (int)len, s);
			r = -EINVAL;
			break;
		}
		if (n == MAX_REGEXES) {
			snprintf(err, errlen, "more than %d NAME=PATTERN rules", MAX_REGEXES);
			r = -E2BIG;
			break;
		}
		ret[n].re = ember_regex__new(eq + 1, (size_t)(s + len - eq - 1), why, sizeof(why));
		if (!ret[n].re) {
			r = -errno;
			snprintf(err, errlen, "%.*s: %s", (int)nl, s, why);
			break;
		}
		memcpy(ret[n].name, s, nl);
		ret[n].name[nl] = '\0';
		n++;
		s += len;
	}
	if (r) {
		while (n)
			ember_regex__free(ret[--n].re);
		return r;
	}
	*ret_n = n;
	return 0;
}

int identity_check_service_regex(const char *spec, char *err, size_t errlen)
{
	struct svc_regex x[MAX_REGEXES];
	size_t n = 0;
	int r = parse_regexes(spec, x, &n, err, errlen);

	while (!r && n)
		ember_regex__free(x[--n].re);
	return r;
}

int identity__set_service_regex(struct identity *id, const char *spec, char *err, size_t errlen)
{
	struct svc_regex x[MAX_REGEXES], old[MAX_REGEXES];
	size_t n = 0, nold;
	int r = parse_regexes(spec, x, &n, err, errlen);

	if (r)
		return r;
	pthread_mutex_lock(&id->lock);
	memcpy(old, id->regexes, sizeof(old));
	nold = id->nr_regexes;
	memcpy(id->regexes, x, sizeof(x));
	id->nr_regexes = n;
	pthread_mutex_unlock(&id->lock);
	while (nold)
		ember_regex__free(old[--nold].re);
	return 0;
}

const char *identity__service(struct identity *id, const struct workload *wl,
			      const char *exe_name, const char *comm, char *buf, size_t len)
{
	size_t i, j;

	/* under the lock throughout: a reload frees the regexes (a match is bounded: comm is
	 * 16 bytes at most, and ember_regex has a step limit) */
	pthread_mutex_lock(&id->lock);
	for (i = 0; i < id->nr_rules; i++) {
		switch (id->rules[i]) {
		case RULE_UNIT:
			if (wl && wl->unit[0]) {
				size_t m = strlen(wl->unit);

				if (ends(wl->unit, m, ".service"))
					m -= strlen(".service");
				snprintf(buf, len, "%.*s", (int)m, wl->unit);
				goto out;
			}
			break;
		case RULE_CONTAINER:
			if (wl && wl->container_id[0]) {
				snprintf(buf, len, "%.12s", wl->container_id);
				goto out;
			}
			break;
		case RULE_POD:
			if (wl && wl->pod_uid[0]) {
				snprintf(buf, len, "%s", wl->pod_uid);
				goto out;
			}
			break;
		case RULE_EXE:
			if (exe_name && *exe_name) {
				snprintf(buf, len, "%s", exe_name);
				goto out;
			}
			break;
		case RULE_COMM:
			if (comm && *comm) {
				snprintf(buf, len, "%s", comm);
				goto out;
			}
			break;
		case RULE_REGEX:
			for (j = 0; comm && j < id->nr_regexes; j++) {
				int m = ember_regex__match(id->regexes[j].re, comm, strlen(comm));

				if (m < 0)
					id->st.regex_errors++; /* over a limit: no answer, next rule */
				if (m == 1) {
					snprintf(buf, len, "%s", id->regexes[j].name);
					goto out;
				}
			}
			break;
		}
	}
	snprintf(buf, len, "%s", exe_name && *exe_name ? exe_name : comm ? comm : "unknown");
out:
	pthread_mutex_unlock(&id->lock);
	return buf;
}

/* --- cgroups ------------------------------------------------------------------------------ */

static size_t cg_slot(const struct identity *id, uint64_t cgid)
{
	size_t cap = 2 * id->max_cgs, j = hash_mix64(cgid) & (cap - 1);

	while (id->cgs[j].id && id->cgs[j].id != cgid)
		j = (j + 1) & (cap - 1);
	return j;
}

/* The count of @uid's cgroups (the shared last one past MAX_OWNERS). Under the lock. */
static uint32_t *owner_count(struct identity *id, uint32_t uid)
{
	size_t i;

	for (i = 0; i < id->nr_owners; i++)
		if (id->owners[i].uid == uid)
			return &id->owners[i].n;
	if (id->nr_owners < MAX_OWNERS) {
		id->owners[id->nr_owners].uid = uid;
		id->owners[id->nr_owners].n = 0;
		return &id->owners[id->nr_owners++].n;
	}
	return &id->owners[MAX_OWNERS - 1].n;
}

/* Under the lock. */
static void cg_add(struct identity *id, uint64_t cgid, const char *path, uint32_t uid)
{
	size_t j;

	if (!cgid)
		return;
	j = cg_slot(id, cgid);
	if (id->cgs[j].id) {
		/* an id seen before: a cgroup removed since may have left its id to a new one, so the
		 * path the newest walk found is the one kept, never a gone cgroup's */
		id->cgs[j].seen = id->walk;
		if (strcmp(id->cgs[j].path, path)) {
			char *p = strdup(path);

			if (p) {
				free(id->cgs[j].path);
				id->cgs[j].path = p;
			}
		}
		return;
	}
	if (id->nr_cgs >= id->max_cgs || (uid && *owner_count(id, uid) >= OWNER_SHARE(id))) {
		id->refused_now++;
		id->st.refused++;
		return;
	}
	id->cgs[j].path = strdup(path);
	if (!id->cgs[j].path)
		return;
	id->cgs[j].id = cgid;
	id->cgs[j].seen = id->walk;
	id->cgs[j].uid = uid;
	if (uid)
		(*owner_count(id, uid))++;
	id->nr_cgs++;
}

/* Drops the cgroups the last (whole) walk did not find: removed, their room and their ids free
 * for new ones. The table is rebuilt (open addressing has no tombstones here). Under the lock;
 * the number dropped. */
static size_t cg_sweep(struct identity *id)
{
	struct cg *old = id->cgs, *nw;
	size_t j, k, gone = 0, cap = 2 * id->max_cgs;

	for (j = 0; j < cap; j++)
		if (old[j].id && old[j].seen != id->walk)
			gone++;
	if (!gone)
		return 0;
	nw = calloc(cap, sizeof(*nw));
	if (!nw)
		return 0; /* kept until a later walk */
	for (j = 0; j < cap; j++) {
		if (!old[j].id)
			continue;
		if (old[j].seen != id->walk) {
			if (old[j].uid && *owner_count(id, old[j].uid))
				(*owner_count(id, old[j].uid))--;
			free(old[j].path);
			id->nr_cgs--;
			continue;
		}
		k = hash_mix64(old[j].id) & (cap - 1);
		while (nw[k].id)
			k = (k + 1) & (cap - 1);
		nw[k] = old[j];
	}
	free(old);
	id->cgs = nw;
	id->st.dropped += gone;
	return gone;
}

/* What a walk found, collected without the lock: then merged under it. */
struct walk_out {
	struct found {
		uint64_t ino;
		uint32_t uid;
		uint32_t path; /* offset in paths */
	} *v;
	size_t n, cap, visits, max_visits;
	struct sbuf paths;
	bool cut; /* stopped at MAX_VISITS (or could not start): what it missed may still be there */
};

static void found_add(struct walk_out *w, uint64_t ino, uint32_t uid, const char *rel)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 1024;
		struct found *v = realloc(w->v, cap * sizeof(*v));

		if (!v) {
			w->cut = true; /* a partial list drops nothing */
			return;
		}
		w->v = v;
		w->cap = cap;
	}
	w->v[w->n].ino = ino;
	w->v[w->n].uid = uid;
	w->v[w->n].path = (uint32_t)w->paths.len;
	sbuf_adds(&w->paths, rel);
	sbuf_addc(&w->paths, '\0');
	w->n++;
}

/* Walks @dir (@rel: its path under the root) into @w. Without the identity's lock: a walk of a
 * mount a user filled (65,536 cgroups: seconds on a loaded machine) holds up no sample. */
static void scan_dir(struct walk_out *w, int dfd, char *rel, size_t rlen, int depth)
{
	DIR *d;
	struct dirent *de;
	struct stat st;
	int fd;

	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	while ((de = readdir(d))) {
		size_t n;

		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (w->visits >= w->max_visits) {
			w->cut = true;
			break;
		}
		w->visits++;
		n = strlen(de->d_name);
		if (rlen + 1 + n >= IDENTITY_PATH_MAX)
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		if (fstat(fd, &st)) {
			close(fd);
			continue;
		}
		rel[rlen] = '/';
		memcpy(rel + rlen + 1, de->d_name, n + 1);
		found_add(w, (uint64_t)st.st_ino, st.st_uid, rel);
		if (depth < MAX_DEPTH)
			scan_dir(w, fd, rel, rlen + 1 + n, depth + 1);
		else
			close(fd);
		rel[rlen] = '\0';
	}
	closedir(d);
}

/* A walk of the mount, then merged: the cgroups it did not find are dropped (when it saw
 * everything), then what found no room before that is added. One walk at a time (walk_lock);
 * the identity's lock only for the merge. */
static void scan(struct identity *id)
{
	struct walk_out w = { .paths = SBUF_INIT, .max_visits = MAX_VISITS(id) };
	char rel[IDENTITY_PATH_MAX] = "";
	struct stat st;
	size_t i;
	int fd;

	pthread_mutex_lock(&id->walk_lock);
	pthread_mutex_lock(&id->lock);
	if (id->last_scan_ns && mono_ns() - id->last_scan_ns < SCAN_EVERY_NS) {
		/* another thread's walk just ended */
		pthread_mutex_unlock(&id->lock);
		pthread_mutex_unlock(&id->walk_lock);
		return;
	}
	id->st.scans++;
	pthread_mutex_unlock(&id->lock);
	fd = open(id->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		w.cut = true; /* nothing known: nothing dropped */
	} else {
		if (!fstat(fd, &st))
			found_add(&w, (uint64_t)st.st_ino, 0, "/");
		scan_dir(&w, fd, rel, 0, 0);
	}
	pthread_mutex_lock(&id->lock);
	id->last_scan_ns = mono_ns(); /* from the walk's end: a long walk is not run back to back */
	id->walk++;
	id->refused_now = 0;
	for (i = 0; i < w.n; i++)
		cg_add(id, w.v[i].ino, w.paths.buf + w.v[i].path, w.v[i].uid);
	if (!w.cut && cg_sweep(id) && id->refused_now) {
		id->st.refused -= id->refused_now; /* counted again if still so */
		id->refused_now = 0;
		for (i = 0; i < w.n; i++)
			cg_add(id, w.v[i].ino, w.paths.buf + w.v[i].path, w.v[i].uid);
	}
	pthread_mutex_unlock(&id->lock);
	pthread_mutex_unlock(&id->walk_lock);
	free(w.v);
	sbuf_fini(&w.paths);
}

bool identity__lookup(struct identity *id, uint64_t cgroup_id, struct workload *ret,
		      bool may_scan)
{
	size_t j;
	bool found;

	memset(ret, 0, sizeof(*ret));
	if (!cgroup_id)
		return false;
	pthread_mutex_lock(&id->lock);
	j = cg_slot(id, cgroup_id);
	if (!id->cgs[j].id && may_scan && mono_ns() - id->last_scan_ns >= SCAN_EVERY_NS) {
		pthread_mutex_unlock(&id->lock);
		scan(id);
		pthread_mutex_lock(&id->lock);
		j = cg_slot(id, cgroup_id);
		if (!id->cgs[j].id)
			id->st.unknown++;
	}
	found = id->cgs[j].id != 0;
	if (found)
		workload_from_path(id->cgs[j].path, ret);
	pthread_mutex_unlock(&id->lock);
	return found;
}

void identity__refresh(struct identity *id)
{
	bool due;

	pthread_mutex_lock(&id->lock);
	due = mono_ns() - id->last_scan_ns >= SCAN_EVERY_NS;
	pthread_mutex_unlock(&id->lock);
	if (due)
		scan(id);
}

/* --- processes ---------------------------------------------------------------------------- */

/*
 * The GNU build id of @pid's executable, as hex into @ret ("" when unknown): the symbolizer's
 * image of that very file when it has one (elfshare: the same device, inode, size and mtime as
 * the file open here), else read with pread (elfsym_read_build_id(): libelf's ELF_C_READ), never
 * mapped, so that a file truncated while it is read is a short read, not a SIGBUS
 * (docs/security.md).
 */
static void read_build_id(struct identity *id, uint32_t pid, char *ret, size_t cap)
{
	const uint8_t *known;
	struct filecache_id fid;
	struct elfsym *img = NULL;
	struct stat st;
	uint8_t bid[64];
	int n = 0, i;
	int fd;

	ret[0] = '\0';
	fd = procfs_open_exe(NULL, pid); /* a regular file, non-blocking */
	if (fd < 0)
		return;
	if (id->share && !fstat(fd, &st)) {
		filecache_id_of(&st, &fid);
		img = elfshare__find(id->share, &fid);
	}
	if (img) {
		n = (int)elfsym__build_id(img, &known);
		if (n > (int)sizeof(bid))
			n = 0;
		if (n > 0)
			memcpy(bid, known, (size_t)n);
		elfsym__free(img); /* the reference elfshare__find() took */
		__atomic_fetch_add(&id->bid_borrowed, 1, __ATOMIC_RELAXED);
	} else {
		n = elfsym_read_build_id(fd, bid, sizeof(bid));
		__atomic_fetch_add(&id->bid_read, 1, __ATOMIC_RELAXED);
	}
	for (i = 0; i < n && (size_t)(2 * i + 2) < cap; i++)
		snprintf(ret + 2 * i, 3, "%02x", bid[i]);
	close(fd);
}

/* The cgroup v1 hierarchies of @pid (/proc/PID/cgroup's lines other than "0::"): the first
 * container id, pod uid and systemd unit their paths give, into @ret. */
static void read_v1(struct identity *id, uint32_t pid, struct proc_info *ret)
{
	char *text = NULL, *line, *next;
	struct workload wl;
	size_t cap = 0, len;
	int r;

	r = proc_tracker__cgroup(id->tracker, pid, &text, &cap, &len);
	if (r && r != -EFBIG) {
		free(text);
		return;
	}
	for (line = text; line && *line; line = next) {
		char *c, *p;

		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = '\0';
		c = strchr(line, ':');
		p = c ? strchr(c + 1, ':') : NULL;
		if (!p || (c[1] == ':' && !strncmp(line, "0:", 2)))
			continue; /* v2's: the sample's cgroup id says it, at sample time */
		workload_from_path(p + 1, &wl);
		if (!ret->v1_container_id[0] && wl.container_id[0])
			memcpy(ret->v1_container_id, wl.container_id, sizeof(wl.container_id));
		if (!ret->v1_pod_uid[0] && wl.pod_uid[0])
			memcpy(ret->v1_pod_uid, wl.pod_uid, sizeof(wl.pod_uid));
		if (!ret->v1_unit[0] && wl.unit[0])
			memcpy(ret->v1_unit, wl.unit, sizeof(wl.unit));
	}
	free(text);
}

/* What /proc says of @pid's executable now, into @ret (no lock held). 0 or -ENOENT. */
static int read_exe(struct identity *id, uint32_t pid, struct proc_info *ret)
{
	const char *slash;

	memset(ret, 0, sizeof(*ret));
	if (procfs_exe_path(NULL, pid, ret->exe_path, sizeof(ret->exe_path)) <= 0)
		return -ENOENT;
	slash = strrchr(ret->exe_path, '/');
	slash = slash ? slash + 1 : ret->exe_path;
	copy(ret->exe_name, sizeof(ret->exe_name), slash, strlen(slash));
	read_build_id(id, pid, ret->build_id, sizeof(ret->build_id));
	read_v1(id, pid, ret);
	ret->current = true;
	return 0;
}

/* The tracker's exec or exit event ended @pid's image (the worker's thread): a read taken at
 * or after the event may be of the next image (the event comes up to a tick late), so it names
 * none of this one's samples. */
static void iproc_ended(void *ctx, uint32_t pid, void *state, uint64_t event_ns)
{
	struct identity *id = ctx;
	struct iproc *s = state;

	(void)pid;
	pthread_mutex_lock(&id->lock);
	s->end_ns = event_ns ? event_ns : mono_ns();
	if (s->have && s->read_ns >= s->end_ns)
		s->have = false;
	id->st.proc_events++;
	pthread_mutex_unlock(&id->lock);
}

/* Under the lock: the ended images' states let go once a second. */
static void iproc_prune(struct identity *id, uint64_t now)
{
	if (now - id->pruned_ns < 1000000000ull)
		return;
	id->pruned_ns = now;
	proc_tracker__ext_prune(id->tracker, id->ext);
}

/* Under the lock: -ESTALE, counted (a sample of an image before an exec, never read). */
static int stale(struct identity *id)
{
	id->st.stale++;
	return -ESTALE;
}

int identity__process(struct identity *id, uint32_t pid, uint64_t time_ns, struct proc_info *ret)
{
	struct proc_info info, last;
	struct iproc *s;
	uint64_t t, exec_ns = 0, read_ns;
	bool have_last = false;
	int r;

	if (!pid)
		return -ENOENT;
	if (id->ext < 0) /* no tracker (a test, a tool): read each time */
		return read_exe(id, pid, ret);
	/* the sample's time on the tracker's clock */
	t = (uint64_t)((int64_t)time_ns - real_minus_mono_ns());
	pthread_mutex_lock(&id->lock);
	iproc_prune(id, mono_ns());
	s = proc_tracker__ext_at(id->tracker, id->ext, pid, t);
	if (s && s->end_ns && t >= s->end_ns) {
		/* after the last image's end: another image (an exec not asked about yet), else
		 * this one's threads that ran on after its leader's exit (what /proc says decides)
		 */
		if ((have_last = s->have)) {
			last = s->info;
			last.image_ns = s->gen;
			last.current = false;
		}
		s = NULL;
	}
	if (s) {
		/* an image read before (from its exec on), or one that ended unread: what ran
		 * before an exec that /proc no longer shows */
		r = s->have && t >= s->from_ns ? 0 : stale(id);
		if (!r) {
			*ret = s->info;
			ret->image_ns = s->gen;
			ret->current = !s->end_ns;
		}
		pthread_mutex_unlock(&id->lock);
		return r;
	}
	/* no state of its image yet: a sample from before an exec the tracker was told of (its
	 * image before it never asked for) is not named by /proc's new executable */
	if (!proc_tracker__last_exec(id->tracker, pid, &exec_ns) && t < exec_ns) {
		r = stale(id);
		pthread_mutex_unlock(&id->lock);
		return r;
	}
	pthread_mutex_unlock(&id->lock);
	/* outside the lock: /proc and the file may take their time */
	read_ns = mono_ns();
	r = read_exe(id, pid, &info);
	if (r && have_last) {
		*ret = last; /* gone: the image it ran last */
		return 0;
	}
	if (r)
		return r;
	pthread_mutex_lock(&id->lock);
	/* an exec told since the read: what was read may be the image before it (not kept) */
	if (proc_tracker__last_exec(id->tracker, pid, &exec_ns))
		exec_ns = 0;
	s = NULL;
	if (exec_ns > read_ns)
		;
	else if (proc_tracker__ext_count(id->tracker, id->ext) < MAX_PROCS)
		s = proc_tracker__ext(id->tracker, id->ext, pid, true);
	else
		id->st.not_kept++; /* counted: read again at its next sample */
	if (s && !s->have && !s->end_ns) {
		s->info = info;
		s->have = true;
		s->read_ns = read_ns;
		s->from_ns = exec_ns;
		s->gen = ++id->gen;
	}
	info.image_ns = s && s->have ? s->gen : 0;
	r = s && s->have && t < s->from_ns ? stale(id) : 0;
	pthread_mutex_unlock(&id->lock);
	if (!r)
		*ret = info;
	return r;
}

const char *identity__cached_exe(struct identity *id, uint32_t pid, char *buf, size_t len)
{
	const char *r = NULL;
	struct iproc *s;

	if (!pid || id->ext < 0)
		return NULL;
	pthread_mutex_lock(&id->lock);
	/* no time here: the current image, else the newest before its exit (or exec) */
	s = proc_tracker__ext_last(id->tracker, id->ext, pid);
	if (s && s->have) {
		snprintf(buf, len, "%s", s->info.exe_name);
		r = buf;
	}
	pthread_mutex_unlock(&id->lock);
	return r;
}

void identity_merge_v1(struct workload *wl, const struct proc_info *pi)
{
	if (!pi || wl->container_id[0] || wl->pod_uid[0])
		return; /* v2 said where it ran */
	memcpy(wl->container_id, pi->v1_container_id, sizeof(wl->container_id));
	memcpy(wl->pod_uid, pi->v1_pod_uid, sizeof(wl->pod_uid));
	if (!wl->unit[0])
		memcpy(wl->unit, pi->v1_unit, sizeof(wl->unit));
}

/* @wl completed by @pid's cached v1 identity (no I/O). */
static void merge_cached_v1(struct identity *id, uint32_t pid, struct workload *wl)
{
	struct iproc *s;

	if (!pid || id->ext < 0)
		return;
	pthread_mutex_lock(&id->lock);
	s = proc_tracker__ext_last(id->tracker, id->ext, pid);
	if (s && s->have)
		identity_merge_v1(wl, &s->info);
	pthread_mutex_unlock(&id->lock);
}

void identity__stats(struct identity *id, struct identity_stats *ret)
{
	pthread_mutex_lock(&id->lock);
	*ret = id->st;
	ret->build_ids_read = __atomic_load_n(&id->bid_read, __ATOMIC_RELAXED);
	ret->build_ids_borrowed = __atomic_load_n(&id->bid_borrowed, __ATOMIC_RELAXED);
	ret->cgroups = id->nr_cgs;
	ret->procs = id->ext >= 0 ? proc_tracker__ext_count(id->tracker, id->ext) : 0;
	pthread_mutex_unlock(&id->lock);
}

/* The cgroup2 mount from /proc/mounts ("/sys/fs/cgroup", or "/sys/fs/cgroup/unified" on a
 * hybrid host) into @buf; @fallback when there is none. */
static void cgroup2_mount(char *buf, size_t len, const char *fallback)
{
	char line[1024], dev[256], dir[512], type[64];
	FILE *f = fopen("/proc/mounts", "re");

	snprintf(buf, len, "%s", fallback);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%255s %511s %63s", dev, dir, type) == 3 &&
		    !strcmp(type, "cgroup2")) {
			snprintf(buf, len, "%s", dir);
			break;
		}
	}
	fclose(f);
}

void identity__set_share(struct identity *id, struct elfshare *share)
{
	id->share = share;
}

int identity__set_procs(struct identity *id, struct proc_tracker *pt)
{
	if (id->ext >= 0)
		proc_tracker__ext_unregister(id->tracker, id->ext);
	id->ext = -1;
	id->tracker = pt;
	if (!pt)
		return 0;
	id->ext =
	    proc_tracker__ext_register(pt, &(struct proc_ext_ops){ .name = "identity",
								   .size = sizeof(struct iproc),
								   .keep_ns = IDENT_KEEP_NS,
								   .ended = iproc_ended,
								   .ctx = id });
	return id->ext < 0 ? id->ext : 0;
}

struct identity *identity__new(const char *cgroup_root, const char *rules)
{
	return identity__new_sized(cgroup_root, rules, MAX_CGROUPS);
}

struct identity *identity__new_sized(const char *cgroup_root, const char *rules, size_t max_cgroups)
{
	struct identity *id;

	if (max_cgroups < 4 || (max_cgroups & (max_cgroups - 1))) {
		errno = EINVAL;
		return NULL;
	}
	id = calloc(1, sizeof(*id));
	if (!id)
		return NULL;
	id->max_cgs = max_cgroups;
	pthread_mutex_init(&id->lock, NULL);
	pthread_mutex_init(&id->walk_lock, NULL);
	if (cgroup_root)
		snprintf(id->root, sizeof(id->root), "%s", cgroup_root);
	else
		cgroup2_mount(id->root, sizeof(id->root), "/sys/fs/cgroup");
	id->cgs = calloc(2 * id->max_cgs, sizeof(*id->cgs));
	id->ext = -1;
	if (!id->cgs) {
		identity__free(id);
		errno = ENOMEM;
		return NULL;
	}
	if (parse_rules(rules, id->rules, &id->nr_rules)) {
		identity__free(id);
		errno = EINVAL;
		return NULL;
	}
	return id;
}

void identity__free(struct identity *id)
{
	size_t j;

	if (!id)
		return;
	if (id->cgs)
		for (j = 0; j < 2 * id->max_cgs; j++)
			free(id->cgs[j].path);
	free(id->cgs);
	if (id->ext >= 0) /* before the tracker goes */
		proc_tracker__ext_unregister(id->tracker, id->ext);
	while (id->nr_regexes)
		ember_regex__free(id->regexes[--id->nr_regexes].re);
	pthread_mutex_destroy(&id->walk_lock);
	pthread_mutex_destroy(&id->lock);
	free(id);
}

/* --- the store's filter ------------------------------------------------------------------- */

int identity_group_parse(const char *s, enum identity_group *ret)
{
	static const char *const names[] = { "", "container", "pod", "service", "unit" };
	size_t i;

	for (i = 1; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i])) {
			*ret = (enum identity_group)i;
			return 0;
		}
	return -EINVAL;
}

static const char *service_of(struct identity_filter *f, const struct workload *wl, uint32_t pid,
			      const char *comm, char *buf, size_t len)
{
	char exe[128];

	return identity__service(f->id, wl, identity__cached_exe(f->id, pid, exe, sizeof(exe)),
				 comm, buf, len);
}

bool identity_filter_match(uint64_t cgroup_id, uint32_t pid, const char *comm, void *arg)
{
	struct identity_filter *f = arg;
	struct workload wl;
	char svc[256];

	(void)identity__lookup(f->id, cgroup_id, &wl, false);
	merge_cached_v1(f->id, pid, &wl);
	if (f->container && (strlen(f->container) < 4 ||
			     strncmp(wl.container_id, f->container, strlen(f->container))))
		return false;
	if (f->unit) {
		size_t n = strlen(f->unit);

		if (strcmp(wl.unit, f->unit) &&
		    !(!strncmp(wl.unit, f->unit, n) && !strcmp(wl.unit + n, ".service")))
			return false;
	}
	if (f->service && strcmp(service_of(f, &wl, pid, comm, svc, sizeof(svc)), f->service))
		return false;
	return true;
}

const char *identity_filter_group(uint64_t cgroup_id, uint32_t pid, const char *comm, void *arg)
{
	struct identity_filter *f = arg;
	struct workload wl;

	(void)identity__lookup(f->id, cgroup_id, &wl, false);
	merge_cached_v1(f->id, pid, &wl);
	switch (f->group) {
	case IDENTITY_GROUP_CONTAINER:
		return wl.container_id[0] ? snprintf(f->buf, sizeof(f->buf), "%.12s",
						     wl.container_id), f->buf : NULL;
	case IDENTITY_GROUP_POD:
		return wl.pod_uid[0] ? snprintf(f->buf, sizeof(f->buf), "%s", wl.pod_uid), f->buf
				     : NULL;
	case IDENTITY_GROUP_UNIT:
		return wl.unit[0] ? snprintf(f->buf, sizeof(f->buf), "%s", wl.unit), f->buf : NULL;
	case IDENTITY_GROUP_SERVICE:
		return service_of(f, &wl, pid, comm, f->buf, sizeof(f->buf));
	case IDENTITY_GROUP_NONE:
		break;
	}
	return NULL;
}
