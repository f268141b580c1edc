"""Batched ensemble training vs a loop of single runs (Pandey et al. 2022, Dataset 1, A_1).

Trains the same 10 seeds for the same number of Adam steps three times:
  * as ONE batched program (train.train_steps_only = the step loop of train_ensemble: weights stacked
    on a leading ensemble axis, bmm, one optimiser update for all members),
  * as a Python loop of single runs with the authors' structure (nn.Module nets + torch.optim, the 9
    segments scored one position at a time, as their focus nets did),
  * as a loop of single runs with the segments vectorised (a stronger baseline than the authors'),
checks that all end with the same weights, and prints wall and CPU times, ratios, and the achieved
GFLOP/s against a dense matmul measured in the same process (same thread count).

    .venv/bin/python benchmarks/bench_pandey_ensemble.py [--seeds 10] [--epochs 2] [--dtype float64]

On a shared machine wall times are inflated by other processes; CPU (process) times are printed too.
Training runs single-threaded by default (see companion.device.train_threads: with tiny matrices a second
OpenMP thread mostly spin-waits on a busy 2-core machine; try --threads 2 to see it).

What to expect (measured on the 2-core development machine, 1 thread, float64): the batched program is
about 2.5-3x faster than the authors' structure (which scores the 9 segments in a Python loop, i.e. 9
small matrix products per layer per step), but only about as fast as a loop of single runs whose
segments are vectorised: one member's step is already a (2250 x 50) @ (50 x 50) product, big enough
that per-call overhead is small, and the stacked activations (E x 2250 x 50) fall out of the L2 cache,
so the elementwise work (ReLU, tanh, softmax, Adam) costs about as much per member as in a single run.
Batching pays when per-run work is small (the error-mode nets, A_2_2) and for the bookkeeping
(evaluation, early stopping, caching) that the batched trainer does once for all members.
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
    ap.add_argument("--arch", default="A_1", choices=["A_1", "A_2_2", "em-linear"],
                    help="A_1 on Dataset 1 (the issue's benchmark), A_2_2 on Dataset 2, em-linear on dist-1")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    dtype = train.DTYPES[args.dtype]
    d = data.load({"A_1": "d1", "A_2_2": "d2", "em-linear": "dist1"}[args.arch])
    spec = models.arch(args.arch)
    seeds = list(range(args.seeds))
    steps = args.epochs * ((d.x_train.shape[0] + 249) // 250)

    # batched: building the stacked ensemble (per-seed single-net inits, stacked) + the training steps
    t0, c0 = time.perf_counter(), time.process_time()
    ens = models.Ensemble([spec] * len(seeds), seeds, dtype)
    train.train_steps_only(ens, d, k=0.0, lr=0.001, epochs=args.epochs)
    t_batch, c_batch = time.perf_counter() - t0, time.process_time() - c0

    # loop of single runs, segments scored one position at a time (the authors' focus-net structure)
    t0, c0 = time.perf_counter(), time.process_time()
    authors = [train.train_single(spec, s, d, lr=0.001, max_epochs=args.epochs, stop_loss=None, dtype=dtype,
                                  per_segment=True) for s in seeds]
    t_auth, c_auth = time.perf_counter() - t0, time.process_time() - c0

    # loop of single runs with the 9 segments vectorised (our own single-run code: a stronger baseline)
    t0, c0 = time.perf_counter(), time.process_time()
    singles = [train.train_single(spec, s, d, lr=0.001, max_epochs=args.epochs, stop_loss=None, dtype=dtype)
               for s in seeds]
    t_loop, c_loop = time.perf_counter() - t0, time.process_time() - c0

    diff = 0.0
    for e in range(len(seeds)):
        st = ens.member_state(e)
        for f, c, _ in (singles[e], authors[e]):
            for key, v in f.state_dict().items():
                diff = max(diff, float((st["focus"][key] - v).abs().max()))
            for key, v in c.state_dict().items():
                diff = max(diff, float((st["cls"][key] - v).abs().max()))
    tol = 1e-8 if dtype == torch.float64 else 1e-3
    flops = flops_per_epoch(spec, d.x_train.shape[0], 250) * args.epochs * len(seeds)
    peak = dense_gflops(dtype)

    def g(t):
        return flops / t / 1e9

    desc = spec.describe()
    print(f"{d.name}, {args.arch} (focus {desc['focus_net']}, classifier {desc['classification_net']}), "
          f"{len(seeds)} seeds x {steps} Adam steps, {args.dtype}, "
          f"{args.threads} thread(s)")
    print(f"  batched program            : wall {t_batch:7.2f} s  cpu {c_batch:7.2f} s  "
          f"{g(t_batch):6.2f} GFLOP/s")
    print(f"  loop, authors' structure   : wall {t_auth:7.2f} s  cpu {c_auth:7.2f} s  "
          f"{g(t_auth):6.2f} GFLOP/s"
          f"   speed-up of batched: wall {t_auth / t_batch:5.2f}x  cpu {c_auth / c_batch:5.2f}x")
    print(f"  loop, vectorised segments  : wall {t_loop:7.2f} s  cpu {c_loop:7.2f} s  "
          f"{g(t_loop):6.2f} GFLOP/s"
          f"   speed-up of batched: wall {t_loop / t_batch:5.2f}x  cpu {c_loop / c_batch:5.2f}x")
    print(f"  dense {args.dtype} 512x512 matmul in this process: {peak:.2f} GFLOP/s "
          f"(batched program reaches {100 * g(t_batch) / peak:.0f} % of it)")
    print(f"  max |batched - single| over all weights and both loops: {diff:.2e} -> "
          f"{'AGREE' if diff <= tol else 'DISAGREE'} (tol {tol:g})")
    if diff > tol:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
