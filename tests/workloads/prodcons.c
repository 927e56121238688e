// SPDX-License-Identifier: MIT
/*
 * prodcons: a producer and a consumer on a mutex and a condition variable (the wakeup and
 * chain graphs). The thread "producer" makes an item every 5 ms (nanosleep, then produce_item():
 * lock, push, pthread_cond_signal, unlock); the thread "consumer" waits for it in take_item()
 * (pthread_cond_wait) and spins 0.1 ms per item. The consumer's blocked time is ~all in
 * take_item, and its waker is the producer in produce_item.
 *
 * usage: prodcons SECONDS [NAME]   Prints "ready PID" and, at the end, "done CONSUMER_TID".
 * NAME: the consumer thread's name (default "consumer"): a test names its own, so that another
 * prodcons on the host (another test run) is not counted in its wakeup graph, which knows the
 * wakee by its comm only.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
static int items;
static volatile int stop;
static volatile unsigned long sink;
static long consumer_tid;
static const char *consumer_name = "consumer";

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void produce_item(void)
{
	pthread_mutex_lock(&lock);
	items++;
	pthread_cond_signal(&ready);
	pthread_mutex_unlock(&lock);
}

__attribute__((noinline)) static void take_item(void)
{
	pthread_mutex_lock(&lock);
	while (!items && !stop)
		pthread_cond_wait(&ready, &lock);
	if (items)
		items--;
	pthread_mutex_unlock(&lock);
}

static void *consumer(void *arg)
{
	uint64_t end;

	(void)arg;
	pthread_setname_np(pthread_self(), consumer_name);
	consumer_tid = syscall(SYS_gettid);
	while (!stop) {
		take_item();
		end = now_ns() + 100000;
		while (now_ns() < end)
			sink++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;
	struct timespec ts = { .tv_nsec = 5000000 };
	uint64_t end;
	pthread_t th;

	if (argc > 2)
		consumer_name = argv[2];
	pthread_setname_np(pthread_self(), "producer");
	if (pthread_create(&th, NULL, consumer, NULL))
		return 1;
	printf("ready %d\n", getpid());
	fflush(stdout);
	end = now_ns() + (uint64_t)(secs * 1e9);
	while (now_ns() < end) {
		nanosleep(&ts, NULL);
		produce_item();
	}
	pthread_mutex_lock(&lock);
	stop = 1;
	pthread_cond_broadcast(&ready);
	pthread_mutex_unlock(&lock);
	pthread_join(th, NULL);
	printf("done %ld\n", consumer_tid);
	return 0;
}
