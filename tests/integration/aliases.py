#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Folded stacks with the names of one address made one, for comparing two profilers' views.

Several names can stand at one address (glibc's __libc_start_main@@GLIBC_2.34, __libc_start_main
and __libc_start_main_impl; write and __GI___libc_write), and two profilers may pick different
ones. This maps every function name of the given ELF files (and of their separate debug files,
by build-id under /usr/lib/debug) to one name per address, the smallest, version suffixes
dropped, and rewrites folded stacks through that map. A name found at two addresses (static
functions of the same name) is left as it is.

usage: aliases.py ELF... -- FOLDED...   (each FOLDED rewritten in place)
"""
import os
import subprocess
import sys


def debug_file(path):
    try:
        out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    except OSError:
        return None
    for line in out.splitlines():
        if "Build ID:" in line:
            bid = line.split()[-1]
            d = "/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:])
            return d if os.path.exists(d) else None
    return None


def symbols(path):
    """(address, name) of the function symbols of @path's .symtab and .dynsym."""
    out = []
    for dyn in (False, True):
        cmd = ["readelf", "-sW", "--dyn-syms" if dyn else "--syms", path]
        try:
            text = subprocess.run(cmd, capture_output=True, text=True).stdout
        except OSError:
            continue
        for line in text.splitlines():
            f = line.split()
            if len(f) >= 8 and f[3] in ("FUNC", "IFUNC") and f[6] != "UND":
                name = f[7].split("@")[0]
                if name:
                    out.append((int(f[1], 16), name))
    return out


def main():
    if "--" not in sys.argv:
        sys.exit(__doc__)
    k = sys.argv.index("--")
    elfs, folded = sys.argv[1:k], sys.argv[k + 1:]
    canon = {}  # name -> canonical name, None when ambiguous
    for path in elfs:
        by_addr = {}
        files = [path] + [d for d in [debug_file(path)] if d]
        for f in files:
            for addr, name in symbols(f):
                by_addr.setdefault(addr, set()).add(name)
        for names in by_addr.values():
            c = min(names)
            for n in names:
                if n in canon and canon[n] != c:
                    canon[n] = None
                else:
                    canon.setdefault(n, c)
    for path in folded:
        lines = []
        for line in open(path):
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, count = line.rpartition(" ")
            frames = []
            for fr in stack.split(";"):
                base, suffix = fr, ""
                for s in ("_[k]", "_[j]", "_[i]"):
                    if fr.endswith(s):
                        base, suffix = fr[: -len(s)], s
                c = canon.get(base.split("@")[0])
                frames.append((c if c else base) + suffix)
            lines.append("%s %s" % (";".join(frames), count))
        with open(path, "w") as out:
            out.write("\n".join(lines) + ("\n" if lines else ""))


if __name__ == "__main__":
    main()
