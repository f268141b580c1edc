"""The three error modes (F-EM1, F-EM2, F-EM3): runs, outcome labels and the reference numbers.

An error-mode run is a linear focus net with a linear (EM1, EM2) or small nonlinear (EM3)
classification net on a 2-D toy distribution, trained for a fixed number of epochs in float64.
A chapter trains the showcased seed, the authors' seed and an ensemble of further seeds as *one*
batched program, then asks how each run ended:

* ``interpretable``: test FTPT >= 99 % (the focus finds the foreground almost always),
* ``error mode``: accurate (test accuracy >= 98 %) yet FFPT >= 10 % (correct for the wrong reason),
* ``inaccurate``: test accuracy < 98 %,
* ``other``: accurate with 1 % < FFPT < 10 %.
"""
from __future__ import annotations

import pandas as pd
import torch

from . import data as data_mod
from . import train as T
from .reference import ERROR_MODES
from .specs import program_spec
from .tables import member_frame

#: Test-set numbers of the authors' showcased runs (one copy, in the paper's reference tables).
REFERENCE = ERROR_MODES

ACC_OK, FFPT_ERR, FTPT_INTERP = 98.0, 10.0, 99.0


def seeds_for(showcase: int, n_seeds: int, dist: str) -> list[int]:
    """The showcased seed, the authors' seed, then seeds 0..n_seeds-1 (duplicates dropped)."""
    out = [int(showcase)]
    if T.PAPER_SEEDS[dist] != showcase:
        out.append(T.PAPER_SEEDS[dist])
    out += [s for s in range(n_seeds) if s not in out]
    return out


def outcome(acc: float, ftpt: float, ffpt: float) -> str:
    if ftpt >= FTPT_INTERP:
        return "interpretable"
    if acc < ACC_OK:
        return "inaccurate"
    if ffpt >= FFPT_ERR:
        return "error mode"
    return "other"


def program(dist: str, showcase: int, n_seeds: int, epochs: int | None = None, data_seed: int = 0):
    """The spec (:mod:`companion.netspec`) of the error-mode ensemble: :func:`run` fetches it, the
    chapters' declarations list it."""
    cfg = T.error_mode_config(dist, seeds_for(showcase, n_seeds, dist), epochs=epochs, data_seed=data_seed)
    return program_spec(cfg)


def run(dist: str, showcase: int, n_seeds: int, epochs: int | None = None, data_seed: int = 0):
    """Train (or load) the error-mode ensemble; returns (data, result, ensemble, per-seed frame)."""
    d = data_mod.load(dist, data_seed)
    res = program(dist, showcase, n_seeds, epochs, data_seed).fetch()
    ens = T.ensemble_of(res)
    frame = member_frame(res, split="test")
    frame["train_ftpt"] = res["final"]["train"]["ftpt"].numpy()
    frame["train_ffpt"] = res["final"]["train"]["ffpt"].numpy()
    frame["outcome"] = [outcome(a, t, f) for a, t, f in zip(frame["acc"], frame["ftpt"], frame["ffpt"])]
    paper_seed = T.PAPER_SEEDS[dist]
    roles = []
    for i, s in enumerate(frame["seed"]):
        if i == 0:
            roles.append("showcased = authors' seed" if s == paper_seed else "showcased")
        elif s == paper_seed:
            roles.append("authors' seed")
        else:
            roles.append("ensemble")
    frame["role"] = roles
    frame["in_ensemble"] = frame["seed"] < n_seeds  # seeds 0..n_seeds-1 (may include the showcased one)
    return d, res, ens, frame


def ensemble_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """The runs the claims are decided over: seeds 0..n_seeds-1 (the showcased seed and the authors' seed
    count only when they fall in that range, so choosing another showcase never changes a verdict)."""
    return frame[frame["in_ensemble"]]


def epoch0_accuracy(res: dict, frame: pd.DataFrame) -> pd.Series:
    """Training accuracy (%) of every run before its first update, aligned with ``frame``'s rows."""
    return pd.Series(res["curves"]["train"]["acc"][:, 0].numpy(), index=frame.index)


def outcome_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """How many of the ensemble seeds 0..n_seeds-1 ended in each outcome."""
    f = frame[frame["in_ensemble"]]
    order = ["interpretable", "error mode", "other", "inaccurate"]
    counts = f["outcome"].value_counts().reindex(order, fill_value=0)
    return pd.DataFrame({"runs": counts, "share %": (100 * counts / max(len(f), 1)).round(1)})


def paper_seed_row(frame: pd.DataFrame, dist: str):
    """The run with the authors' seed (first row when it is the showcased seed)."""
    return frame[frame["seed"] == T.PAPER_SEEDS[dist]].iloc[0]


def showcase_table(frame: pd.DataFrame, dist: str) -> pd.DataFrame:
    """The showcased run and the authors' seed on our draw beside the authors' reported numbers."""
    ref = REFERENCE[dist]
    rows = [{"run": f"paper (seed {ref['seed']}, authors' draw)", "acc": ref["ftpt"] + ref["ffpt"],
             "FTPT": ref["ftpt"], "FFPT": ref["ffpt"], "FTPF": ref["ftpf"], "FFPF": ref["ffpf"],
             "max alpha >= 0.5": ref["alpha_ge_half"]}]
    shown = [0] + [i for i in range(1, len(frame)) if frame["role"].iloc[i] == "authors' seed"]
    for i in shown:
        r = frame.iloc[i]
        rows.append({"run": f"ours, seed {int(r['seed'])} ({r['role']})", "acc": r["acc"], "FTPT": r["ftpt"],
                     "FFPT": r["ffpt"], "FTPF": r["ftpf"], "FFPF": r["ffpf"],
                     "max alpha >= 0.5": int(r["alpha_ge_half"])})
    return pd.DataFrame(rows).set_index("run").round(1)


@torch.no_grad()
def linear_focus_hit_rate(d, w=(1.0, 0.0), b: float = 0.0, split: str = "test") -> float:
    """% of mosaics where the hand-made linear focus score w.x + b peaks on the foreground segment."""
    x = d.x_test if split == "test" else d.x_train
    fore = d.fore_test if split == "test" else d.fore_train
    scores = x @ torch.tensor(w, dtype=x.dtype) + b
    return float(100.0 * (scores.argmax(-1) == fore).double().mean())


@torch.no_grad()
def best_linear_focus_hit_rate(d, n_dirs: int = 360, split: str = "test") -> float:
    """Best % of mosaics whose foreground gets the top score, over linear scores w.x with w on a circle.

    A bias shifts every segment's score equally and cannot change the argmax, so directions suffice.
    """
    x = d.x_test if split == "test" else d.x_train
    fore = d.fore_test if split == "test" else d.fore_train
    ang = torch.linspace(0, 2 * torch.pi, n_dirs + 1, dtype=x.dtype)[:-1]
    w = torch.stack([ang.cos(), ang.sin()], 1)               # (n_dirs, 2)
    scores = torch.einsum("nmd,kd->knm", x, w)              # (n_dirs, N, 9)
    hits = (scores.argmax(-1) == fore).double().mean(-1)
    return float(100.0 * hits.max())


def epoch0_table(res: dict, frame: pd.DataFrame, dist: str) -> pd.DataFrame:
    """Training-set categories at epoch 0 (before any update) of the showcased run vs the authors'."""
    ref = REFERENCE[dist]["epoch0_train"]
    tr = res["curves"]["train"]
    rows = [{"run": f"paper, seed {REFERENCE[dist]['seed']}", "acc": ref["acc"], "FTPT": ref["ftpt"],
             "FFPT": ref["ffpt"], "FTPF": ref["ftpf"], "FFPF": ref["ffpf"]}]
    r = {"run": f"ours, seed {int(frame['seed'].iloc[0])}", "acc": float(tr["acc"][0, 0])}
    for c in ("ftpt", "ffpt", "ftpf", "ffpf"):
        r[c.upper()] = float(tr[c][0, 0])
    rows.append(r)
    return pd.DataFrame(rows).set_index("run").round(1)
