# SPDX-License-Identifier: MIT
"""pyblock: a Python program off the CPU in time.sleep and socket.recv.

Each cycle nap() sleeps 30 ms (time.sleep) and wait_peer() asks a helper thread for a byte on a
socketpair and waits ~20 ms in socket.recv for it (the helper sleeps 20 ms before it answers):
blocked stacks read
<module>;main;cycle;nap and <module>;main;cycle;wait_peer (pyblock.py) above the interpreter.

usage: pyblock.py SECONDS   Prints "ready PID" once started, then at the end "cycle START NAP_NS
PEER_NS" per cycle (its Unix time, the wall time in nap() and in wait_peer()) and "done TID
NAP_NS PEER_NS" (the main thread's id, the totals): the helper thread's waits for a CPU make
wait_peer() longer on a loaded host, so the shares are measured.
"""
import os
import socket
import sys
import threading
import time


def feeder(s):
    while s.recv(1):
        time.sleep(0.02)
        s.send(b"x")


def nap():
    time.sleep(0.03)


def wait_peer(s):
    s.send(b"?")
    s.recv(1)


spent = [0, 0]


def cycle(s, out):
    w = time.time_ns()
    t0 = time.monotonic_ns()
    nap()
    t1 = time.monotonic_ns()
    wait_peer(s)
    t2 = time.monotonic_ns()
    spent[0] += t1 - t0
    spent[1] += t2 - t1
    out.append("cycle %d.%09d %d %d" % (w // 10**9, w % 10**9, t1 - t0, t2 - t1))


def main():
    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 5
    a, b = socket.socketpair()
    t = threading.Thread(target=feeder, args=(b,), daemon=True)
    t.start()
    print("ready", os.getpid(), flush=True)
    end = time.monotonic() + secs
    cycles = []
    while time.monotonic() < end:
        cycle(a, cycles)
    a.close()
    print("\n".join(cycles))
    print("done", threading.get_native_id(), spent[0], spent[1], flush=True)


if __name__ == "__main__":
    main()
