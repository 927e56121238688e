// SPDX-License-Identifier: MIT
/* dbgfetch: debug files from debuginfod servers (include/ember/daemon/elf/dbgfetch.h). */
#include "ember/daemon/elf/dbgfetch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/debuginfod.h>

#include "ember/core/base/clock.h"
#include "ember/core/base/hash.h"
#include "ember/daemon/elf/elfsym.h"

/* Build-ids that failed lately, remembered in a ring (the oldest forgotten first). */
#define MISS_SLOTS 1024
/* After a fetch timed out or could not connect, none is tried for this long: a server that
 * hangs costs one timeout per period, not one per stripped file of the host. */
#define DOWN_NS (30ULL * 1000000000ULL)
#define MAX_THREADS 8
#define BUDGET_WINDOW_NS (60ULL * 1000000000ULL)
#define BID_MAX 64
/* libdebuginfod's folders (one per build-id asked) kept at most: each miss leaves one, a
 * block of the disk and an inode; ours are removed at once, this bounds what other runs left */
#define MAX_CLIENT_DIRS 256

struct miss {
	uint64_t hash;
	uint64_t time_ns;
};

struct job {
	uint64_t hash;
	uint8_t bid[BID_MAX];
	uint8_t len;
};

struct dbgfetch;

/* One fetching thread and its client (a debuginfod_client is not to be shared by threads). */
struct fworker {
	struct dbgfetch *f;
	debuginfod_client *client;
	pthread_t th;
	bool started;
	bool busy;
	struct job job;	     /* being fetched (busy) */
	uint64_t deadline_ns; /* of the fetch under way (the progress callback's) */
};

struct dbgfetch {
	struct dbgfetch_opts o;
	char dir[PATH_MAX];	   /* the folder searched as a debug dir */
	char client_dir[PATH_MAX]; /* libdebuginfod's own cache, inside it */
	int null_fd;		 /* its verbose output: /dev/null */
	pthread_mutex_t lock;	 /* the queue, the misses, the budget, the counters: never held
				    across a fetch or a walk of the folder */
	pthread_cond_t cond;	 /* work queued, stop, settled */
	pthread_mutex_t dir_lock; /* the folder: storing, bounding, sweeping */
	struct job *queue;	 /* ring of o.max_queue */
	unsigned int qhead, qlen;
	struct fworker w[MAX_THREADS];
	unsigned int nw;
	bool stop;
	uint64_t down_until_ns;	 /* no fetch before (DOWN_NS after a timeout or connection error) */
	uint64_t window_ns;	 /* the budget's minute began then */
	uint64_t spent_ns;	 /* fetch time in it */
	bool budget_refused;	 /* a request was refused in this minute */
	uint64_t done_seq;
	struct miss misses[MISS_SLOTS];
	unsigned int next_miss;
	struct dbgfetch_stats st;
};

#define STAT_ADD(f, field, v)                                                                      \
	do {                                                                                       \
		pthread_mutex_lock(&(f)->lock);                                                    \
		(f)->st.field += (v);                                                              \
		pthread_mutex_unlock(&(f)->lock);                                                  \
	} while (0)

/* A folder of root's (our uid's) that is no link: created if missing. 0 or -errno. */
static int own_dir(const char *path)
{
	struct stat sb;

	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	if (lstat(path, &sb))
		return -errno;
	if (S_ISLNK(sb.st_mode) || !S_ISDIR(sb.st_mode))
		return -ENOTDIR;
	if (sb.st_uid != geteuid() || (sb.st_mode & 022))
		return -EPERM;
	return 0;
}

/* mkdir -p of @path's parents (0755), then @path itself as own_dir(). */
static int make_dirs(const char *path)
{
	char tmp[PATH_MAX], *p;

	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp) || tmp[0] != '/')
		return -EINVAL;
	for (p = tmp + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return own_dir(tmp);
}

/* libdebuginfod calls this during a transfer (about once a second, and at each progress):
 * non-zero stops it, at its deadline or when emberd stops (dbgfetch__free joins the threads) */
static int progress(debuginfod_client *c, long a, long b)
{
	struct fworker *w = debuginfod_get_user_data(c);

	(void)a;
	(void)b;
	return w && (mono_ns() > w->deadline_ns || __atomic_load_n(&w->f->stop, __ATOMIC_RELAXED));
}

/*
 * libdebuginfod's settings files in its cache folder, written here when missing: how long it
 * remembers a miss (as long as we do), how often it cleans its folder and what it drops then
 * (ours are moved out at once: only misses stay).
 */
static void client_config(const char *dir, uint32_t miss_s)
{
	static const struct {
		const char *name;
		unsigned long long def;
	} files[] = {
		{ "cache_clean_interval_s", 86400 },
		{ "max_unused_age_s", 604800 },
		{ "cache_miss_s", 0 },
	};
	char path[PATH_MAX + 32], text[32];
	size_t i;
	int fd, n;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (snprintf(path, sizeof(path), "%s/%s", dir, files[i].name) >= (int)sizeof(path))
			continue;
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0)
			continue; /* there already (kept), or cannot: libdebuginfod's defaults */
		n = snprintf(text, sizeof(text), "%llu\n",
			     files[i].def ? files[i].def : (unsigned long long)miss_s);
		if (write(fd, text, (size_t)n) != n)
			(void)unlink(path);
		close(fd);
	}
}

static void setenv_default(const char *name, unsigned long long v)
{
	char buf[32];

	if (getenv(name))
		return; /* the operator's own setting wins */
	snprintf(buf, sizeof(buf), "%llu", v);
	(void)setenv(name, buf, 1);
}

/* DIR/.build-id/xx/rest.debug of @bid. */
static int bid_path(const struct dbgfetch *f, const uint8_t *bid, size_t len, char *buf, size_t cap,
		    size_t *ret_dir_len)
{
	size_t o, i;

	o = (size_t)snprintf(buf, cap, "%s/.build-id/%02x", f->dir, bid[0]);
	if (o + 2 * len + 8 >= cap)
		return -ENAMETOOLONG;
	*ret_dir_len = o;
	buf[o++] = '/';
	for (i = 1; i < len; i++)
		o += (size_t)snprintf(buf + o, cap - o, "%02x", bid[i]);
	snprintf(buf + o, cap - o, ".debug");
	return 0;
}

struct cfile {
	char path[PATH_MAX];
	uint64_t bytes;
	int64_t mtime_ns;
};

static int by_mtime(const void *a, const void *b)
{
	const struct cfile *x = a, *y = b;

	return (x->mtime_ns > y->mtime_ns) - (x->mtime_ns < y->mtime_ns);
}

/* Keeps the folder's files under max_bytes, least recently used (mtime: touched at each use)
 * first. Called with dir_lock held. */
static void enforce_bound(struct dbgfetch *f)
{
	struct cfile *files = NULL, *nf;
	size_t n = 0, cap = 0, i;
	uint64_t total = 0;
	char top[PATH_MAX], sub[PATH_MAX];
	struct dirent *d1, *d2;
	DIR *a, *b;
	struct stat sb;

	if (snprintf(top, sizeof(top), "%s/.build-id", f->dir) >= (int)sizeof(top))
		return;
	a = opendir(top);
	if (!a)
		return;
	while ((d1 = readdir(a))) {
		if (d1->d_name[0] == '.' || strlen(d1->d_name) != 2)
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", top, d1->d_name) >= (int)sizeof(sub))
			continue;
		b = opendir(sub);
		if (!b)
			continue;
		while ((d2 = readdir(b))) {
			if (d2->d_name[0] == '.')
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				nf = realloc(files, cap * sizeof(*files));
				if (!nf)
					break;
				files = nf;
			}
			if (snprintf(files[n].path, sizeof(files[n].path), "%s/%s", sub,
				     d2->d_name) >= (int)sizeof(files[n].path) ||
			    lstat(files[n].path, &sb) || !S_ISREG(sb.st_mode))
				continue;
			files[n].bytes = (uint64_t)sb.st_blocks * 512;
			files[n].mtime_ns =
			    (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
			total += files[n].bytes;
			n++;
		}
		closedir(b);
	}
	closedir(a);
	if (f->o.max_bytes && total > f->o.max_bytes) {
		qsort(files, n, sizeof(*files), by_mtime);
		for (i = 0; i < n && total > f->o.max_bytes; i++) {
			if (unlink(files[i].path))
				continue;
			total -= files[i].bytes;
			STAT_ADD(f, evictions, 1);
		}
	}
	pthread_mutex_lock(&f->lock);
	f->st.cache_bytes = total;
	pthread_mutex_unlock(&f->lock);
	free(files);
}

/* Moves the fetched file at @from (libdebuginfod's cache) to @to once it proves to be the debug
 * file of @bid. 0 or -errno. */
static int store(struct dbgfetch *f, int fd, const char *from, const char *to, size_t dir_len,
		 const uint8_t *bid, size_t len)
{
	uint8_t got[64];
	char dir[PATH_MAX];
	struct stat sb;
	int n, err;

	n = elfsym_read_build_id(fd, got, sizeof(got));
	if (n != (int)len || memcmp(got, bid, len))
		return -EBADMSG; /* not ELF, or another file's: not kept */
	if (fstat(fd, &sb))
		return -errno;
	if (f->o.max_bytes && (uint64_t)sb.st_size > f->o.max_bytes)
		return -EFBIG;
	snprintf(dir, sizeof(dir), "%.*s", (int)dir_len, to);
	err = own_dir(dir);
	if (err)
		return err;
	if (rename(from, to))
		return -errno;
	(void)chmod(to, 0400);
	STAT_ADD(f, fetched_bytes, (uint64_t)sb.st_size);
	return 0;
}

/* Called with the lock held. */
static bool missed_lately(struct dbgfetch *f, uint64_t h, uint64_t now)
{
	unsigned int i;

	for (i = 0; i < MISS_SLOTS; i++)
		if (f->misses[i].hash == h && f->misses[i].time_ns &&
		    now - f->misses[i].time_ns < (uint64_t)f->o.retry_s * 1000000000ULL)
			return true;
	return false;
}

static void hex_of(const uint8_t *bid, size_t len, char *out)
{
	static const char hx[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = hx[bid[i] >> 4];
		out[2 * i + 1] = hx[bid[i] & 15];
	}
	out[2 * len] = '\0';
}

/* Removes libdebuginfod's folder of a build-id (CLIENT/HEX/ and the files in it: a miss's
 * empty marker, a partial download). 1 removed, 0 none. */
static int remove_client_dir(const char *path)
{
	char sub[PATH_MAX + 260];
	struct dirent *d;
	DIR *dir;
	int fd;

	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return 0;
	}
	while ((d = readdir(dir))) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", path, d->d_name) < (int)sizeof(sub))
			(void)unlink(sub); /* files only: a folder in it stays, and so does this */
	}
	closedir(dir);
	return rmdir(path) == 0;
}

struct cdir {
	char name[NAME_MAX + 1];
	int64_t mtime_ns;
};

static int cdir_by_mtime(const void *a, const void *b)
{
	const struct cdir *x = a, *y = b;

	return (x->mtime_ns > y->mtime_ns) - (x->mtime_ns < y->mtime_ns);
}

/*
 * libdebuginfod's folder: one sub-folder per build-id asked (a miss leaves an empty marker in
 * it, which its size bound does not count). Ours go as each fetch ends; this removes what is
 * left older than retry_s (other runs', a crash's), and the oldest past MAX_CLIENT_DIRS, and
 * counts what stays. Called with dir_lock held.
 */
static void sweep_client_dirs(struct dbgfetch *f)
{
	struct cdir *v = NULL, *nv;
	size_t n = 0, cap = 0, i, left;
	uint64_t removed = 0;
	int64_t now = (int64_t)clock_ns(CLOCK_REALTIME);
	char path[PATH_MAX + NAME_MAX + 2];
	struct dirent *d;
	struct stat sb;
	DIR *dir;

	dir = opendir(f->client_dir);
	if (!dir)
		return;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.' || d->d_type != DT_DIR)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", f->client_dir, d->d_name) >=
			(int)sizeof(path) ||
		    lstat(path, &sb) || !S_ISDIR(sb.st_mode))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		snprintf(v[n].name, sizeof(v[n].name), "%s", d->d_name);
		v[n].mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
		n++;
	}
	closedir(dir);
	if (n)
		qsort(v, n, sizeof(*v), cdir_by_mtime);
	left = n;
	for (i = 0; i < n; i++) {
		if (left <= MAX_CLIENT_DIRS &&
		    now - v[i].mtime_ns < (int64_t)f->o.retry_s * 1000000000)
			break; /* oldest first: the rest are newer */
		snprintf(path, sizeof(path), "%s/%s", f->client_dir, v[i].name);
		if (remove_client_dir(path)) {
			removed++;
			left--;
		}
	}
	free(v);
	pthread_mutex_lock(&f->lock);
	f->st.client_dirs = left;
	f->st.client_dirs_removed += removed;
	pthread_mutex_unlock(&f->lock);
}

/* Whether the minute's budget is spent, the minute rolled over first. Lock held. */
static bool budget_spent(struct dbgfetch *f, uint64_t now)
{
	if (now - f->window_ns >= BUDGET_WINDOW_NS) {
		f->window_ns = now;
		f->spent_ns = 0;
		if (f->budget_refused)
			f->done_seq++; /* the refused may ask again */
		f->budget_refused = false;
	}
	return f->spent_ns >= (uint64_t)f->o.budget_ms * 1000000ULL;
}

/* One fetch on @w's thread, the lock not held. 1 stored, or -errno. */
static int fetch_one(struct fworker *w, uint64_t *ret_ns)
{
	struct dbgfetch *f = w->f;
	const struct job *j = &w->job;
	char path[PATH_MAX], hex[2 * BID_MAX + 1], cdir[PATH_MAX + 2 * BID_MAX + 2];
	char *got = NULL, *slash;
	uint64_t t0, now;
	size_t dir_len;
	int fd, r;

	r = bid_path(f, j->bid, j->len, path, sizeof(path), &dir_len);
	if (r)
		return r;
	t0 = mono_ns();
	w->deadline_ns = t0 + (uint64_t)f->o.timeout_ms * 1000000ULL;
	fd = debuginfod_find_debuginfo(w->client, j->bid, (int)j->len, &got);
	now = mono_ns();
	*ret_ns = now - t0;
	pthread_mutex_lock(&f->dir_lock);
	if (fd >= 0) {
		r = store(f, fd, got, path, dir_len, j->bid, j->len);
		close(fd);
		if (!r) {
			enforce_bound(f);
			r = 1;
		}
	} else {
		r = now > w->deadline_ns ? -ETIMEDOUT : fd;
	}
	if (got) {
		/* libdebuginfod's copy (if still there) and its folder go: ours is the one kept */
		(void)unlink(got);
		slash = strrchr(got, '/');
		if (slash) {
			*slash = '\0';
			(void)rmdir(got);
		}
		free(got);
	}
	/* a miss leaves a folder with an empty marker: our own negative cache is the one kept */
	hex_of(j->bid, j->len, hex);
	if (snprintf(cdir, sizeof(cdir), "%s/%s", f->client_dir, hex) < (int)sizeof(cdir) &&
	    remove_client_dir(cdir))
		STAT_ADD(f, client_dirs_removed, 1);
	sweep_client_dirs(f); /* counted; the rest bounded */
	pthread_mutex_unlock(&f->dir_lock);
	return r;
}

static bool queued_or_busy(struct dbgfetch *f, uint64_t h)
{
	unsigned int i;

	for (i = 0; i < f->qlen; i++)
		if (f->queue[(f->qhead + i) % f->o.max_queue].hash == h)
			return true;
	for (i = 0; i < f->nw; i++)
		if (f->w[i].busy && f->w[i].job.hash == h)
			return true;
	return false;
}

static void *fetcher_main(void *arg)
{
	struct fworker *w = arg;
	struct dbgfetch *f = w->f;
	struct timespec ts;
	uint64_t now, until, ns;
	int r;

	pthread_mutex_lock(&f->lock);
	for (;;) {
		now = mono_ns();
		until = 0;
		if (f->stop)
			break;
		if (!f->qlen)
			until = now + BUDGET_WINDOW_NS;
		else if (now < f->down_until_ns)
			until = f->down_until_ns; /* the queue waits out the back-off */
		else if (budget_spent(f, now))
			until = f->window_ns + BUDGET_WINDOW_NS;
		if (until) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ns = until - now;
			ts.tv_sec += (time_t)(ns / 1000000000ULL);
			ts.tv_nsec += (long)(ns % 1000000000ULL);
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			(void)pthread_cond_timedwait(&f->cond, &f->lock, &ts);
			continue;
		}
		w->job = f->queue[f->qhead];
		f->qhead = (f->qhead + 1) % f->o.max_queue;
		f->qlen--;
		w->busy = true;
		f->st.queue_len = f->qlen;
		f->st.in_flight++;
		pthread_mutex_unlock(&f->lock);

		ns = 0;
		r = fetch_one(w, &ns);

		pthread_mutex_lock(&f->lock);
		now = mono_ns();
		(void)budget_spent(f, now);
		f->spent_ns += ns;
		f->st.fetch_ns += ns;
		if (r == 1)
			f->st.fetches++;
		else if (r == -ENOENT)
			f->st.not_found++;
		else if (r == -ETIMEDOUT)
			f->st.timeouts++;
		else
			f->st.errors++;
		if (r < 0) {
			/* the server, not the file: a timeout, a refused or failed connection */
			if (r == -ETIMEDOUT || r == -ECONNREFUSED || r == -ECONNABORTED ||
			    r == -EHOSTUNREACH || r == -ENETUNREACH || r == -ECONNRESET ||
			    r == -EIO)
				f->down_until_ns = now + DOWN_NS;
			f->misses[f->next_miss] =
			    (struct miss){ .hash = w->job.hash, .time_ns = now ? now : 1 };
			f->next_miss = (f->next_miss + 1) % MISS_SLOTS;
		}
		w->busy = false;
		f->st.in_flight--;
		f->done_seq++;
		pthread_cond_broadcast(&f->cond); /* dbgfetch__settle */
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

struct dbgfetch *dbgfetch__new(const struct dbgfetch_opts *o)
{
	const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR);
	pthread_condattr_t ca;
	struct dbgfetch *f;
	char sub[PATH_MAX];
	unsigned int i;
	int err;

	if (!urls || !urls[strspn(urls, " \t")]) {
		errno = ENOENT;
		return NULL;
	}
	if (!o->cache_dir || !o->cache_dir[0]) {
		errno = EINVAL;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->o = *o;
	if (!f->o.retry_s)
		f->o.retry_s = 300;
	if (!f->o.timeout_ms)
		f->o.timeout_ms = 2000;
	if (!f->o.threads)
		f->o.threads = 2;
	if (f->o.threads > MAX_THREADS)
		f->o.threads = MAX_THREADS;
	if (!f->o.max_queue)
		f->o.max_queue = 64;
	if (!f->o.budget_ms)
		f->o.budget_ms = 30000;
	f->null_fd = -1;
	f->window_ns = mono_ns();
	pthread_mutex_init(&f->lock, NULL);
	pthread_mutex_init(&f->dir_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&f->cond, &ca);
	pthread_condattr_destroy(&ca);
	f->queue = calloc(f->o.max_queue, sizeof(*f->queue));
	if (!f->queue) {
		err = -ENOMEM;
		goto fail;
	}
	if (snprintf(f->dir, sizeof(f->dir), "%s", o->cache_dir) >= (int)sizeof(f->dir) ||
	    snprintf(f->client_dir, sizeof(f->client_dir), "%s/client", o->cache_dir) >=
		(int)sizeof(f->client_dir) ||
	    snprintf(sub, sizeof(sub), "%s/.build-id", o->cache_dir) >= (int)sizeof(sub)) {
		err = -ENAMETOOLONG;
		goto fail;
	}
	err = make_dirs(f->dir);
	if (!err)
		err = own_dir(sub);
	if (!err)
		err = own_dir(f->client_dir);
	if (err)
		goto fail;
	/*
	 * libdebuginfod reads its settings from the environment at each query: its cache inside
	 * ours (its files are moved out as they come), whole seconds of connection timeout, and
	 * no file larger than the whole folder. Set here, at start-up, before the threads that
	 * would read the environment meanwhile.
	 */
	(void)setenv(DEBUGINFOD_CACHE_PATH_ENV_VAR, f->client_dir, 1);
	client_config(f->client_dir, f->o.retry_s);
	setenv_default(DEBUGINFOD_TIMEOUT_ENV_VAR, (f->o.timeout_ms + 999) / 1000);
	if (f->o.max_bytes)
		setenv_default(DEBUGINFOD_MAXSIZE_ENV_VAR, f->o.max_bytes);
	/* libdebuginfod 0.188 dprintf()s some lines to its verbose fd even when it has none (-1):
	 * glibc then leaks the stream's 8 KiB buffer at each fetch (ASan's finding). A real fd
	 * that discards them */
	f->null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	sweep_client_dirs(f); /* what an earlier run left */
	for (i = 0; i < f->o.threads; i++) {
		struct fworker *w = &f->w[i];

		w->f = f;
		w->client = debuginfod_begin();
		if (!w->client) {
			err = errno ? -errno : -ENOMEM;
			goto fail;
		}
		debuginfod_set_user_data(w->client, w);
		debuginfod_set_progressfn(w->client, progress);
		if (f->null_fd >= 0)
			debuginfod_set_verbose_fd(w->client, f->null_fd);
		f->nw++;
		err = -pthread_create(&w->th, NULL, fetcher_main, w);
		if (err)
			goto fail;
		w->started = true;
	}
	return f;

fail:
	dbgfetch__free(f);
	errno = -err;
	return NULL;
}

void dbgfetch__free(struct dbgfetch *f)
{
	unsigned int i;

	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	__atomic_store_n(&f->stop, true, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	for (i = 0; i < f->nw; i++) {
		if (f->w[i].started)
			pthread_join(f->w[i].th, NULL); /* a fetch under way stops at its next
							   progress call */
		if (f->w[i].client)
			debuginfod_end(f->w[i].client);
	}
	if (f->null_fd >= 0)
		close(f->null_fd);
	pthread_cond_destroy(&f->cond);
	pthread_mutex_destroy(&f->lock);
	pthread_mutex_destroy(&f->dir_lock);
	free(f->queue);
	free(f);
}

const char *dbgfetch__dir(const struct dbgfetch *f)
{
	return f->dir;
}

int dbgfetch__request(struct dbgfetch *f, const uint8_t *bid, size_t len)
{
	char path[PATH_MAX];
	uint64_t h, now;
	size_t dir_len;
	int r;

	if (len < 2 || len > BID_MAX)
		return -EINVAL;
	r = bid_path(f, bid, len, path, sizeof(path), &dir_len);
	if (r)
		return r;
	if (!access(path, F_OK)) {
		(void)utimensat(AT_FDCWD, path, NULL, 0); /* used: last to go */
		STAT_ADD(f, cached, 1);
		return 0;
	}
	h = hash_bytes(bid, len, 0);
	now = mono_ns();
	pthread_mutex_lock(&f->lock);
	if (queued_or_busy(f, h)) {
		f->st.pending_hits++;
		r = 1;
	} else if (missed_lately(f, h, now)) {
		f->st.negative_hits++;
		r = -EAGAIN;
	} else if (now < f->down_until_ns) {
		f->st.skipped++;
		r = -EAGAIN;
	} else if (budget_spent(f, now)) {
		f->st.refused_budget++;
		f->budget_refused = true;
		r = -EBUSY;
	} else if (f->qlen >= f->o.max_queue) {
		f->st.refused_queue++;
		r = -ENOBUFS;
	} else {
		struct job *j = &f->queue[(f->qhead + f->qlen) % f->o.max_queue];

		j->hash = h;
		j->len = (uint8_t)len;
		memcpy(j->bid, bid, len);
		f->qlen++;
		f->st.queued++;
		f->st.queue_len = f->qlen;
		pthread_cond_signal(&f->cond);
		r = 1;
	}
	pthread_mutex_unlock(&f->lock);
	return r;
}

uint64_t dbgfetch__done_seq(struct dbgfetch *f)
{
	uint64_t v;

	pthread_mutex_lock(&f->lock);
	(void)budget_spent(f, mono_ns()); /* a refused request may ask again once it rolls */
	v = f->done_seq;
	pthread_mutex_unlock(&f->lock);
	return v;
}

int dbgfetch__settle(struct dbgfetch *f, uint32_t timeout_ms)
{
	uint64_t end = mono_ns() + (uint64_t)timeout_ms * 1000000ULL;
	struct timespec ts;
	int r = 0;

	pthread_mutex_lock(&f->lock);
	while (f->qlen || f->st.in_flight) {
		if (mono_ns() >= end) {
			r = -ETIMEDOUT;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += 50000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		(void)pthread_cond_timedwait(&f->cond, &f->lock, &ts);
	}
	pthread_mutex_unlock(&f->lock);
	return r;
}

void dbgfetch__stats(struct dbgfetch *f, struct dbgfetch_stats *ret)
{
	pthread_mutex_lock(&f->lock);
	*ret = f->st;
	pthread_mutex_unlock(&f->lock);
}
