"""Early-stopped members drop out of a batched image program (companion.pandey2022.image_train).

One member that never reaches the stopping loss (a focus trained behind a frozen random classifier, as in
T-INIT's focus-only rows) is trained alone; then batched with N members that stop within a few epochs; then
batched with N other never-stopping members instead, which is what the mixed program cost when stopped
members were still computed (every member, every epoch). Prints CPU seconds (getrusage, so other work on the
machine matters less than for wall time), stop epochs and the ratios, measured side by side in one run.

    .venv/bin/python benchmarks/bench_image_stop.py [--others 5] [--epochs 20] [--n-train 1000]

What to expect (2-core development machine, defaults): the others stop after 3 or 4 of 20 epochs, and the
mixed program costs about half of the all-never-stopping one (member-epochs: a third; a batched step
costs less per member than a lone one, so the saving in CPU time is smaller than in member-epochs).
"""
from __future__ import annotations

import argparse
import os
import tempfile


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--others", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--n-train", type=int, default=1000)
    a = ap.parse_args()
    os.environ["COMPANION_CACHE"] = tempfile.mkdtemp(prefix="bench-image-stop-")
    from companion.pandey2022 import image_train as it
    from companion.records import cpu_seconds  # getrusage: this process (no children here)

    data = it.data_config(None, a.n_train, 200, data_seed=0)
    stuck = it.member(0, 0.0, "softmax", "R", "R", "focus")
    others = [it.member(s, 0.0, "softmax", "R", "R", "both") for s in range(a.others)]

    def run(members):
        cfg = it.program_config(data, members, layer=0, width=0.5, lr=2e-3, batch=25, epochs=a.epochs)
        t = cpu_seconds()
        res = it._threaded(it._train, cfg)
        return cpu_seconds() - t, res["stop_epoch"].tolist()

    it._threaded(it._train, it.program_config(data, [stuck], layer=0, width=0.5, epochs=1))  # warm-up
    lone, lone_ep = run([stuck])
    batched, ep = run([stuck, *others])
    full, full_ep = run([it.member(s, 0.0, "softmax", "R", "R", "focus") for s in range(1 + a.others)])
    print(f"image program, digits, {a.n_train} training mosaics, up to {a.epochs} epochs")
    print(f"{'program':28s} {'members':>7s} {'CPU s':>7s}  stop epochs")
    print(f"{'never-stopping member alone':28s} {1:7d} {lone:7.1f}  {lone_ep}")
    print(f"{'with early-stopping others':28s} {1 + a.others:7d} {batched:7.1f}  {ep}")
    print(f"{'with never-stopping others':28s} {1 + a.others:7d} {full:7.1f}  {full_ep}")
    print(f"mixed / never-stopping: {batched / full:.2f} (member-epochs {sum(ep)} / {sum(full_ep)}); "
          f"mixed / lone: {batched / lone:.2f}")


if __name__ == "__main__":
    main()
