// SPDX-License-Identifier: MIT
#include "ember/daemon/symbols/kresolve.h"

#include <errno.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ember/daemon/sample/bpf_shared.h"
#include "kresolve.skel.h"

struct kresolve {
	struct kresolve_bpf *skel;
	int prog_fd;
};

static int run(struct kresolve *kr)
{
	LIBBPF_OPTS(bpf_test_run_opts, o);

	return bpf_prog_test_run_opts(kr->prog_fd, &o) ? -errno : 0;
}

struct kresolve *kresolve__new(char *err, size_t errlen)
{
	struct kresolve *kr = calloc(1, sizeof(*kr));
	int r;

	if (!kr) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	kr->skel = kresolve_bpf__open_and_load();
	if (!kr->skel) {
		r = errno ? errno : EINVAL;
		snprintf(err, errlen, "cannot load the kernel symbol program: %s", strerror(r));
		goto fail;
	}
	kr->prog_fd = bpf_program__fd(kr->skel->progs.resolve);
	/* a dry run: BPF_PROG_TEST_RUN of syscall programs can be refused (LSM, privileges) */
	kr->skel->bss->n = 0;
	r = run(kr);
	if (r) {
		r = -r;
		snprintf(err, errlen, "cannot run the kernel symbol program: %s", strerror(r));
		goto fail;
	}
	return kr;
fail:
	kresolve__free(kr);
	errno = r;
	return NULL;
}

void kresolve__free(struct kresolve *kr)
{
	if (!kr)
		return;
	kresolve_bpf__destroy(kr->skel);
	free(kr);
}

int kresolve__resolve(void *ctx, const uint64_t *addrs, size_t n, char *texts, size_t text_len)
{
	struct kresolve *kr = ctx;
	struct kresolve_bpf__bss *b = kr->skel->bss;
	size_t i, done = 0;
	int r;

	if (!text_len)
		return -EINVAL;
	while (done < n) {
		size_t k = n - done < EMBER_KSYM_BATCH ? n - done : EMBER_KSYM_BATCH;

		for (i = 0; i < k; i++) {
			b->addrs[i] = addrs[done + i];
			b->text[i][0] = '\0';
		}
		b->n = (__u32)k;
		r = run(kr);
		if (r)
			return r;
		for (i = 0; i < k; i++) {
			char *t = texts + (done + i) * text_len;
			size_t len = strnlen(b->text[i], sizeof(b->text[i]));

			if (len >= text_len)
				len = text_len - 1;
			memcpy(t, b->text[i], len);
			t[len] = '\0';
		}
		done += k;
	}
	return 0;
}
