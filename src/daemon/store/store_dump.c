// SPDX-License-Identifier: MIT
/* The folded dump of the live store: SIGUSR1 and --dump-after (docs/emberd.md). */
#include "ember/daemon/store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "ember/core/base/log.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"
#include "ember/core/model/profile.h"

int store__dump_folded(struct store *store, bool include_idle, enum store_root root,
		       const char *path)
{
	struct store_filter f = STORE_FILTER_INIT;
	struct strtab *st = NULL;
	struct profile *p = NULL;
	struct sbuf sb = SBUF_INIT;
	size_t *order = NULL, i;
	int fd = STDOUT_FILENO, r = -ENOMEM;

	if (!store)
		return 0;
	f.include_idle = include_idle;
	f.root = root;
	st = strtab__new();
	if (!st)
		goto out;
	p = store__query(store, &f, st);
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
	if (path && path[0]) {
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			r = log_errno(-errno, "cannot open dump file '%s'", path);
			goto out;
		}
	}
	r = sbuf_write_fd(&sb, fd);
	if (r)
		log_errno(r, "cannot write the dump");
	else
		log_info("dumped %zu stacks, %.0f samples to %s", profile__nr_stacks(p),
			 profile__total(p), path && path[0] ? path : "stdout");
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
