"""One-to-one, eSCAN and English->French side by side (Figure 5).

The paper's contribution statement [SUM-syncedreview]: the temporal components
matter more where the average attention matrix is a good stand-in for each
sample's attention, the input components where it is not. For every analysed
ensemble, :func:`task_metrics` gives the numbers that statement is about, one
value per network: the share of the temporal-temporal term in the alignment
(and of the input and residual terms), and how well the average attention
matrix substitutes for each sample's attention. :func:`summary_rows` turns them
into a display table; :func:`spearman` is the rank correlation across
(architecture, task) points shown beside it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch

from .. import stats
from .analysis import Analysis
from .decompose import TERM_NAMES

__all__ = ["term_share", "task_metrics", "summary_rows", "spearman"]

INPUT_TERMS = ("temp_inp", "inp_temp", "inp_inp")


def term_share(a: Analysis, name: str) -> torch.Tensor:
    """One term's share of |alignment| (five best-aligned positions, mean over decoder steps), per network."""
    return a.term_fractions["mean"][:, TERM_NAMES.index(name)]


def task_metrics(a: Analysis) -> dict[str, torch.Tensor]:
    """Per network ``(E,)``: accuracies, grouped term shares and the average-attention substitution."""
    aam = a.aam
    return {
        "word": a.accuracy["word"], "phrase": a.accuracy["phrase"],
        "temp_temp": term_share(a, "temp_temp"),
        "input_terms": sum(term_share(a, n) for n in INPUT_TERMS),
        "delta_terms": sum(term_share(a, n) for n in TERM_NAMES if "del" in n),
        "aam_word": aam["substitution_word"], "aam_argmax": aam["argmax_agreement"],
        "temporal_word": aam["temporal_word"],
    }


def summary_rows(metrics: Mapping[tuple[str, str], dict]) -> list[dict]:
    """``{(task, arch): task_metrics(...)}`` -> rows with the mean and sd over networks of every metric."""
    rows = []
    for (task, arch), m in metrics.items():
        row = {"task": task, "arch": arch, "networks": len(m["word"])}
        for name, v in m.items():
            row[name], row[name + "_sd"] = stats.mean_sd(v.detach().double().numpy())
        rows.append(row)
    return rows


def spearman(x, y) -> float:
    """Spearman rank correlation (average ranks for ties); NaN if fewer than 3 finite pairs."""
    x = torch.as_tensor(x, dtype=torch.float64).flatten()
    y = torch.as_tensor(y, dtype=torch.float64).flatten()
    ok = torch.isfinite(x) & torch.isfinite(y)
    x, y = x[ok], y[ok]
    if len(x) < 3:
        return math.nan

    def rank(v):
        order = v.argsort()
        r = torch.empty_like(v)
        r[order] = torch.arange(len(v), dtype=torch.float64)
        for val in v.unique():  # average ties
            m = v == val
            r[m] = r[m].mean()
        return r

    rx, ry = rank(x), rank(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    den = (rx.norm() * ry.norm()).item()
    return float((rx * ry).sum() / den) if den > 0 else math.nan
