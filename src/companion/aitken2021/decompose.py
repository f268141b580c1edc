"""The temporal / input-delta / residual decomposition of hidden states.

Every hidden state has a time index and the word that arrived at that step, so
[PAPER; SUM; estimator from CODE `find_avg_hs`, `calculate_input_components`]

    h_t = mu_t  +  chi_{x_t}  +  delta_t

- ``mu_t`` (temporal component): the mean state at step t over samples;
- ``chi_x`` (input-delta component): the mean of ``h - mu`` over every
  (sample, step) whose label is x;
- ``delta`` (residual): what remains, so the sum reproduces ``h`` exactly.

Rules (as in the authors' code): repeated pads are left out of every average (a
sample enters step t if its token at t is not ``<pad>`` or its token at t-1 is
not; the first pad, the EOS, stays). The encoder's label and pad test use the
input tokens. The decoder's pad test uses the *target* tokens and its label is
the decoder *input*: the previous greedy prediction, with a separate ``<BoS>``
class at t = 0.

Substituting into the dot-product alignment ``a_st = h^E_s . h^D_t`` splits it
into nine products, :func:`alignment_terms` (keys encoder-part_decoder-part,
e.g. ``temp_inp = mu^E_s . chi^D_t``), which sum to the full alignment.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .models import Trace
from .tasks import Seq2SeqData

__all__ = [
    "Components",
    "PARTS",
    "TERM_NAMES",
    "first_pad_mask",
    "decompose",
    "decompose_encoder",
    "decompose_decoder",
    "alignment_terms",
]

PARTS = ("temp", "inp", "del")
#: The nine alignment terms, encoder part first: ``temp_inp = mu^E . chi^D``.
TERM_NAMES = tuple(f"{e}_{d}" for e in PARTS for d in PARTS)
TEMPORAL_TEMPORAL = "temp_temp"


@dataclass
class Components:
    """``states = mu[t] + chi[labels] + delta`` for one side (encoder or decoder).

    states  ``(E, B, L, n)``; mu ``(E, L, n)``; chi ``(E, K, n)``;
    labels  ``(E, B, L)`` class of each state (index into chi);
    valid   ``(E, B, L)`` states that entered the averages (no repeated pads);
    delta   ``(E, B, L, n)``; label_names: K names; side: "encoder"/"decoder".
    """

    states: torch.Tensor
    mu: torch.Tensor
    chi: torch.Tensor
    labels: torch.Tensor
    valid: torch.Tensor
    delta: torch.Tensor
    label_names: list
    side: str = ""

    @property
    def temporal(self) -> torch.Tensor:
        """``mu_t`` broadcast to every sample: ``(E, 1, L, n)``."""
        return self.mu.unsqueeze(1)

    @property
    def input_delta(self) -> torch.Tensor:
        """``chi`` of each state's label: ``(E, B, L, n)``."""
        E, B, L = self.labels.shape
        idx = self.labels.reshape(E, B * L, 1).expand(E, B * L, self.chi.shape[-1])
        return torch.gather(self.chi, 1, idx).reshape(E, B, L, -1)

    def reconstruct(self) -> torch.Tensor:
        return self.temporal + self.input_delta + self.delta

    def parts(self) -> dict:
        return {"temp": self.temporal, "inp": self.input_delta, "del": self.delta}


def first_pad_mask(tokens: torch.Tensor, pad: int) -> torch.Tensor:
    """True where the token is not ``<pad>`` or the previous one is not (keeps the EOS)."""
    not_pad = tokens != pad
    keep = not_pad.clone()
    keep[..., 1:] |= not_pad[..., :-1]
    keep[..., 0] = True
    return keep


def decompose(states: torch.Tensor, labels: torch.Tensor, valid: torch.Tensor, n_labels: int,
              label_names=None, side: str = "") -> Components:
    """The decomposition of ``states (E, B, L, n)`` given per-state labels and validity.

    ``mu_t`` averages the valid states at step t; ``chi_k`` averages ``h - mu`` over
    valid states labelled k; averages over an empty set are zero. ``delta`` is
    the exact remainder at every position (valid or not).
    """
    E, B, L, n = states.shape
    labels = labels.expand(E, B, L).long()
    valid = valid.expand(E, B, L)
    w = valid.to(states.dtype).unsqueeze(-1)
    # temporal component mu_t: the mean over samples (axis 1) of the valid states at each step t
    count_t = w.sum(1)  # (E, L, 1)
    mu = (states * w).sum(1) / count_t.clamp_min(1)
    # input-delta component chi_k: the mean of h - mu over the valid states labelled k, at any step
    centred = states - mu.unsqueeze(1)
    flat = (centred * w).reshape(E, B * L, n)
    idx = labels.clamp(0, n_labels - 1).reshape(E, B * L, 1)
    sums = torch.zeros(E, n_labels, n, dtype=states.dtype).scatter_add_(1, idx.expand(E, B * L, n), flat)
    counts = torch.zeros(E, n_labels, 1, dtype=states.dtype).scatter_add_(1, idx, w.reshape(E, B * L, 1))
    chi = sums / counts.clamp_min(1)
    names = list(label_names or range(n_labels))
    comp = Components(states, mu, chi, labels.clamp(0, n_labels - 1), valid, torch.zeros(()), names, side)
    # residual delta: whatever is left, so that mu + chi + delta = h holds exactly for every state
    comp.delta = states - comp.temporal - comp.input_delta
    return comp


def _members(t: torch.Tensor, E: int, dims: int) -> torch.Tensor:
    if t.dim() == dims:
        t = t.unsqueeze(0)
    return t.expand(E, *t.shape[1:])


def decompose_encoder(trace: Trace, data: Seq2SeqData) -> Components:
    """Encoder states split by step (mu^E_s) and input word (chi^E_x)."""
    E = trace.encoder_states.shape[0]
    tokens = _members(data.inputs, E, 2)
    valid = first_pad_mask(tokens, data.in_vocab.pad)
    return decompose(trace.encoder_states, tokens, valid, len(data.in_vocab), data.in_vocab.tokens, "encoder")


def decompose_decoder(trace: Trace, data: Seq2SeqData) -> Components:
    """Decoder states split by step (mu^D_t) and decoder input (chi^D_y; ``<BoS>`` at t = 0)."""
    E = trace.decoder_states.shape[0]
    targets = _members(data.targets, E, 2)
    valid = first_pad_mask(targets, data.out_vocab.pad)
    V = len(data.out_vocab)
    inputs = trace.decoder_inputs
    labels = torch.where(inputs < 0, torch.full_like(inputs, V), inputs)  # -1 (start) becomes the <BoS> class
    names = list(data.out_vocab.tokens) + ["<BoS>"]
    return decompose(trace.decoder_states, labels, valid, V + 1, names, "decoder")


def alignment_terms(enc: Components, dec: Components, attention=None) -> dict:
    """The nine products ``part^E_s . part^D_t``, each ``(E, B, T, S)``; they sum to the alignment.

    ``attention`` (optional) supplies ``project_keys`` / ``project_queries`` (linear
    maps applied to encoder / decoder vectors before the dot product, e.g. W_K
    and W_Q for learned attention) and ``scale``; the default is the plain dot
    product of the paper's AED and AO.
    """
    pk = getattr(attention, "project_keys", None) or (lambda v: v)
    pq = getattr(attention, "project_queries", None) or (lambda v: v)
    scale = float(getattr(attention, "scale", 1.0))
    ep = {k: pk(v) for k, v in enc.parts().items()}
    dp = {k: pq(v) for k, v in dec.parts().items()}
    E, B = enc.states.shape[:2]
    T, S = dec.states.shape[2], enc.states.shape[2]
    out = {}
    for e_name in PARTS:
        for d_name in PARTS:
            term = torch.einsum("ebtn,ebsn->ebts", dp[d_name], ep[e_name]) * scale
            out[f"{e_name}_{d_name}"] = term.expand(E, B, T, S)
    return out
