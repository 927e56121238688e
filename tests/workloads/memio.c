// SPDX-License-Identifier: MIT
/*
 * memio: memory and I/O with known splits, each pair of functions noinline so that stacks tell
 * them apart. usage: memio MODE SECONDS [FILE]; prints "done MODE A B" at the end with what
 * each function did (pages, bytes).
 *
 *   pagefault  fault_a() touches 70 new pages of an anonymous mapping, fault_b() 30 (a mapping
 *              of each, unmapped after: every touch is a fault), then 10 ms of sleep: ~10 000
 *              faults a second, 70/30 in pages;
 *   storm      faults as fast as it can (256 pages mapped, touched, unmapped, in a loop);
 *   vmstorm    maps and unmaps 64 KiB as fast as it can (A: the mmap() calls);
 *   vmgrow     grow_a() maps 6 x 64 KiB, grow_b() 4 x 64 KiB (and unmaps them), 2 ms of sleep:
 *              60/40 in bytes;
 *   malloc     alloc_a() allocates 800 bytes, alloc_b() 200 (each written, kept in a ring of
 *              64 and freed when replaced): 80/20 in bytes;
 *   direct     write_a() writes 6 x 64 KiB with O_DIRECT to FILE, write_b() 4 x 64 KiB: 60/40
 *              in bytes (one pwrite of 64 KiB each, a 16 MiB file rewritten);
 *   buffered   writes 32 MiB to FILE through the page cache, no fsync, and exits: the flusher
 *              writes it back (a sync by the caller);
 *   readahead  drops FILE's pages from the page cache (posix_fadvise DONTNEED, after the
 *              caller's sync; again while mincore() shows some resident), then reads it
 *              through in 64 KiB reads: the kernel reads ahead (A: the bytes read, B: the
 *              bytes still cached when the reading began).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
#define CHUNK (64 * 1024)

static volatile unsigned long sink;
static void *volatile keep[64];

/* the bytes of FD's file in the page cache (mincore over a mapping of it), 0 when unknown */
static unsigned long resident_bytes(int fd)
{
	off_t size = lseek(fd, 0, SEEK_END);
	unsigned char *vec;
	unsigned long r = 0;
	size_t pages;
	void *m;

	if (size <= 0)
		return 0;
	pages = ((size_t)size + PAGE - 1) / PAGE;
	m = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
	vec = malloc(pages);
	if (m != MAP_FAILED && vec && !mincore(m, (size_t)size, vec))
		for (size_t i = 0; i < pages; i++)
			r += (vec[i] & 1) ? PAGE : 0;
	if (m != MAP_FAILED)
		munmap(m, (size_t)size);
	free(vec);
	(void)lseek(fd, 0, SEEK_SET);
	return r;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void nap_us(long us)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = us * 1000 };

	nanosleep(&ts, NULL);
}

/* Touches @n new pages: one fault each. */
static __attribute__((noinline)) void touch(size_t n)
{
	char *p = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t i;

	if (p == MAP_FAILED)
		exit(1);
	for (i = 0; i < n; i++)
		p[i * PAGE] = (char)i;
	sink += (unsigned char)p[0];
	munmap(p, n * PAGE);
}

static __attribute__((noinline)) void fault_a(void)
{
	touch(70);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void fault_b(void)
{
	touch(30);
	__asm__ volatile("" ::: "memory");
}

/* Maps @n chunks, one mmap() each, and unmaps them. */
static __attribute__((noinline)) void grow(int n)
{
	void *m[16];
	int i;

	for (i = 0; i < n; i++) {
		m[i] = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m[i] == MAP_FAILED)
			exit(1);
	}
	for (i = 0; i < n; i++)
		munmap(m[i], CHUNK);
}

static __attribute__((noinline)) void grow_a(void)
{
	grow(6);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void grow_b(void)
{
	grow(4);
	__asm__ volatile("" ::: "memory");
}

static unsigned int slot;

static __attribute__((noinline)) void alloc(size_t n)
{
	char *p = malloc(n);

	if (!p)
		exit(1);
	memset(p, 1, n);
	free(keep[slot & 63]);
	keep[slot++ & 63] = p;
}

static __attribute__((noinline)) void alloc_a(void)
{
	alloc(800);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void alloc_b(void)
{
	alloc(200);
	__asm__ volatile("" ::: "memory");
}

static int fd;
static char *buf;
static off_t at;

/* @n chunks written with O_DIRECT, one pwrite() each, round the file's 16 MiB. */
static __attribute__((noinline)) void put(int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (pwrite(fd, buf, CHUNK, at) != CHUNK) {
			perror("pwrite");
			exit(1);
		}
		at = (at + CHUNK) % (16 << 20);
	}
}

static __attribute__((noinline)) void write_a(void)
{
	put(6);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void write_b(void)
{
	put(4);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	double secs = argc > 2 ? atof(argv[2]) : 5, end;
	unsigned long a = 0, b = 0;

	end = now_s() + secs;
	if (!strcmp(mode, "pagefault")) {
		while (now_s() < end) {
			fault_a();
			fault_b();
			a += 70;
			b += 30;
			nap_us(10000);
		}
	} else if (!strcmp(mode, "storm")) {
		while (now_s() < end) {
			touch(256);
			a += 256;
		}
	} else if (!strcmp(mode, "vmstorm")) {
		while (now_s() < end) {
			grow(1);
			a++;
		}
	} else if (!strcmp(mode, "vmgrow")) {
		while (now_s() < end) {
			grow_a();
			grow_b();
			a += 6 * CHUNK;
			b += 4 * CHUNK;
			nap_us(2000);
		}
	} else if (!strcmp(mode, "malloc")) {
		while (now_s() < end) {
			alloc_a();
			alloc_b();
			a += 800;
			b += 200;
		}
	} else if (!strcmp(mode, "direct") && argc > 3) {
		fd = open(argv[3], O_RDWR | O_CREAT | O_DIRECT, 0600);
		if (fd < 0 || posix_memalign((void **)&buf, PAGE, CHUNK) ||
		    ftruncate(fd, 16 << 20)) {
			perror(argv[3]);
			return 1;
		}
		memset(buf, 7, CHUNK);
		while (now_s() < end) {
			write_a();
			write_b();
			a += 6 * CHUNK;
			b += 4 * CHUNK;
		}
		close(fd);
	} else if (!strcmp(mode, "buffered") && argc > 3) {
		char chunk[CHUNK];
		int i;

		fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0) {
			perror(argv[3]);
			return 1;
		}
		memset(chunk, 9, sizeof(chunk));
		for (i = 0; i < 512; i++) {
			if (write(fd, chunk, sizeof(chunk)) != sizeof(chunk))
				return 1;
			a += sizeof(chunk);
		}
		close(fd);
	} else if (!strcmp(mode, "readahead") && argc > 3) {
		char chunk[CHUNK];
		ssize_t n;

		fd = open(argv[3], O_RDONLY);
		if (fd < 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)) {
			perror(argv[3]);
			return 1;
		}
		/* pages the drop missed (in another CPU's LRU batch, or still under writeback) stay
		 * cached and are never read: dropped again until none is resident, B says how many
		 * bytes still were */
		b = resident_bytes(fd);
		for (int i = 0; i < 20 && b; i++) {
			usleep(50 * 1000);
			(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
			b = resident_bytes(fd);
		}
		while ((n = read(fd, chunk, sizeof(chunk))) > 0)
			a += (unsigned long)n;
		close(fd);
	} else {
		fprintf(stderr,
			"usage: memio pagefault|storm|vmgrow|vmstorm|malloc SECONDS | "
			"direct|buffered|readahead SECONDS FILE\n");
		return 2;
	}
	printf("done %s %lu %lu\n", mode, a, b);
	return 0;
}
