// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ember/core/base/clock.h"
#include "ember/daemon/export/identity.h"
#include "ember/daemon/proc/proctrack.h"

#define ID "3f2a9c1b7e6d5a4f3e2d1c0b9a8f7e6d5c4b3a29180706f5e4d3c2b1a0f9e8d7"

static void expect(const char *path, const char *cid, const char *pod, const char *unit)
{
	struct workload w;

	workload_from_path(path, &w);
	assert_string_equal(w.path, path);
	assert_string_equal(w.container_id, cid);
	assert_string_equal(w.pod_uid, pod);
	assert_string_equal(w.unit, unit);
}

static void test_paths(void **state)
{
	(void)state;
	/* docker: cgroupfs and systemd drivers */
	expect("/docker/" ID, ID, "", "");
	expect("/system.slice/docker-" ID ".scope", ID, "", "");
	/* containerd (ctr/nerdctl namespaces), CRI-O, podman */
	expect("/default/" ID, ID, "", "");
	expect("/system.slice/nerdctl-" ID ".scope", ID, "", "");
	expect("/machine.slice/crio-" ID ".scope", ID, "", "");
	expect("/machine.slice/crio-conmon-" ID ".scope", "", "", ""); /* the monitor, not it */
	expect("/machine.slice/libpod-" ID ".scope", ID, "", "");
	expect("/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID ".scope", ID,
	       "", "user@1000.service");
	/* kubepods: systemd driver (pod uid with '_'), cgroupfs driver */
	expect("/kubepods.slice/kubepods-burstable.slice/"
	       "kubepods-burstable-pod0f3c6a1e_5b2d_4c8e_9a7f_0123456789ab.slice/"
	       "cri-containerd-" ID ".scope",
	       ID, "0f3c6a1e-5b2d-4c8e-9a7f-0123456789ab", "");
	expect("/kubepods.slice/kubepods-pod0f3c6a1e_5b2d_4c8e_9a7f_0123456789ab.slice/crio-" ID
	       ".scope",
	       ID, "0f3c6a1e-5b2d-4c8e-9a7f-0123456789ab", "");
	expect("/kubepods/besteffort/pod0f3c6a1e-5b2d-4c8e-9a7f-0123456789ab/" ID, ID,
	       "0f3c6a1e-5b2d-4c8e-9a7f-0123456789ab", "");
	/* the pod's own cgroup (the pause container's parent): a pod, no container */
	expect("/kubepods/burstable/pod0f3c6a1e-5b2d-4c8e-9a7f-0123456789ab", "",
	       "0f3c6a1e-5b2d-4c8e-9a7f-0123456789ab", "");
	/* systemd services */
	expect("/system.slice/nginx.service", "", "", "nginx.service");
	expect("/system.slice/docker.service", "", "", "docker.service");
	expect("/", "", "", "");
	expect("/user.slice/user-1000.slice/session-2.scope", "", "", "");
	/* near misses: 63 digits, not hex, a podname that is not a uid */
	expect("/docker/" "3f2a9c1b7e6d5a4f3e2d1c0b9a8f7e6d5c4b3a29180706f5e4d3c2b1a0f9e8d", "", "",
	       "");
	expect("/docker/" "3f2a9c1b7e6d5a4f3e2d1c0b9a8f7e6d5c4b3a29180706f5e4d3c2b1a0f9e8dz", "",
	       "", "");
	expect("/podman", "", "", "");
}

static void test_service_rules(void **state)
{
	struct identity *id = identity__new("/nonexistent", "unit,container,exe");
	struct workload w;
	char buf[256];

	(void)state;
	assert_non_null(id);
	workload_from_path("/system.slice/nginx.service", &w);
	assert_string_equal(identity__service(id, &w, "nginx", "nginx: worker", buf, sizeof(buf)),
			    "nginx");
	workload_from_path("/docker/" ID, &w);
	assert_string_equal(identity__service(id, &w, "java", "java", buf, sizeof(buf)),
			    "3f2a9c1b7e6d");
	workload_from_path("/user.slice", &w);
	assert_string_equal(identity__service(id, &w, "bash", "bash", buf, sizeof(buf)), "bash");
	assert_string_equal(identity__service(id, &w, NULL, "comm1", buf, sizeof(buf)), "comm1");
	assert_int_equal(identity__set_rules(id, "comm"), 0);
	assert_string_equal(identity__service(id, &w, "exe", "thecomm", buf, sizeof(buf)),
			    "thecomm");
	assert_int_equal(identity__set_rules(id, "unit,nope"), -EINVAL);
	assert_int_equal(identity_check_rules("pod,exe"), 0);
	assert_int_equal(identity_check_rules("exe,"), 0);
	assert_int_equal(identity_check_rules("regexp"), -EINVAL);
	assert_false(identity__lookup(id, 12345, &w, true)); /* no cgroup mount there */
	identity__free(id);
}

/* This test's executable's GNU build id as `readelf -n` prints it, "" when it has none. */
static const char *readelf_build_id(void)
{
	static char hex[81];
	char line[256], cmd[64];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -n /proc/%d/exe 2>/dev/null", (int)getpid());
	f = popen(cmd, "r");

	hex[0] = '\0';
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " Build ID: %80[0-9a-f]", hex) == 1)
			break;
	pclose(f);
	return hex;
}

/* A time on the tracker's clock (CLOCK_MONOTONIC) as the store's (Unix ns). */
static uint64_t real_of(uint64_t mono)
{
	return (uint64_t)((int64_t)mono + real_minus_mono_ns());
}

#define MS 1000000ull

/*
 * The executable of a process image, kept as the process tracker's extension: an exec (or exit)
 * the tracker is told of at T ends the image; a sample before T keeps what was read before T, or
 * is -ESTALE when nothing was (never /proc's executable of after T: a read at or after T may be
 * the next image's); a sample after T reads again. (Sample times 1 ms off the events: the store's
 * clock and the tracker's differ by an offset read to within microseconds.)
 */
static void test_proc_images(void **state)
{
	struct identity *id = identity__new("/nonexistent", NULL);
	struct proc_tracker *pt = proc_tracker__new(&(struct proc_tracker_opts){ 0 });
	struct identity_stats st;
	struct proc_info pi;
	uint32_t me = (uint32_t)getpid(), parent = (uint32_t)getppid();
	uint64_t t, t1, gen;

	(void)state;
	assert_non_null(id);
	assert_non_null(pt);
	/* without a tracker: read at each sample, nothing kept */
	assert_int_equal(identity__process(id, me, real_ns(), &pi), 0);
	assert_string_equal(pi.exe_name, "test_identity");
	identity__stats(id, &st);
	assert_int_equal(st.procs, 0);
	assert_int_equal(identity__set_procs(id, pt), 0);

	/* a pid first asked about through a sample older than its exec: the old image is unknown */
	proc_maps__put(proc_tracker__maps(pt, parent, 0)); /* the tracker knew it before the exec */
	t = mono_ns();
	proc_tracker__exec(pt, parent, false, NULL, t);
	assert_int_equal(identity__process(id, parent, real_of(t - MS), &pi), -ESTALE);
	usleep(20000);
	t1 = mono_ns(); /* the next exec's time, told after a read that came after it */
	assert_int_equal(identity__process(id, parent, real_of(t + 10 * MS), &pi), 0);
	assert_true(pi.exe_name[0] != '\0');
	assert_true(pi.current);
	/* asked after the image after the exec was read: still not that image's */
	assert_int_equal(identity__process(id, parent, real_of(t - MS), &pi), -ESTALE);
	proc_tracker__exec(pt, parent, false, NULL, t1);
	/* that read may be of the image after t1: it names none of the samples before */
	assert_int_equal(identity__process(id, parent, real_of(t + 10 * MS), &pi), -ESTALE);
	identity__stats(id, &st);
	assert_int_equal(st.stale, 3);
	assert_int_equal(st.proc_events, 1);
	assert_int_equal(st.procs, 1);

	/* read before the event: the samples before it keep it, the ones after read /proc again */
	assert_int_equal(identity__process(id, me, real_ns(), &pi), 0);
	assert_string_equal(pi.exe_name, "test_identity");
	assert_true(pi.current);
	assert_true(pi.image_ns > 0);
	gen = pi.image_ns;
	/* its build id as binutils reads it (the exporter's process.executable.build_id) */
	assert_true(pi.build_id[0] != '\0');
	assert_string_equal(pi.build_id, readelf_build_id());
	memset(&pi, 0, sizeof(pi));
	usleep(5000);
	t = mono_ns();
	proc_tracker__exec(pt, me, false, NULL, t);
	assert_int_equal(identity__process(id, me, real_of(t - MS), &pi), 0);
	assert_string_equal(pi.exe_name, "test_identity");
	assert_false(pi.current);
	assert_int_equal(pi.image_ns, gen);
	usleep(5000);
	assert_int_equal(identity__process(id, me, real_of(t + MS), &pi), 0);
	assert_string_equal(pi.exe_name, "test_identity");
	assert_true(pi.current);
	assert_true(pi.image_ns != gen); /* another image: read again */
	assert_non_null(identity__cached_exe(id, me, (char[128]){ 0 }, 128));
	identity__stats(id, &st);
	assert_int_equal(st.proc_events, 2);
	assert_int_equal(st.procs, 3);

	/* the exit of a pid never read (any process on the host): nothing is kept for it */
	proc_tracker__exit_at(pt, 4000000, mono_ns());
	identity__stats(id, &st);
	assert_int_equal(st.proc_events, 2);
	/* the exit of one read: counted, its samples before the exit keep what was read */
	usleep(5000);
	t = mono_ns();
	proc_tracker__exit_at(pt, me, t);
	identity__stats(id, &st);
	assert_int_equal(st.proc_events, 3);
	assert_int_equal(identity__process(id, me, real_of(t - MS), &pi), 0);
	assert_string_equal(pi.exe_name, "test_identity");
	identity__free(id); /* its extension first */
	proc_tracker__free(pt);
}

/* The regex rule: NAME=ERE on the comm, in order; bad specifications refused with a reason. */
static void test_service_regex(void **state)
{
	struct identity *id = identity__new("/nonexistent", "regex,exe");
	struct workload w;
	char buf[128], err[256];

	(void)state;
	assert_non_null(id);
	workload_from_path("/user.slice", &w);
	/* no rules yet: the regex source gives nothing */
	assert_string_equal(identity__service(id, &w, "nginx", "nginx", buf, sizeof(buf)), "nginx");
	assert_int_equal(identity__set_service_regex(id, "web=^(nginx|httpd)$  db=^postgres",
						     err, sizeof(err)), 0);
	assert_string_equal(identity__service(id, &w, "nginx", "nginx", buf, sizeof(buf)), "web");
	assert_string_equal(identity__service(id, &w, "httpd", "httpd", buf, sizeof(buf)), "web");
	assert_string_equal(identity__service(id, &w, "nginx", "nginx: worker", buf, sizeof(buf)),
			    "nginx"); /* $: the whole comm */
	assert_string_equal(identity__service(id, &w, "pg", "postgres: wal", buf, sizeof(buf)),
			    "db");
	assert_string_equal(identity__service(id, &w, "bash", "bash", buf, sizeof(buf)), "bash");
	/* refused, and the rules in place stay */
	assert_int_equal(identity__set_service_regex(id, "web", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "NAME=PATTERN"));
	assert_int_equal(identity__set_service_regex(id, "a b=x", err, sizeof(err)), -EINVAL);
	assert_int_equal(identity__set_service_regex(id, "w=(x", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "w: "));
	assert_int_equal(identity__set_service_regex(id, "x/y=a", err, sizeof(err)), -EINVAL);
	assert_int_equal(identity_check_service_regex("w=(a)\\1", err, sizeof(err)), -EINVAL);
	assert_int_equal(identity_check_service_regex("", err, sizeof(err)), 0);
	assert_string_equal(identity__service(id, &w, "nginx", "nginx", buf, sizeof(buf)), "web");
	/* emptied: back to exe */
	assert_int_equal(identity__set_service_regex(id, "", err, sizeof(err)), 0);
	assert_string_equal(identity__service(id, &w, "nginx", "nginx", buf, sizeof(buf)), "nginx");
	assert_int_equal(identity_check_rules("regex,comm"), 0);
	identity__free(id);
}


static uint64_t ino_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return (uint64_t)st.st_ino;
}

/* mkdir (or rmdir) @root/@sub/d0..d(n-1) */
static void many(const char *root, const char *sub, unsigned int n, bool make, uid_t uid)
{
	char p[512];
	unsigned int i;

	for (i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "%s/%s/d%u", root, sub, i);
		if (make) {
			assert_int_equal(mkdir(p, 0755), 0);
			if (uid)
				assert_int_equal(lchown(p, uid, uid), 0);
		} else {
			assert_int_equal(rmdir(p), 0);
		}
	}
}

/* A walk drops the cgroups that are gone, so a table filled by a churn of cgroups takes a new
 * container again; a user's cgroups take a quarter of the table at most. A table of 4096 (the
 * default's 65,536 behave alike: test_hostile_cgroups.sh; here 65,536 directories made and
 * removed twice took 84 s, 68 s under ASan, of the suite's second lane). */
#define T_CGS 4096
static void test_cgroups_gone_and_shares(void **state)
{
	char root[] = "/tmp/ember-idtest.XXXXXX", p[512];
	struct identity_stats st;
	struct workload w;
	struct identity *id;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(p, sizeof(p), "%s/churn", root);
	assert_int_equal(mkdir(p, 0755), 0);
	many(root, "churn", T_CGS, true, 0);
	id = identity__new_sized(root, NULL, T_CGS);
	assert_non_null(id);
	assert_false(identity__lookup(id, 1, &w, true)); /* the first walk: the table full */
	snprintf(p, sizeof(p), "%s/docker-" ID ".scope", root);
	assert_int_equal(mkdir(p, 0755), 0);
	sleep(1);
	/* the table full (T_CGS + the root): the container finds no room, counted */
	assert_false(identity__lookup(id, ino_of(p), &w, true));
	identity__stats(id, &st);
	assert_int_equal(st.cgroups, T_CGS);
	assert_true(st.refused >= 2);
	/* the churn's cgroups removed: the next walk drops them and takes the container */
	many(root, "churn", T_CGS, false, 0);
	sleep(1);
	assert_true(identity__lookup(id, ino_of(p), &w, true));
	assert_string_equal(w.container_id, ID);
	identity__stats(id, &st);
	assert_int_equal(st.dropped, T_CGS - 2); /* all but the root and churn/ */
	assert_int_equal(st.cgroups, 3); /* the root, churn/, the container */
	if (geteuid() == 0) {
		/* nobody's 1.25 tables' worth of cgroups: a quarter of the table kept, root's next
		 * container still has room */
		char q[512];

		many(root, "churn", T_CGS + T_CGS / 4, true, 65534);
		snprintf(q, sizeof(q), "%s/docker-%s.scope", root,
			 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
		assert_int_equal(mkdir(q, 0755), 0);
		sleep(1);
		assert_true(identity__lookup(id, ino_of(q), &w, true));
		identity__stats(id, &st);
		assert_int_equal(st.cgroups, 4 + T_CGS / 4);
		many(root, "churn", T_CGS + T_CGS / 4, false, 0);
		assert_int_equal(rmdir(q), 0);
	}
	identity__free(id);
	assert_int_equal(rmdir(p), 0);
	snprintf(p, sizeof(p), "%s/churn", root);
	assert_int_equal(rmdir(p), 0);
	assert_int_equal(rmdir(root), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_service_rules),
		cmocka_unit_test(test_proc_images),
		cmocka_unit_test(test_service_regex),
		cmocka_unit_test(test_cgroups_gone_and_shares),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
