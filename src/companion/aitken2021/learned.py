"""Learned attention for the appendix: query/key/value (QKV) and multi-head attention.

Why: the main text uses a parameter-free dot product ``a_st = h^E_s . h^D_t``, so
the temporal components of encoder and decoder must align *in the hidden
space itself*. With learned attention the alignment is
``a_st = (W_K h^E_s) . (W_Q h^D_t) / sqrt(d_v)`` and the context is
``c_t = sum_s alpha_ts W_V h^E_s``. Because the three maps are linear, the
decomposition ``h = mu + chi + delta`` passes through them unchanged:
``W_K h = W_K mu + W_K chi + W_K delta``. The paper's appendix (as summarised by
arxivlens) reports that the temporal components align *after* the key/query
projection and that the input-delta components lie along the readout vectors
*after* the value projection; :func:`projected_components` and
:func:`learned_alignment_terms` compute exactly those projected quantities.

Modules (the note's ``enc_dec_attl`` / ``enc_dec_attmh`` [CODE ``train_and_build.py``]):

* :class:`QKVAttention` - ``W_Q``, ``W_K`` (n x qk_size), ``W_V`` (n x v_size), no biases,
  Glorot-normal initialisation, scores scaled by ``1/sqrt(v_size)`` (as in the
  original code, which scales by the value size, not the key size).
* :class:`MultiHeadAttention` - ``heads`` independent QKV heads (default 2), their
  contexts concatenated and mapped back to ``n`` by a bias-free ``W_O``.

Both register themselves in :data:`companion.aitken2021.models.ATTENTIONS` as
``"qkv"`` and ``"mh"`` and follow its interface: ``forward(enc, dec, valid) ->
(alignment, attention, context)``, ``weights``, ``context_from_weights``,
``project_keys``, ``project_queries``, ``scale``, ``context_dim``. For the
multi-head module the trace's ``alignment`` / ``attention`` are the *mean over
heads* (so the average-attention analyses see one matrix per sample); the
per-head quantities are recomputed from the states with :meth:`MultiHeadAttention.head_alignment`.

All weights carry the leading ensemble axis (one slice per seed), like every
other layer of the library.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ..ensemble import EnsembleLinear, EnsembleModule, bmm_last
from .models import ATTENTIONS, MASK_SCORE

__all__ = [
    "QKVAttention",
    "MultiHeadAttention",
    "glorot_std",
    "projected_components",
    "learned_alignment_terms",
    "TERM_NAMES",
]

TERM_NAMES = ("temp_temp", "temp_inp", "temp_del", "inp_temp", "inp_inp", "inp_del", "del_temp", "del_inp", "del_del")
_PARTS = {"temp": "mu", "inp": "chi", "del": "delta"}


def glorot_std(fan_in: int, fan_out: int) -> float:
    """Standard deviation of JAX's ``glorot_normal`` for a (fan_in, fan_out) matrix."""
    return math.sqrt(2.0 / (fan_in + fan_out))


def _masked_softmax(alignment: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    masked = alignment.masked_fill(~valid.unsqueeze(-2), MASK_SCORE)
    return torch.softmax(masked, dim=-1)


class QKVAttention(EnsembleModule):
    """Query/key/value attention, one set of (W_Q, W_K, W_V) per ensemble member.

    Shapes: ``enc (E, B, S, n)``, ``dec (E, B, T, n)``; alignment and attention
    ``(E, B, T, S)``; context ``(E, B, T, v_size)``.
    """

    def __init__(self, n_members: int, hidden: int, qk_size: int | None = None, v_size: int | None = None):
        super().__init__(n_members)
        self.hidden = int(hidden)
        self.qk_size = int(qk_size or hidden)
        self.v_size = int(v_size or hidden)
        self.context_dim = self.v_size
        self.scale = 1.0 / math.sqrt(self.v_size)
        self.W_Q = nn.Parameter(torch.zeros(n_members, self.hidden, self.qk_size))
        self.W_K = nn.Parameter(torch.zeros(n_members, self.hidden, self.qk_size))
        self.W_V = nn.Parameter(torch.zeros(n_members, self.hidden, self.v_size))

    def init_member(self, e: int, generator: torch.Generator) -> None:
        with torch.no_grad():
            for W in (self.W_Q, self.W_K, self.W_V):
                std = glorot_std(W.shape[1], W.shape[2])
                W.data[e].copy_(torch.randn(W.shape[1:], generator=generator) * std)

    # the maps applied before the dot product / to the values
    def project_queries(self, v: torch.Tensor) -> torch.Tensor:
        return bmm_last(v, self.W_Q)

    def project_keys(self, v: torch.Tensor) -> torch.Tensor:
        return bmm_last(v, self.W_K)

    def project_values(self, v: torch.Tensor) -> torch.Tensor:
        return bmm_last(v, self.W_V)

    def weights(self, alignment: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        return _masked_softmax(alignment, valid)

    def alignment(self, enc: torch.Tensor, dec: torch.Tensor) -> torch.Tensor:
        q, k = self.project_queries(dec), self.project_keys(enc)
        return self.scale * torch.einsum("ebtk,ebsk->ebts", q, k)

    def forward(self, enc, dec, valid):
        alignment = self.alignment(enc, dec)
        attention = self.weights(alignment, valid)
        return alignment, attention, self.context_from_weights(attention, enc)

    def context_from_weights(self, attention: torch.Tensor, enc: torch.Tensor) -> torch.Tensor:
        return torch.einsum("ebts,ebsv->ebtv", attention, self.project_values(enc))

    def value_readout(self, readout_rows: torch.Tensor) -> torch.Tensor:
        """Readout rows pulled back through the value map: ``(E, V, n)`` rows ``w_y W_V^T``.

        ``w_y . (W_V x) = (W_V^T w_y) . x``: comparing ``W_V chi`` with ``w_y`` in the
        value space is the same as comparing ``chi`` with these rows in the hidden space.
        """
        return torch.einsum("evc,enc->evn", readout_rows, self.W_V)

    def extra_repr(self) -> str:
        return f"n_members={self.n_members}, hidden={self.hidden}, qk={self.qk_size}, v={self.v_size}"


class MultiHeadAttention(EnsembleModule):
    """``heads`` QKV heads; contexts concatenated and mapped to ``hidden`` by a bias-free ``W_O``.

    The trace's alignment / attention are the head means; :meth:`head_alignment`
    and :meth:`head_weights` give the per-head ``(E, B, H, T, S)`` tensors.
    :meth:`context_from_weights` (used by the average-attention substitution)
    applies the same weights to every head.
    """

    def __init__(self, n_members: int, hidden: int, heads: int = 2, qk_size: int | None = None,
                 v_size: int | None = None):
        super().__init__(n_members)
        if heads < 1:
            raise ValueError("heads must be >= 1")
        self.heads = int(heads)
        self.hidden = int(hidden)
        self.head = nn.ModuleList(QKVAttention(n_members, hidden, qk_size, v_size) for _ in range(self.heads))
        self.v_size = self.head[0].v_size
        self.W_O = EnsembleLinear(n_members, self.heads * self.v_size, self.hidden, bias=False,
                                  init_std=glorot_std(self.heads * self.v_size, self.hidden))
        self.context_dim = self.hidden
        self.scale = self.head[0].scale

    def init_member(self, e: int, generator: torch.Generator) -> None:
        for h in self.head:
            h.init_member(e, generator)
        self.W_O.init_member(e, generator)

    def head_alignment(self, enc: torch.Tensor, dec: torch.Tensor) -> torch.Tensor:
        return torch.stack([h.alignment(enc, dec) for h in self.head], dim=2)

    def head_weights(self, enc: torch.Tensor, dec: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        a = self.head_alignment(enc, dec)
        return _masked_softmax(a, valid.unsqueeze(2))

    def weights(self, alignment: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        return _masked_softmax(alignment, valid)

    # for the generic decomposition, head 0 is "the" key/query map; per-head use: self.head[k]
    def project_queries(self, v: torch.Tensor) -> torch.Tensor:
        return self.head[0].project_queries(v)

    def project_keys(self, v: torch.Tensor) -> torch.Tensor:
        return self.head[0].project_keys(v)

    def forward(self, enc, dec, valid):
        per_align = self.head_alignment(enc, dec)  # (E, B, H, T, S)
        per_w = _masked_softmax(per_align, valid.unsqueeze(2))
        ctx = torch.cat([torch.einsum("ebts,ebsv->ebtv", per_w[:, :, k], self.head[k].project_values(enc))
                         for k in range(self.heads)], dim=-1)
        return per_align.mean(2), per_w.mean(2), self.W_O(ctx)

    def context_from_weights(self, attention: torch.Tensor, enc: torch.Tensor) -> torch.Tensor:
        ctx = torch.cat([h.context_from_weights(attention, enc) for h in self.head], dim=-1)
        return self.W_O(ctx)

    def head_value_maps(self) -> torch.Tensor:
        """``(E, H, n, n)``: head k's effective value map ``x -> W_O[:, block k] W_V^k x`` as ``x @ M``."""
        v = self.v_size
        Wo = self.W_O.weight  # (E, H*v, n), input-major
        return torch.stack([torch.bmm(h.W_V, Wo[:, k * v : (k + 1) * v]) for k, h in enumerate(self.head)], dim=1)

    def extra_repr(self) -> str:
        return f"n_members={self.n_members}, heads={self.heads}, hidden={self.hidden}, v={self.v_size}"


ATTENTIONS["qkv"] = QKVAttention
ATTENTIONS["mh"] = MultiHeadAttention


# --------------------------------------------------------------------------------------
# the decomposition after the projections
# --------------------------------------------------------------------------------------
def projected_components(parts: dict, W: torch.Tensor) -> dict:
    """Map every component through a member-wise linear map ``x -> x @ W[e]``.

    ``parts``: ``{"mu": (E, ..., n), "chi": ..., "delta": ...}`` (any shapes with the
    ensemble axis first and features last); ``W``: ``(E, n, k)``. Linear maps
    preserve the sum, so the projected parts add up to the projected state.
    """
    return {k: bmm_last(v, W) for k, v in parts.items()}


def learned_alignment_terms(enc_parts: dict, dec_parts: dict, W_K: torch.Tensor, W_Q: torch.Tensor,
                            scale: float) -> dict:
    """The nine alignment terms of learned attention, after the key/query projections.

    ``enc_parts`` / ``dec_parts``: ``{"mu", "chi", "delta"}`` per sample and step,
    shaped ``(E, B, S, n)`` / ``(E, B, T, n)``. Returns ``{name: (E, B, T, S)}`` with
    the note's names (``temp_inp`` = encoder temporal x decoder input, ...);
    their sum is the full scaled alignment ``scale * (W_K h^E) . (W_Q h^D)``.
    """
    K = projected_components(enc_parts, W_K)
    Q = projected_components(dec_parts, W_Q)
    out = {}
    for name in TERM_NAMES:
        e, d = name.split("_")
        out[name] = scale * torch.einsum("ebsk,ebtk->ebts", K[_PARTS[e]], Q[_PARTS[d]])
    return out
