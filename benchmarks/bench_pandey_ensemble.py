"""Batched ensemble training vs a loop of single runs (Pandey et al. 2022, Dataset 1, A_1).

Trains the same 10 seeds for the same number of steps twice:
  * as ONE batched program (companion.pandey2022.train.train_ensemble: weights stacked on a leading
    ensemble axis, bmm, one optimiser update for all members), and
  * as a Python loop of single runs (train_single: nn.Module nets + torch.optim, the authors' way),
checks that both end with the same weights, and prints wall times, their ratio, and the achieved
GFLOP/s against a dense matmul measured in the same process (same thread count).

    .venv/bin/python benchmarks/bench_pandey_ensemble.py [--seeds 10] [--epochs 2] [--dtype float64]

On a shared machine wall times are inflated by other processes; CPU (process) times are printed too.
"""
from __future__ import annotations

import argparse
import time

import torch

from companion.pandey2022 import data, models, train


def flops_per_epoch(spec: models.ArchSpec, n_train: int, batch: int, m: int = 9) -> float:
    """Approximate training FLOPs of one member for one epoch: forward MACs x 2 (FLOP/MAC) x 3 (fwd+bwd)."""
    widths = (spec.d_in, *spec.focus_hidden, 1)
    focus = sum(a * b for a, b in zip(widths, widths[1:])) * m
    cw = (spec.feature_dim, *spec.cls_hidden, spec.n_classes)
    cls = sum(a * b for a, b in zip(cw, cw[1:])) + m * spec.feature_dim
    return 2.0 * 3.0 * n_train * (focus + cls)


def dense_gflops(dtype, n=512, reps=20) -> float:
    a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
    a @ b
    t = time.perf_counter()
    for _ in range(reps):
        a @ b
    return 2 * n ** 3 * reps / (time.perf_counter() - t) / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--epochs", type=int, default=2, help="epochs of 12 steps (batch 250, 3000 mosaics)")
    ap.add_argument("--dtype", default="float64", choices=["float32", "float64"])
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    dtype = train.DTYPES[args.dtype]
    d = data.load("d1")
    spec = models.arch("A_1")
    seeds = list(range(args.seeds))
    steps = args.epochs * ((d.x_train.shape[0] + 249) // 250)

    # batched: init (stacking the per-seed single-net inits) + training
    t0, c0 = time.perf_counter(), time.process_time()
    ens = models.Ensemble([spec] * len(seeds), seeds, dtype)
    train.train_ensemble(ens, d, k=0.0, lr=0.001, max_epochs=args.epochs, stop_loss=None,
                         eval_every=args.epochs, show_progress=False)
    t_batch, c_batch = time.perf_counter() - t0, time.process_time() - c0

    # loop of single runs (no per-epoch evaluation at all: favours the loop)
    t0, c0 = time.perf_counter(), time.process_time()
    singles = [train.train_single(spec, s, d, lr=0.001, max_epochs=args.epochs, stop_loss=None, dtype=dtype)
               for s in seeds]
    t_loop, c_loop = time.perf_counter() - t0, time.process_time() - c0

    diff = 0.0
    for e, (f, c, _) in enumerate(singles):
        st = ens.member_state(e)
        for key, v in f.state_dict().items():
            diff = max(diff, float((st["focus"][key] - v).abs().max()))
        for key, v in c.state_dict().items():
            diff = max(diff, float((st["cls"][key] - v).abs().max()))
    tol = 1e-8 if dtype == torch.float64 else 1e-3
    flops = flops_per_epoch(spec, d.x_train.shape[0], 250) * args.epochs * len(seeds)
    peak = dense_gflops(dtype)
    print(f"D1, A_1 (focus 2-50-50-1, classifier 2-50-3), {len(seeds)} seeds x {steps} Adam steps, {args.dtype}, "
          f"{args.threads} thread(s)")
    print(f"  batched program : wall {t_batch:7.2f} s   cpu {c_batch:7.2f} s   {flops / t_batch / 1e9:6.2f} GFLOP/s (wall)"
          f"   (includes one evaluation of train+test sets)")
    print(f"  loop of singles : wall {t_loop:7.2f} s   cpu {c_loop:7.2f} s   {flops / t_loop / 1e9:6.2f} GFLOP/s (wall)")
    print(f"  speed-up        : wall {t_loop / t_batch:5.2f}x   cpu {c_loop / c_batch:5.2f}x   (target >= 3x)")
    print(f"  dense {args.dtype} matmul 512x512 in this process: {peak:.2f} GFLOP/s "
          f"(batched reaches {100 * flops / t_batch / 1e9 / peak:.1f} % of it)")
    print(f"  max |batched - single| over all weights: {diff:.2e}  ->  {'AGREE' if diff <= tol else 'DISAGREE'} (tol {tol:g})")
    if diff > tol:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
