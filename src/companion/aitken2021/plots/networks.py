"""Panels of the networks as a whole: the architecture diagram, accuracy, training loss, and the
English->French translation scores.
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch

from ... import plotting
from .style import ARCH_COLORS, COLORS
from .style import to_numpy as _np

__all__ = ["p_arch", "p_accuracy", "p_loss", "p_enfr_scores"]


def _box(ax, xy, w, h, color, text, fontsize=8):
    ax.add_patch(FancyBboxPatch(xy, w, h, boxstyle="round,pad=0.02,rounding_size=0.08", fc=color, ec="k",
                                lw=0.8, alpha=0.9))
    ax.text(xy[0] + w / 2, xy[1] + h / 2, text, ha="center", va="center", fontsize=fontsize, color="white")


def _arrow(ax, a, b, color, style="-|>", lw=1.2, rad=0.0):
    ax.add_patch(FancyArrowPatch(a, b, arrowstyle=style, mutation_scale=8, color=color, lw=lw,
                                 connectionstyle=f"arc3,rad={rad}"))


def p_arch(n_steps: int = 3) -> plt.Figure:
    """Figure 7: VED, AED and AO drawn as boxes and arrows.

    Encoder RNN orange, decoder RNN purple, linear readout green, recurrent
    connections blue, attention gold, positional encoding grey circles (AO);
    AED's readout takes the decoder output and the context vector.
    """
    fig, axes = plotting.new_figure(1, 3, width=4.3, height=3.6)
    axes = np.asarray(axes).ravel()
    bw, bh = 0.55, 0.45
    for ax, arch in zip(axes, ("VED", "AED", "AO")):
        ax.set_xlim(-0.4, 2 * n_steps + 0.3)
        ax.set_ylim(-0.7, 3.9)
        ax.set_aspect("equal")
        ax.axis("off")
        ax.set_title(arch)
        xs_e = [k * 1.0 for k in range(n_steps)]
        xs_d = [n_steps + k * 1.0 for k in range(n_steps)]
        for k, x in enumerate(xs_e):
            _box(ax, (x, 0.6), bw, bh, COLORS["encoder"], f"E{k + 1}")
            ax.text(x + bw / 2, -0.3, f"$x_{k + 1}$", ha="center", fontsize=8)
            _arrow(ax, (x + bw / 2, -0.12), (x + bw / 2, 0.58), "k")
            if arch == "AO":
                ax.add_patch(Circle((x + bw / 2, 0.25), 0.09, color=COLORS["pe"]))
            if k > 0 and arch != "AO":
                _arrow(ax, (xs_e[k - 1] + bw, 0.6 + bh / 2), (x, 0.6 + bh / 2), COLORS["recurrence"], lw=1.6)
        for k, x in enumerate(xs_d):
            _box(ax, (x, 1.5), bw, bh, COLORS["decoder"], f"D{k + 1}")
            _box(ax, (x, 3.0), bw, bh * 0.8, COLORS["readout"], "W$_o$", fontsize=7)
            if arch == "VED":
                _arrow(ax, (x + bw / 2, 1.5 + bh), (x + bw / 2, 3.0), "k", lw=0.8)
            else:  # the context goes from the attention block to the readout
                _arrow(ax, (x + bw / 2, 2.65), (x + bw / 2, 3.0), COLORS["attention"], lw=0.9)
                _arrow(ax, (x + bw / 2, 1.5 + bh), (x + bw / 2, 2.25), "k", lw=0.6)  # query
            if arch == "AED":  # AED's readout also reads the decoder state directly
                _arrow(ax, (x + bw - 0.05, 1.5 + bh), (x + bw - 0.05, 3.0), "k", lw=0.8, rad=-0.35)
            ax.text(x + bw / 2, 1.05, rf"$\hat y_{{{k:d}}}$", ha="center", fontsize=7)
            _arrow(ax, (x + bw / 2, 1.2), (x + bw / 2, 1.48), "k", lw=0.8)
            if arch == "AO":
                ax.add_patch(Circle((x + bw / 2 + 0.25, 1.3), 0.08, color=COLORS["pe"]))
            if k > 0 and arch != "AO":
                _arrow(ax, (xs_d[k - 1] + bw, 1.5 + bh / 2), (x, 1.5 + bh / 2), COLORS["recurrence"], lw=1.6)
            if arch in ("AED", "AO"):
                ax.add_patch(FancyBboxPatch((x + 0.05, 2.25), bw - 0.1, 0.4, boxstyle="round,pad=0.01",
                                            fc=COLORS["attention"], ec="k", lw=0.6))
                ax.text(x + bw / 2, 2.45, "attn", ha="center", va="center", fontsize=6)
                for xe in xs_e:
                    _arrow(ax, (xe + bw / 2, 0.6 + bh), (x + bw / 2, 2.25), COLORS["attention"], lw=0.5,
                           style="-", rad=-0.1)
        if arch != "AO":
            _arrow(ax, (xs_e[-1] + bw, 0.6 + bh / 2), (xs_d[0], 1.5 + bh / 2), COLORS["recurrence"], lw=1.6)
    fig.suptitle("encoder orange, decoder purple, readout green; recurrence blue, attention gold; PE grey",
                 fontsize=9)
    return fig


def p_accuracy(table) -> plt.Figure:
    """Bar chart of word and phrase accuracy (mean +- sd) from :func:`tables.accuracy_table`'s raw frame."""
    fig, ax = plotting.new_figure(width=6.5, height=3.0)
    labels = [f"{r.arch}\n{r.task}" for r in table.itertuples()]
    x = np.arange(len(labels))
    ax.bar(x - 0.2, table["word_mean"], 0.4, yerr=table["word_sd"], label="word", capsize=2)
    ax.bar(x + 0.2, table["phrase_mean"], 0.4, yerr=table["phrase_sd"], label="phrase", capsize=2)
    ax.set_xticks(x, labels, fontsize=7)
    ax.set_ylim(0, 1.05)
    ax.axhline(0.99, color="k", ls=":", lw=1)
    ax.legend(fontsize=8)
    ax.set_ylabel("test accuracy (greedy)")
    return fig


def p_loss(ensembles: Mapping[str, object]) -> plt.Figure:
    """Training loss (cross-entropy + L2) against step, one line per member."""
    fig, ax = plotting.new_figure(width=5.0, height=3.0)
    for label, ens in ensembles.items():
        steps = np.asarray(ens.history["step"])
        loss = _np(ens.history["loss"])
        col = ARCH_COLORS.get(getattr(ens, "arch", ""), None)
        for e in range(loss.shape[1]):
            ax.plot(steps, loss[:, e], color=col, alpha=0.8, label=label if e == 0 else None)
    ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.legend(fontsize=8)
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
