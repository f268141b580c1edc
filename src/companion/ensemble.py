"""Layers whose weights carry a leading *ensemble* axis.

Why: a figure usually rests on several independently seeded networks. Training
them one after another repeats every small matrix product E times; stacking the
E weight sets along a leading axis turns those products into one batched
product (``torch.bmm``), so E networks train as one program, one optimiser and
one backward pass. Members never mix: member ``e`` only ever sees slice ``e`` of
every weight, so gradients, Adam moments and (with :func:`clip_grad_norm_per_member`)
gradient clipping stay per member, and an ensemble of seeds ``[s0, s1, ...]``
computes, up to float rounding, what E separate single-member runs compute.

Conventions used by every layer here
- Activations are shaped ``(E, ..., features)``: the ensemble axis first.
- Parameters are shaped ``(E, ...)``.
- Each layer has ``init_member(e, generator)``, which fills member ``e``'s slice
  from a private ``torch.Generator``. A model initialises member ``e`` by calling
  ``init_member`` on its layers in a fixed order with one generator seeded from
  that member's seed, so member ``e`` of an ensemble is drawn exactly as a
  one-member model with the same seed (see :func:`init_members`).

Generic; used by :mod:`companion.aitken2021` and available to any chapter.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import torch
from torch import nn

__all__ = [
    "EnsembleModule",
    "EnsembleLinear",
    "EnsembleGRUCell",
    "init_members",
    "per_member_sq_norm",
    "clip_grad_norm_per_member",
    "member_state",
]


class EnsembleModule(nn.Module):
    """Base class: a module with ``n_members`` stacked copies of its weights."""

    def __init__(self, n_members: int):
        super().__init__()
        if n_members < 1:
            raise ValueError("an ensemble needs at least one member")
        self.n_members = int(n_members)

    def init_member(self, e: int, generator: torch.Generator) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


def _normal_(t: torch.Tensor, std: float, generator: torch.Generator) -> None:
    with torch.no_grad():
        t.copy_(torch.randn(t.shape, generator=generator, dtype=t.dtype) * std)


def bmm_last(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """``x[e] @ weight[e]`` for ``x`` of shape ``(E, ..., i)`` and ``weight`` ``(E, i, o)``."""
    E = weight.shape[0]
    if x.shape[0] != E:
        if x.shape[0] == 1:
            x = x.expand(E, *x.shape[1:])
        else:
            raise ValueError(f"ensemble axis mismatch: input {x.shape[0]} vs weights {E}")
    lead = x.shape[1:-1]
    y = torch.bmm(x.reshape(E, -1, x.shape[-1]), weight)
    return y.reshape(E, *lead, weight.shape[-1])


class EnsembleLinear(EnsembleModule):
    """``y[e] = x[e] @ weight[e] + bias[e]``: E independent linear maps in one ``bmm``.

    ``weight`` is ``(E, in_features, out_features)`` (input-major, so ``x @ W``);
    ``bias`` is ``(E, out_features)`` or absent. Initialisation: ``N(0, init_std^2)``
    with ``init_std = 1/sqrt(in_features)`` unless given; bias zero.
    ``member_weight(e)`` returns the usual ``(out, in)`` matrix of one member.
    """

    def __init__(
        self,
        n_members: int,
        in_features: int,
        out_features: int,
        bias: bool = True,
        init_std: float | None = None,
    ):
        super().__init__(n_members)
        self.in_features, self.out_features = int(in_features), int(out_features)
        self.init_std = init_std if init_std is not None else 1.0 / math.sqrt(in_features)
        self.weight = nn.Parameter(torch.zeros(n_members, in_features, out_features))
        self.bias = nn.Parameter(torch.zeros(n_members, out_features)) if bias else None

    def init_member(self, e: int, generator: torch.Generator) -> None:
        _normal_(self.weight.data[e], self.init_std, generator)
        if self.bias is not None:
            self.bias.data[e].zero_()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = bmm_last(x, self.weight)
        if self.bias is not None:
            y = y + self.bias.view(self.n_members, *([1] * (y.dim() - 2)), self.out_features)
        return y

    def member_weight(self, e: int) -> torch.Tensor:
        return self.weight[e].T

    def extra_repr(self) -> str:
        return (f"n_members={self.n_members}, in={self.in_features}, out={self.out_features}, "
                f"bias={self.bias is not None}")


class EnsembleGRUCell(EnsembleModule):
    """A GRU cell per member, in the form used by the ``renn`` library.

    ``u = sigmoid(W_u x + U_u h + b_u)``, ``r = sigmoid(W_r x + U_r h + b_r)``,
    ``c = tanh(W_c x + U_c (r * h) + b_c)``, ``h' = u * h + (1 - u) * c``.

    The reset gate multiplies ``h`` *before* ``U_c`` (``nn.GRUCell`` applies it
    after, and has extra recurrent biases). Weights ``W`` and ``U`` are drawn
    from ``N(0, 1/hidden)`` (variance scaling with fan-in = number of units, as in
    the original JAX code), biases start at zero.

    The input part ``W x + b`` does not depend on ``h``; when a whole input
    sequence is known in advance (encoder; decoder under teacher forcing) call
    :meth:`input_projection` once on all steps and :meth:`step` per step, so the
    recurrent loop only does the two ``h``-dependent products.
    """

    def __init__(self, n_members: int, input_size: int, hidden_size: int, init_std: float | None = None):
        super().__init__(n_members)
        self.input_size, self.hidden_size = int(input_size), int(hidden_size)
        n = self.hidden_size
        self.init_std = init_std if init_std is not None else 1.0 / math.sqrt(n)
        self.W = nn.Parameter(torch.zeros(n_members, input_size, 3 * n))  # [u | r | c]
        self.b = nn.Parameter(torch.zeros(n_members, 3 * n))
        self.U_ur = nn.Parameter(torch.zeros(n_members, n, 2 * n))  # [u | r]
        self.U_c = nn.Parameter(torch.zeros(n_members, n, n))

    def init_member(self, e: int, generator: torch.Generator) -> None:
        for p in (self.W, self.U_ur, self.U_c):
            _normal_(p.data[e], self.init_std, generator)
        self.b.data[e].zero_()

    def input_projection(self, x: torch.Tensor) -> torch.Tensor:
        """``W x + b`` for inputs ``(E, ..., input_size)`` -> ``(E, ..., 3*hidden)``."""
        y = bmm_last(x, self.W)
        return y + self.b.view(self.n_members, *([1] * (y.dim() - 2)), 3 * self.hidden_size)

    def step(self, xproj: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        """One update from a projected input ``(E, B, 3n)`` and state ``(E, B, n)``."""
        # split/chunk (not slicing) and baddbmm (fused add): their backward passes
        # concatenate instead of zero-filling a full-size gradient per slice.
        n = self.hidden_size
        x_ur, x_c = xproj.split([2 * n, n], dim=-1)
        u, r = torch.sigmoid(torch.baddbmm(x_ur, h, self.U_ur)).chunk(2, dim=-1)
        c = torch.tanh(torch.baddbmm(x_c, r * h, self.U_c))
        return torch.lerp(c, h, u)  # u * h + (1 - u) * c

    def step_from_zero(self, xproj: torch.Tensor) -> torch.Tensor:
        """The update from ``h = 0`` (a feed-forward use of the cell): ``(1 - u) * c``.

        Works on any shape ``(E, ..., 3n)``, so all positions go through at once.
        """
        n = self.hidden_size
        x_u, _, x_c = xproj.split([n, n, n], dim=-1)
        return (1.0 - torch.sigmoid(x_u)) * torch.tanh(x_c)

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        return self.step(self.input_projection(x), h)

    def extra_repr(self) -> str:
        return f"n_members={self.n_members}, input={self.input_size}, hidden={self.hidden_size}"


def init_members(modules: Sequence[EnsembleModule], seeds: Sequence[int]) -> None:
    """Initialise member ``e`` of every module from ``seeds[e]``, modules in the given order.

    The order fixes the stream of draws, so a one-member model built with
    ``seeds=[s]`` gets exactly the weights of member ``e`` of a model built with
    ``seeds[e] == s``.
    """
    for e, seed in enumerate(seeds):
        g = torch.Generator().manual_seed(int(seed))
        for m in modules:
            m.init_member(e, g)


def per_member_sq_norm(tensors: Iterable[torch.Tensor]) -> torch.Tensor:
    """Sum of squares of each member's slice over a list of ``(E, ...)`` tensors -> ``(E,)``."""
    total = None
    for t in tensors:
        s = t.pow(2).reshape(t.shape[0], -1).sum(1)
        total = s if total is None else total + s
    if total is None:
        raise ValueError("no tensors")
    return total


def clip_grad_norm_per_member(params: Iterable[nn.Parameter], max_norm: float,
                              eps: float = 1e-6) -> torch.Tensor:
    """Global-norm gradient clipping done separately for each member.

    ``torch.nn.utils.clip_grad_norm_`` on stacked weights would couple the
    members (one norm over all of them); here member ``e``'s gradients are
    scaled by ``min(1, max_norm / (norm_e + eps))``, the same rule applied per
    network. Returns the per-member norms before clipping.
    """
    params = [p for p in params if p.grad is not None]
    with torch.no_grad():
        norms = per_member_sq_norm([p.grad for p in params]).sqrt()
        scale = torch.clamp(max_norm / (norms + eps), max=1.0)
        for p in params:
            p.grad.mul_(scale.view(-1, *([1] * (p.grad.dim() - 1))))
    return norms


def member_state(state: dict[str, torch.Tensor], e: int) -> dict[str, torch.Tensor]:
    """The slice of a stacked state dict that belongs to member ``e`` (kept 1-member wide)."""
    return {k: v[e : e + 1].clone() for k, v in state.items()}
