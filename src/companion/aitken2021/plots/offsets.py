"""Panels of offsets between input and output positions: where the temporal-temporal alignment peaks
(offset s - t), each encoder word against the decoder's temporal component at nearby steps (also as a
word x offset map beside where the decoder reads it), and one sample's alignment split into its terms.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from ... import plotting
from .style import COLORS, WORD_COLORS
from .style import to_numpy as _np

__all__ = ["p_off", "p_wdt", "p_wdt_map", "p_dotdec"]


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
