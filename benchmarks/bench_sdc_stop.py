"""Early-stopped members drop out of a batched selective-dependence program (companion.pandey2022.train).

Dataset 1, the zeroth-layer A_1 nets. One member with learning rate 0 (it never reaches the stopping loss) is
batched with N members that stop early; then the same program runs with no stopping rule, which is what it
cost when stopped members were still computed (every member, every epoch). Prints CPU seconds
(`records.cpu_seconds`), the stop epochs and the ratio, measured side by side in one run.

    .venv/bin/python benchmarks/bench_sdc_stop.py [--others 7] [--epochs 40] [--stop 1.1]

What to expect (2-core development machine, defaults; measured 2026-12-03): most others stop between epochs
10 and 25 of 40; the program costs 0.61x the all-computed one (member-epochs: 0.53x; a batched step costs
less per member than a smaller one, so the saving in CPU time is smaller than in member-epochs).
"""
from __future__ import annotations

import argparse

import torch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--others", type=int, default=7)
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--stop", type=float, default=1.1, help="stopping loss (the minibatch rule)")
    a = ap.parse_args()
    from companion.pandey2022 import data, models, train
    from companion.records import cpu_seconds  # getrusage: this process (no children here)

    torch.set_num_threads(1)
    d = data.load("d1")
    spec = models.arch("A_1", layer=0)
    E = 1 + a.others
    lrs = [0.0] + [0.01] * a.others

    def run(stop):
        ens = models.Ensemble([spec] * E, list(range(E)), torch.float32)
        t = cpu_seconds()
        out = train.train_ensemble(ens, d, k=0.0, lr=lrs, max_epochs=a.epochs, stop_loss=stop,
                                   eval_every=a.epochs, show_progress=False)
        return cpu_seconds() - t, out["stop_epoch"].tolist()

    run(None if a.epochs < 2 else a.stop)  # warm-up (allocator, kernels)
    mixed, ep = run(a.stop)
    full, full_ep = run(None)
    print(f"dataset 1, A_1 zeroth layer, float32, {E} members, up to {a.epochs} epochs")
    print(f"{'program':34s} {'CPU s':>7s}  stop epochs")
    print(f"{'others stop (stopped not computed)':34s} {mixed:7.1f}  {ep}")
    print(f"{'no stopping rule (all computed)':34s} {full:7.1f}  {full_ep}")
    print(f"stopping / all: {mixed / full:.2f} (member-epochs {sum(ep)} / {sum(full_ep)})")


if __name__ == "__main__":
    main()
