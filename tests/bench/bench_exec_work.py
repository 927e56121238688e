#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# emberd's work per new process, counted rather than timed, so that a busy shared host
# blurs it less than bench_exec.sh's CPU: three alternations of 3 s without and with
# `spawn 300 3 /bin/true`; per pair, (with - without) / (forks with - without) of emberd's
# voluntary context switches (its wake-ups, all threads), its CPU (us), the process tracker's
# /proc reads and the sampler's bpf() calls. Sorted, one line each.
#
# usage: bench_exec_work.py EMBERD PORT   (root; OUTPUT: the build with workloads/spawn)
import json, os, re, subprocess, sys, time, urllib.request
emberd, port = sys.argv[1], int(sys.argv[2])
spawn = os.path.join(os.environ.get("OUTPUT", "build"), "workloads", "spawn")
p = subprocess.Popen([emberd, "--listen", "127.0.0.1:%d" % port], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(100):
    try:
        urllib.request.urlopen("http://127.0.0.1:%d/healthz" % port); break
    except Exception: time.sleep(0.1)
time.sleep(3)
def snap():
    cs = 0
    for t in os.listdir("/proc/%d/task" % p.pid):
        try:
            s = open("/proc/%d/task/%s/status" % (p.pid, t)).read()
            cs += int(re.search(r"voluntary_ctxt_switches:\s+(\d+)", s).group(1))
        except Exception: pass
    f = open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()
    cpu = (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    st = json.load(urllib.request.urlopen("http://127.0.0.1:%d/api/v1/stats" % port))
    forks = int(re.search(r"^processes (\d+)", open("/proc/stat").read(), re.M).group(1))
    return dict(cs=cs, cpu=cpu, reads=st["processes"]["reads"], bpf=st["sampler"].get("bpf_calls", 0), forks=forks, t=time.monotonic())
res = []
for i in range(3):
    a = snap(); time.sleep(3); b = snap()
    subprocess.run([spawn, "300", "3", "/bin/true"], stdout=subprocess.DEVNULL)
    time.sleep(0.3); c = snap()
    q = {k: (b[k] - a[k]) / (b["t"] - a["t"]) for k in a}
    w = {k: (c[k] - b[k]) / (c["t"] - b["t"]) for k in a}
    df = w["forks"] - q["forks"]
    res.append({k: (w[k] - q[k]) / df for k in ("cs", "cpu", "reads", "bpf")})
p.terminate(); p.wait()
for k in ("cs", "cpu", "reads", "bpf"):
    v = sorted(r[k] for r in res)
    print("%s per new process: %s" % (k, " ".join(("%.1f" % (x * 1e6) if k == "cpu" else "%.2f" % x) for x in v)))
