"""Numbers computed from a trace and its decomposition.

Every function returns per-member tensors (leading ensemble axis E), so a
chapter reports mean +- sd over seeds. In order: term fractions, the
average-attention approximation (definitions ours), word variance, input/readout
alignment, variance and participation ratio against time, the norm ratio, and
the temporal components against the null input.
"""

from __future__ import annotations

import math

import torch

from .decompose import TERM_NAMES, Components
from .models import MASK_SCORE, Seq2Seq, Trace
from .tasks import Seq2SeqData

__all__ = [
    "word_accuracy",
    "phrase_accuracy",
    "accuracy_from_logits",
    "term_fractions",
    "average_attention",
    "aam_approximation",
    "attention_argmax_agreement",
    "attention_argmax_offsets",
    "temporal_attention",
    "word_variance",
    "input_readout_alignment",
    "readout_match",
    "readout_angles_on_off",
    "variance_and_pr",
    "participation_ratio",
    "temporal_argmax_diagonal",
    "growth_ratio",
    "norm_ratio",
    "null_input_comparison",
    "explained_variance",
]


def _members(t: torch.Tensor, E: int, dims: int) -> torch.Tensor:
    if t.dim() == dims:
        t = t.unsqueeze(0)
    return t.expand(E, *t.shape[1:])


# --------------------------------------------------------------------------- accuracy


def accuracy_from_logits(predictions: torch.Tensor, data: Seq2SeqData) -> tuple[torch.Tensor, torch.Tensor]:
    """(word accuracy over valid positions, phrase accuracy), each ``(E,)``.

    Valid positions are t <= EOS (the EOS prediction counts). The original code
    counted pads as correct, which inflates word accuracy; we do not.
    """
    E, B, T = predictions.shape
    y = _members(data.targets, E, 2)
    valid = _members(data.target_valid, E, 2)
    ok = predictions == y
    word = (ok & valid).sum((1, 2)).double() / valid.sum((1, 2)).double()
    phrase = (ok | ~valid).all(-1).double().mean(-1)
    return word, phrase


def word_accuracy(trace: Trace, data: Seq2SeqData) -> torch.Tensor:
    return accuracy_from_logits(trace.predictions, data)[0]


def phrase_accuracy(trace: Trace, data: Seq2SeqData) -> torch.Tensor:
    return accuracy_from_logits(trace.predictions, data)[1]


# --------------------------------------------------------------------------- term fractions


def term_fractions(terms: dict, alignment: torch.Tensor, trace: Trace, data: Seq2SeqData, k: int = 5) -> dict:
    """Share of each of the nine terms in the alignment at the top-k encoder positions.

    For each sample and valid decoder step t, take the k encoder positions
    (s <= EOS) with the largest full alignment a_ts; at each compute
    ``|term_j| / sum_j' |term_j'|``; average over the k positions and samples.
    Returns ``per_step`` ``(E, 9, T)`` (NaN where no sample is valid),
    ``mean`` ``(E, 9)`` (mean over t), ``names``.
    """
    E, B, T, S = alignment.shape
    stack = torch.stack([terms[n].expand(E, B, T, S) for n in TERM_NAMES], dim=-1).abs()  # (E,B,T,S,9)
    frac = stack / stack.sum(-1, keepdim=True).clamp_min(1e-12)
    in_valid = trace.input_valid.unsqueeze(-2).expand(E, B, T, S)
    k = int(min(k, int(in_valid.sum(-1).min())))
    top = alignment.masked_fill(~in_valid, -math.inf).topk(k, dim=-1).indices  # (E,B,T,k)
    picked = torch.gather(frac, 3, top.unsqueeze(-1).expand(E, B, T, k, len(TERM_NAMES))).mean(3)  # (E,B,T,9)
    t_valid = _members(data.target_valid, E, 2).to(frac.dtype).unsqueeze(-1)  # (E,B,T,1)
    per_step = (picked * t_valid).sum(1) / t_valid.sum(1)  # (E,T,9), NaN where none
    per_step = per_step.transpose(1, 2)
    mean = torch.nanmean(per_step, dim=-1)
    return {"per_step": per_step, "mean": mean, "names": list(TERM_NAMES)}


# --------------------------------------------------------------------------- average attention


def average_attention(trace: Trace) -> torch.Tensor:
    """The average attention matrix ``(E, T, S)``: mean over samples, masked zeros included
    (as in the code)."""
    return trace.attention.mean(1)


def temporal_attention(enc: Components, dec: Components, trace: Trace) -> torch.Tensor:
    """Attention from the temporal components alone: ``softmax_s(mu^E_s . mu^D_t)``, masked per sample
    ``(E,B,T,S)``."""
    a = torch.einsum("etn,esn->ets", dec.mu, enc.mu).unsqueeze(1)
    a = a.masked_fill(~trace.input_valid.unsqueeze(-2), MASK_SCORE)
    return torch.softmax(a, dim=-1)


def attention_argmax_agreement(attention: torch.Tensor, expected: torch.Tensor,
                               data: Seq2SeqData) -> torch.Tensor:
    """Fraction of valid decoder rows whose attention argmax is the expected source position ``(E,)``.

    ``expected`` ``(..., B, T)``: the input position a correct alignment attends to
    (one-to-one: s = t; reversed: s = L-1-t; -1 = no expectation, row skipped).
    """
    E = attention.shape[0]
    expected = _members(expected, E, 2)
    rows = _members(data.target_valid, E, 2) & (expected >= 0)
    hit = (attention.argmax(-1) == expected) & rows
    return hit.sum((1, 2)).double() / rows.sum((1, 2)).clamp_min(1).double()


def attention_argmax_offsets(attention: torch.Tensor, expected: torch.Tensor, data: Seq2SeqData,
                             words_only: bool = True) -> dict:
    """Offsets ``argmax_s alpha_ts - expected_t`` over valid rows, per member.

    ``words_only`` drops the EOS row (t = out_index). Returns ``offsets`` (a list
    of per-member 1-D tensors), ``mode`` ``(E,)`` (most common offset),
    ``within1`` ``(E,)`` (share with |offset| <= 1), ``exact`` ``(E,)`` (share at 0).
    """
    E = attention.shape[0]
    expected = _members(expected, E, 2)
    rows = _members(data.target_valid, E, 2) & (expected >= 0)
    if words_only:
        T = rows.shape[-1]
        rows = rows & (torch.arange(T) < _members(data.out_index, E, 1).unsqueeze(-1))
    off = attention.argmax(-1) - expected
    per = [off[e][rows[e]] for e in range(E)]
    mode = torch.stack([p.mode().values if p.numel() else torch.tensor(0) for p in per])
    within1 = torch.stack([(p.abs() <= 1).double().mean() for p in per])
    exact = torch.stack([(p == 0).double().mean() for p in per])
    return {"offsets": per, "mode": mode, "within1": within1, "exact": exact}


def aam_approximation(model: Seq2Seq, trace: Trace, data: Seq2SeqData, enc: Components | None = None,
                      dec: Components | None = None) -> dict:
    """How well the average attention matrix (AAM) stands in for each sample's attention.

    Our definitions (the paper's is unknown):
    (a) ``substitution_word`` / ``substitution_phrase``: accuracy when every
        sample's attention is replaced by the AAM (masked to the sample's valid
        positions, renormalised; same decoder states);
    (b) ``argmax_agreement``: fraction of valid rows whose AAM argmax equals the
        sample's attention argmax;
    (c) ``tv_distance``: mean total-variation distance ``1/2 sum_s |AAM - alpha|``
        (AAM renormalised per sample) over valid rows.
    With ``enc``/``dec`` also ``temporal_word``: accuracy with the temporal-only
    attention ``softmax(mu^E . mu^D)`` in place of each sample's attention.
    """
    E, B, T, S = trace.attention.shape
    aam = average_attention(trace).unsqueeze(1)  # (E,1,T,S)
    logits = model.logits_from_attention(trace, aam)
    word, phrase = accuracy_from_logits(logits.argmax(-1), data)
    rows = _members(data.target_valid, E, 2)
    agree = (aam.expand(E, B, T, S).argmax(-1) == trace.attention.argmax(-1)) & rows
    w = aam * trace.input_valid.unsqueeze(-2)
    w = w / w.sum(-1, keepdim=True).clamp_min(1e-12)
    tv = 0.5 * (w - trace.attention).abs().sum(-1)
    out = {
        "aam": aam[:, 0],
        "substitution_word": word,
        "substitution_phrase": phrase,
        "argmax_agreement": agree.sum((1, 2)).double() / rows.sum((1, 2)).double(),
        "tv_distance": (tv * rows).sum((1, 2)) / rows.sum((1, 2)),
    }
    if enc is not None and dec is not None:
        ta = temporal_attention(enc, dec, trace)
        tw, tp = accuracy_from_logits(model.logits_from_attention(trace, ta).argmax(-1), data)
        out["temporal_word"], out["temporal_phrase"] = tw, tp
    return out


# --------------------------------------------------------------------------- word variance


def word_variance(comp: Components, tokens: torch.Tensor, n_words: int, exclude: int | None = None) -> dict:
    """Per word, the summed variance of its states before (``full``) and after (``no_temporal``)
    removing mu.

    ``tokens`` ``(..., B, L)`` groups the states (encoder: input words; decoder:
    target labels); ``exclude`` (the pad id) is left out. Returns ``full`` and
    ``no_temporal`` ``(E, n_words)`` (NaN for absent words), their ``ratio`` and
    ``mean_ratio`` ``(E,)`` (mean over words present).
    """
    E, B, L, n = comp.states.shape
    tokens = _members(tokens, E, 2)
    h = comp.states
    hn = comp.states - comp.temporal
    full = torch.full((E, n_words), math.nan, dtype=h.dtype)
    nt = torch.full((E, n_words), math.nan, dtype=h.dtype)
    for w in range(n_words):
        if w == exclude:
            continue
        m = (tokens == w) & comp.valid
        for e in range(E):
            X, Y = h[e][m[e]], hn[e][m[e]]
            if X.shape[0] > 1:
                full[e, w] = X.var(0).sum()
                nt[e, w] = Y.var(0).sum()
    ratio = nt / full
    return {"full": full, "no_temporal": nt, "ratio": ratio, "mean_ratio": torch.nanmean(ratio, dim=-1)}


# --------------------------------------------------------------------------- input/readout alignment


def input_readout_alignment(model: Seq2Seq, enc: Components) -> dict:
    """Angle (degrees) and dot product between context readout rows and encoder chi.

    ``angle``/``dot`` ``(E, V_out, V_in)``: rows = output words (readout rows
    acting on the context), columns = input words (chi^E_x).
    """
    R = model.context_readout_rows()  # (E, V, n)
    chi = enc.chi  # (E, K, n)
    dot = torch.einsum("evn,ekn->evk", R, chi)
    cos = dot / (R.norm(dim=-1).unsqueeze(-1) * chi.norm(dim=-1).unsqueeze(-2)).clamp_min(1e-12)
    return {"angle": torch.rad2deg(torch.arccos(cos.clamp(-1, 1))), "dot": dot}


def readout_match(angle: torch.Tensor, pairs: list[tuple[int, int]]) -> torch.Tensor:
    """Per member, the fraction of translation pairs (in_word, out_word) whose readout row
    has the smallest angle to chi of the input word among all output words ``(E,)``."""
    hits = torch.stack([angle[:, :, i].argmin(-1) == o for i, o in pairs], dim=-1)
    return hits.double().mean(-1)


def readout_angles_on_off(angle: torch.Tensor, pairs: list[tuple[int, int]]) -> dict:
    """Per member, the mean angle between chi^E of each input word and the readout row of its
    translation (``on``) and the mean angle to the rows of the other words' translations (``off``),
    ``(E,)``."""
    outs = [o for _, o in pairs]
    on = torch.stack([angle[:, o, i] for i, o in pairs], -1).mean(-1)
    off = torch.stack([angle[:, o2, i] for i, o in pairs for o2 in outs if o2 != o], -1).mean(-1)
    return {"on": on, "off": off}


# --------------------------------------------------------------------------- variance over time


def variance_and_pr(comp: Components) -> dict:
    """Per step, total variance ``sum(lambda)`` and participation ratio ``(sum lambda)^2 / sum lambda^2``
    of the valid states (PCA over samples). ``variance``, ``pr`` ``(E, L)``."""
    E, B, L, n = comp.states.shape
    var = torch.full((E, L), math.nan, dtype=comp.states.dtype)
    pr = torch.full((E, L), math.nan, dtype=comp.states.dtype)
    for t in range(L):
        for e in range(E):
            X = comp.states[e, :, t][comp.valid[e, :, t]]
            if X.shape[0] < 2:
                continue
            X = X - X.mean(0)
            C = X.T @ X / (X.shape[0] - 1)
            tr = torch.trace(C)
            var[e, t] = tr
            pr[e, t] = tr**2 / (C * C).sum().clamp_min(1e-30)
    return {"variance": var, "pr": pr}


def participation_ratio(points: torch.Tensor) -> torch.Tensor:
    """``(sum lambda)^2 / sum lambda^2`` of the covariance of ``points (..., N, n)``: how many
    dimensions the points spread over (1 for a line, n for an isotropic cloud) ``(...)``."""
    X = points - points.mean(-2, keepdim=True)
    C = X.transpose(-1, -2) @ X
    tr = torch.diagonal(C, dim1=-2, dim2=-1).sum(-1)
    return tr**2 / (C * C).sum((-1, -2)).clamp_min(1e-30)


def temporal_argmax_diagonal(temporal_alignment: torch.Tensor, steps: int) -> torch.Tensor:
    """Share of decoder steps ``t < steps`` whose ``argmax_s mu^E_s . mu^D_t`` is ``s = t`` ``(E,)``.

    ``temporal_alignment`` ``(E, T, S)``; ``steps``: rows that every sample reaches (the shortest length).
    """
    rows = temporal_alignment[:, :steps]
    return (rows.argmax(-1) == torch.arange(rows.shape[1])).double().mean(-1)


def growth_ratio(values: torch.Tensor, start: int, stop: int) -> torch.Tensor:
    """``values[..., stop] / values[..., start]``: how much a per-step quantity grows over a window."""
    return values[..., stop] / values[..., start]


# ------------------------------------------------------------- norms, null input, explained variance


def norm_ratio(comp: Components) -> torch.Tensor:
    """Norm ratio: mean ||mu_t|| / mean ||h - mu_t|| over valid states ``(E,)``."""
    w = comp.valid.to(comp.states.dtype)
    mu_norm = comp.mu.norm(dim=-1).unsqueeze(1) * w
    rest = (comp.states - comp.temporal).norm(dim=-1) * w
    return mu_norm.sum((1, 2)) / rest.sum((1, 2))


def null_input_comparison(comp: Components, null_states: torch.Tensor) -> dict:
    """Against the null input: ``||mu_t - h_null_t|| / ||mu_t||`` and the angle (degrees), per step
    ``(E, L)`` and averaged ``(E,)``.

    ``null_states`` ``(E, L, n)``: the states driven by the all-zero input
    (:meth:`Seq2Seq.null_input_states`). Steps without valid samples are skipped.
    """
    mu = comp.mu
    rel = (mu - null_states).norm(dim=-1) / mu.norm(dim=-1).clamp_min(1e-12)
    cos = (mu * null_states).sum(-1) / (mu.norm(dim=-1) * null_states.norm(dim=-1)).clamp_min(1e-12)
    ang = torch.rad2deg(torch.arccos(cos.clamp(-1, 1)))
    has = comp.valid.any(1)
    rel = rel.masked_fill(~has, math.nan)
    ang = ang.masked_fill(~has, math.nan)
    return {"relative": rel, "angle": ang, "relative_mean": torch.nanmean(rel, -1),
            "angle_mean": torch.nanmean(ang, -1)}


def explained_variance(comp: Components) -> torch.Tensor:
    """Share of the valid states' variance captured by ``mu + chi``:
    ``1 - sum||delta||^2 / sum||h - mean h||^2`` ``(E,)``."""
    w = comp.valid.to(comp.states.dtype).unsqueeze(-1)
    n = w.sum((1, 2))
    mean = (comp.states * w).sum((1, 2)) / n
    tot = (((comp.states - mean[:, None, None]) ** 2) * w).sum((1, 2, 3))
    res = ((comp.delta**2) * w).sum((1, 2, 3))
    return 1 - res / tot
