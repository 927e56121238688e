// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Kernel address -> symbol, on demand: a syscall program that userspace runs with
 * BPF_PROG_TEST_RUN after filling addrs[0..n). The kernel's own kallsyms lookup ("%pS") names
 * each address, modules and BPF programs included, so emberd never reads all of /proc/kallsyms
 * (100 000+ lines the kernel formats one by one: ~50 ms of CPU per read).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "ember/bpf_shared.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

__u64 addrs[EMBER_KSYM_BATCH];
__u32 n;
char text[EMBER_KSYM_BATCH][EMBER_KSYM_TEXT];

SEC("syscall")
int resolve(void *ctx)
{
	static const char fmt[] = "%pS";
	__u32 i;

	for (i = 0; i < EMBER_KSYM_BATCH; i++) {
		__u64 a;

		if (i >= n)
			break;
		a = addrs[i];
		bpf_snprintf(text[i], EMBER_KSYM_TEXT, fmt, &a, sizeof(a));
	}
	return 0;
}
