# SPDX-License-Identifier: MIT
"""pyblock: a Python program off the CPU in time.sleep and socket.recv (issue 30).

Each cycle nap() sleeps 30 ms (time.sleep) and wait_peer() asks a helper thread for a byte on a
socketpair and waits ~20 ms in socket.recv for it (the helper sleeps 20 ms before it answers):
blocked stacks read
<module>;main;cycle;nap and <module>;main;cycle;wait_peer (pyblock.py) above the interpreter.

usage: pyblock.py SECONDS   Prints "ready PID" once started and "done" at the end.
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


def cycle(s):
    nap()
    wait_peer(s)


def main():
    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 5
    a, b = socket.socketpair()
    t = threading.Thread(target=feeder, args=(b,), daemon=True)
    t.start()
    print("ready", os.getpid(), flush=True)
    end = time.monotonic() + secs
    while time.monotonic() < end:
        cycle(a)
    a.close()
    print("done", flush=True)


if __name__ == "__main__":
    main()
