// SPDX-License-Identifier: MIT
/*
 * python: detection of a live CPython (Debian's /usr/bin/python3.11: the map entry's addresses
 * against the symbols the process itself resolves), names from records and from the process's
 * memory (a changed tag is "[unknown]_[py]", never another name), lines, and how the Python
 * frames are merged into native stacks (root or leaf alignment, groups without an eval frame).
 * The sampler's Python calls are wrapped (test_python.mk): no BPF here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/types.h>

#include "ember/core/base/clock.h"
#include "ember/core/base/strtab.h"
#include "ember/daemon/sample/bpf_shared.h"
#include "ember/daemon/sample/sampler.h"
#include "ember/daemon/unwind/python.h"

#include "helpers.h"

#define PY311 "/usr/bin/python3.11"

/* --- the sampler, wrapped ----------------------------------------------------------------- */

static struct ember_py_proc last_proc;
static uint32_t last_pid, set_calls, del_calls;

int __wrap_sampler__python_set_proc(struct sampler *s, uint32_t pid, const struct ember_py_proc *p);
int __wrap_sampler__python_set_proc(struct sampler *s, uint32_t pid, const struct ember_py_proc *p)
{
	(void)s;
	last_pid = pid;
	last_proc = *p;
	set_calls++;
	return 0;
}

int __wrap_sampler__python_del_proc(struct sampler *s, uint32_t pid);
int __wrap_sampler__python_del_proc(struct sampler *s, uint32_t pid)
{
	(void)s;
	(void)pid;
	del_calls++;
	return 0;
}

void __wrap_sampler__renote_pid(struct sampler *s, uint32_t pid);
void __wrap_sampler__renote_pid(struct sampler *s, uint32_t pid)
{
	(void)s;
	(void)pid;
}

/* the sampler's task_struct.thread.fsbase offset: -1 (not read: the reader parses the BTF
 * itself), or what a test sets */
static int64_t sampler_fsbase = -1;

int64_t __wrap_sampler__task_fsbase_off(const struct sampler *s);
int64_t __wrap_sampler__task_fsbase_off(const struct sampler *s)
{
	(void)s;
	return sampler_fsbase;
}

int __wrap_sampler__python_stats(struct sampler *s, struct ember_py_bpf_stats *ret);
int __wrap_sampler__python_stats(struct sampler *s, struct ember_py_bpf_stats *ret)
{
	(void)s;
	*ret = (struct ember_py_bpf_stats){ 0 };
	return 0;
}

/* --- a live python3.11 ---------------------------------------------------------------------- */

/* Prints what the test needs, then waits for stdin to close. The function hot() is at lines
 * 2-4 of this source ("<string>"). */
static const char child_src[] =
    "import ctypes, dis, os, sys\n"
    "def hot(n):\n"
    "    x = n * 2\n"
    "    return x + 1\n"
    "rt = ctypes.addressof(ctypes.c_char.in_dll(ctypes.pythonapi, '_PyRuntime'))\n"
    "ct = ctypes.addressof(ctypes.c_char.in_dll(ctypes.pythonapi, 'PyCode_Type'))\n"
    "ret = [i.offset for i in dis.get_instructions(hot) if i.opname == 'RETURN_VALUE'][0]\n"
    "print(os.getpid(), rt, ct, id(hot.__code__), ret, flush=True)\n"
    "sys.stdin.read()\n";

struct child {
	pid_t pid;
	FILE *in;
	uint64_t runtime, code_type, code;
	unsigned int ret_off; /* RETURN_VALUE's offset in hot's bytecode (line 4) */
};

/* The interpreter the children run (a copy, in test_detect_rewritten). */
static const char *py_path = PY311;

static int child_start(struct child *c)
{
	int in[2], out[2];
	FILE *f;
	int pid, n;

	if (access(py_path, X_OK) || pipe(in) || pipe(out))
		return -1;
	c->pid = fork();
	if (c->pid < 0)
		return -1;
	if (!c->pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(py_path, py_path, "-c", child_src, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in = fdopen(in[1], "w");
	f = fdopen(out[0], "r");
	if (!c->in || !f)
		return -1;
	n = fscanf(f, "%d %lu %lu %lu %u", &pid, &c->runtime, &c->code_type, &c->code, &c->ret_off);
	fclose(f);
	return n == 5 && pid == c->pid ? 0 : -1;
}

static void child_stop(struct child *c)
{
	if (c->in)
		fclose(c->in);
	if (c->pid > 0)
		waitpid(c->pid, NULL, 0);
}

static uint64_t peek64(pid_t pid, uint64_t addr)
{
	uint64_t v = 0;
	struct iovec l = { .iov_base = &v, .iov_len = 8 },
		     r = { .iov_base = (void *)addr, .iov_len = 8 };

	assert_int_equal(process_vm_readv(pid, &l, 1, &r, 1, 0), 8);
	return v;
}

/* The tag the BPF program computes of the 3.11 code object at @code. */
static uint32_t tag_of(pid_t pid, uint64_t code)
{
	uint64_t file = peek64(pid, code + 112), name = peek64(pid, code + 128);
	int32_t line = (int32_t)peek64(pid, code + 72);

	return EMBER_PY_TAG(file, name, line);
}

/* --- helpers ---------------------------------------------------------------------------------- */

struct fixture {
	struct strtab *names;
	struct filecache *files; /* the daemon's one file cache, as main.c hands it over */
	struct python *py;
	struct sampler_group g;
	uint64_t words[2 * EMBER_PY_MAX_FRAMES];
	uint64_t t;
};

static uint64_t max_code_bytes; /* 0: the default */

static int setup_opts(void **state, bool lines)
{
	struct python_opts o = PYTHON_OPTS_DEFAULT;
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	o.lines = lines;
	if (max_code_bytes)
		o.max_code_bytes = max_code_bytes;
	f->names = strtab__new();
	f->files = filecache__new(NULL);
	o.files = f->files;
	f->py = f->names && f->files ? python__new((struct sampler *)f, f->names, &o) : NULL;
	set_calls = del_calls = 0;
	*state = f;
	return f->py ? 0 : -1;
}

static int setup(void **state)
{
	return setup_opts(state, false);
}

static int setup_small(void **state)
{
	max_code_bytes = 64 << 10;
	return setup_opts(state, false);
}

static int setup_lines(void **state)
{
	return setup_opts(state, true);
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	max_code_bytes = 0;
	python__free(f->py);
	filecache__free(f->files);
	strtab__free(f->names);
	free(f);
	return 0;
}

static uint32_t id_of(struct fixture *f, const char *s)
{
	int id = strtab__intern(f->names, s, strlen(s));

	assert_true(id >= 0);
	return (uint32_t)id;
}

/* The merged stack as text, ';'-joined. */
static const char *merge_text(struct fixture *f, const uint32_t *native, size_t n)
{
	static char buf[4096];
	const uint32_t *ids;
	size_t i, len = 0;
	int r = python__merge(f->py, &f->g, native, n, &ids);

	assert_true(r >= 0);
	buf[0] = '\0';
	for (i = 0; i < (size_t)r; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? ";" : "",
					strtab__str(f->names, ids[i]));
	return buf;
}

/* Sets the group's Python frames (root first): @n (code, tag, entry) triples. */
static void set_frames(struct fixture *f, uint32_t pid, size_t n, const uint64_t *codes,
		       const uint32_t *tags, const bool *entry)
{
	size_t i;

	for (i = 0; i < n; i++) {
		f->words[2 * i] = codes[i] | (entry[i] ? EMBER_PYF_ENTRY : 0);
		f->words[2 * i + 1] = tags[i];
	}
	f->g = (struct sampler_group){ .pid = pid,
				       .py_words = f->words,
				       .nr_py = n,
				       .user_flags = EMBER_USTACK_PY | EMBER_USTACK_END,
				       .times_ns = &f->t,
				       .nr_times = 1 };
}

/* A name record, as the BPF program sends it. */
static void name_rec(struct fixture *f, uint32_t pid, uint64_t code, uint32_t tag, const char *name,
		     const char *file)
{
	struct ember_py_name_rec r = { .code = code,
				       .pid = pid,
				       .tag = tag,
				       .firstlineno = 1,
				       .name_len = (uint32_t)strlen(name),
				       .file_len = (uint32_t)strlen(file),
				       .name_kind = 1,
				       .file_kind = 1,
				       .name_ascii = 1,
				       .file_ascii = 1 };

	memcpy(r.name, name, strlen(name));
	memcpy(r.file, file, strlen(file));
	python__on_name(f->py, &r);
}

/* --- tests ------------------------------------------------------------------------------------ */

static void test_detect_live(void **state)
{
	struct fixture *f = *state;
	struct python_stats st;
	struct child c = { 0 };

	if (child_start(&c)) {
		child_stop(&c);
		skip();
	}
	python__note_pid(f->py, (uint32_t)c.pid);
	assert_int_equal(set_calls, 1);
	assert_int_equal(last_pid, (uint32_t)c.pid);
	assert_int_equal(last_proc.kind, EMBER_PY_ENTRY_FLAG);
	assert_int_equal(last_proc.runtime, c.runtime);
	assert_int_equal(last_proc.code_type, c.code_type);
	assert_int_equal(last_proc.tstate_thread_id, 152);
	assert_true(last_proc.fsbase_off > 0);
	/* the code object's type is what the entry says */
	assert_int_equal(peek64(c.pid, c.code + 8), c.code_type);
	python__note_pid(f->py, (uint32_t)c.pid); /* known: not examined again */
	assert_int_equal(set_calls, 1);
	python__stats(f->py, &st);
	assert_int_equal(st.procs, 1);
	assert_int_equal(st.detections, 1);
	python__forget_pid(f->py, (uint32_t)c.pid, 0);
	assert_int_equal(del_calls, 1);
	python__stats(f->py, &st);
	assert_int_equal(st.procs, 0);
	child_stop(&c);
}

/* The sampler read task_struct.thread.fsbase with its other kernel offsets: the reader takes
 * it, no BTF parse of its own (fsbase_ms 0). */
static void test_detect_fsbase_from_sampler(void **state)
{
	struct fixture *f = *state;
	struct python_stats st;
	struct child c = { 0 };

	if (child_start(&c)) {
		child_stop(&c);
		skip();
	}
	sampler_fsbase = 4242;
	python__note_pid(f->py, (uint32_t)c.pid);
	sampler_fsbase = -1;
	assert_int_equal(set_calls, 1);
	assert_int_equal(last_proc.fsbase_off, 4242);
	python__stats(f->py, &st);
	assert_int_equal(st.fsbase_off, 4242);
	assert_true(st.fsbase_ns == 0);
	child_stop(&c);
}

/* Two processes of one interpreter file: its symbols read once (elf/filecache.h), each
 * process's addresses from its own mapping's bias (Debian's python3.11 is not PIE: the same). */
static void test_detect_shared_file(void **state)
{
	struct fixture *f = *state;
	struct python_stats a, b;
	struct filecache_stats fa, fb;
	struct child c1 = { 0 }, c2 = { 0 };

	if (child_start(&c1) || child_start(&c2)) {
		child_stop(&c2);
		child_stop(&c1);
		skip();
	}
	python__note_pid(f->py, (uint32_t)c1.pid);
	assert_int_equal(last_proc.runtime, c1.runtime);
	python__stats(f->py, &a);
	filecache__stats(f->files, &fa);
	python__note_pid(f->py, (uint32_t)c2.pid);
	assert_int_equal(last_pid, (uint32_t)c2.pid);
	assert_int_equal(last_proc.runtime, c2.runtime);
	assert_int_equal(last_proc.code_type, c2.code_type);
	python__stats(f->py, &b);
	filecache__stats(f->files, &fb);
	assert_int_equal(b.detections, a.detections + 1);
	assert_true(fa.files >= 1);
	assert_int_equal(fb.files, fa.files);		/* one entry per file */
	assert_true(fb.hits >= fa.hits + 1);		/* found, not read again */
	assert_int_equal(b.files.opened, a.files.opened);		/* not even opened */
	python__forget_pid(f->py, (uint32_t)c1.pid, 0);
	python__forget_pid(f->py, (uint32_t)c2.pid, 0);
	child_stop(&c2); /* first: it holds c1's stdin too (forked after it) */
	child_stop(&c1);
}

/*
 * The interpreter rewritten in place between two processes (the same device and inode, another
 * size and mtime: what tmpfs's recycled inodes and an in-place rewrite both look like): the
 * first file's facts are dropped (changed), the file is read again, the new process is read
 * with its own. The copy stays byte-identical up to its end, so it still runs.
 */
static void test_detect_rewritten(void **state)
{
	struct fixture *f = *state;
	struct filecache_stats fa, fb;
	struct child c1 = { 0 }, c2 = { 0 };
	char dir[64], path[128], cmd[512];
	struct stat s1, s2;
	FILE *fp;

	if (access(PY311, X_OK))
		skip();
	assert_int_equal(helpers_tmpdir_new(dir, sizeof(dir), "pyrewrite"), 0);
	snprintf(path, sizeof(path), "%s/python3.11", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", PY311, path);
	assert_int_equal(system(cmd), 0);
	py_path = path;
	assert_int_equal(child_start(&c1), 0);
	python__note_pid(f->py, (uint32_t)c1.pid);
	assert_int_equal(last_proc.runtime, c1.runtime);
	filecache__stats(f->files, &fa);
	python__forget_pid(f->py, (uint32_t)c1.pid, 0);
	child_stop(&c1);

	assert_int_equal(stat(path, &s1), 0);
	usleep(20000); /* another mtime, whatever the file system's granularity */
	fp = fopen(path, "a"); /* the same inode: appended to, not replaced */
	assert_non_null(fp);
	assert_int_equal(fputs("rewritten", fp) >= 0, 1);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(stat(path, &s2), 0);
	assert_int_equal(s2.st_ino, s1.st_ino);
	assert_true(s2.st_size != s1.st_size);

	assert_int_equal(child_start(&c2), 0);
	python__note_pid(f->py, (uint32_t)c2.pid);
	filecache__stats(f->files, &fb);
	assert_int_equal(last_pid, (uint32_t)c2.pid);
	assert_int_equal(last_proc.runtime, c2.runtime);
	assert_int_equal(last_proc.code_type, c2.code_type);
	assert_int_equal(fb.changed, fa.changed + 1);	/* the old facts dropped */
	assert_true(fb.misses >= fa.misses + 1);	/* the new file read */
	assert_int_equal(fb.files, fa.files);		/* in the old one's place */
	python__forget_pid(f->py, (uint32_t)c2.pid, 0);
	child_stop(&c2);
	py_path = PY311;
	assert_int_equal(helpers_tmpdir_rm(dir), 0);
}

static void test_not_python(void **state)
{
	struct fixture *f = *state;
	struct python_stats st;

	python__note_pid(f->py, (uint32_t)getpid()); /* the test binary: not named python */
	assert_int_equal(set_calls, 0);
	python__stats(f->py, &st);
	assert_int_equal(st.detections, 0);
}

/* Names from the process's memory, checked by their tag; a record's names; unknown frames. */
static void test_names(void **state)
{
	struct fixture *f = *state;
	struct python_stats st;
	struct child c = { 0 };
	uint32_t eval = id_of(f, "_PyEval_EvalFrameDefault"), top = id_of(f, "Py_RunMain");
	uint32_t leaf = id_of(f, "PyNumber_Multiply"), native[3] = { top, eval, leaf };
	uint64_t codes[2];
	uint32_t tags[2];
	bool entry[2] = { true, false };

	if (child_start(&c)) {
		child_stop(&c);
		skip();
	}
	python__note_pid(f->py, (uint32_t)c.pid);
	codes[0] = 0x1000;
	tags[0] = 7;
	codes[1] = c.code;
	tags[1] = tag_of(c.pid, c.code);
	name_rec(f, (uint32_t)c.pid, 0x1000, 7, "Outer.run", "/srv/app.py");
	set_frames(f, (uint32_t)c.pid, 2, codes, tags, entry);
	assert_string_equal(merge_text(f, native, 3),
			    "Py_RunMain;Outer.run (/srv/app.py)_[py];hot (<string>)_[py];"
			    "PyNumber_Multiply");
	python__stats(f->py, &st);
	assert_int_equal(st.names, 1);
	assert_int_equal(st.code_reads, 1); /* hot: read from the process, once */
	assert_int_equal(st.frames, 2);
	(void)merge_text(f, native, 3);
	python__stats(f->py, &st);
	assert_int_equal(st.code_reads, 1);
	/* the same address with another tag: another code object now, never hot's name */
	tags[1] ^= 1;
	set_frames(f, (uint32_t)c.pid, 2, codes, tags, entry);
	assert_string_equal(merge_text(f, native, 3),
			    "Py_RunMain;Outer.run (/srv/app.py)_[py];[unknown]_[py];"
			    "PyNumber_Multiply");
	python__stats(f->py, &st);
	assert_int_equal(st.frames_unknown, 1);
	/* names stay for samples taken before the process went */
	python__forget_pid(f->py, (uint32_t)c.pid, 0);
	f->t = 1;
	tags[1] ^= 1;
	set_frames(f, (uint32_t)c.pid, 2, codes, tags, entry);
	assert_string_equal(merge_text(f, native, 3),
			    "Py_RunMain;Outer.run (/srv/app.py)_[py];hot (<string>)_[py];"
			    "PyNumber_Multiply");
	child_stop(&c);
}

/*
 * An exec: samples taken before it and merged after are named with the old image's names, the
 * new image's with its own (the process tracker's extension, looked up by the sample's time).
 */
static void test_exec_images(void **state)
{
	struct fixture *f = *state;
	struct python_stats st;
	struct child c = { 0 };
	uint32_t eval = id_of(f, "_PyEval_EvalFrameDefault"), top = id_of(f, "Py_RunMain");
	uint32_t leaf = id_of(f, "PyNumber_Multiply"), native[3] = { top, eval, leaf };
	uint64_t codes[2], t_exec = mono_ns() - 1000000;
	uint32_t tags[2];
	bool entry[2] = { true, false };

	if (child_start(&c)) {
		child_stop(&c);
		skip();
	}
	python__note_pid(f->py, (uint32_t)c.pid);
	codes[0] = 0x1000;
	tags[0] = 7;
	codes[1] = c.code;
	tags[1] = tag_of(c.pid, c.code);
	name_rec(f, (uint32_t)c.pid, 0x1000, 7, "Outer.run", "/srv/app.py");
	/* the exec, 1 ms ago: the old image's state ended as of then, the new one examined */
	python__forget_pid(f->py, (uint32_t)c.pid, t_exec);
	python__stats(f->py, &st);
	assert_int_equal(st.procs, 0);
	python__note_pid(f->py, (uint32_t)c.pid);
	python__stats(f->py, &st);
	assert_int_equal(st.procs, 1);
	assert_int_equal(st.detections, 2);
	set_frames(f, (uint32_t)c.pid, 2, codes, tags, entry);
	f->t = t_exec - 1; /* taken before the exec */
	assert_string_equal(merge_text(f, native, 3),
			    "Py_RunMain;Outer.run (/srv/app.py)_[py];hot (<string>)_[py];"
			    "PyNumber_Multiply");
	f->t = t_exec + 1; /* after: the new image never sent Outer.run's name */
	assert_string_equal(merge_text(f, native, 3),
			    "Py_RunMain;[unknown]_[py];hot (<string>)_[py];PyNumber_Multiply");
	child_stop(&c);
}

/*
 * Code objects bounded in bytes: one process takes at most half of max_code_bytes (64 KiB here),
 * the rest refused and counted, its frames "[name refused]_[py]" (nothing interned for them).
 */
static void test_code_budget(void **state)
{
	struct fixture *f = *state;
	struct python_stats st;
	struct child c = { 0 };
	uint32_t eval = id_of(f, "_PyEval_EvalFrameDefault"), native[1] = { eval };
	uint64_t codes[1];
	uint32_t tags[1] = { 5 };
	bool entry[1] = { true };
	char name[120];
	size_t before;
	int i;

	if (child_start(&c)) {
		child_stop(&c);
		skip();
	}
	python__note_pid(f->py, (uint32_t)c.pid);
	for (i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "f%05d_%0100d", i, 0);
		name_rec(f, (uint32_t)c.pid, 0x100000 + (uint64_t)i * 64, 5, name, "/srv/m.py");
	}
	python__stats(f->py, &st);
	assert_true(st.code_bytes <= 32 << 10);
	assert_true(st.code_bytes >= 24 << 10);
	assert_true(st.codes_refused >= 1000);
	assert_true(st.codes < 400);
	/* the first ones named, the last refused: a marker frame, not the name */
	codes[0] = 0x100000;
	set_frames(f, (uint32_t)c.pid, 1, codes, tags, entry);
	assert_true(strncmp(merge_text(f, native, 1), "f00000_", 7) == 0);
	codes[0] = 0x100000 + 1999 * 64;
	set_frames(f, (uint32_t)c.pid, 1, codes, tags, entry);
	before = strtab__count(f->names);
	assert_string_equal(merge_text(f, native, 1), "[name refused]_[py]");
	assert_int_equal(strtab__count(f->names), before);
	python__stats(f->py, &st);
	assert_int_equal(st.code_reads, 0); /* refused without reading the process */
	child_stop(&c);
}

/*
 * The names' table renewed (strtab__renew()): the code objects' names and the fixed frames are
 * carried into the new generation (python__names_carry()), so a sample after it is named as
 * before, and not by whatever took the old ids; nothing else of theirs is kept.
 */
static void test_names_carry(void **state)
{
	struct fixture *f = *state;
	struct child c = { 0 };
	uint32_t native[3];
	uint64_t codes[2] = { 0x1000, 0x1040 };
	uint32_t tags[2] = { 7, 8 };
	bool entry[2] = { true, false };
	char name[32];
	size_t before;
	int i;

	if (child_start(&c)) {
		child_stop(&c);
		skip();
	}
	python__note_pid(f->py, (uint32_t)c.pid);
	name_rec(f, (uint32_t)c.pid, 0x1000, 7, "Outer.run", "/srv/app.py");
	name_rec(f, (uint32_t)c.pid, 0x1040, 8, "inner", "/srv/app.py");
	native[0] = id_of(f, "Py_RunMain");
	native[1] = id_of(f, "_PyEval_EvalFrameDefault");
	native[2] = id_of(f, "PyNumber_Multiply");
	set_frames(f, (uint32_t)c.pid, 2, codes, tags, entry);
	assert_string_equal(merge_text(f, native, 3),
			    "Py_RunMain;Outer.run (/srv/app.py)_[py];inner (/srv/app.py)_[py];"
			    "PyNumber_Multiply");
	for (i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "gone_%d", i);
		(void)id_of(f, name);
	}
	before = strtab__count(f->names);
	assert_int_equal(strtab__renew(f->names), 0);
	assert_int_equal(python__names_carry(f->py), 0);
	strtab__renew_done(f->names);
	/* the two names and the fixed frames (eval, its .cold, unknown, refused), no more */
	assert_true(strtab__count(f->names) <= 6);
	assert_true(strtab__count(f->names) < before);
	/* other names at the old ids now */
	for (i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "junk_%d", i);
		(void)id_of(f, name);
	}
	native[0] = id_of(f, "Py_RunMain");
	native[1] = id_of(f, "_PyEval_EvalFrameDefault");
	native[2] = id_of(f, "PyNumber_Multiply");
	set_frames(f, (uint32_t)c.pid, 2, codes, tags, entry);
	assert_string_equal(merge_text(f, native, 3),
			    "Py_RunMain;Outer.run (/srv/app.py)_[py];inner (/srv/app.py)_[py];"
			    "PyNumber_Multiply");
	child_stop(&c);
}

/*
 * A code object freed and another made at its address with the same tag (its strings reused at
 * their addresses): the new names replace the cached ones.
 */
static void test_code_reused(void **state)
{
	struct fixture *f = *state;
	struct python_stats st;
	struct child c = { 0 };
	uint32_t eval = id_of(f, "_PyEval_EvalFrameDefault"), native[1] = { eval };
	uint64_t codes[1] = { 0x2000 };
	uint32_t tags[1] = { 9 };
	bool entry[1] = { true };
	uint64_t bytes;

	if (child_start(&c)) {
		child_stop(&c);
		skip();
	}
	python__note_pid(f->py, (uint32_t)c.pid);
	name_rec(f, (uint32_t)c.pid, 0x2000, 9, "gen_00001", "<string>");
	set_frames(f, (uint32_t)c.pid, 1, codes, tags, entry);
	assert_string_equal(merge_text(f, native, 1), "gen_00001 (<string>)_[py]");
	python__stats(f->py, &st);
	bytes = st.code_bytes;
	name_rec(f, (uint32_t)c.pid, 0x2000, 9, "gen_00002", "<string>");
	assert_string_equal(merge_text(f, native, 1), "gen_00002 (<string>)_[py]");
	python__stats(f->py, &st);
	assert_int_equal(st.codes_renamed, 1);
	assert_int_equal(st.codes, 1);
	assert_int_equal(st.code_bytes, bytes); /* the old one's bytes given back */
	/* the same names again: nothing renamed */
	name_rec(f, (uint32_t)c.pid, 0x2000, 9, "gen_00002", "<string>");
	python__stats(f->py, &st);
	assert_int_equal(st.codes_renamed, 1);
	child_stop(&c);
}

/* "file:line": the line of hot's RETURN_VALUE (4), from the line table in the process. */
static void test_lines(void **state)
{
	struct fixture *f = *state;
	struct child c = { 0 };
	uint32_t eval = id_of(f, "_PyEval_EvalFrameDefault"), native[1] = { eval };
	uint64_t codes[1];
	uint32_t tags[1];
	bool entry[1] = { true };

	if (child_start(&c)) {
		child_stop(&c);
		skip();
	}
	python__note_pid(f->py, (uint32_t)c.pid);
	codes[0] = c.code;
	tags[0] = tag_of(c.pid, c.code);
	set_frames(f, (uint32_t)c.pid, 1, codes, tags, entry);
	/* 3.11: the tag word's high half is prev_instr - code (co_code_adaptive at 184) */
	f->words[1] |= (uint64_t)(184 + c.ret_off) << 32;
	assert_string_equal(merge_text(f, native, 1), "hot (<string>:4)_[py]");
	f->words[1] = tags[0] | (uint64_t)(184 + 0) << 32; /* the first instruction: the def line */
	assert_string_equal(merge_text(f, native, 1), "hot (<string>:2)_[py]");
	child_stop(&c);
}

/* Which eval frame each group of Python frames replaces. */
static void test_merge_alignment(void **state)
{
	struct fixture *f = *state;
	struct child c = { 0 };
	uint32_t E = id_of(f, "_PyEval_EvalFrameDefault"), A = id_of(f, "A"), B = id_of(f, "B"),
		 C = id_of(f, "C");
	uint64_t codes[4] = { 0x1000, 0x2000, 0x3000, 0x4000 };
	uint32_t tags[4] = { 1, 2, 3, 4 };
	const uint32_t two[5] = { A, E, B, E, C }, none[2] = { A, C };
	const struct {
		size_t n;	/* Python frames */
		bool entry[4];	/* where groups start (the first frame always does) */
		uint32_t flags; /* walk flags */
		const uint32_t *native;
		size_t nn;
		const char *want;
	} cases[] = {
		/* two groups, two eval frames, both walks whole: one to one */
		{ 3, { 1, 0, 1 }, 0, two, 5, "A;f0;f1;B;f2;C" },
		/* three groups: the extra one (a call being set up) joins the innermost */
		{ 4, { 1, 0, 1, 1 }, 0, two, 5, "A;f0;f1;B;f2;f3;C" },
		/* ... but with the native walk cut short, from the leaf: the outer one at the root
		 */
		{ 4, { 1, 0, 1, 1 }, EMBER_USTACK_TRUNC, two, 5, "f0;f1;A;f2;B;f3;C" },
		/* one group for two eval frames: the inner one stays, both whole */
		{ 2, { 1, 0 }, 0, two, 5, "A;f0;f1;B;_PyEval_EvalFrameDefault;C" },
		/* ... the Python walk cut short (its outer frames missing): the outer one stays */
		{ 2,
		  { 1, 0 },
		  EMBER_USTACK_PY_TRUNC,
		  two,
		  5,
		  "A;_PyEval_EvalFrameDefault;B;f0;f1;C" },
		/* no eval frame: the Python frames at the root */
		{ 2, { 1, 0 }, 0, none, 2, "f0;f1;A;C" },
		/* frame pointers only (no tables yet): not whole, from the leaf */
		{ 4, { 1, 0, 1, 1 }, EMBER_USTACK_FP, two, 5, "f0;f1;A;f2;B;f3;C" },
	};
	size_t i, j;

	if (child_start(&c)) { /* a live process in state "Python" */
		child_stop(&c);
		skip();
	}
	python__note_pid(f->py, (uint32_t)c.pid);
	for (j = 0; j < 4; j++) {
		char name[8];

		snprintf(name, sizeof(name), "f%zu", j);
		name_rec(f, (uint32_t)c.pid, codes[j], tags[j], name, "m.py");
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char want[256], *p = want;
		const char *s = cases[i].want;

		set_frames(f, (uint32_t)c.pid, cases[i].n, codes, tags, cases[i].entry);
		f->g.user_flags |= cases[i].flags;
		/* the names read "fN (m.py)_[py]" */
		for (; *s; s++) {
			*p++ = *s;
			if (*s >= '0' && *s <= '9' && s[-1] == 'f')
				p += sprintf(p, " (m.py)_[py]");
		}
		*p = '\0';
		assert_string_equal(merge_text(f, cases[i].native, cases[i].nn), want);
	}
	child_stop(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_detect_shared_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_detect_live, setup, teardown),
		cmocka_unit_test_setup_teardown(test_detect_fsbase_from_sampler, setup, teardown),
		cmocka_unit_test_setup_teardown(test_detect_rewritten, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_python, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_images, setup, teardown),
		cmocka_unit_test_setup_teardown(test_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lines, setup_lines, teardown),
		cmocka_unit_test_setup_teardown(test_code_budget, setup_small, teardown),
		cmocka_unit_test_setup_teardown(test_code_reused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_names_carry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge_alignment, setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
