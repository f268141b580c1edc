"""The one-to-one trap: networks that solve the task during training and end without it.

At the authors' settings (L2 1e-3, 6000 steps, the learning rate 0.1 decaying by 0.9997 per step)
some one-to-one networks reach perfect accuracy, then lose it in a loss spike and end wrong at the
first output word only. This module measures that from what training recorded (the curves of
:func:`~companion.aitken2021.train.train_ensemble`) and from a greedy pass over fresh sequences:

- :func:`outcomes`: each network's course, one of ``never solved``, ``stable``, ``recovered`` and
  ``trapped`` (definitions there);
- :func:`trap_rate`: the share of trapped networks with its Wilson interval;
- :func:`position_error`: the error rate at each output position;
- :func:`eos_attention_first_step`: the attention weight on the input's end-of-sequence position
  when the decoder emits its first word.

It is our observation about the reproduction, not a statement of the paper.
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from .. import stats
from .analysis import SOLVES, Analysis
from .train import TrainedEnsemble, default_l2

__all__ = ["OUTCOMES", "TRAP_TABLE", "CURVES_TABLE", "has_curves", "curves", "outcomes", "trapped",
           "trap_rate", "position_error", "eos_attention_first_step", "trap_table", "curve_rows", "p_curves",
           "p_position_error"]

#: The four courses a network can take (see :func:`outcomes`).
OUTCOMES = ("never solved", "stable", "recovered", "trapped")

#: The names under which the accuracy chapter keeps :func:`trap_table` and :func:`curve_rows` for its
#: recorded runs.
TRAP_TABLE = "networks that lose the task"
CURVES_TABLE = "training curves"

_COLOURS = {"never solved": "#57606a", "stable": "#1a7f37", "recovered": "#0969da", "trapped": "#cf222e"}


def has_curves(ens: TrainedEnsemble) -> bool:
    """Whether training recorded accuracy curves (entries cached before they existed hold only the loss)."""
    return "phrase_accuracy" in ens.history and len(ens.history["step"]) > 0


def curves(ens: TrainedEnsemble) -> dict[str, np.ndarray]:
    """The training curves as arrays: ``step`` ``(K,)``; ``word``, ``phrase``, ``grad_norm``, ``loss``,
    ``ce`` ``(E, K)``; ``position`` ``(E, K, T)`` (accuracy per output position, NaN where no
    sequence of the curve batch reaches it)."""
    if not has_curves(ens):
        raise ValueError(f"{ens.arch}: this cached ensemble has no accuracy curves (trained before they were "
                         "recorded); retrain it (the cache key changed with the training code)")
    h = ens.history

    def arr(name):
        return torch.as_tensor(h[name]).double().transpose(0, 1).numpy()

    out = {"step": np.asarray(h["step"], dtype=int), "word": arr("word_accuracy"),
           "phrase": arr("phrase_accuracy"), "grad_norm": arr("grad_norm"), "loss": arr("loss"),
           "ce": arr("ce")}
    out["position"] = torch.as_tensor(h["position_accuracy"]).double().permute(1, 0, 2).numpy()
    return out


def outcomes(ens: TrainedEnsemble, threshold: float = SOLVES) -> list[str]:
    """Each network's course during training, judged on phrase accuracy against ``threshold``.

    *Reached*: phrase accuracy >= ``threshold`` on the fixed curve batch (64 sequences, so every
    sequence right) at some logged step. *End*: test phrase accuracy (1000 fresh sequences) after
    the last step. ``trapped``: reached, and the end is below ``threshold``. ``recovered``: reached,
    fell below it at a later logged step, and the end is at or above it. ``stable``: reached and never
    fell below it again, end at or above it. ``never solved``: never reached and the end is below it
    (a network that ends above it without a logged step above it counts as ``stable``).
    """
    c = curves(ens)
    end = torch.as_tensor(ens.test["phrase_accuracy"]).double().numpy()
    out = []
    for e in range(c["phrase"].shape[0]):
        p = c["phrase"][e]
        hit = np.flatnonzero(p >= threshold)
        ends = end[e] >= threshold
        if hit.size == 0:
            out.append("stable" if ends else "never solved")
        elif not ends:
            out.append("trapped")
        elif np.any(p[hit[0]:] < threshold):
            out.append("recovered")
        else:
            out.append("stable")
    return out


def trapped(ens: TrainedEnsemble, threshold: float = SOLVES) -> np.ndarray:
    """Boolean per network: solved the task at some logged step and ends below ``threshold``."""
    return np.array([o == "trapped" for o in outcomes(ens, threshold)])


def trap_rate(ens: TrainedEnsemble, threshold: float = SOLVES) -> stats.Interval:
    """Share of trapped networks with its 95 % Wilson interval."""
    t = trapped(ens, threshold)
    return stats.rate_interval(int(t.sum()), len(t))


def position_error(a: Analysis) -> np.ndarray:
    """Error rate at each output position ``(E, T)`` over the analysis set (greedy; positions up to and
    including the end of sequence; NaN where no sequence reaches a position)."""
    E = a.trace.predictions.shape[0]
    y = a.data.targets.expand(E, *a.data.targets.shape[-2:])
    valid = a.data.target_valid.expand(E, *a.data.target_valid.shape[-2:]).double()
    wrong = (a.trace.predictions != y).double() * valid
    with np.errstate(invalid="ignore", divide="ignore"):
        return (wrong.sum(1) / valid.sum(1)).numpy()


def eos_attention_first_step(a: Analysis) -> np.ndarray:
    """Mean attention weight on the input's end-of-sequence position at the first decoder step ``(E,)``
    (NaN for VED, which has no attention)."""
    E = a.trace.predictions.shape[0]
    if a.trace.attention is None:
        return np.full(E, np.nan)
    first = a.trace.attention[:, :, 0, :]  # (E, B, S)
    eos = a.data.in_index.expand(E, *a.data.in_index.shape[-1:])  # (E, B)
    return first.gather(-1, eos.unsqueeze(-1)).squeeze(-1).mean(-1).double().numpy()


def trap_table(ensembles: Mapping[str, TrainedEnsemble], analyses: Mapping[str, Analysis] | None = None,
               threshold: float = SOLVES) -> pd.DataFrame:
    """One row per architecture: networks, how many took each course, the trapped share with its
    Wilson interval, and (with ``analyses``, the same networks run on fresh sequences) the error rate at
    the first and the later output positions and the attention on the end of sequence at the first
    output step, each averaged over the trapped networks and over the others."""
    rows = []
    for arch, ens in ensembles.items():
        oc = outcomes(ens, threshold)
        iv = trap_rate(ens, threshold)
        l2 = ens.train_config.l2
        row = {"architecture": arch, "networks": len(oc),
               "L2": f"{default_l2(arch):g} (authors')" if l2 is None else f"{l2:g} (ours)"}
        row.update({o: oc.count(o) for o in OUTCOMES})
        row.update({"trapped share": iv.estimate, "interval low": iv.lo, "interval high": iv.hi})
        if analyses is not None and arch in analyses:
            err = position_error(analyses[arch])
            eos = eos_attention_first_step(analyses[arch])
            trap = np.array([o == "trapped" for o in oc])
            for label, sel in (("trapped", trap), ("others", ~trap)):
                first = err[sel, 0].mean() if sel.any() else np.nan
                later = np.nanmean(err[sel, 1:]) if sel.any() else np.nan
                row[f"first-word error ({label})"] = first
                row[f"later-word error ({label})"] = later
                row[f"EOS attention, first step ({label})"] = eos[sel].mean() if sel.any() else np.nan
        rows.append(row)
    return pd.DataFrame(rows).set_index("architecture").round(3)


def curve_rows(ensembles: Mapping[str, TrainedEnsemble], threshold: float | None = SOLVES) -> pd.DataFrame:
    """One row per network: its architecture, index, course (:func:`outcomes` at ``threshold``; empty
    with ``threshold=None``), clipping threshold, and its curves as lists rounded to 4 digits (``step``,
    ``phrase``, ``word``, ``grad_norm``): what :func:`p_curves` draws, small enough for a record to keep."""
    rows = []
    for arch, ens in ensembles.items():
        c = curves(ens)
        oc = outcomes(ens, threshold) if threshold is not None else [""] * c["phrase"].shape[0]
        for e, course in enumerate(oc):
            rows.append({"architecture": arch, "network": e, "course": course,
                         "clip": float(ens.train_config.clip), "step": c["step"].tolist(),
                         **{k: np.round(c[k][e], 4).tolist() for k in ("phrase", "word", "grad_norm")}})
    return pd.DataFrame(rows)


def p_curves(ensembles: Mapping[str, TrainedEnsemble] | pd.DataFrame,
             threshold: float | None = SOLVES) -> plt.Figure:
    """Per-network training curves: phrase accuracy, word accuracy (fixed batch, greedy) and the
    gradient norm before clipping, against step; one row per architecture. Colour = the course
    (:func:`outcomes` at ``threshold``); with ``threshold=None`` (tasks with no level that counts as
    solved, such as eSCAN) one colour per network and no courses. Takes the ensembles, or the rows of
    :func:`curve_rows` (e.g. those a recorded run kept)."""
    rows = ensembles if isinstance(ensembles, pd.DataFrame) else curve_rows(ensembles, threshold)
    archs = list(dict.fromkeys(rows["architecture"]))
    with_courses = bool(rows["course"].astype(bool).all())
    fig, axes = plt.subplots(len(archs), 3, figsize=(11, 2.4 * len(archs)), squeeze=False, sharex="row")
    for r, arch in enumerate(archs):
        mine = rows[rows["architecture"] == arch]
        for e, row in enumerate(mine.itertuples()):
            colour = _COLOURS[row.course] if with_courses else plt.cm.tab10(e % 10)
            kw = {"color": colour, "lw": 0.9, "alpha": 0.8}
            axes[r, 0].plot(row.step, row.phrase, **kw)
            axes[r, 1].plot(row.step, row.word, **kw)
            axes[r, 2].semilogy(row.step, np.maximum(np.asarray(row.grad_norm, dtype=float), 1e-6), **kw)
        axes[r, 0].set_ylabel(f"{arch}\nphrase accuracy")
        axes[r, 1].set_ylabel("word accuracy")
        axes[r, 2].set_ylabel("gradient norm")
        axes[r, 2].axhline(float(mine["clip"].iloc[0]), color="k", ls=":", lw=0.8)
        for ax in axes[r, :2]:
            ax.set_ylim(-0.03, 1.03)
        oc = list(mine["course"])
        counts = ("" if not with_courses
                  else " (" + ", ".join(f"{oc.count(o)} {o}" for o in OUTCOMES if oc.count(o)) + ")")
        axes[r, 0].set_title(f"{arch}: {len(mine)} networks{counts}", fontsize=9, loc="left")
    for ax in axes[-1]:
        ax.set_xlabel("training step")
    if with_courses:
        handles = [plt.Line2D([], [], color=_COLOURS[o], label=o) for o in OUTCOMES]
        fig.legend(handles=handles, loc="upper center", ncol=4, fontsize=8, frameon=False)
        fig.tight_layout(rect=(0, 0, 1, 0.95))
    else:
        fig.tight_layout()
    return fig


def p_position_error(ensembles: Mapping[str, TrainedEnsemble], analyses: Mapping[str, Analysis],
                     threshold: float = SOLVES) -> plt.Figure:
    """Error rate by output position after training, one line per network, colour = the course."""
    archs = [a for a in ensembles if a in analyses]
    fig, axes = plt.subplots(1, len(archs), figsize=(3.6 * len(archs), 2.8), squeeze=False, sharey=True)
    for ax, arch in zip(axes[0], archs):
        err, oc = position_error(analyses[arch]), outcomes(ensembles[arch], threshold)
        for e, o in enumerate(oc):
            ax.plot(np.arange(1, err.shape[1] + 1), err[e], marker=".", ms=3, lw=0.8, color=_COLOURS[o])
        ax.set_title(arch, fontsize=9)
        ax.set_xlabel("output position (1 = first word)")
    axes[0, 0].set_ylabel("error rate (greedy)")
    handles = [plt.Line2D([], [], color=_COLOURS[o], label=o) for o in OUTCOMES]
    fig.legend(handles=handles, loc="upper center", ncol=4, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 0.88))
    return fig
