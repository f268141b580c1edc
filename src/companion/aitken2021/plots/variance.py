"""Panels of variance and size: variance and participation ratio against time, the norm of the temporal
components against the rest, and each word's variance with and without its temporal component.
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np

from ... import plotting
from ..analysis import Analysis, mean_sd
from .style import ARCH_COLORS, COLORS
from .style import to_numpy as _np

__all__ = ["p_varpr", "p_norm", "p_wvar"]


def p_varpr(analyses: Mapping[str, Analysis], min_len: int | None = None) -> plt.Figure:
    """total variance and participation ratio of the states against time (encoder then decoder).

    Dashed lines: the minimum sequence length in the encoder and in the decoder,
    and the encoder/decoder boundary. Mean over members, band = +- sd.
    """
    fig, axes = plotting.new_figure(1, 2, width=4.4, height=3.4)
    axes = np.asarray(axes).ravel()
    S = None
    for label, a in analyses.items():
        vp = a.variance_pr
        S = vp["S"]
        for ax, key in zip(axes, ("variance", "pr")):
            v = _np(vp[key])
            mu = np.nanmean(v, 0)
            sd = np.nanstd(v, 0) if v.shape[0] > 1 else np.zeros_like(mu)
            steps = np.arange(1, len(mu) + 1)
            col = ARCH_COLORS.get(a.arch)
            ax.plot(steps, mu, label=label, color=col)
            ax.fill_between(steps, mu - sd, mu + sd, color=col, alpha=0.2)
    for ax, title in zip(axes, ("total variance", "participation ratio")):
        if S is not None:
            ax.axvline(S + 0.5, color="k", ls="--", lw=1)
            if min_len:
                ax.axvline(min_len, color="grey", ls=":", lw=1)
                ax.axvline(S + min_len, color="grey", ls=":", lw=1)
        ax.set_xlabel("step (encoder 1..S, decoder S+1..S+T)")
        ax.set_title(title)
    axes[0].set_ylim(bottom=0)
    axes[0].legend(fontsize=8)
    return fig


def p_norm(analyses: Mapping[str, Analysis]) -> plt.Figure:
    """the norm ratio ||mu|| / ||h - mu|| and ||mu - h(null input)|| / ||mu||,
    encoder and decoder."""
    fig, axes = plotting.new_figure(1, 2, width=4.0, height=3.2)
    axes = np.asarray(axes).ravel()
    labels = list(analyses)
    x = np.arange(len(labels))
    for j, side in enumerate(("encoder", "decoder")):
        col = COLORS[side]
        nr = [mean_sd(analyses[k].norm_ratio[side]) for k in labels]
        nu = [mean_sd(analyses[k].null_input[side]["relative_mean"]) for k in labels]
        off = (j - 0.5) * 0.38
        axes[0].bar(x + off, [m for m, _ in nr], 0.38, yerr=[s for _, s in nr], color=col, label=side,
                    capsize=2)
        axes[1].bar(x + off, [m for m, _ in nu], 0.38, yerr=[s for _, s in nu], color=col, label=side,
                    capsize=2)
    axes[0].set_title(r"norm ratio $\|\mu\| / \|h-\mu\|$")
    axes[1].set_title(r"null input $\|\mu - h_{null}\| / \|\mu\|$")
    for ax in axes:
        ax.set_xticks(x, labels)
        ax.legend(fontsize=8)
    return fig


def p_wvar(analyses: Mapping[str, object], max_words: int = 10) -> plt.Figure:
    """Per word, the variance ratio V_nt/V_full (states minus temporal component vs states); one row per
    network (label), encoder words (inputs) left and decoder words (outputs) right; the ``max_words`` most
    frequent words. Two panels per row keep the labels legible at page width whatever the number of rows."""
    n = len(analyses)
    fig, axes = plotting.new_figure(n, 2, width=4.0, height=2.4, squeeze=False, sharey=True)
    top = 1.05
    for j, (label, a) in enumerate(analyses.items()):
        sides = (("encoder", a.data.inputs, a.data.in_vocab, COLORS["encoder"]),
                 ("decoder", a.data.targets, a.data.out_vocab, COLORS["decoder"]))
        for c, (side, tokens, vocab, col) in enumerate(sides):
            ax = axes[j, c]
            ratio = _np(a.word_variance[side]["ratio"]).mean(0)
            counts = np.bincount(_np(tokens).astype(int).ravel(), minlength=len(vocab))
            counts[vocab.pad] = 0
            order = [k for k in np.argsort(-counts) if np.isfinite(ratio[k]) and counts[k] > 0][:max_words]
            ax.bar(np.arange(len(order)), ratio[order], 0.7, color=col)
            ax.set_xticks(np.arange(len(order)), [_short(vocab.tokens[k]) for k in order], rotation=40,
                          ha="right", rotation_mode="anchor", fontsize=9)
            ax.axhline(1, color="k", lw=0.6)
            if len(order):
                top = max(top, 1.05 * float(np.max(ratio[order])))
            ax.set_title(f"{label}, {side} words (mean {np.nanmean(ratio):.2f})", fontsize=10)
    axes[0, 0].set_ylim(0, top)  # shared by every panel
    fig.supylabel(r"$V_{nt}/V_{full}$ (share of a word's variance left without $\mu$)", fontsize=10)
    return fig


def _short(token: str, width: int = 12) -> str:
    """A tick label cut to ``width`` characters (long action names such as I_TURN_LEFT keep their start)."""
    return token if len(token) <= width else token[: width - 1] + "…"
