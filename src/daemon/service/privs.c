// SPDX-License-Identifier: MIT
/*
 * Least privilege after start-up (include/ember/daemon/service/security.h). Loading and attaching BPF, raising
 * limits and binding the socket are done by then; what emberd still does, and the capability
 * each needs (docs/security.md has the table):
 *   CAP_BPF              bpf() on the maps each tick (kernel.unprivileged_bpf_disabled), and
 *                        attaching the program to CPUs that come online (hotplug)
 *   CAP_PERFMON          perf_event_open() for CPUs that come online
 *   CAP_SYS_PTRACE       /proc/PID/maps and /proc/PID/root of other users' processes
 *   CAP_DAC_READ_SEARCH  their binaries, debug files and perf maps whatever the file modes,
 *                        and re-reading the root-only token file on SIGHUP
 *   CAP_SYSLOG           real addresses in /proc/kallsyms (kernel modules loaded later)
 *   CAP_CHECKPOINT_RESTORE  /proc/PID/map_files/ for deleted or replaced binaries
 * Everything else (CAP_SYS_ADMIN, CAP_DAC_OVERRIDE, CAP_NET_*, CAP_SETUID, ...) goes, from the
 * bounding set too; no_new_privs is set so that nothing emberd might exec regains anything.
 * Raw capget/capset (no libcap): two 32-bit words of the version 3 interface.
 */
#include "ember/daemon/service/security.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ember/daemon/service/config.h"
#include "ember/core/base/log.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif
#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE 40
#endif
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

#define BIT(c) (1ULL << (c))

static const struct {
	int cap;
	const char *name;
} kept[] = {
	{ CAP_DAC_READ_SEARCH, "CAP_DAC_READ_SEARCH" },
	{ CAP_SYS_PTRACE, "CAP_SYS_PTRACE" },
	{ CAP_SYSLOG, "CAP_SYSLOG" },
	{ CAP_PERFMON, "CAP_PERFMON" },
	{ CAP_BPF, "CAP_BPF" },
	{ CAP_CHECKPOINT_RESTORE, "CAP_CHECKPOINT_RESTORE" },
};

uint64_t privs_keep_mask(void)
{
	uint64_t m = 0;
	size_t i;

	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		m |= BIT(kept[i].cap);
	return m;
}

static int caps_get(uint64_t *eff, uint64_t *prm)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { { 0 } };

	if (syscall(SYS_capget, &h, d))
		return -errno;
	*eff = d[0].effective | (uint64_t)d[1].effective << 32;
	*prm = d[0].permitted | (uint64_t)d[1].permitted << 32;
	return 0;
}

static int caps_set(uint64_t mask)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {
		{ .effective = (uint32_t)mask, .permitted = (uint32_t)mask },
		{ .effective = (uint32_t)(mask >> 32), .permitted = (uint32_t)(mask >> 32) },
	};

	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

/* The highest capability the kernel knows (/proc/sys/kernel/cap_last_cap). */
static int last_cap(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	int n = CAP_LAST_CAP;

	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = CAP_LAST_CAP;
		fclose(f);
	}
	return n < 63 ? n : 63;
}

int emberd_drop_privileges(const struct ember_config *c)
{
	uint64_t eff, prm, keep;
	struct passwd *pw = NULL;
	char names[256] = "";
	int r, cap, top;
	size_t i;

	if (!c->drop_capabilities && !c->user[0])
		return 0;
	r = caps_get(&eff, &prm);
	if (r)
		return log_errno(r, "privileges: capget failed");
	if (c->user[0]) {
		pw = getpwnam(c->user);
		if (!pw)
			return log_errno(-ENOENT, "privileges: no user '%s'", c->user);
	}
	keep = privs_keep_mask() & prm;
	top = last_cap();
	/* the bounding set first: PR_CAPBSET_DROP needs CAP_SETPCAP, dropped just below */
	if (c->drop_capabilities && (prm & BIT(CAP_SETPCAP))) {
		for (cap = 0; cap <= top; cap++) {
			if (keep & BIT(cap))
				continue;
			if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno != EINVAL)
				return log_errno(-errno, "privileges: cannot drop capability %d from "
						 "the bounding set", cap);
		}
	}
	(void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (pw) {
		/* keep the permitted set across setuid(); the effective one is rebuilt below */
		if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0))
			return log_errno(-errno, "privileges: PR_SET_KEEPCAPS failed");
		if (setgroups(0, NULL) || setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) ||
		    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid))
			return log_errno(-errno, "privileges: cannot become user '%s'", c->user);
		(void)prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
	}
	if (c->drop_capabilities || pw) {
		r = caps_set(c->drop_capabilities ? keep : prm);
		if (r)
			return log_errno(r, "privileges: capset failed");
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return log_errno(-errno, "privileges: PR_SET_NO_NEW_PRIVS failed");
	r = caps_get(&eff, &prm);
	if (r)
		return log_errno(r, "privileges: capget failed");
	if (c->drop_capabilities && (eff & ~keep))
		return log_errno(-EPERM, "privileges: capabilities 0x%llx remain",
				 (unsigned long long)(eff & ~keep));
	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		if (eff & BIT(kept[i].cap))
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 names[0] ? " " : "", kept[i].name);
	log_info("privileges: running as uid %u with %s%s (CapEff %016llx)", (unsigned int)getuid(),
		 names[0] ? names : "no capabilities",
		 eff & ~keep ? " and others (security.drop_capabilities = no)" : "",
		 (unsigned long long)eff);
	return 0;
}
