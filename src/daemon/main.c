// SPDX-License-Identifier: MIT
/*
 * emberd: the always-on profiler daemon. One event loop on the main thread: epoll over a timerfd
 * (the drain tick) and a signalfd (SIGTERM/SIGINT: exit, SIGUSR1: dump, SIGHUP: reload).
 * Each tick: the sampler drains the BPF maps, the symbolizer names the frames, the store keeps
 * the timestamped samples. The HTTP server (libmicrohttpd) runs its own thread and talks only to
 * the store.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "ember/daemon/ingest/capture.h"
#include "ember/daemon/service/config.h"
#include "ember/core/formats/folded.h"
#include "ember/core/base/hash.h"
#include "ember/daemon/http/http.h"
#include "ember/daemon/http/http_export.h"
#include "ember/daemon/symbols/kresolve.h"
#include "ember/core/base/log.h"
#include "ember/core/model/profile.h"
#include "ember/core/model/recording.h"
#include "ember/daemon/ingest/replay.h"
#include "ember/daemon/sample/sampler.h"
#include "ember/core/base/sbuf.h"
#include "ember/daemon/service/security.h"
#include "ember/daemon/service/service.h"
#include "ember/daemon/store/store.h"
#include "ember/core/base/strtab.h"
#include "ember/daemon/symbols/symbolizer.h"
#include "ember/core/base/version.h"
#include "ember/core/base/clock.h"

#define NSEC	      1000000000ULL
#define MAX_FRAMES    1024 /* symbolized frames per stack (inline frames can add to 2 x 127) */

/*
 * Symbolized stacks, cached for a short while: the same (pid, user ips) or kernel ips seen again
 * within the TTL reuse the frame ids instead of asking the symbolizer (which may re-read
 * /proc/PID/maps for an address outside the cached mappings). Direct-mapped; the TTL bounds
 * staleness after an exec or a module load.
 */
#define SCACHE_SLOTS	 4096
#define SCACHE_USER_TTL	 (2 * NSEC)  /* a user stack with unresolved frames: retried soon */
#define SCACHE_STABLE_TTL (10 * NSEC) /* resolved, and its process's symbols unchanged since */
#define SCACHE_KERN_TTL	 (30 * NSEC)

struct scache_ent {
	uint64_t hash;
	uint64_t expires_ns;
	uint64_t version;	/* symbolizer__pid_version() of a user stack's process */
	uint32_t pid;
	uint32_t n;		/* frame ids */
	uint32_t *ids;		/* symbolizer strtab ids, root first; owned */
	size_t cap;
};

struct emberd {
	struct ember_config cfg;
	int epfd, tfd, sfd;
	uint64_t start_ns;	/* CLOCK_MONOTONIC at start */
	bool stop;

	struct store *store;
	struct sampler *sampler;
	struct symbolizer *sym;
	struct kresolve *kres; /* NULL: kernel symbols from /proc/kallsyms */
	struct strtab *sym_st;	/* the symbolizer's names (main thread only) */
	int32_t *frame_map;	/* sym_st id -> store frame id, -1 unknown */
	size_t frame_map_cap;
	uint64_t compactions;	/* store compactions frame_map is valid for */
	int64_t real_off_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC */
	struct scache_ent *scache;	/* SCACHE_SLOTS entries */
	uint32_t sym_tmp[MAX_FRAMES / 2]; /* uncached symbolize() results */
	uint64_t scache_hits, scache_misses;
	struct store_sample *batch;
	size_t batch_cap;
	struct sampler_stats last; /* for logging changes of the drop counters */
	uint64_t last_report_ns;
	uint64_t last_prune_ns;
	uint64_t last_check_ns;		/* the last prune that read every process's start time */
	uint64_t notify_lost;		/* exec and exit notifications lost, as of that prune */
	int rbfd;		/* the sampler's ring buffer epoll fd, -1 without sampling */

	/* HTTP (issue 7): the server; with --replay it serves @replay instead of the store. */
	struct http_server *http;
	struct capture_mgr *captures;	/* second samplers of ad hoc captures (capture.c) */
	struct recording *replay;
	char **replay_files;
	int nr_replay_files;
};

/* libbpf's messages as ours: WARN -> warn, INFO -> info, DEBUG only with -v. */
static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	enum log_level lvl = level == LIBBPF_WARN ? LOG_LVL_WARN :
			     level == LIBBPF_INFO ? LOG_LVL_INFO : LOG_LVL_DEBUG;
	char buf[1024];
	int n;

	if (lvl > log_get_level())
		return 0;
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n <= 0)
		return 0;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	log_msg(lvl, "libbpf: %s", buf);
	return 0;
}

static int loop_setup(struct emberd *d)
{
	struct itimerspec its = { 0 };
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL))
		return log_errno(-errno, "cannot block signals");
	d->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (d->sfd < 0)
		return log_errno(-errno, "cannot create signalfd");
	d->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (d->tfd < 0)
		return log_errno(-errno, "cannot create timerfd");
	its.it_interval.tv_sec = (time_t)(d->cfg.tick_ms / 1000);
	its.it_interval.tv_nsec = (long)(d->cfg.tick_ms % 1000) * 1000000L;
	its.it_value = its.it_interval;
	if (timerfd_settime(d->tfd, 0, &its, NULL))
		return log_errno(-errno, "cannot arm timerfd");
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->epfd < 0)
		return log_errno(-errno, "cannot create epoll");
	ev.data.fd = d->sfd;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->sfd, &ev))
		return log_errno(-errno, "cannot watch signalfd");
	ev.data.fd = d->tfd;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->tfd, &ev))
		return log_errno(-errno, "cannot watch timerfd");
	return 0;
}

/* --- samples: symbolize, intern, append ------------------------------------------------- */

static int store_frame(struct emberd *d, uint32_t sym_id)
{
	size_t need = (size_t)sym_id + 1, i;
	int id;

	if (need > d->frame_map_cap) {
		size_t ncap = d->frame_map_cap ? d->frame_map_cap : 4096;
		int32_t *m;

		while (ncap < need)
			ncap *= 2;
		m = realloc(d->frame_map, ncap * sizeof(*m));
		if (!m)
			return -ENOMEM;
		for (i = d->frame_map_cap; i < ncap; i++)
			m[i] = -1;
		d->frame_map = m;
		d->frame_map_cap = ncap;
	}
	if (d->frame_map[sym_id] >= 0)
		return d->frame_map[sym_id];
	id = store__intern_frame(d->store, strtab__str(d->sym_st, sym_id),
				 strtab__len(d->sym_st, sym_id));
	if (id >= 0)
		d->frame_map[sym_id] = id;
	return id;
}

/*
 * Symbol ids of a stack, root first, through the cache: *ret points into the cache (valid until
 * the next call). Returns the number of ids or -ENOMEM.
 */
static int symbolize(struct emberd *d, bool kernel, uint32_t pid, uint64_t time_ns,
		     const uint64_t *ips, size_t n, const uint32_t **ret)
{
	uint64_t h = hash_bytes(ips, n * sizeof(*ips), kernel ? 0x6b : 0x75) ^ hash_mix64(pid + 1);
	struct scache_ent *e = &d->scache[h & (SCACHE_SLOTS - 1)];
	uint64_t now = mono_ns(), ver = 0, unresolved = 0, ttl = SCACHE_KERN_TTL;
	uint32_t sym[MAX_FRAMES / 2];
	int r;

	if (!kernel && symbolizer__has_retired(d->sym, pid)) {
		/* exec or pid reuse lately: the answer depends on when, so no caching */
		r = symbolizer__user_at(d->sym, pid, time_ns, ips, n, d->sym_tmp, MAX_FRAMES / 2);
		*ret = d->sym_tmp;
		return r;
	}
	/* a user stack's answer holds while its process's mappings and JIT symbols are unchanged */
	if (!kernel)
		ver = symbolizer__pid_version(d->sym, pid);
	if (e->ids && e->hash == h && e->pid == pid && e->version == ver && now < e->expires_ns) {
		d->scache_hits++;
		*ret = e->ids;
		return (int)e->n;
	}
	d->scache_misses++;
	if (!kernel)
		unresolved = symbolizer__user_unresolved(d->sym);
	r = kernel ? symbolizer__kernel(d->sym, ips, n, sym, MAX_FRAMES / 2)
		   : symbolizer__user(d->sym, pid, ips, n, sym, MAX_FRAMES / 2);
	if (r < 0)
		return r;
	if (!kernel) {
		/* the call may have read the process for the first time, or read it again */
		ver = symbolizer__pid_version(d->sym, pid);
		ttl = ver && symbolizer__user_unresolved(d->sym) == unresolved ? SCACHE_STABLE_TTL
									    : SCACHE_USER_TTL;
	}
	if ((size_t)r > e->cap || !e->ids) {
		uint32_t *ids = realloc(e->ids, ((size_t)r + 1) * sizeof(*ids));

		if (!ids)
			return -ENOMEM;
		e->ids = ids;
		e->cap = (size_t)r + 1;
	}
	memcpy(e->ids, sym, (size_t)r * sizeof(*sym));
	e->n = (uint32_t)r;
	e->hash = h;
	e->pid = pid;
	e->version = ver;
	e->expires_ns = now + ttl;
	*ret = e->ids;
	return r;
}

/* A visible placeholder frame for a stack that was lost (collision, vanished). */
static int lost_frame(struct emberd *d, int err, bool kernel)
{
	const char *name = err == -EEXIST ? (kernel ? "[stack collision]_[k]" : "[stack collision]")
					  : (kernel ? "[lost stack]_[k]" : "[lost stack]");
	int id = strtab__intern(d->sym_st, name, strlen(name));

	return id < 0 ? id : store_frame(d, (uint32_t)id);
}

static int on_group(const struct sampler_group *g, void *ctx)
{
	struct emberd *d = ctx;
	uint32_t frames[MAX_FRAMES];
	const uint32_t *sym;
	size_t n = 0, nk = 0, i, total = g->nr_times + g->untimed;
	unsigned int flags = 0;
	uint64_t comp, now_real;
	int r, id;

	if (filter_excluded(g->pid, g->comm, total)) /* [filter] (service.c) counts them */
		return 0;
	comp = store__compactions(d->store);
	if (comp != d->compactions) {
		/* the store renumbered its frames: forget the cached mapping */
		for (i = 0; i < d->frame_map_cap; i++)
			d->frame_map[i] = -1;
		d->compactions = comp;
	}
	if (g->pid == 0)
		flags |= STORE_STACK_IDLE;
	/* user frames, root first */
	if (g->user_ips && g->nr_user) {
		r = symbolize(d, false, g->pid, g->nr_times ? g->times_ns[0] : 0, g->user_ips,
			      g->nr_user, &sym);
		if (r < 0)
			return r;
		for (i = 0; i < (size_t)r; i++) {
			id = store_frame(d, sym[i]);
			if (id < 0)
				return id;
			frames[n++] = (uint32_t)id;
		}
		if (g->nr_user >= 127)
			flags |= STORE_STACK_TRUNCATED;
	} else if (g->pid != 0 && g->user_err != -EFAULT) {
		id = lost_frame(d, g->user_err, false);
		if (id < 0)
			return id;
		frames[n++] = (uint32_t)id;
		flags |= STORE_STACK_USER_MISSING;
	} else if (g->pid != 0) {
		flags |= STORE_STACK_USER_MISSING; /* kernel thread, or no user context */
	}
	/* kernel frames on top, root first */
	if (g->kernel_ips && g->nr_kernel) {
		r = symbolize(d, true, 0, 0, g->kernel_ips, g->nr_kernel, &sym);
		if (r < 0)
			return r;
		for (i = 0; i < (size_t)r; i++) {
			id = store_frame(d, sym[i]);
			if (id < 0)
				return id;
			frames[n++] = (uint32_t)id;
			nk++;
		}
	} else if (g->pid == 0 && g->kernel_err == -EFAULT) {
		/* idle sample without its stack (sampling.idle_stacks = no): one marker frame */
		r = strtab__intern(d->sym_st, "[idle]_[k]", strlen("[idle]_[k]"));
		id = r < 0 ? r : store_frame(d, (uint32_t)r);
		if (id < 0)
			return id;
		frames[n++] = (uint32_t)id;
		nk++;
	} else if (g->kernel_err != -EFAULT && g->kernel_err) {
		id = lost_frame(d, g->kernel_err, true);
		if (id < 0)
			return id;
		frames[n++] = (uint32_t)id;
		nk++;
		flags |= STORE_STACK_KERN_MISSING;
	} else {
		flags |= STORE_STACK_KERN_MISSING;
	}
	id = store__intern_stack(d->store, frames, n, nk, flags);
	if (id < 0)
		return id;
	if (total > d->batch_cap) {
		struct store_sample *b = realloc(d->batch, total * sizeof(*b));

		if (!b)
			return -ENOMEM;
		d->batch = b;
		d->batch_cap = total;
	}
	now_real = clock_ns(CLOCK_REALTIME);
	for (i = 0; i < total; i++) {
		struct store_sample *x = &d->batch[i];

		*x = (struct store_sample){
			.time_ns = i < g->nr_times ? (uint64_t)((int64_t)g->times_ns[i] +
								d->real_off_ns) : now_real,
			.stack_id = (uint32_t)id,
			.pid = g->pid,
			.tid = g->tid,
			.cpu = i < g->nr_times ? g->cpus[i] : UINT32_MAX,
			.count = 1,
		};
		memcpy(x->comm, g->comm, sizeof(x->comm));
	}
	http_export__count_samples(d->batch, total); /* ember_cpu_samples_total{cpu} */
	return store__append(d->store, d->batch, total);
}

static void report_drops(struct emberd *d, bool force)
{
	struct sampler_stats st;
	uint64_t now = mono_ns();

	if (!force && now - d->last_report_ns < 10 * NSEC)
		return; /* at most one line per 10 s */
	sampler__stats(d->sampler, &st);
#define DELTA(f) (st.f - d->last.f)
	if (DELTA(kern_eexist) || DELTA(user_eexist))
		log_warn("stack map collisions: %llu kernel, %llu user stacks lost "
			 "(raise sampling.stack_map_entries)",
			 (unsigned long long)DELTA(kern_eexist),
			 (unsigned long long)DELTA(user_eexist));
	if (DELTA(counts_full))
		log_warn("counts map full %llu times (samples kept through their time records; "
			 "raise sampling.counts_map_entries)",
			 (unsigned long long)DELTA(counts_full));
	if (DELTA(ringbuf_drops))
		log_warn("ring buffer full: %llu samples kept with the tick's time "
			 "(raise sampling.ringbuf_size)",
			 (unsigned long long)DELTA(ringbuf_drops));
	if (DELTA(lost))
		log_warn("%llu samples lost while storing them", (unsigned long long)DELTA(lost));
	if (DELTA(cpu_attaches) || DELTA(cpu_detaches))
		log_info("CPU hotplug: %llu attached, %llu detached, %llu CPUs sampled",
			 (unsigned long long)DELTA(cpu_attaches),
			 (unsigned long long)DELTA(cpu_detaches),
			 (unsigned long long)st.cpus_attached);
#undef DELTA
	d->last = st;
	d->last_report_ns = now;
}

/* One line at exit: what was sampled, delivered, dropped, and what it cost. */
static void log_sampler_totals(struct emberd *d)
{
	struct sampler_stats st;
	struct store_stats ss;

	sampler__stats(d->sampler, &st);
	store__stats(d->store, &ss);
	log_info("sampled %llu (idle %llu), delivered %llu, untimed %llu, lost %llu; %llu drains "
		 "of %.0f us avg; BPF %.0f ns/sample; store %llu samples in %llu bytes "
		 "(%.2f B/sample records), %llu stacks; stack cache %.0f%% hits",
		 (unsigned long long)st.samples, (unsigned long long)st.idle,
		 (unsigned long long)st.delivered, (unsigned long long)st.untimed,
		 (unsigned long long)st.lost, (unsigned long long)st.drains,
		 st.drains ? (double)st.drain_ns_total / (double)st.drains / 1e3 : 0.0,
		 st.prog_run_cnt ? (double)st.prog_run_ns / (double)st.prog_run_cnt : 0.0,
		 (unsigned long long)ss.samples, (unsigned long long)ss.bytes,
		 ss.samples ? (double)ss.sample_bytes / (double)ss.samples : 0.0,
		 (unsigned long long)ss.stacks,
		 d->scache_hits + d->scache_misses ?
			 100.0 * (double)d->scache_hits / (double)(d->scache_hits + d->scache_misses) :
			 0.0);
}

static void drain(struct emberd *d)
{
	int r;

	if (!d->sampler)
		return;
	d->real_off_ns = (int64_t)(clock_ns(CLOCK_REALTIME) - mono_ns());
	r = sampler__drain(d->sampler, on_group, d);
	if (r < 0)
		log_errno(r, "drain failed, samples counted as lost");
	(void)store__expire(d->store, clock_ns(CLOCK_REALTIME));
	/*
	 * Expiry every 5 s (exited processes keep their state for a grace period, for the samples
	 * still in flight). Exec and exit are notified by the BPF programs, so reading every
	 * cached process's start time and executable (two /proc reads each) is a safety net: once
	 * a minute, or at once after a notification was lost or without the programs.
	 */
	if (mono_ns() - d->last_prune_ns >= 5 * NSEC) {
		struct sampler_stats st;
		uint64_t lost;

		sampler__stats(d->sampler, &st);
		lost = st.exec_drops + st.exit_drops;
		if (!st.exec_notify || !st.exit_notify || lost != d->notify_lost ||
		    mono_ns() - d->last_check_ns >= 60 * NSEC) {
			(void)symbolizer__prune(d->sym);
			d->last_check_ns = mono_ns();
			d->notify_lost = lost;
		} else {
			(void)symbolizer__prune_gone(d->sym);
		}
		d->last_prune_ns = mono_ns();
	}
	report_drops(d, false);
}

/* Writes the folded profile of everything in the store (idle and root per --dump-*). */
static int dump(struct emberd *d)
{
	struct store_filter f = STORE_FILTER_INIT;
	struct strtab *st = NULL;
	struct profile *p = NULL;
	struct sbuf sb = SBUF_INIT;
	size_t *order = NULL, i;
	int fd = STDOUT_FILENO, r = -ENOMEM;

	if (!d->store)
		return 0;
	f.include_idle = d->cfg.dump_idle;
	f.root = (enum store_root)d->cfg.dump_root;
	st = strtab__new();
	if (!st)
		goto out;
	p = store__query(d->store, &f, st);
	if (!p)
		goto out;
	order = profile__sorted(p);
	if (!order)
		goto out;
	for (i = 0; i < profile__nr_stacks(p); i++) {
		profile__stack_text(p, order[i], &sb);
		sbuf_addc(&sb, ' ');
		sbuf_add_count(&sb, profile__count(p, order[i]));
		sbuf_addc(&sb, '\n');
	}
	if (d->cfg.dump_path[0]) {
		fd = open(d->cfg.dump_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			r = log_errno(-errno, "cannot open dump file '%s'", d->cfg.dump_path);
			goto out;
		}
	}
	r = sbuf_write_fd(&sb, fd);
	if (r)
		log_errno(r, "cannot write the dump");
	else
		log_info("dumped %zu stacks, %.0f samples to %s", profile__nr_stacks(p),
			 profile__total(p), d->cfg.dump_path[0] ? d->cfg.dump_path : "stdout");
	if (fd != STDOUT_FILENO)
		close(fd);
out:
	if (r == -ENOMEM)
		log_errno(r, "cannot build the dump");
	free(order);
	profile__free(p);
	strtab__free(st);
	sbuf_fini(&sb);
	return r;
}

static void on_tick(struct emberd *d)
{
	uint64_t expirations;

	if (read(d->tfd, &expirations, sizeof(expirations)) < 0)
		return;
	service_watchdog(); /* WATCHDOG=1: the loop is alive */
	drain(d);
	capture_mgr__tick(d->captures);
	if (d->http && d->sampler) { /* counters for /api/v1/stats, copied on this thread */
		struct sampler_stats sa;
		struct symbolizer_stats sy;

		sampler__stats(d->sampler, &sa);
		symbolizer__stats(d->sym, &sy);
		emberd_http_publish(&sa, &sy);
	}
	if (d->http)
		http_server__tick(d->http); /* finishes due ad hoc captures */
	if (d->cfg.dump_after_s && mono_ns() - d->start_ns >= d->cfg.dump_after_s * NSEC) {
		log_info("--dump-after %llu s reached", (unsigned long long)d->cfg.dump_after_s);
		d->stop = true;
	}
}

static void on_signal(struct emberd *d)
{
	struct signalfd_siginfo si;

	while (read(d->sfd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGTERM:
		case SIGINT:
			log_info("received %s, exiting", strsignal((int)si.ssi_signo));
			d->stop = true;
			break;
		case SIGUSR1:
			log_info("received SIGUSR1: dump");
			drain(d);
			drain(d); /* both generations: everything sampled until now */
			(void)dump(d);
			break;
		case SIGHUP:
			log_info("received SIGHUP: reloading the configuration");
			(void)service_reload(&d->cfg, d->http);
			break;
		default:
			log_info("received %s, ignoring", strsignal((int)si.ssi_signo));
			break;
		}
	}
}

static int run(struct emberd *d)
{
	struct epoll_event evs[4];
	int n, i;

	while (!d->stop) {
		n = epoll_wait(d->epfd, evs, 4, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return log_errno(-errno, "epoll_wait failed");
		}
		for (i = 0; i < n; i++) {
			if (evs[i].data.fd == d->sfd)
				on_signal(d);
			else if (evs[i].data.fd == d->tfd)
				on_tick(d);
			else if (evs[i].data.fd == d->rbfd)
				(void)sampler__poll(d->sampler);
		}
	}
	return 0;
}

/* A new process was sampled: capture its mappings while it lives. */
static void on_new_pid(uint32_t pid, void *ctx)
{
	struct emberd *d = ctx;

	symbolizer__note_pid(d->sym, pid);
}

/* A sampled process's leader exited: gone, or other threads still run (its next exit tells). */
static void on_exit_pid(uint32_t pid, uint64_t time_ns, void *ctx)
{
	struct emberd *d = ctx;

	(void)time_ns;
	symbolizer__check_pid(d->sym, pid);
}

/* A sampled process called exec: its cached mappings are the old image's. Its next sample calls
 * on_new_pid() again (the BPF program forgot it too), when ld.so has mapped the libraries. */
static void on_exec(uint32_t pid, uint64_t time_ns, void *ctx)
{
	struct emberd *d = ctx;

	/* kept for the old image's samples not drained yet (up to two ticks' worth) */
	symbolizer__retire_pid(d->sym, pid, time_ns);
}

static int sampling_setup(struct emberd *d)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct sampler_opts so = {
		.freq_hz = d->cfg.frequency_hz,
		.include_idle = d->cfg.include_idle,
		.idle_stacks = d->cfg.idle_stacks,
		.hardware_event = d->cfg.hardware_event,
		.stack_map_entries = (uint32_t)d->cfg.stack_map_entries,
		.counts_map_entries = (uint32_t)d->cfg.counts_map_entries,
		.tick_ms = (uint32_t)d->cfg.tick_ms,
		.ringbuf_bytes = (uint32_t)d->cfg.ringbuf_bytes,
	};
	struct symbolizer_opts yo = SYMBOLIZER_OPTS_DEFAULT;
	struct sampler_stats st;
	char err[512];
	int r;

	d->store = store__new(d->cfg.retention_s, d->cfg.memory_limit_bytes);
	if (!d->store)
		return log_errno(-errno, "cannot create the sample store");
	d->sym_st = strtab__new();
	if (!d->sym_st)
		return log_errno(-ENOMEM, "cannot create the symbol table");
	yo.perf_maps = d->cfg.perf_maps;
	yo.inline_frames = d->cfg.inline_frames;
	yo.demangle = d->cfg.demangle;
	yo.max_pids = d->cfg.max_pids;
	yo.debug_dirs = d->cfg.debug_dirs;
	yo.addr_offsets = d->cfg.addr_offsets;
	yo.max_elfs = d->cfg.max_elfs;
	yo.max_perfmap_bytes = d->cfg.max_perfmap_bytes;
	d->scache = calloc(SCACHE_SLOTS, sizeof(*d->scache));
	if (!d->scache)
		return log_errno(-ENOMEM, "cannot allocate the stack cache");
	/* kernel frames through the kernel's own lookup; /proc/kallsyms where it cannot run */
	d->kres = kresolve__new(err, sizeof(err));
	if (d->kres) {
		yo.kernel_resolve = kresolve__resolve;
		yo.kernel_resolve_ctx = d->kres;
	} else {
		log_info("kernel symbols from /proc/kallsyms: %s", err);
	}
	d->sym = symbolizer__new(&yo, d->sym_st);
	if (!d->sym)
		return log_errno(-errno, "cannot create the symbolizer");
	r = sampler__new(&so, &d->sampler, err, sizeof(err));
	if (r) {
		log_error("cannot start sampling: %s", err);
		return r;
	}
	sampler__set_pid_fn(d->sampler, on_new_pid, d);
	sampler__set_exec_fn(d->sampler, on_exec, d);
	sampler__set_exit_fn(d->sampler, on_exit_pid, d);
	d->rbfd = sampler__epoll_fd(d->sampler);
	ev.data.fd = d->rbfd;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->rbfd, &ev))
		return log_errno(-errno, "cannot watch the ring buffer");
	sampler__stats(d->sampler, &st);
	d->last = st;
	log_info("sampling %llu CPUs at %llu Hz with the %s event (BPF program id %u; maps per "
		 "generation: %u stacks, %u counts)",
		 (unsigned long long)st.cpus_attached, (unsigned long long)d->cfg.frequency_hz,
		 st.hardware_event ? "cpu-cycles" : "cpu-clock", st.prog_id, st.stack_map_entries,
		 st.counts_map_entries);
	return 0;
}

static void emberd_fini(struct emberd *d)
{
	/* HTTP: stop the server here, before the store goes (issue 7). */
	http_server__free(d->http);
	d->http = NULL;
	capture_mgr__free(d->captures); /* after the server: it holds the hooks */
	http_export__unregister(); /* the /metrics registry, after the server's threads */
	recording__free(d->replay);
	free(d->replay_files);
	sampler__free(d->sampler);
	symbolizer__free(d->sym);
	kresolve__free(d->kres);
	strtab__free(d->sym_st);
	store__free(d->store);
	emberd_security_fini();
	filter_fini();
	free(d->frame_map);
	free(d->batch);
	if (d->scache)
		for (size_t i = 0; i < SCACHE_SLOTS; i++)
			free(d->scache[i].ids);
	free(d->scache);
	if (d->epfd >= 0)
		close(d->epfd);
	if (d->tfd >= 0)
		close(d->tfd);
	if (d->sfd >= 0)
		close(d->sfd);
}

int main(int argc, char **argv)
{
	struct emberd d = { .epfd = -1, .tfd = -1, .sfd = -1, .rbfd = -1 };
	char err[1024];
	int r;

	log_set_prog("emberd");
	ember_config_init(&d.cfg);
	/* --replay FILE...: serve recorded profiles (issue 7); taken out before getopt sees it */
	d.nr_replay_files = replay_args_extract(&argc, argv, &d.replay_files);
	if (d.nr_replay_files < 0) {
		log_error("--replay needs at least one file (perf script text or ember-samples)");
		return 2;
	}
	r = ember_config_from_args(&d.cfg, argc, argv, stdout, err, sizeof(err));
	if (r > 0)
		return 0;
	if (r < 0) {
		log_error("%s", err);
		return 2;
	}
	log_set_level((enum log_level)d.cfg.log_level);
	if (d.cfg.check_config) /* --check-config: files, token, policy; print; exit */
		return service_check_config(&d.cfg);
	/* a listen address the policy refuses (non-loopback without TLS and a token) is a
	 * configuration error: exit 2, which the unit does not retry, before loading anything */
	if (security_check_listen(&d.cfg, err, sizeof(err))) {
		log_error("%s", err);
		return 2;
	}
	service_set_args(argc, argv); /* SIGHUP re-reads them */
	(void)filter_set(&d.cfg);
	libbpf_set_print(libbpf_log);
	d.start_ns = mono_ns();

	r = loop_setup(&d);
	if (r)
		goto out;
	if (!d.nr_replay_files) {
		r = sampling_setup(&d);
		if (r)
			goto out;
	}
	/* HTTP: start the server on d.cfg.listen here (issue 7); it reads only the store. */
	r = emberd_http_setup(&d.cfg, d.store, d.replay_files, d.nr_replay_files, &d.http,
			      &d.replay);
	if (r)
		goto out;
	if (d.sampler && d.http) { /* captures with a frequency or pid get their own sampler */
		d.captures = capture_mgr__new(&d.cfg, d.sym, d.sym_st, d.http);
		if (!d.captures)
			log_warn("captures will use the live store only: out of memory");
	}
	r = emberd_drop_privileges(&d.cfg); /* BPF attached, socket bound: keep what is needed */
	if (r)
		goto out;
	log_info("emberd %s started: %llu Hz, tick %llu ms; start-up took %.1f ms of CPU",
		 EMBER_VERSION, (unsigned long long)d.cfg.frequency_hz,
		 (unsigned long long)d.cfg.tick_ms, (double)clock_ns(CLOCK_PROCESS_CPUTIME_ID) / 1e6);
	service_notify_ready(d.sampler ? "sampling, serving HTTP" : "replaying, serving HTTP");
	r = run(&d);
	service_notify_stopping();
	if (!r && d.sampler) {
		sampler__stop(d.sampler); /* then the totals add up: sampled == delivered */
		drain(&d);
		drain(&d); /* both generations */
		report_drops(&d, true);
		log_sampler_totals(&d);
		if (d.cfg.dump_after_s)
			r = dump(&d);
	}
out:
	emberd_fini(&d);
	return r ? 1 : 0;
}
