# SPDX-License-Identifier: MIT
"""pyburn: burn.c's twin in Python, for the Python frames.

Modes (the first argument after SECONDS, default "shares"):

  shares   each round work() calls burn_a, burn_b and burn_c with 5 : 3 : 2 units of the same
           arithmetic loop, so 50% / 30% / 20% of the process's CPU time is spent in them. A unit
           is calibrated to ~50 ms, a round (500 ms) is much longer than a 99 Hz period, and only
           whole rounds run, as in burn.c. Stacks read
           <module>;main;work;burn_a (pyburn.py)
           Each call is printed as "call X START END CPU" (Unix times, its CPU time in seconds): the
           split the process really had, in any window (a neighbour slowing one phase moves it
           off 5 : 3 : 2).
  threads  a ThreadPoolExecutor of three threads, each running one of burn_a, burn_b, burn_c in
           a loop (thread_a, thread_b, thread_c): each thread's stacks hold its own function only.
           They take turns of 100 ms (a, b, c, a, ...: whole rounds), a third of the time each.
  cext     C extensions called from Python: zlib.compress (zlib_work) and json.dumps
           (json_work), half the time each: their native frames stand above the Python caller.

usage: [PYBURN_CPU=1] pyburn.py SECONDS [shares|threads|cext]
Prints "ready PID UNIXTIME" once started (after calibration) and "done UNIXTIME" at the end, so
that a test can ask for the samples in between; in threads mode "thread X TID" per thread as it
starts and "ran X CALLS CPU_S" per thread before "done" (its burn_X calls, its CPU time). The shares mode runs
under Python 2.7 too (an interpreter ember does not read: native frames, counted).
"""
import json
import os
import sys
import threading
import time
import zlib

UNIT_S = 0.05
clock = getattr(time, "monotonic", time.time)


def say(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def loop(n):
    x = 0
    for _ in range(n):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    return x


# each burn_* runs its loop itself (no shared leaf), so stacks end in the function named
def burn_a(unit):
    x = 0
    for _ in range(5 * unit):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    return x


def burn_b(unit):
    x = 0
    for _ in range(3 * unit):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    return x


def burn_c(unit):
    x = 0
    for _ in range(2 * unit):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    return x


def calibrate():
    n = 10000
    while True:
        t0 = clock()
        loop(n)
        dt = clock() - t0
        if dt > 0.02:
            return max(1, int(n * UNIT_S / dt))
        n *= 2


# the thread's CPU time (what a CPU-clock sampler counts: a call's wall time also holds the
# time the process was off its CPU, preempted or throttled); wall time where there is none (2.7)
cpu = getattr(time, "thread_time", None) or getattr(time, "process_time", None) or time.time


# PYBURN_CPU=1: SECONDS of the process's CPU time rather than of the clock, so that a run beside
# other work still gets its samples (it lasts longer instead); 2.7's time.clock() is CPU time
proc_cpu = getattr(time, "process_time", None) or time.clock


def work(unit, seconds):
    now = proc_cpu if os.environ.get("PYBURN_CPU") == "1" else clock
    end = now() + seconds
    while now() < end:
        for f in (burn_a, burn_b, burn_c):
            t0 = time.time()
            c0 = cpu()
            f(unit)
            say("call %s %.6f %.6f %.6f" % (f.__name__[-1], t0, time.time(), cpu() - c0))


def thread_id(name):
    say("thread %s %d" % (name, threading.get_native_id()))


# Threads mode: the threads take turns, a slice of SLICE_UNITS units each (100 ms, ten periods of
# a 99 Hz sampler) in the order a, b, c, in whole rounds until the end, so each gets a third of
# the time in slices that samples cannot miss. Left to the GIL they swap every 5 ms
# (sys.getswitchinterval()), half a 99 Hz period: the samples then fall on the same thread's turns
# for hundreds of ms, and in 3 s a thread with a third of the CPU got 17 samples where 90 were due
# (its samples were its own: the workload's split, not the profiler's).
SLICE_UNITS = 2


class Turns(object):
    def __init__(self, count, end):
        self.cond = threading.Condition()
        self.count = count
        self.turn = 0
        self.end = end
        self.over = False

    def wait(self, me):
        """Waits for thread ME's turn; False once the run is over (decided at a round's start)."""
        with self.cond:
            while self.turn != me and not self.over:
                self.cond.wait()
            if me == 0 and clock() >= self.end:
                self.over = True
                self.cond.notify_all()
            return not self.over

    def done(self, me):
        with self.cond:
            self.turn = (me + 1) % self.count
            self.cond.notify_all()


# per thread: burn_* calls made and the thread's CPU time, printed before "done" ("ran X CALLS
# CPU_S"), so that a test can tell a thread that did not run from one that was not sampled
thread_cpu = getattr(time, "thread_time", lambda: -1.0)
ran = {}


def thread_a(unit, turns):
    thread_id("a")
    n = 0
    while turns.wait(0):
        burn_a(max(1, SLICE_UNITS * unit // 5))
        turns.done(0)
        n += 1
    ran["a"] = (n, thread_cpu())


def thread_b(unit, turns):
    thread_id("b")
    n = 0
    while turns.wait(1):
        burn_b(max(1, SLICE_UNITS * unit // 3))
        turns.done(1)
        n += 1
    ran["b"] = (n, thread_cpu())


def thread_c(unit, turns):
    thread_id("c")
    n = 0
    while turns.wait(2):
        burn_c(max(1, SLICE_UNITS * unit // 2))
        turns.done(2)
        n += 1
    ran["c"] = (n, thread_cpu())


def threads(unit, seconds):
    import concurrent.futures

    turns = Turns(3, clock() + seconds)
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        for f in (thread_a, thread_b, thread_c):
            pool.submit(f, unit, turns)
    # the main thread waits in the executor's shutdown (a lock), sampled rarely
    for x in "abc":
        n, cpu = ran.get(x, (0, -1.0))
        say("ran %s %d %.3f" % (x, n, cpu))


def zlib_work(data, end):
    while clock() < end:
        zlib.compress(data, 9)


def json_work(obj, end):
    while clock() < end:
        json.dumps(obj)


def cext(unit, seconds):
    data = bytes(loop(i) & 0xFF for i in range(200)) * 5000
    obj = [{"id": i, "name": "item%d" % i, "tags": ["a", "b", "c"], "v": i * 0.5}
           for i in range(20000)]
    end = clock() + seconds
    while clock() < end:
        zlib_work(data, clock() + 0.25)
        json_work(obj, clock() + 0.25)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    mode = sys.argv[2] if len(sys.argv) > 2 else "shares"
    unit = calibrate()
    say("ready %d %.6f" % (os.getpid(), time.time()))
    if mode == "threads":
        threads(unit, seconds)
    elif mode == "cext":
        cext(unit, seconds)
    else:
        work(unit, seconds)
    say("done %.6f" % time.time())


main()
