// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Kernel address -> symbol, on demand: a syscall program that userspace runs with
 * BPF_PROG_TEST_RUN after filling addrs[0..n). The kernel's own kallsyms lookup ("%pS") names
 * each address, modules and BPF programs included, so emberd never reads all of /proc/kallsyms
 * (100 000+ lines the kernel formats one by one: ~50 ms of CPU per read).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "ember/daemon/sample/bpf_shared.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

__u64 addrs[EMBER_KSYM_BATCH];
__u32 n;
char text[EMBER_KSYM_BATCH][EMBER_KSYM_TEXT];

_Static_assert((EMBER_KSYM_BATCH & (EMBER_KSYM_BATCH - 1)) == 0, "a power of 2: masked below");

/* One address: its text. bpf_loop's callback is verified once, not per iteration as an unrolled
 * or bounded loop of 64 calls was (~0.7 ms of emberd's start-up). */
static long resolve_one(__u32 i, void *ctx)
{
	static const char fmt[] = "%pS";
	__u64 a;

	if (i >= EMBER_KSYM_BATCH || i >= n)
		return 1;
	/* a no-op mask the verifier sees on the register that indexes: clang checks a copy of i
	 * and indexes with another, and would drop the mask as known (hence the empty asm) */
	asm volatile("" : "+r"(i));
	i &= EMBER_KSYM_BATCH - 1;
	a = addrs[i];
	bpf_snprintf(text[i], EMBER_KSYM_TEXT, fmt, &a, sizeof(a));
	return 0;
}

SEC("syscall")
int resolve(void *ctx)
{
	bpf_loop(EMBER_KSYM_BATCH, resolve_one, NULL, 0);
	return 0;
}
