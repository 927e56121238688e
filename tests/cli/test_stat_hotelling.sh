#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ember stat compare (two-sample Hotelling T^2, GSL) against an independent implementation in
# numpy/scipy (Debian's python3-numpy, python3-scipy; used only here) on synthetic profiles:
# the same kept stacks, and T^2, F, p-value, critical values, means, pooled variances and
# simultaneous intervals within 1e-6 relative.
. "$(dirname "$0")/../lib.sh"
PY=/usr/bin/python3
$PY -c 'import numpy, scipy.stats' 2>/dev/null || skip_all "no python3-numpy/python3-scipy (make deps)"

cat >"$TMP/ref.py" <<'PYEOF'
import json, random, subprocess, sys
import numpy as np
from scipy import stats

ember, tmp = sys.argv[1], sys.argv[2]
REL = 1e-6
fails = 0

def close(x, y, what):
    global fails
    if x is None or y is None or not np.isfinite(y):
        ok = x == y or (x is None and not np.isfinite(y))
    else:
        ok = abs(x - y) <= REL * max(abs(x), abs(y)) or abs(x - y) < 1e-12
    if not ok:
        fails += 1
        print(f"# {what}: ember {x!r} reference {y!r}")
    return ok

def scenario(name, seed, n_a, n_b, nstacks, shift, max_stacks, alpha, rare=0.4):
    rng = random.Random(seed)
    stacks = [f"main;f{i};g{i % 3}" for i in range(nstacks)]
    files = {"a": [], "b": []}
    data = {"a": [], "b": []}
    for g, n in (("a", n_a), ("b", n_b)):
        for k in range(n):
            prof = {}
            for i, s in enumerate(stacks):
                # some stacks are rare: low document frequency, cut first
                if i >= nstacks - 3 and rng.random() < rare:
                    continue
                mu = 50 + 15 * i + (shift if g == "b" and i in (1, 4) else 0)
                v = max(0.0, rng.gauss(mu, 5 + i))
                v = round(v, 2) if i % 2 else float(round(v))
                if v > 0:
                    prof[s] = v
            path = f"{tmp}/{name}-{g}{k}.folded"
            with open(path, "w") as f:
                for s, v in prof.items():
                    f.write(f"{s} {v:g}\n")
            files[g].append(path)
            data[g].append(prof)
    cmd = [ember, "stat", "compare", "--json", "--alpha", str(alpha)]
    if max_stacks:
        cmd += ["--max-stacks", str(max_stacks)]
    cmd += ["--a"] + files["a"] + ["--b"] + files["b"]
    out = json.loads(subprocess.run(cmd, check=True, capture_output=True).stdout)

    # independent: union, document frequency ranking, top p
    allstacks = sorted({s for g in data for p in data[g] for s in p})
    df = {s: sum(1 for g in data for p in data[g] if p.get(s, 0) != 0) for s in allstacks}
    tot = {s: sum(p.get(s, 0) for g in data for p in data[g]) for s in allstacks}
    order = sorted(allstacks, key=lambda s: (-df[s], -tot[s], s.encode()))
    N = n_a + n_b
    p = min(max_stacks or min(20, (N - 2) // 2), N - 3, len(order))
    kept = order[:p]
    A = np.array([[q.get(s, 0.0) for s in kept] for q in data["a"]])
    B = np.array([[q.get(s, 0.0) for s in kept] for q in data["b"]])
    d = B.mean(axis=0) - A.mean(axis=0)
    S = ((n_a - 1) * np.cov(A, rowvar=False) + (n_b - 1) * np.cov(B, rowvar=False)) / (N - 2)
    S = np.atleast_2d(S)
    t2 = n_a * n_b / N * d @ np.linalg.solve(S, d)
    F = (N - p - 1) / (p * (N - 2)) * t2
    pval = stats.f.sf(F, p, N - p - 1)
    fcrit = stats.f.isf(alpha, p, N - p - 1)
    t2crit = p * (N - 2) / (N - p - 1) * fcrit
    hw = np.sqrt(t2crit * (1 / n_a + 1 / n_b) * np.diag(S))

    good = True
    if [k["stack"] for k in out["kept"]] != kept:
        print(f"# {name}: kept stacks differ: {[k['stack'] for k in out['kept']]} vs {kept}")
        fails_local = 1
        good = False
    for key, ref in (("t2", t2), ("f", F), ("p_value", pval), ("f_crit", fcrit),
                     ("t2_crit", t2crit), ("df1", p), ("df2", N - p - 1)):
        good &= close(out[key], float(ref), f"{name} {key}")
    for i, k in enumerate(out["kept"][:p]):
        good &= close(k["mean_a"], A[:, i].mean(), f"{name} {kept[i]} mean_a")
        good &= close(k["mean_b"], B[:, i].mean(), f"{name} {kept[i]} mean_b")
        good &= close(k["delta"], d[i], f"{name} {kept[i]} delta")
        good &= close(k["var"], S[i, i], f"{name} {kept[i]} var")
        good &= close(k["ci_lo"], d[i] - hw[i], f"{name} {kept[i]} ci_lo")
        good &= close(k["ci_hi"], d[i] + hw[i], f"{name} {kept[i]} ci_hi")
        sig = bool(d[i] - hw[i] > 0 or d[i] + hw[i] < 0)
        if k["significant"] != sig:
            good = False
            print(f"# {name} {kept[i]}: significance differs")
    good &= out["reject"] == bool(t2 > t2crit)
    nsig = sum(k["significant"] for k in out["kept"])
    print(("ok" if good else "not ok") +
          f" - {name}: n={n_a}+{n_b} p={p} T2={t2:.6g} p-value={pval:.3g} significant={nsig}")
    return out

# no difference, a clear shift, a small one; p limited by --max-stacks and by n1 + n2 - 3
scenario("null", 1, 15, 15, 10, 0, 0, 0.05)
scenario("shift", 2, 20, 20, 12, 40, 0, 0.05)
scenario("small", 3, 25, 22, 14, 8, 8, 0.01)
scenario("tight", 4, 5, 6, 12, 30, 20, 0.05)  # --max-stacks 20: p = n1 + n2 - 3 = 8
scenario("default", 7, 5, 6, 12, 30, 0, 0.05)  # default: p = (n1 + n2 - 2) / 2 = 4
scenario("one", 5, 6, 6, 4, 25, 1, 0.1)       # a single dimension: T2 = t^2
out = scenario("wide", 6, 30, 30, 40, 20, 25, 0.05)
sys.exit(1 if fails else 0)
PYEOF
$PY "$TMP/ref.py" "$EMBER" "$TMP"
rc=$?
[ $rc -eq 0 ] || not_ok "reference comparison script failed ($rc)"

# the noise-reduced difference: meanA = meanB except on the significant stacks
"$EMBER" stat compare --folded "$TMP/red.folded" --a "$TMP"/shift-a*.folded --b "$TMP"/shift-b*.folded >"$TMP/report"
check "compare --folded writes three columns" awk 'NF < 3 { exit 1 }' "$TMP/red.folded"
nsig=$(grep -c '^\*' "$TMP/report")
ndiff=$(awk '$(NF-1) != $NF' "$TMP/red.folded" | wc -l)
check "the reduced difference keeps exactly the $nsig significant stacks" test "$nsig" -eq "$ndiff" -a "$nsig" -gt 0
check "the report names the kept dimension" grep -q "kept p = " "$TMP/report"
"$EMBER" stat compare --svg "$TMP/red.svg" --a "$TMP"/shift-a*.folded --b "$TMP"/shift-b*.folded >/dev/null
check "compare --svg draws the reduced difference" grep -q "tested stacks differ significantly" "$TMP/red.svg"
command -v xmllint >/dev/null && check "... as well-formed SVG" xmllint --noout "$TMP/red.svg"
# errors
"$EMBER" stat compare --a "$TMP/shift-a0.folded" --b "$TMP"/shift-b*.folded >/dev/null 2>&1
check "one profile in a set is a usage error" test $? -eq 2
"$EMBER" stat compare --alpha 2 --a "$TMP"/shift-a*.folded --b "$TMP"/shift-b*.folded >/dev/null 2>&1
check "--alpha outside (0, 1) is a usage error" test $? -eq 2
for i in 1 2 3; do echo "same;stack 5" >"$TMP/c$i.folded"; done
"$EMBER" stat compare --a "$TMP/c1.folded" "$TMP/c2.folded" --b "$TMP/c3.folded" "$TMP/c1.folded" >/dev/null 2>"$TMP/err"
check "identical constant profiles: nothing to test" grep -q "nothing to test" "$TMP/err"
done_testing
