# SPDX-License-Identifier: MIT
# What tests/integration/test_hostile_pynames.sh runs as nobody:
#   pynames.py long SECONDS   ever-new functions with 4096-character names (each its own
#                             co_firstlineno), each called once and dropped
#   pynames.py fresh SECONDS  a new function with a short name (w_00000, w_00001...) every
#                             0.25 s, spinning in it until the next: a witness whose new names
#                             must get into the table while another process fills its share
#   pynames.py reuse SECONDS  a function whose name is rewritten in place every second
#                             (gen_00000, gen_00001...): what the profiler sees when a code object
#                             is freed and another made at its address, its name string at the
#                             old one's address too (the same tag: file and name pointers and
#                             first line), which a loop of functions made and deleted reaches
#                             only by chance; prints "NAME START END" (Unix times) per name
import ctypes
import sys
import time


def spin(t):
    end = time.time() + t
    while time.time() < end:
        pass


def long_names(seconds):
    end = time.time() + seconds
    i = 0
    print("ready", flush=True)
    while time.time() < end:
        name = "f%08d_" % i + "x" * 4086
        src = "\n" * (i % 5000) + "def %s():\n    s = 0\n    for k in range(3000):\n        s += k\n" % name
        ns = {}
        exec(src, ns)
        ns[name]()
        del ns
        i += 1
    print("made %d (cpu %.2f s)" % (i, time.process_time()), flush=True)


def fresh(seconds):
    end = time.time() + seconds
    i = 0
    print("ready", flush=True)
    while time.time() < end:
        name = "w_%05d" % i
        ns = {"spin": spin}
        exec("def %s():\n    spin(0.25)\n" % name, ns)
        ns[name]()
        i += 1
    print("made %d (cpu %.2f s)" % (i, time.process_time()), flush=True)


def rewrite(s, text):
    """Writes @text over the characters of ASCII string @s (same length), in place."""
    assert s.isascii() and len(text) == len(s)
    hdr = sys.getsizeof(s) - len(s) - 1  # a compact ASCII object: its characters follow
    ctypes.memmove(id(s) + hdr, text.encode(), len(s))


def reuse(seconds):
    ns = {"spin": spin}
    exec("def gen_00000():\n    spin(1.0)\n", ns)
    f = ns["gen_00000"]
    code = f.__code__
    end = time.time() + seconds
    i = 0
    print("ready", flush=True)
    while time.time() < end:
        name = "gen_%05d" % i
        for s in {id(code.co_name): code.co_name, id(code.co_qualname): code.co_qualname}.values():
            rewrite(s, name)
        t0 = time.time()
        f()
        print("%s %.6f %.6f" % (name, t0, time.time()), flush=True)
        i += 1


if __name__ == "__main__":
    {"long": long_names, "fresh": fresh, "reuse": reuse}[sys.argv[1]](float(sys.argv[2]))
