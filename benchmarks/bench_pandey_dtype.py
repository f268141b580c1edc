"""Pandey D1 program step: float64 (the authors' dtype, the ``paper`` profile) against float32.

Why: a selective-dependence program step is a few large batched products and ReLUs over
``(E, 250 * 9, 50)`` activations, not hundreds of small operations, so fusing operations has
little to take; the one large lever is the dtype. The authors train in float64 (``.double()``
on their nets and inputs), and this prints what float32 would buy and what it would change:
CPU milliseconds per step for both dtypes side by side in one process (1 thread), and the
largest difference of the focus weights after the same steps from the same seeds.

Usage: ``python benchmarks/bench_pandey_dtype.py [--seeds 10] [--epochs 3] [--rounds 2]``
"""

from __future__ import annotations

import argparse
import os
import time

import torch

from companion.pandey2022 import data, train


def steps(dtype: str, layer: int, seeds: int, epochs: int):
    cfg = train.ensemble_config("d1", "A_1", layer=layer, seeds=range(seeds), dtype=dtype, epochs=epochs)
    ens = train.build(cfg)
    t0 = time.process_time()
    train.train_steps_only(ens, data.load("d1"), k=0.0, lr=0.001, epochs=epochs)
    per_step = (time.process_time() - t0) / (12 * epochs)  # 3000 mosaics, batch 250
    return per_step, torch.cat([p.detach().reshape(-1).double() for p in ens.focus_params()])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(1)
    print(f"D1, A_1, {args.seeds} seeds, {args.epochs} epochs of 12 steps, 1 thread, "
          f"load avg {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (CPU time)")
    for layer, name in ((0, "zeroth"), (2, "second")):
        for r in range(args.rounds):
            t64, w64 = steps("float64", layer, args.seeds, args.epochs)
            t32, w32 = steps("float32", layer, args.seeds, args.epochs)
            print(f"{name} layer, round {r + 1}: float64 {1000 * t64:6.2f} ms/step, "
                  f"float32 {1000 * t32:6.2f} ms/step -> float32 {t64 / t32:.2f} x faster; "
                  f"max |focus weight difference| {float((w64 - w32).abs().max()):.1e}")
    print("float64 is the authors' dtype; float32 is taken only where the profile says so (quick), "
          "since its weights leave float tolerance within a few epochs.")


if __name__ == "__main__":
    main()
