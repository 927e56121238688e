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
 * hangs costs the worker one timeout per period, not one per stripped file of the host. */
#define DOWN_NS (30ULL * 1000000000ULL)

struct miss {
	uint64_t hash;
	uint64_t time_ns;
};

struct dbgfetch {
	struct dbgfetch_opts o;
	char dir[PATH_MAX];	   /* the folder searched as a debug dir */
	char client_dir[PATH_MAX]; /* libdebuginfod's own cache, inside it */
	debuginfod_client *client;
	int null_fd;		 /* its verbose output: /dev/null */
	pthread_mutex_t lock;	 /* one fetch at a time, and the folder */
	pthread_mutex_t st_lock; /* the counters only: never held across a fetch, so that the
				    thread publishing them never waits on the network */
	uint64_t deadline_ns;	 /* of the fetch under way (the progress callback's) */
	uint64_t down_until_ns;	 /* no fetch before (DOWN_NS after a timeout or connection error) */
	struct miss misses[MISS_SLOTS];
	unsigned int next_miss;
	struct dbgfetch_stats st;
};

#define STAT_ADD(f, field, v)                                                                      \
	do {                                                                                       \
		pthread_mutex_lock(&(f)->st_lock);                                                 \
		(f)->st.field += (v);                                                              \
		pthread_mutex_unlock(&(f)->st_lock);                                               \
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
 * non-zero stops it */
static int progress(debuginfod_client *c, long a, long b)
{
	struct dbgfetch *f = debuginfod_get_user_data(c);

	(void)a;
	(void)b;
	return f && mono_ns() > f->deadline_ns;
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

struct dbgfetch *dbgfetch__new(const struct dbgfetch_opts *o)
{
	const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR);
	struct dbgfetch *f;
	char sub[PATH_MAX];
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
	f->null_fd = -1;
	pthread_mutex_init(&f->lock, NULL);
	pthread_mutex_init(&f->st_lock, NULL);
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
	f->client = debuginfod_begin();
	if (!f->client) {
		err = errno ? -errno : -ENOMEM;
		goto fail;
	}
	debuginfod_set_user_data(f->client, f);
	debuginfod_set_progressfn(f->client, progress);
	/* libdebuginfod 0.188 dprintf()s some lines to its verbose fd even when it has none (-1):
	 * glibc then leaks the stream's 8 KiB buffer at each fetch (ASan's finding). A real fd
	 * that discards them */
	f->null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (f->null_fd >= 0)
		debuginfod_set_verbose_fd(f->client, f->null_fd);
	return f;

fail:
	dbgfetch__free(f);
	errno = -err;
	return NULL;
}

void dbgfetch__free(struct dbgfetch *f)
{
	if (!f)
		return;
	if (f->client)
		debuginfod_end(f->client);
	if (f->null_fd >= 0)
		close(f->null_fd);
	pthread_mutex_destroy(&f->lock);
	pthread_mutex_destroy(&f->st_lock);
	free(f);
}

const char *dbgfetch__dir(const struct dbgfetch *f)
{
	return f->dir;
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
 * first. Called with the lock held. */
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
	pthread_mutex_lock(&f->st_lock);
	f->st.cache_bytes = total;
	pthread_mutex_unlock(&f->st_lock);
	free(files);
}

static bool missed_lately(struct dbgfetch *f, uint64_t h, uint64_t now)
{
	unsigned int i;

	for (i = 0; i < MISS_SLOTS; i++)
		if (f->misses[i].hash == h && f->misses[i].time_ns &&
		    now - f->misses[i].time_ns < (uint64_t)f->o.retry_s * 1000000000ULL)
			return true;
	return false;
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

int dbgfetch__fetch(struct dbgfetch *f, const uint8_t *bid, size_t len)
{
	char path[PATH_MAX], *got = NULL, *slash;
	uint64_t h, now, t0;
	size_t dir_len;
	int fd, r;

	if (len < 2)
		return -EINVAL;
	r = bid_path(f, bid, len, path, sizeof(path), &dir_len);
	if (r)
		return r;
	h = hash_bytes(bid, len, 0);
	pthread_mutex_lock(&f->lock);
	if (!access(path, F_OK)) {
		(void)utimensat(AT_FDCWD, path, NULL, 0); /* used: last to go */
		STAT_ADD(f, cached, 1);
		r = 0;
		goto out;
	}
	now = mono_ns();
	if (now < f->down_until_ns || missed_lately(f, h, now)) {
		STAT_ADD(f, skipped, 1);
		r = -EAGAIN;
		goto out;
	}
	t0 = now;
	f->deadline_ns = now + (uint64_t)f->o.timeout_ms * 1000000ULL;
	fd = debuginfod_find_debuginfo(f->client, bid, (int)len, &got);
	now = mono_ns();
	STAT_ADD(f, fetch_ns, now - t0);
	if (fd >= 0) {
		r = store(f, fd, got, path, dir_len, bid, len);
		close(fd);
		if (!r) {
			STAT_ADD(f, fetches, 1);
			enforce_bound(f);
			r = 1;
		}
	} else {
		r = now > f->deadline_ns ? -ETIMEDOUT : fd;
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
	if (r < 0) {
		if (r == -ENOENT)
			STAT_ADD(f, not_found, 1);
		else if (r == -ETIMEDOUT)
			STAT_ADD(f, timeouts, 1);
		else
			STAT_ADD(f, errors, 1);
		/* the server, not the file: a timeout, a refused or failed connection */
		if (r == -ETIMEDOUT || r == -ECONNREFUSED || r == -ECONNABORTED ||
		    r == -EHOSTUNREACH || r == -ENETUNREACH || r == -ECONNRESET || r == -EIO)
			f->down_until_ns = now + DOWN_NS;
		f->misses[f->next_miss] = (struct miss){ .hash = h, .time_ns = now ? now : 1 };
		f->next_miss = (f->next_miss + 1) % MISS_SLOTS;
	}
out:
	pthread_mutex_unlock(&f->lock);
	return r;
}

void dbgfetch__stats(struct dbgfetch *f, struct dbgfetch_stats *ret)
{
	pthread_mutex_lock(&f->st_lock);
	*ret = f->st;
	pthread_mutex_unlock(&f->st_lock);
}
