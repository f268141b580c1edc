"""How many seeds per batched program? One program of all seeds against blocks of a few seeds and against
one-seed runs (Pandey et al. 2022), measured side by side in one process, on one thread.

For each architecture the same seeds train the same Adam steps (``train.train_steps_only``, no early
stopping) three ways, and the CPU time per member is printed with its ratio to the one program:

  * one program of all ``--seeds`` seeds (how a table cell trains today),
  * blocks of ``--block`` seeds, one program each, one after the other,
  * one program per seed.

It also prints the largest difference between the blocks' weights and the one program's. Why it
matters: a build could train a cell as blocks, in parallel and with reuse when seeds are added, as
it does the Aitken et al. ensembles (``tests/test_members.py``), only if blocks gave the program bit
for bit. They do not: the stacked operations round differently for a different number of members,
in the last bit (printed below; also in the evaluation metrics, and after one member stops early,
when the live members are gathered into a smaller batch). Over 2,000 epochs such differences can
grow, so a cell stays one task, and blocks would have to be a new definition of a cell, under new
cache keys (every cached program retrained).

Measured on the 2-core machine (2026-12-05, two training processes beside it, 20 seeds, 3 epochs,
float64): blocks of 5 took 1.34x less CPU per member than one program for A_1, 1.24x for A_2_1 and
0.78x (more) for A_2_2; one seed each 1.24x, 0.93x and 0.36x. Past a few members the stacked
activations outgrow the processor's cache, below that per-operation overhead dominates.

    .venv/bin/python benchmarks/bench_pandey_blocks.py [--seeds 20] [--block 5] [--epochs 3]
"""
from __future__ import annotations

import argparse
import time

import torch

from companion.pandey2022 import data, models, train

ARCHS = (("A_1", "d1"), ("A_2_1", "d2"), ("A_2_2", "d2"))


def cpu_per_member(spec, seeds, d, epochs, dtype) -> tuple[float, dict]:
    c0 = time.process_time()
    ens = models.Ensemble([spec] * len(seeds), seeds, dtype)
    train.train_steps_only(ens, d, k=0.0, lr=0.001, epochs=epochs)
    return (time.process_time() - c0) / len(seeds), ens.state()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--block", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=3, help="epochs of 12 steps (batch 250, 3000 mosaics)")
    ap.add_argument("--dtype", default="float64", choices=["float32", "float64"])
    args = ap.parse_args()
    if not 1 <= args.block < args.seeds:
        raise SystemExit(f"--block must be at least 1 and below --seeds ({args.seeds}), got {args.block}")
    torch.set_num_threads(1)
    dtype = train.DTYPES[args.dtype]
    seeds = list(range(args.seeds))
    blocks = [seeds[i:i + args.block] for i in range(0, len(seeds), args.block)]
    print(f"{args.seeds} seeds x {args.epochs} epochs, {args.dtype}, 1 thread; CPU ms per member "
          f"(ratio: one program's time / this way's; above 1 is faster than one program)")
    for name, dataset in ARCHS:
        d, spec = data.load(dataset), models.arch(name)
        whole, state = cpu_per_member(spec, seeds, d, args.epochs, dtype)
        parts = [cpu_per_member(spec, b, d, args.epochs, dtype) for b in blocks]
        per_block = sum(c * len(b) for (c, _), b in zip(parts, blocks)) / len(seeds)
        stacked = {k: torch.cat([s[k] for _, s in parts]) for k in state}
        diff = max(float((stacked[k] - state[k]).abs().max()) for k in state)
        single = sum(cpu_per_member(spec, [s], d, args.epochs, dtype)[0] for s in seeds) / len(seeds)
        print(f"  {name:<6} on {dataset}: one program {1e3 * whole:7.1f}   blocks of {args.block} "
              f"{1e3 * per_block:7.1f} ({whole / per_block:4.2f}x)   one seed each {1e3 * single:7.1f} "
              f"({whole / single:4.2f}x)   max |blocks - program| in the weights {diff:.1e}")


if __name__ == "__main__":
    main()
