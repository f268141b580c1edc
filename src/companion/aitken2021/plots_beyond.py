"""Panels for the beyond-one-to-one chapters (Figures 5, 6) and the learned-attention appendices.

One function per panel: the temporal-component offset (:func:`p_off`), encoder word
against decoder temporal component (:func:`p_wdt`; as a word x offset map, :func:`p_wdt_map`),
one sample's alignment split (:func:`p_dotdec`), the average-attention approximation across
tasks (:func:`p_aam`, :func:`p_groups`), word variance (:func:`p_wvar`), input/readout alignment
on a word list (:func:`p_ro_pairs`), source finding (:func:`p_source`), English->French scores
(:func:`p_enfr_scores`) and learned attention before/after its projections
(:func:`p_qkv_temporal`, :func:`p_qkv_values`). Each returns a matplotlib Figure;
colours follow :mod:`companion.aitken2021.plots`. Layouts are ours: the paper's figures
are reconstructed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
import torch

from .. import plotting
from .plots import ARCH_COLORS, COLORS, WORD_COLORS

plotting.set_theme()

__all__ = ["p_off", "p_wdt", "p_wdt_map", "p_dotdec", "p_aam", "p_groups", "p_wvar", "p_ro_pairs", "p_source",
           "p_qkv_temporal", "p_qkv_values", "p_enfr_scores"]

TASK_MARKERS = {"one-to-one": "o", "eSCAN": "s", "En-Fr": "^"}


def _np(t) -> np.ndarray:
    return torch.as_tensor(t).detach().double().cpu().numpy()


# --------------------------------------------------------------------------- temporal offset


def p_off(offsets: Mapping[str, dict], spacing: float = 1.2) -> plt.Figure:
    """Ridge plot of the normalised ``softmax_s(mu^E_s . mu^D_t)`` against ``s - t`` (one line per
    decoder step, later steps higher) with the dataset's average offset, and the argmax offset
    against t, per analysed ensemble (label -> :func:`.offdiagonal.temporal_offset`)."""
    n = len(offsets)
    fig, axes = plotting.new_figure(2, n, width=4.2, height=3.6, squeeze=False)
    for j, (label, off) in enumerate(offsets.items()):
        ax = axes[0, j]
        normed, t_ok = _np(off["normalised"]), _np(off["t_ok"]).astype(bool)
        T, S = normed.shape
        avg = _np(off["avg_offset_output"]) if "avg_offset_output" in off else np.full(T, np.nan)
        for t in range(T):
            if not t_ok[t]:
                continue
            x = np.arange(S) - t
            y = normed[t]
            base = t * spacing
            ax.fill_between(x, base, base + np.nan_to_num(y), color="firebrick", alpha=0.35, lw=0)
            ax.plot(x, base + y, color="firebrick", lw=1)
            if np.isfinite(avg[t]):
                ax.plot([avg[t]], [base + 0.5], "o", color=COLORS["recurrence"], ms=3)
        ax.axvline(0, color="k", ls="--", lw=1)
        ax.set_xlabel("offset s - t")
        ax.set_ylabel("decoder step t (stacked)")
        shown = [t for t in range(T) if t_ok[t]][::2]
        ax.set_yticks([t * spacing for t in shown], [str(t) for t in shown])
        ax.set_title(f"{label}: temporal alignment by offset\n(blue dots: average source offset)", fontsize=9)
        ax = axes[1, j]
        t = np.arange(T)
        m = _np(off["argmax_offset_members"])
        ax.plot(t[t_ok], _np(off["argmax_offset"])[t_ok], "-o", color="firebrick",
                label="argmax of mean $D_{t\\cdot}$")
        for e in range(m.shape[0]):
            ax.plot(t[t_ok], m[e][t_ok], "-", color="firebrick", alpha=0.25, lw=1)
        if np.isfinite(avg).any():
            ax.plot(t[t_ok], avg[t_ok], "-s", color=COLORS["recurrence"],
                    label="source offset (by decoder step)")
        if "avg_offset_input" in off:
            ai = _np(off["avg_offset_input"])
            ax.plot(np.arange(len(ai)), ai, ":", color="k", label="authors' average offset (by input index)")
        ax.set_xlabel("decoder step t")
        ax.set_ylabel("offset s - t")
        ax.legend(fontsize=7)
    return fig


# --------------------------------------------------------------------------- word vs temporal


def p_wdt(m7: Mapping[str, dict], words: Sequence[str] | None = None) -> plt.Figure:
    """Encoder word against decoder temporal component: per input word, ``(h^E_s - mu^E_s) .
    mu^D_{s+o}`` against the offset o = t - s (mean over networks; one panel pair per analysed ensemble),
    and the o = 0 values as bars."""
    n = len(m7)
    fig, axes = plotting.new_figure(2, n, width=4.2, height=3.2, squeeze=False)
    for j, (label, r) in enumerate(m7.items()):
        vals = _np(r["values"]).mean(0)  # (K, O)
        names = r["words"]
        show = [k for k, w in enumerate(names)
                if (words is None or w in words) and np.isfinite(vals[k]).all()]
        colours = [WORD_COLORS[c % len(WORD_COLORS)] for c in range(len(show))]
        ax = axes[0, j]
        for c, k in enumerate(show):
            ax.plot(r["offsets"], vals[k], "-o", ms=3, color=colours[c], label=names[k])
        ax.axvline(0, color="k", ls="--", lw=1)
        ax.axhline(0, color="k", lw=0.6)
        ax.set_xlabel("offset o = t - s (decoder - encoder)")
        ax.set_ylabel(r"$(h^E_s-\mu^E_s)\cdot\mu^D_{s+o}$")
        ax.set_title(f"{label}: encoder word vs decoder temporal", fontsize=9)
        ax.legend(fontsize=7, ncol=2)
        ax = axes[1, j]
        o0 = r["offsets"].index(0)
        ax.bar(range(len(show)), vals[show, o0], color=colours)
        ax.set_xticks(range(len(show)), [names[k] for k in show], rotation=30)
        ax.axhline(0, color="k", lw=0.6)
        ax.set_ylabel("value at o = 0")
    return fig


def p_wdt_map(m7: Mapping[str, dict], read: Mapping[str, dict] | None = None,
              words: Sequence[str] | None = None) -> plt.Figure:
    """Encoder word against decoder temporal component as a map: rows input words, columns the offset
    o = t - s, colour ``(h^E_s - mu^E_s) . mu^D_{s+o}`` (mean over networks, red positive, blue
    negative; each row scaled by its largest |value| so that small words show too). Black squares:
    the offset where each word peaks; white circles: the mean offset at which the decoder reads the
    word (``read``: label -> :func:`.offdiagonal.word_read_offsets`)."""
    n = len(m7)
    fig, axes = plotting.new_figure(1, n, width=3.8, height=3.4, squeeze=False)
    for j, (label, r) in enumerate(m7.items()):
        ax = axes[0, j]
        vals = _np(r["values"]).mean(0)  # (K, O)
        names = r["words"]
        show = [k for k, w in enumerate(names)
                if (words is None or w in words) and np.isfinite(vals[k]).all()]
        if words is not None:
            show.sort(key=lambda k: list(words).index(names[k]))
        M = vals[show]
        M = M / np.abs(M).max(1, keepdims=True).clip(min=1e-12)
        offsets = list(r["offsets"])
        ax.imshow(M, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto",
                  extent=(offsets[0] - 0.5, offsets[-1] + 0.5, len(show) - 0.5, -0.5))
        ax.plot([offsets[int(np.argmax(vals[k]))] for k in show], range(len(show)), "s", color="k", ms=5,
                label="peak")
        if read is not None and label in read:
            rd = [(i, read[label].get(names[k], (np.nan, 0))[0]) for i, k in enumerate(show)]
            rd = [(i, o) for i, o in rd if np.isfinite(o)]
            ax.plot([o for _, o in rd], [i for i, _ in rd], "o", mfc="white", mec="k", ms=6, label="read at")
        ax.axvline(0, color="k", ls="--", lw=0.8)
        ax.grid(False)
        ax.set_yticks(range(len(show)), [names[k] for k in show])
        ax.set_xticks(offsets)
        ax.set_xlabel("offset o = t - s (decoder - encoder)")
        ax.set_title(f"{label}: word x offset (row-scaled)", fontsize=9)
        ax.legend(fontsize=7, loc="lower right")
    return fig


# --------------------------------------------------------------------------- one sample


def p_dotdec(ex: dict, steps: Sequence[int], window: int = 4, label: str = "") -> plt.Figure:
    """One sample's attention (left) and, for each chosen decoder step t, the full alignment
    against the encoder step s (within ``window`` of t) with its temporal/input split."""
    n = len(steps)
    fig, axes = plotting.new_figure(1, n + 1, width=3.4, height=3.4, squeeze=False)
    att = _np(ex["attention"]).T
    sns.heatmap(att, ax=axes[0, 0], cmap="Blues", vmin=0, vmax=1, cbar=False, square=True,
                xticklabels=ex["targets"], yticklabels=ex["inputs"])
    axes[0, 0].set_title(f"{label} attention", fontsize=9)
    axes[0, 0].set_xlabel("decoder step t")
    axes[0, 0].set_ylabel("encoder step s")
    axes[0, 0].tick_params(labelsize=6)
    styles = {"full": ("k", "-", 2.0, "full $a_{st}$"),
              "temp_temp": ("firebrick", "-", 1.4, r"$\mu^E\cdot\mu^D$"),
              "inp_temp": (COLORS["encoder"], "--", 1.4, r"$(h-\mu)^E\cdot\mu^D$"),
              "temp_inp": (COLORS["decoder"], "--", 1.4, r"$\mu^E\cdot(h-\mu)^D$"),
              "inp_inp": ("grey", ":", 1.4, r"$(h-\mu)^E\cdot(h-\mu)^D$")}
    S = att.shape[0]
    for j, t in enumerate(steps):
        ax = axes[0, j + 1]
        lo, hi = max(0, t - window), min(S, t + window + 1)
        s = np.arange(lo, hi)
        for key, (col, ls, lw, lab) in styles.items():
            ax.plot(s, _np(ex[key])[t, lo:hi], ls, color=col, lw=lw, label=lab)
        ax.axvline(t, color="k", ls=":", lw=1)
        if ex.get("expected") is not None and int(ex["expected"][t]) >= 0:
            ax.axvline(int(ex["expected"][t]), color=COLORS["readout"], lw=2, alpha=0.5)
        ax.set_xticks(s, [f"{k}\n{ex['inputs'][k]}" for k in s], fontsize=6)
        ax.set_title(f"t = {t} (target {ex['targets'][t]})", fontsize=9)
        ax.set_xlabel("encoder step s" + (" (dotted: s = t; green: source)" if j == 0 else ""))
        if j == 0:
            ax.legend(fontsize=6)
    return fig


# --------------------------------------------------------------------------- cross-task


def _label(r: dict) -> str:
    return f"{r['arch']} {r['task']}"


def p_aam(rows: Sequence[dict], rho: float | None = None) -> plt.Figure:
    """Word accuracy with the average attention matrix substituted against the temporal-temporal
    share of the alignment, one point per (architecture, task), error bars = sd over networks."""
    fig, ax = plotting.new_figure(width=5.0, height=3.8)
    for r in rows:
        ax.errorbar(r["temp_temp"], r["aam_word"], xerr=r["temp_temp_sd"], yerr=r["aam_word_sd"],
                    marker=TASK_MARKERS.get(r["task"], "o"), color=ARCH_COLORS.get(r["arch"], "k"), ms=8,
                    capsize=2, ls="none", label=_label(r))
    ax.set_xlabel("temporal–temporal share of |alignment|")
    ax.set_ylabel("word accuracy, average attention substituted")
    title = "alignment approximation across tasks"
    if rho is not None:
        title += f"\nSpearman rho = {rho:.2f}"
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    return fig


def p_groups(rows: Sequence[dict]) -> plt.Figure:
    """The alignment breakdown grouped (temporal-temporal, input terms, residual terms) per
    (architecture, task)."""
    fig, ax = plotting.new_figure(width=7.0, height=3.2)
    groups = ("temp_temp", "input_terms", "delta_terms")
    names = ("temporal·temporal", "input terms (t·i, i·t, i·i)", "residual terms")
    x = np.arange(len(rows))
    w = 0.27
    for g, (key, name) in enumerate(zip(groups, names)):
        ax.bar(x + (g - 1) * w, [r[key] for r in rows], w, yerr=[r[key + "_sd"] for r in rows], capsize=2,
               label=name, color=[COLORS["attention"], COLORS["encoder"], "grey"][g])
    ax.set_xticks(x, [_label(r).replace(" ", "\n", 1) for r in rows], fontsize=8)
    ax.set_ylabel("fraction of |alignment|")
    ax.legend(fontsize=7)
    ax.set_title("alignment breakdown by task (top-5 positions, mean over steps)", fontsize=9)
    return fig


def p_wvar(analyses: Mapping[str, object], max_words: int = 10) -> plt.Figure:
    """Per word, the variance ratio V_nt/V_full (states minus temporal component vs states); top row
    encoder (input words), bottom row decoder (output words); the ``max_words`` most frequent words."""
    n = len(analyses)
    fig, axes = plotting.new_figure(2, n, width=4.0, height=2.6, squeeze=False)
    for j, (label, a) in enumerate(analyses.items()):
        sides = (("encoder", a.data.inputs, a.data.in_vocab, COLORS["encoder"]),
                 ("decoder", a.data.targets, a.data.out_vocab, COLORS["decoder"]))
        for r, (side, tokens, vocab, col) in enumerate(sides):
            ax = axes[r, j]
            ratio = _np(a.word_variance[side]["ratio"]).mean(0)
            counts = np.bincount(_np(tokens).astype(int).ravel(), minlength=len(vocab))
            counts[vocab.pad] = 0
            order = [k for k in np.argsort(-counts) if np.isfinite(ratio[k]) and counts[k] > 0][:max_words]
            ax.bar(np.arange(len(order)), ratio[order], 0.7, color=col)
            ax.set_xticks(np.arange(len(order)), [vocab.tokens[k] for k in order], rotation=45, fontsize=7)
            ax.axhline(1, color="k", lw=0.6)
            ax.set_ylim(0, 1.05)
            ax.set_ylabel(r"$V_{nt}/V_{full}$")
            ax.set_title(f"{label}: {side} words (mean {np.nanmean(ratio):.2f})", fontsize=9)
    return fig


def p_ro_pairs(a, rank: dict, label: str = "", member: int = 0, max_pairs: int = 12) -> plt.Figure:
    """Input/readout alignment on a word subset: angles between the readout rows of the output
    words and ``chi^E`` of the input words of a dictionary (diagonal = dictionary pairs)."""
    pairs = rank["pairs"][:max_pairs]
    iv, ov = a.data.in_vocab, a.data.out_vocab
    ang = _np(a.readout_alignment["angle"][member])
    M = np.array([[ang[ov.index(y), iv.index(x)] for x, _ in pairs] for _, y in pairs])
    fig, ax = plotting.new_figure(width=5.0, height=4.2)
    sns.heatmap(M, ax=ax, cmap="viridis_r", vmin=0, vmax=120, annot=len(pairs) <= 12, fmt=".0f",
                xticklabels=[x for x, _ in pairs], yticklabels=[y for _, y in pairs],
                cbar_kws={"label": "angle (degrees)"})
    ax.set_xlabel(r"input word x ($\chi^E_x$)")
    ax.set_ylabel("readout row of output word y")
    ax.set_title(f"{label}: input/readout alignment (dictionary pairs on the diagonal)", fontsize=9)
    return fig


def p_source(agreements: Mapping[str, dict]) -> plt.Figure:
    """How often the argmax of the full / temporal-only / temporal+input attention hits the
    ground-truth source word, on all rows and on the off-diagonal rows (mean +- sd over members)."""
    keys = (("full", "network attention"), ("temporal", r"temporal only $\mu\cdot\mu$"),
            ("temporal_input", r"$(\mu+\chi)\cdot(\mu+\chi)$"))
    fig, axes = plotting.new_figure(1, 2, width=4.2, height=3.2)
    axes = axes.ravel()
    panels = ((axes[0], "", "all valid rows"), (axes[1], "_offdiag", "off-diagonal rows (source != t)"))
    for ax, suffix, title in panels:
        x = np.arange(len(agreements))
        for k, (key, name) in enumerate(keys):
            vals = [_np(r[key + suffix]) for r in agreements.values()]
            ax.bar(x + (k - 1) * 0.27, [v.mean() for v in vals], 0.27,
                   yerr=[v.std(ddof=1) if len(v) > 1 else 0 for v in vals], capsize=2, label=name,
                   color=["k", "firebrick", COLORS["encoder"]][k])
        ax.set_xticks(x, list(agreements.keys()))
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("argmax hits the source word")
        ax.set_title(title, fontsize=9)
    axes[0].legend(fontsize=7)
    return fig


def p_enfr_scores(scores: Mapping[str, dict]) -> plt.Figure:
    """English-French held-out scores per architecture: greedy word accuracy, teacher-forced
    token accuracy, phrase accuracy (left axis) and BLEU (right panel)."""
    fig, axes = plotting.new_figure(1, 2, width=3.8, height=3.0)
    axes = axes.ravel()
    labels = list(scores)
    x = np.arange(len(labels))
    for k, (key, name) in enumerate((("word", "greedy word"), ("teacher_word", "teacher-forced token"),
                                     ("phrase", "phrase"))):
        axes[0].bar(x + (k - 1) * 0.27, [float(_np(scores[l][key]).mean()) for l in labels], 0.27, label=name)
    axes[0].set_xticks(x, labels)
    axes[0].set_ylim(0, 1)
    axes[0].legend(fontsize=7)
    axes[0].set_title("held-out accuracy", fontsize=9)
    axes[1].bar(x, [float(_np(scores[l]["bleu"]).mean()) for l in labels],
                color=[ARCH_COLORS.get(l.split()[0], "grey") for l in labels])
    axes[1].set_xticks(x, labels)
    axes[1].set_title("corpus BLEU (sacrebleu, our tokens)", fontsize=9)
    return fig


# --------------------------------------------------------------------------- learned attention


def p_qkv_temporal(pt: dict, member: int = 0, label: str = "") -> plt.Figure:
    """Learned attention, temporal components: ``mu^D_t . mu^E_s`` before and
    ``(W_Q mu^D_t) . (W_K mu^E_s)`` after the projections (heatmaps over the well-sampled steps), and the
    projected temporal components
    (keys orange, queries purple) in the PCA space of their union."""
    s_ok, t_ok = _np(pt["s_ok"]).astype(bool), _np(pt["t_ok"]).astype(bool)
    fig, axes = plotting.new_figure(1, 3, width=3.6, height=3.4, squeeze=False)
    for ax, key, title in ((axes[0, 0], "before", r"before: $\mu^E_s\cdot\mu^D_t$"),
                           (axes[0, 1], "after", r"after: $W_K\mu^E_s\cdot W_Q\mu^D_t/\sqrt{d}$")):
        M = _np(pt[key][member])[t_ok][:, s_ok].T
        sns.heatmap(M, ax=ax, cmap="RdBu_r", center=0, square=True, xticklabels=4, yticklabels=4, cbar=False)
        ax.set_xlabel("decoder step t")
        ax.set_ylabel("encoder step s")
        ax.set_title(f"{label} {title}", fontsize=8)
    K = _np(pt["keys"][member])[s_ok]
    Q = _np(pt["queries"][member])[t_ok]
    X = np.concatenate([K, Q])
    mean = X.mean(0)
    _, _, vt = np.linalg.svd(X - mean, full_matrices=False)
    ax = axes[0, 2]
    for Z, name, lab in ((K, "encoder", "keys $W_K\\mu^E_s$"), (Q, "decoder", "queries $W_Q\\mu^D_t$")):
        z = (Z - mean) @ vt[:2].T
        ax.plot(z[:, 0], z[:, 1], "-o", ms=3, color=COLORS[name], label=lab)
        ax.plot(z[0, 0], z[0, 1], "s", ms=8, color=COLORS[name])
        ax.plot(z[-1, 0], z[-1, 1], "*", ms=12, color=COLORS[name])
    ax.set_xlabel("PC0")
    ax.set_ylabel("PC1")
    ax.legend(fontsize=7)
    ax.set_title("projected temporal components", fontsize=8)
    return fig


def p_qkv_values(vr: dict, in_words: Sequence[str], out_words: Sequence[str], member: int = 0,
                 label: str = "") -> plt.Figure:
    """Learned attention, input components: angle between the context readout rows and ``chi^E``
    before and after the value map."""
    fig, axes = plotting.new_figure(1, 2, width=4.2, height=3.4, squeeze=False)
    for ax, key, title in ((axes[0, 0], "before", r"before: $\angle(w_y, \chi^E_x)$"),
                           (axes[0, 1], "after", r"after: $\angle(w_y, \chi^E_x W_V)$")):
        M = _np(vr[key][member])
        sns.heatmap(M, ax=ax, cmap="viridis_r", vmin=0, vmax=120, annot=True, fmt=".0f", cbar=False,
                    xticklabels=in_words, yticklabels=out_words)
        ax.set_xlabel("input word x")
        ax.set_ylabel("readout row of output word y")
        ax.set_title(f"{label} {title}", fontsize=8)
    return fig
