/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Types shared by the BPF program and userspace. Includes nothing: userspace includes
 * <linux/types.h> first, the BPF side vmlinux.h. Only fixed-size fields, explicit padding.
 */
#ifndef EMBER_BPF_SHARED_H
#define EMBER_BPF_SHARED_H

#ifndef TASK_COMM_LEN
#define TASK_COMM_LEN 16
#endif

#define EMBER_MAX_STACK_DEPTH 127

/* Aggregation key: one per distinct (process, stacks) in a drain interval. */
struct ember_key {
	__u32 pid;		/* tgid */
	__u32 tid;
	__s32 user_stack_id;	/* < 0: -errno from bpf_get_stackid() */
	__s32 kern_stack_id;
	char comm[TASK_COMM_LEN];
};

#endif
