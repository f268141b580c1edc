"""Beyond one-to-one: eSCAN and English->French ensembles, and the analyses of Figures 5 and 6.

Why: on one-to-one translation the correct attention is the diagonal, which the
temporal components alone can produce. Aitken et al. contrast this with eSCAN
and English->French, where attention stays close to the diagonal but must
move by input-dependent amounts [SUM-bohrium]. This module trains those
networks (through :func:`companion.aitken2021.train.trained_ensemble`, i.e.
one batched program per ensemble, cached) and computes what Figures 5 and 6
show:

* the cross-task comparison: term fractions (M1), average-attention
  substitution (M2a) and their rank correlation across (architecture, task);
* M4, the temporal-component offset: ``D_ts = mu^E_s . mu^D_t`` (mean over
  networks), its argmax offset ``s* - t`` against the decoder step, and the
  dataset's average offset (:func:`companion.aitken2021.escan.find_scan_offset`
  by input index; :func:`~companion.aitken2021.escan.source_offset` by decoder step);
* M7, encoder word against decoder temporal component as a function of the offset;
* P-dotdec, the per-sample split of the alignment around an off-diagonal step;
* the mechanism check: how often the argmax of the full attention, of the
  temporal-only attention, and of the temporal + input-delta attention hit
  the ground-truth source word (``meta["expected_source"]``);
* English->French evaluation on the held-out split: greedy word / phrase
  accuracy, teacher-forced token accuracy, corpus BLEU (sacrebleu), and the
  input/readout alignment on a co-occurrence (Dice) dictionary.

Settings come from a chapter's :class:`companion.config.Settings`; every
parameter name used here is listed in :data:`PARAMS` with its meaning, and the
chapters fig5, fig6 and tab-accuracy-beyond share them (same values -> same
cache entries, so each ensemble is trained once per book build).
"""

from __future__ import annotations

import collections
import math
from collections.abc import Mapping, Sequence

import torch

from .. import cache
from .. import progress as _progress
from ..device import train_threads
from . import metrics as M
from .analysis import Analysis, _get, analyse, mean_sd
from .decompose import TERM_NAMES, decompose_decoder, decompose_encoder
from .enfr import EnFrTask, decode, detokenize
from .escan import ESCAN, find_scan_offset, source_offset
from .models import MASK_SCORE
from .train import TrainConfig, TrainedEnsemble, trained_ensemble

__all__ = [
    "PARAMS", "escan_ensemble", "enfr_task", "enfr_ensemble", "analyse_enfr",
    "beyond_ensembles", "beyond_analyses", "temporal_offset", "word_temporal_offset",
    "dot_decomposition_example", "pick_example", "source_agreement", "enfr_scores", "dice_dictionary",
    "readout_rank", "group_fractions", "comparison_rows", "spearman", "ESCAN_PAIRS",
]

#: Chapter parameters this module reads, with their meaning.
PARAMS = {
    "seed": "first seed of every ensemble (members: seed, seed+1, ...)",
    "escan_seeds": "eSCAN ensemble size per architecture",
    "escan_steps_aed": "training steps, AED on eSCAN",
    "escan_steps_ao": "training steps, AO on eSCAN",
    "enfr_seeds": "English-French ensemble size per architecture",
    "enfr_steps": "training steps, English-French",
    "enfr_train": "training pairs drawn from the corpus (null: all)",
    "enfr_test": "held-out pairs used for evaluation and analysis (null: all)",
    "enfr_max_len": "longest sentence kept (tokens, both sides)",
    "n_analysis": "eSCAN sequences in the analysis set",
    "data_path": "English-French pairs file (null: ../shared/data/en_fr/pairs.tsv)",
}

ESCAN_L2 = 1e-4  # [CODE] eSCAN AED and AO
ENFR_L2 = 1e-4  # [REC] as eSCAN
AO_ESCAN_OPTIONS = {"emb_dim": 100, "pe_tau": 100.0}  # [CODE] one-hot padded to 100, PE time scale 100
ENFR_OPTIONS = {"embedding": "learned", "emb_dim": 128}  # [REC] note A4: a learned 128-d embedding for En-Fr only
ENFR_AO_OPTIONS = {**ENFR_OPTIONS, "pe_tau": 100.0}  # [REC]
ENFR_SPLIT_SEED = 0  # the train/test split is fixed; network seeds vary
#: eSCAN (input word, output word) translation pairs for the readout alignment
ESCAN_PAIRS = (("run", "I_RUN"), ("walk", "I_WALK"), ("jump", "I_JUMP"), ("left", "I_TURN_LEFT"), ("<.>", "<.>"))


# --------------------------------------------------------------------------------------
# ensembles
# --------------------------------------------------------------------------------------
def escan_ensemble(S: Mapping, arch: str) -> TrainedEnsemble:
    """AED or AO on eSCAN: seeds ``seed..seed+escan_seeds-1``, trained as one program, cached."""
    steps = int(_get(S, "escan_steps_aed" if arch == "AED" else "escan_steps_ao", 2000))
    train = TrainConfig(steps=steps, l2=ESCAN_L2, dataset_batches=min(steps, int(_get(S, "dataset_batches", 1000))),
                        n_test=int(_get(S, "n_test", 1000)))
    with train_threads():
        ens = trained_ensemble(arch, ESCAN(), seed=int(_get(S, "seed", 1)), n_seeds=int(_get(S, "escan_seeds", 2)),
                               train=train, model_options=AO_ESCAN_OPTIONS if arch == "AO" else None,
                               progress=_progress.progress)
    ens.model.requires_grad_(False)  # analysis only from here on
    return ens


def enfr_task(S: Mapping) -> EnFrTask:
    """The English-French task of a chapter's settings (fixed split seed; subset sizes from settings)."""
    n_train, n_test = _get(S, "enfr_train"), _get(S, "enfr_test")
    return EnFrTask(data_path=_get(S, "data_path"), seed=ENFR_SPLIT_SEED, max_len=int(_get(S, "enfr_max_len", 10)),
                    n_train=None if n_train is None else int(n_train), n_test=None if n_test is None else int(n_test))


def enfr_ensemble(S: Mapping, arch: str) -> TrainedEnsemble:
    """AED or AO on English-French with a learned embedding, cached.

    The ``test`` numbers stored by the trainer come from ``task.sample`` (training
    pairs); use :func:`enfr_scores` for the held-out split.
    """
    task = enfr_task(S)
    steps = int(_get(S, "enfr_steps", 2000))
    train = TrainConfig(steps=steps, l2=ENFR_L2, dataset_batches=min(steps, 1000), n_test=256)
    with train_threads():
        ens = trained_ensemble(arch, task, seed=int(_get(S, "seed", 1)), n_seeds=int(_get(S, "enfr_seeds", 1)),
                               train=train, model_options=ENFR_AO_OPTIONS if arch == "AO" else ENFR_OPTIONS,
                               progress=_progress.progress)
    ens.model.requires_grad_(False)  # analysis only from here on
    return ens


@torch.no_grad()
def analyse_enfr(ens: TrainedEnsemble, task: EnFrTask) -> Analysis:
    """Greedy pass over the held-out split and its decomposition (as :func:`analysis.analyse`)."""
    data = task.test_set()
    with train_threads():
        trace = ens.model(data, mode="greedy")
    return Analysis(ens, data, trace, decompose_encoder(trace, data), decompose_decoder(trace, data))


def beyond_ensembles(S: Mapping, tasks=("eSCAN", "En-Fr"), archs=("AED", "AO")) -> dict:
    """``{(task, arch): TrainedEnsemble}`` for the requested tasks."""
    out = {}
    for task in tasks:
        for arch in archs:
            out[(task, arch)] = escan_ensemble(S, arch) if task == "eSCAN" else enfr_ensemble(S, arch)
    return out


def beyond_analyses(S: Mapping, ensembles: Mapping) -> dict:
    """``{(task, arch): Analysis}``: eSCAN on ``n_analysis`` fresh sequences, En-Fr on the held-out split."""
    out = {}
    for (task, arch), ens in ensembles.items():
        if task == "eSCAN":
            with train_threads():
                out[(task, arch)] = analyse(ens, n=int(_get(S, "n_analysis", 1000)), seed=int(_get(S, "seed", 1)))
        else:
            out[(task, arch)] = analyse_enfr(ens, ens.task)
    return out


# --------------------------------------------------------------------------------------
# M4: temporal-component offset
# --------------------------------------------------------------------------------------
def temporal_offset(a: Analysis, min_count: int = 10) -> dict:
    """M4 on one analysed ensemble.

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
    lo, hi = soft.masked_fill(~s_ok[None, :], math.inf).min(-1, keepdim=True).values, soft.max(-1, keepdim=True).values
    normed = ((soft - lo) / (hi - lo).clamp_min(1e-12)).masked_fill(~s_ok[None, :], math.nan)
    T = D.shape[0]
    t_idx = torch.arange(T)
    arg = Dm.argmax(-1) - t_idx
    arg_m = D_members.masked_fill(~s_ok[None, None, :], -math.inf).argmax(-1) - t_idx  # (E, T)
    # the 80 % mass window (note's variant): smallest set of positions holding >= 80 % of the softmax
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
        "avg_offset_output": source_offset(data).masked_fill(~t_ok, math.nan),
    }
    if data.in_vocab.tokens == ESCAN().in_vocab.tokens:
        out["avg_offset_input"] = find_scan_offset(data.inputs, data.in_index)
    return out


def offset_tracking(off: dict) -> dict:
    """Does the argmax offset rise with t and follow the dataset's offset? Numbers for the M4 claim."""
    ok = off["t_ok"]
    t = torch.arange(len(ok))[ok].double()
    arg = off["argmax_offset"][ok]
    ref = off["avg_offset_output"][ok]
    n = int(ok.sum())
    k = max(2, n // 4)
    return {
        "spearman_t": spearman(t, arg),
        "rise": float(arg[-k:].mean() - arg[:k].mean()),
        "ref_rise": float(ref[-k:].mean() - ref[:k].mean()),
        "mean_abs_diff": float((arg - ref).abs().mean()),
        "corr_with_ref": spearman(arg, ref),
    }


# --------------------------------------------------------------------------------------
# M7 and P-dotdec
# --------------------------------------------------------------------------------------
def word_temporal_offset(a: Analysis, b_off: int = 2, f_off: int = 4) -> dict:
    """M7: per input word w and offset o = t - s in [-b_off, f_off], the mean of
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
    """P-dotdec for one sample: per decoder step t and encoder step s (valid ones), the full
    alignment and its split into ``mu^E.mu^D``, ``mu^E.(h-mu)^D``, ``(h-mu)^E.mu^D`` and
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
        "expected": a.data.meta["expected_source"][i, : L_out + 1] if "expected_source" in a.data.meta else None,
    }


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
    ti = scale * torch.einsum("ebtk,ebsk->ebts", pq(dec.temporal + dec.input_delta), pk(enc.temporal + enc.input_delta))
    # eSCAN: the repeated verb of "U twice" can be read at the verb as well as at "twice"; both count
    alt = expected
    if "twice" in data.in_vocab.tokens:
        tok = torch.gather(data.inputs.expand(E, *data.inputs.shape), -1, expected.clamp(min=0))
        alt = torch.where((expected > 0) & (tok == data.in_vocab.index("twice")), expected - 1, expected)
    out = {}
    for name, score in (("full", trace.alignment), ("temporal", tt.expand_as(trace.alignment)), ("temporal_input", ti)):
        arg = score.masked_fill(~valid, MASK_SCORE).argmax(-1)
        hit = (arg == expected) | (arg == alt)
        out[name] = (hit & rows).sum((1, 2)).double() / rows.sum((1, 2)).clamp_min(1)
        out[name + "_offdiag"] = (hit & off).sum((1, 2)).double() / off.sum((1, 2)).clamp_min(1)
    out["offdiag_share"] = off.sum((1, 2)).double() / rows.sum((1, 2)).clamp_min(1)
    return out


# --------------------------------------------------------------------------------------
# English-French: scores and a dictionary for the readout alignment
# --------------------------------------------------------------------------------------
@torch.no_grad()
def enfr_scores(a: Analysis) -> dict:
    """Held-out scores per member: greedy word / phrase accuracy (valid positions),
    teacher-forced token accuracy, and corpus BLEU (sacrebleu, on our tokens,
    ``tokenize="none"``; unknown words in the output never match the reference)."""
    import sacrebleu

    data = a.data
    word, phrase = M.accuracy_from_logits(a.trace.predictions, data)
    with train_threads():
        tf = a.model(data, mode="teacher")
    tf_word, _ = M.accuracy_from_logits(tf.predictions, data)
    refs = [" ".join(f) for _, f in a.ensemble.task.corpus.test_tokens]
    bleu = []
    for e in range(a.trace.predictions.shape[0]):
        hyps = [" ".join(decode(data.out_vocab, row)) for row in a.trace.predictions[e]]
        bleu.append(sacrebleu.corpus_bleu(hyps, [refs], tokenize="none", force=True).score)
    return {"word": word, "phrase": phrase, "teacher_word": tf_word, "bleu": torch.tensor(bleu, dtype=torch.float64)}


def example_translations(a: Analysis, k: int = 5, member: int = 0) -> list[tuple[str, str, str]]:
    """``k`` held-out (English, reference, ours) triples, detokenised."""
    out = []
    task = a.ensemble.task
    for i in range(min(k, len(a.data))):
        en, fr = task.corpus.test_tokens[i]
        hyp = decode(a.data.out_vocab, a.trace.predictions[member, i])
        out.append((detokenize(en, "en"), detokenize(fr), detokenize(hyp)))
    return out


def dice_dictionary(task: EnFrTask, n_words: int = 40, min_dice: float = 0.3) -> list[tuple[str, str, float]]:
    """A word dictionary from sentence co-occurrence in the training pairs (our construction).

    For each of the ``n_words`` most frequent English word tokens (punctuation
    left out), the French word with the largest Dice coefficient
    ``2 c(x, y) / (c(x) + c(y))`` over sentence pairs; pairs below ``min_dice`` are
    dropped. Used only to pick (input, output) pairs for the input/readout alignment.
    """
    pairs = task.corpus.train_tokens
    ce, cf, cef = collections.Counter(), collections.Counter(), collections.Counter()
    for en, fr in pairs:
        se, sf = set(en), set(fr)
        ce.update(se)
        cf.update(sf)
        cef.update((x, y) for x in se for y in sf)
    words = [w for w, _ in ce.most_common() if any(ch.isalnum() for ch in w)][:n_words]
    best = {}
    for (x, y), c in cef.items():
        if x in words and any(ch.isalnum() for ch in y):
            d = 2 * c / (ce[x] + cf[y])
            if d > best.get(x, ("", 0.0))[1]:
                best[x] = (y, d)
    return [(x, best[x][0], best[x][1]) for x in words if x in best and best[x][1] >= min_dice]


def readout_rank(a: Analysis, pairs) -> dict:
    """For (input word, output word) pairs: the rank (0 = best) of the output word's readout row
    among all output rows by angle to ``chi^E`` of the input word, per member ``(E, P)``;
    and the angle itself. Input words without states in the analysis set are dropped."""
    iv, ov = a.data.in_vocab, a.data.out_vocab
    ang = a.readout_alignment["angle"].detach()  # (E, V_out, V_in)
    counts = (a.enc.labels[0][a.enc.valid[0]]).bincount(minlength=len(iv))
    keep = [(x, y) for x, y, *_ in pairs if x in iv.tokens and y in ov.tokens and counts[iv.index(x)] > 0]
    ranks, angles = [], []
    for x, y in keep:
        col = ang[:, :, iv.index(x)]  # (E, V_out)
        mine = col[:, ov.index(y)]
        ranks.append((col < mine[:, None]).sum(-1))
        angles.append(mine)
    if not keep:
        return {"pairs": [], "rank": torch.zeros(ang.shape[0], 0), "angle": torch.zeros(ang.shape[0], 0)}
    return {"pairs": keep, "rank": torch.stack(ranks, -1), "angle": torch.stack(angles, -1)}


# --------------------------------------------------------------------------------------
# cross-task comparison
# --------------------------------------------------------------------------------------
def group_fractions(a: Analysis) -> dict:
    """M1 fractions (mean over t) grouped: temporal-temporal, the three input terms, the residual terms ``(E,)``."""
    m = a.term_fractions["mean"]  # (E, 9)
    idx = {n: k for k, n in enumerate(TERM_NAMES)}
    return {
        "temp_temp": m[:, idx["temp_temp"]],
        "input_terms": m[:, idx["temp_inp"]] + m[:, idx["inp_temp"]] + m[:, idx["inp_inp"]],
        "delta_terms": sum(m[:, idx[n]] for n in TERM_NAMES if "del" in n),
    }


def spearman(x, y) -> float:
    """Spearman rank correlation (average ranks for ties); NaN if fewer than 3 finite pairs."""
    x, y = torch.as_tensor(x, dtype=torch.float64).flatten(), torch.as_tensor(y, dtype=torch.float64).flatten()
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


def _row(task: str, arch: str, a: Analysis) -> dict:
    g = group_fractions(a)
    aam = a.aam
    row = {"task": task, "arch": arch, "members": int(a.trace.attention.shape[0])}
    for name, v in (("word", a.accuracy["word"]), ("phrase", a.accuracy["phrase"]),
                    ("temp_temp", g["temp_temp"]), ("input_terms", g["input_terms"]), ("delta_terms", g["delta_terms"]),
                    ("aam_word", aam["substitution_word"]), ("aam_phrase", aam["substitution_phrase"]),
                    ("aam_argmax", aam["argmax_agreement"]), ("aam_tv", aam["tv_distance"]),
                    ("temporal_word", aam["temporal_word"])):
        m, s = mean_sd(v)
        row[name], row[name + "_sd"] = m, s
    return row


def comparison_rows(analyses: Mapping, key_config: Mapping | None = None) -> list[dict]:
    """One row per (task, arch): accuracy, grouped term fractions, AAM substitution (mean and sd).

    With ``key_config`` (everything that defines the ensembles and analysis sets)
    the rows go through :func:`companion.cache.cached`, so a chapter that reuses
    them (the accuracy table) reads them back.
    """
    def compute():
        return {"rows": [_row(t, arch, a) for (t, arch), a in analyses.items()]}

    if key_config is None:
        return compute()["rows"]
    return cache.cached("aitken2021-beyond-rows", dict(key_config), compute, scope=("aitken2021",))["rows"]


# --------------------------------------------------------------------------------------
# the one-to-one reference (shared with the Figure 2 / Figure 3 chapters)
# --------------------------------------------------------------------------------------
#: chapters whose settings define the one-to-one AED / AO ensembles; reusing them means the
#: comparison reads the very networks those chapters trained (same cache entries).
O2O_CHAPTERS = {"AED": "fig2", "AO": "fig3"}


def one_to_one_settings(S: Mapping, arch: str) -> Mapping:
    """The settings of the chapter that trains the one-to-one ``arch`` ensemble, under the same profile.

    Falls back to this chapter's ``o2o_steps`` / ``seed`` (one seed, default task) when
    that chapter is not configured.
    """
    from .. import config

    try:
        return config.resolve(O2O_CHAPTERS[arch], profile=getattr(S, "profile", None))
    except (config.ConfigError, KeyError):
        return {"seed": int(_get(S, "seed", 1)), "n_seeds": 1, "steps": int(_get(S, "o2o_steps", 1500))}


def one_to_one_analyses(S: Mapping, archs=("AED", "AO")) -> dict:
    """``{("one-to-one", arch): Analysis}`` of the one-to-one ensembles of Figures 2 and 3."""
    from .analysis import one_to_one_ensemble

    out = {}
    for arch in archs:
        S2 = one_to_one_settings(S, arch)
        with train_threads():
            ens = one_to_one_ensemble(S2, arch)
            out[("one-to-one", arch)] = analyse(ens, n=int(_get(S, "n_analysis", 1000)), seed=int(_get(S, "seed", 1)))
    return out


def ensemble_key(analyses: Mapping) -> dict:
    """Plain description of analysed ensembles (model, task, seeds, training) + analysis-set sizes,
    for cache keys of results derived from them."""
    return {f"{t}/{a}": {"model": an.ensemble.payload.get("model"), "task": an.ensemble.payload.get("task"),
                         "seeds": list(an.ensemble.seeds), "train": an.ensemble.payload.get("train"),
                         "n": len(an.data)}
            for (t, a), an in analyses.items()}


def ordered(rows: Sequence[dict], key: str, tasks=("one-to-one", "eSCAN", "En-Fr")) -> dict:
    """``{arch: [value per task in ``tasks`` order]}`` from comparison rows."""
    out: dict = {}
    for arch in sorted({r["arch"] for r in rows}):
        out[arch] = [next((r[key] for r in rows if r["arch"] == arch and r["task"] == t), math.nan) for t in tasks]
    return out


def strictly_decreasing(values) -> bool:
    v = [float(x) for x in values]
    return all(math.isfinite(x) for x in v) and all(a > b for a, b in zip(v, v[1:]))


def strictly_increasing(values) -> bool:
    return strictly_decreasing([-float(x) for x in values])


def available_tasks(S: Mapping) -> tuple[tuple[str, ...], str]:
    """``(tasks, note)``: eSCAN always; En-Fr only if its pairs file can be read.

    When the corpus is missing the En-Fr panels are marked *not reproduced*
    instead of being faked (reference note A15); ``note`` says why.
    """
    from .enfr import EnFrDataError

    try:
        enfr_task(S).corpus  # noqa: B018 - loads (and caches) the corpus
    except EnFrDataError as exc:
        return ("eSCAN",), f"English-French not reproduced: {exc}"
    return ("eSCAN", "En-Fr"), ""


def term_fraction(a: Analysis, name: str) -> torch.Tensor:
    """One M1 term fraction (mean over t) per member ``(E,)``."""
    return a.term_fractions["mean"][:, TERM_NAMES.index(name)]


def interesting_steps(ex: dict, k: int = 3) -> list[int]:
    """Up to ``k`` decoder steps of a P-dotdec example where the source word is off the diagonal,
    spread over the sequence (falls back to the first steps)."""
    exp = ex.get("expected")
    if exp is None:
        return list(range(min(k, len(ex["targets"]))))
    off = [t for t in range(len(exp)) if int(exp[t]) >= 0 and int(exp[t]) != t]
    if not off:
        return list(range(min(k, len(exp))))
    pick = [off[round(j * (len(off) - 1) / max(k - 1, 1))] for j in range(min(k, len(off)))]
    return sorted(set(pick))


def held_out_accuracy(S: Mapping, arch: str) -> dict:
    """English-French greedy word / phrase accuracy, teacher-forced token accuracy and BLEU on the
    held-out split, per member, cached (key: the ensemble's description)."""
    ens = enfr_ensemble(S, arch)
    task = ens.task
    key = {"model": ens.payload.get("model"), "task": ens.payload.get("task"), "seeds": list(ens.seeds),
           "train": ens.payload.get("train")}

    def compute():
        return {k: v for k, v in enfr_scores(analyse_enfr(ens, task)).items()}

    return cache.cached("aitken2021-enfr-heldout", key, compute, scope=("aitken2021/beyond", "aitken2021/enfr"))


def position_baseline(task: EnFrTask) -> float:
    """Word accuracy of the best input-blind guess: at each output position, the training split's
    most frequent target token there (EOS included). A floor for the held-out scores."""
    tr, te = task.corpus.train, task.corpus.test
    T = tr.targets.shape[-1]
    guess = torch.stack([torch.bincount(tr.targets[:, t][tr.target_valid[:, t]], minlength=len(tr.out_vocab)).argmax()
                         for t in range(T)])
    valid = te.target_valid
    return float(((te.targets == guess) & valid).sum() / valid.sum())
