// SPDX-License-Identifier: MIT
/* What the sampler says in the log: libbpf's messages as ours, and its losses as they happen. */
#include "ember/daemon/sample/sampler.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "ember/core/base/clock.h"
#include "ember/core/base/log.h"

/* libbpf's messages as ours: WARN -> warn, INFO -> info, DEBUG only with -v. */
__attribute__((format(printf, 2, 0)))
static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	enum log_level lvl = level == LIBBPF_WARN ? LOG_LVL_WARN :
			     level == LIBBPF_INFO ? LOG_LVL_INFO : LOG_LVL_DEBUG;
	char *buf = NULL;
	int n;

	if (lvl > log_get_level())
		return 0;
	n = vasprintf(&buf, fmt, ap);
	if (n <= 0) {
		free(buf);
		return 0;
	}
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	if (!memchr(buf, '\n', (size_t)n)) {
		log_msg(lvl, "libbpf: %s", buf);
	} else {
		/* a verifier log, line by line (log lines are bounded); it can be megabytes: its
		 * first 40 lines, and its last 200, where the reason is */
		size_t lines = 1, i = 0;
		char *p = buf, *nl;

		for (nl = buf; (nl = strchr(nl, '\n')); nl++)
			lines++;
		for (; p; p = nl ? nl + 1 : NULL, i++) {
			nl = strchr(p, '\n');
			if (nl)
				*nl = '\0';
			if (i < 40 || i + 200 >= lines)
				log_msg(lvl, "libbpf: %s", p);
			else if (i == 40)
				log_msg(lvl, "libbpf: [... %zu lines ...]", lines - 240);
		}
	}
	free(buf);
	return 0;
}

void sampler_log_libbpf(void)
{
	libbpf_set_print(libbpf_log);
}

void sampler_report_drops(struct sampler *s, struct sampler_report *rep, bool force)
{
	struct sampler_stats st;
	uint64_t now = mono_ns();

	sampler__stats(s, &st);
	/* CPUs going and coming are rare and an operator wants to see when: told at once, apart
	 * from the drops (a detach and its re-attach could fall in two 10 s windows and be
	 * reported as halves) */
	if (st.cpu_attaches != rep->last.cpu_attaches || st.cpu_detaches != rep->last.cpu_detaches) {
		log_info("CPU hotplug: %llu attached, %llu detached, %llu CPUs sampled",
			 (unsigned long long)(st.cpu_attaches - rep->last.cpu_attaches),
			 (unsigned long long)(st.cpu_detaches - rep->last.cpu_detaches),
			 (unsigned long long)st.cpus_attached);
		rep->last.cpu_attaches = st.cpu_attaches;
		rep->last.cpu_detaches = st.cpu_detaches;
	}
	if (!force && now - rep->last_ns < 10 * NSEC_PER_SEC)
		return; /* at most one line per 10 s */
#define DELTA(f) (st.f - rep->last.f)
	if (DELTA(ringbuf_drops))
		log_warn("ring buffer full: %llu samples lost (raise sampling.ringbuf_size, or "
			 "shorten sampling.tick_ms)",
			 (unsigned long long)DELTA(ringbuf_drops));
	if (DELTA(lost))
		log_warn("%llu samples lost (%llu in BPF: the ring buffer was full; the rest while "
			 "keeping or storing them)",
			 (unsigned long long)DELTA(lost), (unsigned long long)DELTA(lost_in_bpf));
#undef DELTA
	rep->last = st;
	rep->last_ns = now;
}
