"""Reusing freed memory vs glibc's default (companion.device.reuse_freed_memory).

Trains the same batched program twice, each in a fresh process with an empty cache: once with glibc's
defaults (COMPANION_MALLOC=system), once with the reuse the library turns on for every training run.
Prints wall, user and system CPU time, minor page faults and the ratios, measured side by side.

    .venv/bin/python benchmarks/bench_malloc.py [--epochs 20] [--seeds 6] [--focus 100]

The default program is T-CPLX-D1's focus-100 program at the `paper` settings (six classifier widths
padded into one program, double precision), cut to a few epochs: its activations exceed glibc's 32 MB
mmap threshold, so by default every large tensor is mapped and zeroed afresh. What to expect (2-core
development machine): about 2x less wall time with reuse, the system time falling from about half the
total to almost nothing. A program whose tensors stay below 32 MB (e.g. `--seeds 2`) gains little.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

_CHILD = """
import json, resource, sys, time
from companion import config
from companion.pandey2022 import studies as St
seeds, epochs, focus = (int(v) for v in sys.argv[1:4])
S = config.resolve("t-cplx-d1", profile="paper", n_seeds=seeds)
progs = St.width_programs("T-CPLX-D1", "d1", "D1-cplx", "zeroth", S.focus_widths, S.cls_widths,
                          seeds, epochs, "float64", S.cells)
kw = next(k for k in progs if k["widths"][0][0][0] == focus)
r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
St.program(**kw)
r1 = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall": time.perf_counter() - t0, "user": r1.ru_utime - r0.ru_utime,
                  "sys": r1.ru_stime - r0.ru_stime, "minflt": r1.ru_minflt - r0.ru_minflt,
                  "members": len(kw["widths"]) * seeds}))
"""


def run(mode: str, seeds: int, epochs: int, focus: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-malloc-") as cache:
        env = {**os.environ, "COMPANION_MALLOC": mode, "COMPANION_CACHE": cache, "OMP_NUM_THREADS": "1",
               "TQDM_DISABLE": "1"}
        out = subprocess.run([sys.executable, "-c", _CHILD, str(seeds), str(epochs), str(focus)], env=env,
                             capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--seeds", type=int, default=6)
    ap.add_argument("--focus", type=int, default=100, choices=[10, 100, 200])
    a = ap.parse_args()
    res = {mode: run(mode, a.seeds, a.epochs, a.focus) for mode in ("system", "reuse")}
    print(f"T-CPLX-D1 focus-{a.focus} program, {res['reuse']['members']} members, {a.epochs} epochs, float64")
    print(f"{'malloc':8s} {'wall s':>8s} {'user s':>8s} {'sys s':>8s} {'minor faults':>13s}")
    for mode, r in res.items():
        print(f"{mode:8s} {r['wall']:8.1f} {r['user']:8.1f} {r['sys']:8.1f} {r['minflt']:13d}")
    s, r = res["system"], res["reuse"]
    share = {m: v["sys"] / (v["user"] + v["sys"]) for m, v in res.items()}
    print(f"wall ratio system/reuse: {s['wall'] / r['wall']:.2f}x; "
          f"system-time share: {share['system']:.0%} -> {share['reuse']:.0%}")


if __name__ == "__main__":
    main()
