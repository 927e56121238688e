// SPDX-License-Identifier: MIT
/* runtime: the language runtimes' readers as one set (include/ember/daemon/unwind/runtime.h). */
#include "ember/daemon/unwind/runtime.h"

#include <errno.h>
#include <string.h>

int runtime_set_add(struct runtime_set *s, const struct runtime_ops *ops, void *rt)
{
	if (!rt)
		return 0;
	if (s->n == RUNTIME_MAX)
		return -ENOSPC;
	s->r[s->n].ops = ops;
	s->r[s->n].rt = rt;
	s->n++;
	return 0;
}

void *runtime_set_get(const struct runtime_set *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->r[i].ops->name, name))
			return s->r[i].rt;
	return NULL;
}

void runtime_set_noted(const struct runtime_set *s, uint32_t pid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->r[i].ops->noted)
			s->r[i].ops->noted(s->r[i].rt, pid);
}

void runtime_set_sampled(const struct runtime_set *s, uint32_t pid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->r[i].ops->sampled)
			s->r[i].ops->sampled(s->r[i].rt, pid);
}

int runtime_set_names_carry(const struct runtime_set *s, const char **failed)
{
	int err = 0;

	*failed = NULL;
	for (size_t i = 0; i < s->n; i++)
		if (s->r[i].ops->names_carry && s->r[i].ops->names_carry(s->r[i].rt) && !err) {
			err = -ENOMEM;
			*failed = s->r[i].ops->name;
		}
	return err;
}

void runtime_set_prune(const struct runtime_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->r[i].ops->prune)
			s->r[i].ops->prune(s->r[i].rt);
}
