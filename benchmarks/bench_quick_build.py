"""The cold ``quick`` book build as a multiple of a fixed probe, both measured in this one run.

    python benchmarks/bench_quick_build.py                 # probe, then a cold build with 2 workers
    python benchmarks/bench_quick_build.py --workers 4 --keep /tmp/qb   # keep the build and its cache

Absolute times vary about 2x between machines and days, so the build is reported as a ratio to a probe
that runs first, in the same process tree: one AED network trained on the one-to-one task for
``PROBE_STEPS`` steps (the quick profile's sizes, one thread, no cache). The README gives the probe's
seconds and the build's minutes on the 2-core reference machine; on another machine, expect about
``ratio x probe`` seconds. The build is ``python -m companion.bookbuild`` (chapter execution and the Sphinx
stage) in a fresh folder with an empty model cache. Goal (issue on speed): 10 minutes on the 2-core
reference machine, that is a ratio of about 600 s / probe.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROBE_STEPS = 300


def probe() -> float:
    """Seconds to train one one-to-one AED network for PROBE_STEPS steps on one thread."""
    import torch

    from companion.aitken2021.models import ModelConfig
    from companion.aitken2021.tasks import OneToOne
    from companion.aitken2021.train import TrainConfig, train_ensemble

    torch.set_num_threads(1)
    task = OneToOne(n_words=3, min_len=15, max_len=19)
    model = ModelConfig(arch="AED", in_vocab=len(task.in_vocab), out_vocab=len(task.out_vocab))
    t0 = time.perf_counter()
    train_ensemble(model, task, [1], TrainConfig(steps=PROBE_STEPS, n_test=100, n_curve=16))
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--profile", default="quick")
    ap.add_argument("--keep", metavar="DIR", help="build into DIR (kept): _build/html and the cache")
    args = ap.parse_args()
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-quick-"))
    root.mkdir(parents=True, exist_ok=True)
    if any(root.iterdir()):
        sys.exit(f"bench_quick_build: {root} is not empty (a cold build needs an empty folder)")
    p = probe()
    print(f"probe: one AED network, {PROBE_STEPS} steps, one thread: {p:.1f} s", flush=True)
    env = dict(os.environ, COMPANION_CACHE=str(root / "cache"), TQDM_DISABLE="1")
    t0 = time.perf_counter()
    rc = subprocess.call([sys.executable, "-m", "companion.bookbuild", "--profile", args.profile,
                          "--workers", str(args.workers), "--path-output", str(root)], env=env)
    build = time.perf_counter() - t0
    if rc != 0:
        sys.exit(f"bench_quick_build: the build failed with exit status {rc}")
    print(f"\ncpu cores: {os.cpu_count()}, profile {args.profile}, {args.workers} workers")
    print(f"cold build: {build:.0f} s = {build / 60:.1f} min = {build / p:.0f} x the probe ({p:.1f} s)")
    print(f"goal: 600 s on the 2-core reference machine; here {build / 600:.2f}x that, before normalising")


if __name__ == "__main__":
    main()
