"""How attention leaves the diagonal on eSCAN (Figures 5 and 6), from the decomposition.

eSCAN's output lags its input after every "and" (which emits nothing), swaps
order around "left" and repeats the verb for "twice", so the word a decoder step
must read is often not at its own index. The functions here ask where the
temporal components alone would put the attention and what the input components add:

* :func:`temporal_offset`: the temporal-temporal alignment ``D_ts = mu^E_s . mu^D_t``
  by offset ``s - t`` and where it peaks, beside the data's average source offset;
  :func:`offset_stats` turns it into one number per network;
* :func:`word_temporal_offset`: each input word's non-temporal part against the
  decoder's temporal component at nearby steps (the development code's
  ``enc_word_dec_temp``);
* :func:`word_read_offsets` / :func:`word_offset_table`: for every input word, where the decoder
  actually reads it (from the grammar) beside the offset at which its pull is largest;
* :func:`dot_decomposition_example`: one sample's alignment split into temporal and input parts;
* :func:`source_agreement`: how often the attention, the temporal-only attention and the
  temporal + input attention land on the true source word;
* :func:`diagonal_share`: how often the attention's argmax is the diagonal s = t.

Every result carries the ensemble axis first: one value per network.
"""

from __future__ import annotations

import math

import torch

from .analysis import Analysis
from .escan import ESCAN, find_scan_offset, source_offset
from .metrics import attention_argmax_agreement
from .models import MASK_SCORE

__all__ = ["temporal_offset", "offset_stats", "word_temporal_offset", "word_read_offsets",
           "word_offset_table", "pick_example", "dot_decomposition_example", "interesting_steps",
           "source_agreement", "diagonal_share"]


def temporal_offset(a: Analysis, min_count: int = 10) -> dict:
    """The temporal-component offset of one analysed ensemble.

    ``D_ts = mu^E_s . mu^D_t`` averaged over members, restricted to steps with at
    least ``min_count`` samples in the averages (rare long positions make noisy
    means). Per decoder step t: ``softmax_s`` and its min-max normalisation (the
    ridge plot), and the argmax offset ``s* - t`` (ensemble mean and per member).
    ``avg_offset_input`` is the dataset curve by input index (``find_scan_offset``),
    ``avg_offset_output`` the ground-truth source offset by decoder step.
    """
    enc, dec = a.enc, a.dec
    s_ok = enc.valid[0].sum(0) >= min_count  # (S,)
    t_ok = dec.valid[0].sum(0) >= min_count  # (T,)
    D_members = torch.einsum("etn,esn->ets", dec.mu, enc.mu)  # (E, T, S)
    D = D_members.mean(0)
    Dm = D.masked_fill(~s_ok[None, :], -math.inf)
    soft = torch.softmax(Dm, -1)
    lo = soft.masked_fill(~s_ok[None, :], math.inf).min(-1, keepdim=True).values
    hi = soft.max(-1, keepdim=True).values
    normed = ((soft - lo) / (hi - lo).clamp_min(1e-12)).masked_fill(~s_ok[None, :], math.nan)
    T = D.shape[0]
    t_idx = torch.arange(T)
    arg = Dm.argmax(-1) - t_idx
    arg_m = D_members.masked_fill(~s_ok[None, None, :], -math.inf).argmax(-1) - t_idx  # (E, T)
    # the 80 % mass window (a variant in the development code): the fewest positions holding 80 %
    spread = []
    for t in range(T):
        p, idx = soft[t].sort(descending=True)
        k = int((p.cumsum(0) < 0.8).sum()) + 1
        pos = idx[:k].double() - t
        spread.append((float(pos.mean()), float(pos.std()) if k > 1 else 0.0))
    data = a.data
    out = {
        "D": D, "softmax": soft, "normalised": normed, "s_ok": s_ok, "t_ok": t_ok,
        "argmax_offset": arg.double().masked_fill(~t_ok, math.nan),
        "argmax_offset_members": arg_m.double().masked_fill(~t_ok[None, :], math.nan),
        "mass80_mean": torch.tensor([m for m, _ in spread]).masked_fill(~t_ok, math.nan),
        "mass80_sd": torch.tensor([s for _, s in spread]).masked_fill(~t_ok, math.nan),
    }
    if "expected_source" in data.meta:  # eSCAN knows each output's source word; English-French does not
        out["avg_offset_output"] = source_offset(data).masked_fill(~t_ok, math.nan)
    if data.in_vocab.tokens == ESCAN().in_vocab.tokens:
        out["avg_offset_input"] = find_scan_offset(data.inputs, data.in_index)
    return out


def offset_stats(off: dict) -> dict:
    """One number per network ``(E,)`` from :func:`temporal_offset`, over the well-sampled decoder steps.

    ``early`` / ``late``: mean argmax offset over the first / last quarter of the
    steps (at least two each); ``gap``: mean |argmax offset - the data's average
    source offset| over all steps (NaN without a known source).
    """
    ok = off["t_ok"]
    arg = off["argmax_offset_members"][:, ok]  # (E, T_ok)
    k = max(2, arg.shape[1] // 4)
    out = {"early": arg[:, :k].mean(-1), "late": arg[:, -k:].mean(-1)}
    if "avg_offset_output" in off:
        out["gap"] = (arg - off["avg_offset_output"][ok]).abs().mean(-1)
    else:
        out["gap"] = torch.full((arg.shape[0],), math.nan, dtype=torch.float64)
    return out


def word_temporal_offset(a: Analysis, b_off: int = 2, f_off: int = 4) -> dict:
    """Encoder word against decoder temporal component.

    Per input word w and offset o = t - s in [-b_off, f_off], the mean of
    ``(h^E_s - mu^E_s) . mu^D_{s+o}`` over samples and positions with ``x_s = w``
    and ``b_off <= s < min(S, T) - f_off`` (input + residual, as in the code).

    Returns ``values`` ``(E, K, O)`` (NaN where the word never occurs), ``offsets``, ``words``.
    """
    enc, dec = a.enc, a.dec
    E, B, S, n = enc.states.shape
    T = dec.states.shape[2]
    offsets = list(range(-b_off, f_off + 1))
    dev = enc.states - enc.temporal  # (E, B, S, n)
    tokens = enc.labels  # (E, B, S)
    K = enc.chi.shape[1]
    s_range = range(b_off, min(S, T) - f_off)
    vals = torch.full((E, K, len(offsets)), math.nan, dtype=dev.dtype)
    for j, o in enumerate(offsets):
        num = torch.zeros(E, K, dtype=dev.dtype)
        cnt = torch.zeros(E, K, dtype=dev.dtype)
        for s in s_range:
            d = torch.einsum("ebn,en->eb", dev[:, :, s], dec.mu[:, s + o])  # (E, B)
            w = enc.valid[:, :, s].to(dev.dtype)
            num.scatter_add_(1, tokens[:, :, s], d * w)
            cnt.scatter_add_(1, tokens[:, :, s], w)
        vals[:, :, j] = torch.where(cnt > 0, num / cnt.clamp_min(1), torch.full_like(num, math.nan))
    return {"values": vals, "offsets": offsets, "words": list(enc.label_names)}


def word_read_offsets(a: Analysis) -> dict:
    """Where the decoder reads each input word: the mean offset ``o = t - s*`` over every output step t
    whose true source ``s*`` holds that word (eSCAN's ground truth; the same for every network).

    Returns ``{word: (mean offset, number of reads)}``; a word that is never read (eSCAN's "and")
    has ``(nan, 0)``. Same sign convention as :func:`word_temporal_offset`: a negative offset means
    the word is read by an earlier decoder step than its own index.
    """
    data = a.data
    source = data.meta["expected_source"]  # (B, T), -1 where there is no source
    t = torch.arange(source.shape[-1]).expand_as(source)
    rows = data.target_valid & (source >= 0)
    word = torch.gather(data.inputs, -1, source.clamp(min=0))
    out = {}
    for k, name in enumerate(data.in_vocab.tokens):
        hit = rows & (word == k)
        n = int(hit.sum())
        out[name] = (float((t - source)[hit].double().mean()) if n else math.nan, n)
    return out


def word_offset_table(wdt: dict, read: dict, words=None):
    """One row per input word: ``W_x(o)`` at every offset (mean over networks), the offset where it
    peaks (mean +- sd over networks) and where the decoder reads the word (:func:`word_read_offsets`).

    ``wdt`` is a :func:`word_temporal_offset` result; ``words`` picks and orders the rows.
    """
    import pandas as pd

    from .. import stats

    vals = wdt["values"]  # (E, K, O)
    names = wdt["words"]
    rows = {}
    for w in words or names:
        v = vals[:, names.index(w)]
        if not torch.isfinite(v).all():
            continue
        peak = torch.tensor(wdt["offsets"])[v.argmax(-1)].double()
        row = {f"o={o:+d}": float(v[:, j].mean()) for j, o in enumerate(wdt["offsets"])}
        row["peak offset"] = stats.summary(peak.numpy(), "{:.1f}")
        mean, n = read.get(w, (math.nan, 0))
        row["read at offset"] = f"{mean:+.2f}" if n else "never read"
        rows[w] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def pick_example(a: Analysis, need=("and", "left", "twice")) -> int:
    """The first analysis sample that contains every word in ``need`` (else the one with most of them)."""
    vocab = a.data.in_vocab.tokens
    ids = [vocab.index(w) for w in need if w in vocab]
    best, best_n = 0, -1
    for i in range(len(a.data)):
        row = a.data.inputs[i, : int(a.data.in_index[i])]
        n_have = sum(int((row == k).any()) for k in ids)
        if n_have == len(ids):
            return i
        if n_have > best_n:
            best, best_n = i, n_have
    return best


def dot_decomposition_example(a: Analysis, sample: int, member: int = 0) -> dict:
    """One sample's alignment split into temporal and input parts.

    Per decoder step t and encoder step s (valid ones), the full alignment and its split
    into ``mu^E.mu^D``, ``mu^E.(h-mu)^D``, ``(h-mu)^E.mu^D`` and
    ``(h-mu)^E.(h-mu)^D`` (here "input" = input-delta + residual, as in the code)."""
    e, i = member, sample
    L_in, L_out = int(a.data.in_index[i]), int(a.data.out_index[i])
    hE, hD = a.enc.states[e, i, : L_in + 1], a.dec.states[e, i, : L_out + 1]
    mE, mD = a.enc.mu[e, : L_in + 1], a.dec.mu[e, : L_out + 1]
    iE, iD = hE - mE, hD - mD
    full = a.trace.alignment[e, i, : L_out + 1, : L_in + 1]
    parts = {
        "temp_temp": mD @ mE.T,
        "temp_inp": iD @ mE.T,  # encoder temporal . decoder input
        "inp_temp": mD @ iE.T,  # encoder input . decoder temporal
        "inp_inp": iD @ iE.T,
    }
    return {
        "full": full, **parts, "attention": a.trace.attention[e, i, : L_out + 1, : L_in + 1],
        "inputs": a.data.in_vocab.decode(a.data.inputs[i, : L_in + 1]),
        "targets": a.data.out_vocab.decode(a.data.targets[i, : L_out + 1]),
        "expected": (a.data.meta["expected_source"][i, : L_out + 1] if "expected_source" in a.data.meta
                     else None),
    }


def interesting_steps(ex: dict, k: int = 3) -> list[int]:
    """Up to ``k`` decoder steps of a :func:`dot_decomposition_example` whose source word is off the
    diagonal, spread over the sequence (falls back to the first steps)."""
    exp = ex.get("expected")
    if exp is None:
        return list(range(min(k, len(ex["targets"]))))
    off = [t for t in range(len(exp)) if int(exp[t]) >= 0 and int(exp[t]) != t]
    if not off:
        return list(range(min(k, len(exp))))
    pick = [off[round(j * (len(off) - 1) / max(k - 1, 1))] for j in range(min(k, len(off)))]
    return sorted(set(pick))


def source_agreement(a: Analysis) -> dict:
    """How often the attention's argmax hits the ground-truth source word, per member ``(E,)``.

    ``full``: the network's attention; ``temporal``: ``softmax(mu^E . mu^D)``;
    ``temporal_input``: the alignment rebuilt from ``mu + chi`` on both sides (no
    residual); each also on the *off-diagonal* rows only (source != t). On eSCAN
    the second action of "U twice" counts as found at "twice" or at the verb.
    """
    data, trace, enc, dec = a.data, a.trace, a.enc, a.dec
    E = trace.attention.shape[0]
    expected = data.meta["expected_source"].expand(E, *data.meta["expected_source"].shape)
    t = torch.arange(expected.shape[-1])
    rows = data.target_valid.expand(E, *data.target_valid.shape) & (expected >= 0)
    off = rows & (expected != t)
    valid = trace.input_valid.unsqueeze(-2)
    pk = getattr(a.model.attn, "project_keys", lambda v: v)
    pq = getattr(a.model.attn, "project_queries", lambda v: v)
    scale = float(getattr(a.model.attn, "scale", 1.0))
    tt = scale * torch.einsum("etk,esk->ets", pq(dec.mu), pk(enc.mu)).unsqueeze(1)
    ti = scale * torch.einsum("ebtk,ebsk->ebts", pq(dec.temporal + dec.input_delta),
                              pk(enc.temporal + enc.input_delta))
    # eSCAN: the repeated verb of "U twice" can be read at the verb as well as at "twice"; both count
    alt = expected
    if "twice" in data.in_vocab.tokens:
        tok = torch.gather(data.inputs.expand(E, *data.inputs.shape), -1, expected.clamp(min=0))
        alt = torch.where((expected > 0) & (tok == data.in_vocab.index("twice")), expected - 1, expected)
    out = {}
    scores = {"full": trace.alignment, "temporal": tt.expand_as(trace.alignment), "temporal_input": ti}
    for name, score in scores.items():
        arg = score.masked_fill(~valid, MASK_SCORE).argmax(-1)
        hit = (arg == expected) | (arg == alt)
        out[name] = (hit & rows).sum((1, 2)).double() / rows.sum((1, 2)).clamp_min(1)
        out[name + "_offdiag"] = (hit & off).sum((1, 2)).double() / off.sum((1, 2)).clamp_min(1)
    out["offdiag_share"] = off.sum((1, 2)).double() / rows.sum((1, 2)).clamp_min(1)
    return out


def diagonal_share(a: Analysis) -> torch.Tensor:
    """Share of decoder rows whose attention argmax is the encoder step s = t, per network ``(E,)``.

    Only rows with a valid output token and t inside the input (t <= the EOS index) count.
    """
    data = a.data
    T = data.targets.shape[1]
    t = torch.arange(T).expand(len(data), T)
    expected = torch.where(t <= data.in_index.unsqueeze(-1), t, torch.full_like(t, -1))
    return attention_argmax_agreement(a.trace.attention, expected, data)
