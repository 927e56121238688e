// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ember's sampler: attached to a perf event on every CPU, it records the kernel and user stack
 * ids of the running task and counts them per (pid, tid, comm, stacks).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "ember/bpf_shared.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile bool include_idle = true;

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, EMBER_MAX_STACK_DEPTH * sizeof(__u64));
	__uint(max_entries, 16384);
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct ember_key);
	__type(value, __u64);
	__uint(max_entries, 16384);
} counts SEC(".maps");

SEC("perf_event")
int do_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct ember_key key = {};
	__u64 one = 1, *val;

	key.pid = id >> 32;
	key.tid = (__u32)id;
	if (key.tid == 0 && !include_idle)
		return 0;
	bpf_get_current_comm(&key.comm, sizeof(key.comm));
	key.kern_stack_id = bpf_get_stackid(ctx, &stacks, 0);
	key.user_stack_id = key.tid ? bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK) : -1;
	val = bpf_map_lookup_elem(&counts, &key);
	if (val)
		__sync_fetch_and_add(val, 1);
	else
		bpf_map_update_elem(&counts, &key, &one, BPF_NOEXIST);
	return 0;
}
