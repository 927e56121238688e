// SPDX-License-Identifier: MIT
/* idle: the one idle rule (include/ember/core/model/idle.h). */
#include "ember/core/model/idle.h"

#include <string.h>

/* FlameScope's idle functions, plus the names of newer kernels' idle paths and emberd's marker. */
static const char *const idle_funcs[] = {
	"cpuidle",
	"cpu_idle",
	"cpu_bringup_and_idle",
	"native_safe_halt",
	"xen_hypercall_sched_op",
	"xen_hypercall_vcpu_op",
	"default_idle",
	"do_idle",
	"intel_idle",
	"acpi_idle",
	"mwait_idle",
	"poll_idle",
	"[idle]",
};

bool idle_task(int64_t pid, const char *comm, size_t len)
{
	if (pid >= 0)
		return pid == 0;
	return comm && len >= 7 && !memcmp(comm, "swapper", 7) && (len == 7 || comm[7] == '/');
}

bool idle_frame(const char *name, size_t len)
{
	size_t i, n;

	for (i = 0; i < sizeof(idle_funcs) / sizeof(idle_funcs[0]); i++) {
		n = strlen(idle_funcs[i]);
		if (n <= len && memmem(name, len, idle_funcs[i], n))
			return true;
	}
	return false;
}

bool idle_stack_text(const char *stack, size_t len)
{
	const char *p = stack, *end = stack + len, *semi;

	while (p < end) {
		semi = memchr(p, ';', (size_t)(end - p));
		if (!semi)
			semi = end;
		if (idle_frame(p, (size_t)(semi - p)))
			return true;
		p = semi + 1;
	}
	return false;
}
