"""Attention normalisers: map the 9 focus scores of a mosaic to weights on the simplex.

The paper compares the usual softmax with two alternatives that can put exactly zero weight on a
segment (sparsemax) or that are scale-sensitive in a different way (spherical softmax). All three
act on the last axis and accept any leading shape, so one call serves a whole ensemble
(shape ``(E, B, m)``).
"""
from __future__ import annotations

import torch

#: Added to the spherical-softmax denominator. The authors' version had none, so an all-zero score
#: vector (which the functionally-zero focus produces at initialisation!) gave 0/0 = NaN.
SPHERICAL_EPS = 1e-12

NORMALISERS = ("softmax", "sparsemax", "spherical")


def softmax(scores: torch.Tensor) -> torch.Tensor:
    return torch.softmax(scores, dim=-1)


def sparsemax(scores: torch.Tensor) -> torch.Tensor:
    """Euclidean projection of ``scores`` onto the probability simplex (Martins & Astudillo, 2016).

    Closed form: sort the scores in decreasing order, find the support size
    ``k* = max{k : 1 + k z_(k) > sum_{j<=k} z_(j)}``, set the threshold
    ``tau = (sum_{j<=k*} z_(j) - 1) / k*`` and return ``max(z - tau, 0)``.
    Autograd through this expression yields the exact sparsemax Jacobian (tau depends only on the
    scores in the support), so no custom backward is needed.
    """
    z_sorted, _ = torch.sort(scores, dim=-1, descending=True)
    cumsum = z_sorted.cumsum(dim=-1)
    m = scores.shape[-1]
    ks = torch.arange(1, m + 1, dtype=scores.dtype, device=scores.device)
    in_support = (1.0 + ks * z_sorted) > cumsum
    k_star = in_support.sum(dim=-1, keepdim=True)  # support is always a prefix, size >= 1
    tau = (cumsum.gather(-1, k_star - 1) - 1.0) / k_star.to(scores.dtype)
    return torch.clamp(scores - tau, min=0.0)


def spherical_softmax(scores: torch.Tensor, eps: float = SPHERICAL_EPS) -> torch.Tensor:
    """alpha_j = s_j^2 / (sum_i s_i^2 + eps); ``eps`` keeps an all-zero input finite (all weights 0)."""
    sq = scores * scores
    return sq / (sq.sum(dim=-1, keepdim=True) + eps)


def normalise(scores: torch.Tensor, kind: str = "softmax") -> torch.Tensor:
    if kind == "softmax":
        return softmax(scores)
    if kind == "sparsemax":
        return sparsemax(scores)
    if kind == "spherical":
        return spherical_softmax(scores)
    raise ValueError(f"unknown normaliser {kind!r}; choose one of {NORMALISERS}")


def attention_entropy(scores: torch.Tensor, alpha: torch.Tensor, kind: str) -> torch.Tensor:
    """Entropy (nats) of each attention vector, differentiable, over the last axis.

    Softmax uses ``log_softmax`` (as the authors did) for numerical stability; the sparse
    normalisers clamp the argument of the log, so exact zeros contribute 0 to the value *and* a finite
    gradient (``xlogy`` has the right value but an infinite derivative at 0, and 0 * inf = NaN even
    when the entropy weight is 0).
    """
    if kind == "softmax":
        return -(alpha * torch.log_softmax(scores, dim=-1)).sum(-1)
    tiny = torch.finfo(alpha.dtype).tiny
    return -(alpha * torch.log(alpha.clamp_min(tiny))).sum(-1)
