"""Interpretability metrics of the paper: the four focus/prediction categories and sparsity diagnostics.

For each mosaic: *focus* = argmax_j alpha_j (first index on ties, like ``np.argmax``); the focus is
*true* when it equals the foreground index. Crossing that with a correct/incorrect prediction gives
four disjoint categories, reported in % of the evaluated set:

* FTPT focus true, prediction true: interpretable and correct,
* FFPT focus false, prediction true: accurate but not interpretable (the error mode),
* FTPF focus true, prediction false,
* FFPF focus false, prediction false,

so accuracy = FTPT + FFPT. All functions accept a leading ensemble axis.
"""
from __future__ import annotations

import math

import torch

CATEGORIES = ("ftpt", "ffpt", "ftpf", "ffpf")


def categories(alpha: torch.Tensor, logits: torch.Tensor, y: torch.Tensor, fore: torch.Tensor) -> dict:
    """Percentages (shape = leading axes of alpha without B) of the four categories and accuracy."""
    focus_true = alpha.argmax(-1) == fore
    pred_true = logits.argmax(-1) == y
    n = alpha.shape[-2]
    out = {
        "ftpt": (focus_true & pred_true),
        "ffpt": (~focus_true & pred_true),
        "ftpf": (focus_true & ~pred_true),
        "ffpf": (~focus_true & ~pred_true),
    }
    out = {k: 100.0 * v.sum(-1).double() / n for k, v in out.items()}
    out["acc"] = 100.0 * pred_true.sum(-1).double() / n
    out["alpha_ge_half"] = (alpha.max(-1).values >= 0.5).sum(-1).double()
    return out


def sparsity_value(alpha: torch.Tensor, thresh: float = 0.01) -> torch.Tensor:
    """Mean number of segments with weight above ``thresh`` (1 = one-hot ... 9 = uniform)."""
    return (alpha > thresh).sum(-1).double().mean(-1)


def simplex_distance(alpha: torch.Tensor) -> torch.Tensor:
    """Mean Euclidean distance from alpha to the nearest vertex of the simplex (the one-hot of its argmax)."""
    onehot = torch.nn.functional.one_hot(alpha.argmax(-1), alpha.shape[-1]).to(alpha.dtype)
    return (alpha - onehot).norm(dim=-1).double().mean(-1)


def entropy_bits(alpha: torch.Tensor) -> torch.Tensor:
    """Mean entropy in bits; zero weights contribute 0 (the authors' nansum)."""
    h = -torch.special.xlogy(alpha, alpha).sum(-1) / math.log(2.0)
    return h.double().mean(-1)


def summary(alpha, logits, y, fore) -> dict:
    out = categories(alpha, logits, y, fore)
    out["sparsity"] = sparsity_value(alpha)
    out["simplex_dist"] = simplex_distance(alpha)
    out["entropy_bits"] = entropy_bits(alpha)
    return out


def max_alpha_split(alpha, logits, y, fore) -> dict:
    """Largest attention weight per mosaic, split into FTPT (interpretable) and FFPT points (flattened)."""
    focus_true = alpha.argmax(-1) == fore
    pred_true = logits.argmax(-1) == y
    amax = alpha.max(-1).values
    return {"ftpt": amax[focus_true & pred_true].flatten(), "ffpt": amax[~focus_true & pred_true].flatten()}


def best_runs(acc: torch.Tensor, values: dict, threshold: float = 90.0) -> dict:
    """The paper's "best runs" aggregates: count of runs with accuracy > threshold and means over them."""
    acc = torch.as_tensor(acc, dtype=torch.float64)
    ok = acc > threshold
    out = {"n_best": int(ok.sum()), "n_runs": int(acc.numel())}
    for k, v in values.items():
        v = torch.as_tensor(v, dtype=torch.float64)
        out[f"best_{k}"] = float(v[ok].mean()) if ok.any() else float("nan")
    return out


def mean_sd(v) -> tuple[float, float]:
    v = torch.as_tensor(v, dtype=torch.float64).flatten()
    sd = float(v.std()) if v.numel() > 1 else 0.0
    return float(v.mean()), sd
