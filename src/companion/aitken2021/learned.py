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

Modules (the development code's ``enc_dec_attl`` / ``enc_dec_attmh`` [CODE ``train_and_build.py``]):

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
from .decompose import TERM_NAMES
from .models import ATTENTIONS, MASK_SCORE

__all__ = [
    "QKVAttention",
    "MultiHeadAttention",
    "glorot_std",
    "projected_components",
    "learned_alignment_terms",
    "TERM_NAMES",
]

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

    def __init__(self, n_members: int, hidden: int, qk_size: int | None = None, v_size: int | None = None,
                 code: str | None = None):
        # ``code`` only marks cache keys (a fingerprint of this module, see learned_ensemble)
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
                 v_size: int | None = None, code: str | None = None):
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
        maps = [torch.bmm(h.W_V, Wo[:, k * v : (k + 1) * v]) for k, h in enumerate(self.head)]
        return torch.stack(maps, dim=1)

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
    the library's term names (``temp_inp`` = encoder temporal x decoder input, ...);
    their sum is the full scaled alignment ``scale * (W_K h^E) . (W_Q h^D)``.
    """
    K = projected_components(enc_parts, W_K)
    Q = projected_components(dec_parts, W_Q)
    out = {}
    for name in TERM_NAMES:
        e, d = name.split("_")
        out[name] = scale * torch.einsum("ebsk,ebtk->ebts", K[_PARTS[e]], Q[_PARTS[d]])
    return out


# --------------------------------------------------------------------------------------
# appendix analyses: temporal components after W_K / W_Q, input-delta after W_V
# --------------------------------------------------------------------------------------
def _angle(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """Angles in degrees between rows of ``A (E, V, d)`` and rows of ``B (E, K, d)`` -> ``(E, V, K)``."""
    dot = torch.einsum("evd,ekd->evk", A, B)
    cos = dot / (A.norm(dim=-1).unsqueeze(-1) * B.norm(dim=-1).unsqueeze(-2)).clamp_min(1e-12)
    return torch.rad2deg(torch.arccos(cos.clamp(-1, 1)))


def _heads(attn) -> list:
    return list(attn.head) if isinstance(attn, MultiHeadAttention) else [attn]


@torch.no_grad()
def projected_temporal(a, head: int | None = None, min_count: int = 10) -> dict:
    """Temporal alignment before and after the key/query projections.

    ``before`` = ``mu^D_t . mu^E_s``; ``after`` = ``scale * (W_Q mu^D_t) . (W_K mu^E_s)``
    (the temporal-temporal term of the learned alignment), each ``(E, T, S)``.
    ``diag_before`` / ``diag_after`` ``(E,)``: the fraction of decoder steps t
    (with at least ``min_count`` samples, and t < S) whose argmax over s (same
    restriction) is s = t. ``cos_diag_after``: the mean cosine between
    ``W_K mu^E_t`` and ``W_Q mu^D_t`` (same step) and ``cos_off_after`` over s != t.
    ``a`` is an :class:`~companion.aitken2021.analysis.Analysis`; ``head`` picks
    one head of a multi-head model.
    """
    attn = _heads(a.model.attn)[head or 0]
    enc, dec = a.enc, a.dec
    s_ok = enc.valid[0].sum(0) >= min_count
    t_ok = dec.valid[0].sum(0) >= min_count
    K, Q = attn.project_keys(enc.mu), attn.project_queries(dec.mu)
    before = torch.einsum("etn,esn->ets", dec.mu, enc.mu)
    after = attn.scale * torch.einsum("etk,esk->ets", Q, K)
    T, S = before.shape[1:]
    rows = t_ok & (torch.arange(T) < S)
    rows &= torch.cat([s_ok, torch.zeros(max(0, T - S), dtype=torch.bool)])[:T]
    t_idx = torch.arange(T)

    def diag(M):
        arg = M.masked_fill(~s_ok[None, None, :], -math.inf).argmax(-1)
        return ((arg == t_idx) & rows).sum(-1).double() / rows.sum().clamp_min(1)

    norms = Q.norm(dim=-1).unsqueeze(-1) * K.norm(dim=-1).unsqueeze(-2)
    cos = torch.einsum("etk,esk->ets", Q, K) / norms.clamp_min(1e-12)
    same = torch.zeros(T, S, dtype=torch.bool)
    n = min(T, S)
    same[torch.arange(n), torch.arange(n)] = True
    ok = rows[:, None] & s_ok[None, :]
    return {
        "before": before, "after": after, "keys": K, "queries": Q, "s_ok": s_ok, "t_ok": rows,
        "diag_before": diag(before), "diag_after": diag(after),
        "cos_diag_after": (cos * (same & ok)).sum((1, 2)) / (same & ok).sum().clamp_min(1),
        "cos_off_after": (cos * (~same & ok)).sum((1, 2)) / (~same & ok).sum().clamp_min(1),
    }


def value_maps(attn) -> list[torch.Tensor]:
    """Per head, the map from an encoder state to its contribution to the context, as ``x @ M``:
    ``W_V`` for QKV attention; ``W_V^k`` followed by head k's block of ``W_O`` for multi-head."""
    if isinstance(attn, MultiHeadAttention):
        M = attn.head_value_maps()
        return [M[:, k] for k in range(attn.heads)]
    return [attn.W_V]


@torch.no_grad()
def value_readout_alignment(a, pairs: list[tuple[int, int]], head: int | None = None) -> dict:
    """Input-delta components against the context readout rows, after the value projection.

    ``after``: angle (degrees) between readout row ``w_y`` and ``chi^E_x M`` (M the
    head's value map), ``(E, V_out, V_in)``; ``before``: the same with ``chi^E_x``
    itself (meaningful only as a contrast: the readout acts on values, not on
    hidden states). ``match_after`` / ``match_before`` ``(E,)``: the fraction of
    translation ``pairs`` (input id, output id) whose readout row has the smallest
    angle among all output rows.
    """
    R = a.model.context_readout_rows().detach()  # (E, V, c)
    chi = a.enc.chi
    Mk = value_maps(a.model.attn)[head or 0]
    after = _angle(R, bmm_last(chi, Mk))
    before = _angle(R, chi) if R.shape[-1] == chi.shape[-1] else torch.full_like(after, math.nan)

    def match(ang):
        return torch.stack([ang[:, :, i].argmin(-1) == o for i, o in pairs], -1).double().mean(-1)

    return {"after": after, "before": before, "match_after": match(after), "match_before": match(before),
            "pair_angle_after": torch.stack([after[:, o, i] for i, o in pairs], -1)}


# --------------------------------------------------------------------------------------
# chapter entry points
# --------------------------------------------------------------------------------------
def learned_ensemble(S, attention: str = "qkv"):
    """AED with learned attention on the chapter's one-to-one task, trained as one program and cached.

    Settings read: ``seed``, ``n_seeds``, ``steps``, ``n_words``, ``min_len``, ``max_len`` and
    ``qk_size`` (QKV) or ``heads`` (multi-head). L2 is the dot-product AED's on one-to-one [CODE].
    """
    from .. import cache, device
    from .. import progress as _progress
    from .tasks import OneToOne
    from .train import TrainConfig, trained_ensemble

    if attention == "qkv":
        opts = {"qk_size": S.qk_size}
    elif attention == "mh":
        opts = {"heads": S.heads}
    else:
        raise ValueError(f"attention must be 'qkv' or 'mh', got {attention!r}")
    opts["code"] = cache.fingerprint(("aitken2021/learned",))  # retrain when this module changes
    task = OneToOne(n_words=S.n_words, min_len=S.min_len, max_len=S.max_len)
    with device.train_threads():  # small matrices: one intra-op thread avoids OpenMP contention
        options = {"attention": attention, "attention_options": tuple(opts.items())}
        ens = trained_ensemble("AED", task, seed=S.seed, n_seeds=S.n_seeds, train=TrainConfig(steps=S.steps),
                               model_options=options, progress=_progress.progress)
    ens.model.requires_grad_(False)  # analysis only from here on
    return ens


@torch.no_grad()
def head_terms(a, head: int) -> dict:
    """The nine alignment terms of one head of a multi-head model (after its W_K / W_Q), ``(E, B, T, S)``."""
    attn = a.model.attn.head[head]
    enc = {"mu": a.enc.temporal.expand_as(a.enc.states), "chi": a.enc.input_delta, "delta": a.enc.delta}
    dec = {"mu": a.dec.temporal.expand_as(a.dec.states), "chi": a.dec.input_delta, "delta": a.dec.delta}
    return learned_alignment_terms(enc, dec, attn.W_K, attn.W_Q, attn.scale)
