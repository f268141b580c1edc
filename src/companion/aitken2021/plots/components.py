"""Panels of the temporal and input components: their trajectories (principal components), the
temporal-temporal alignment, the input components by word, the readout against the encoder's input
components, the nine terms of the alignment, attention from the temporal components alone, and the
temporal components against the states under a null input. Each function returns a matplotlib Figure.
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
import torch

from ... import plotting
from ..analysis import Analysis
from ..decompose import TERM_NAMES
from .style import ARCH_COLORS, COLORS, WORD_COLORS
from .style import to_numpy as _np

__all__ = ["p_temp", "p_tt", "p_inp", "p_ro", "p_ved", "p_ro_pairs", "p_terms", "p_temporal_only",
           "p_null_input"]


def _pca(X: np.ndarray, k: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Mean and the top-k principal directions (rows) of ``X``."""
    mean = X.mean(0)
    _, _, vt = np.linalg.svd(X - mean, full_matrices=False)
    return mean, vt[:k]


def p_temp(a: Analysis, member: int = 0, pcs: tuple[int, int] = (0, 1)) -> plt.Figure:
    """temporal components mu^E_s (orange) and mu^D_t (purple) in the PCA space of their union."""
    mu_e, mu_d = _np(a.enc.mu[member]), _np(a.dec.mu[member])
    S_valid = int(a.data.in_index.max()) + 1
    T_valid = int(a.data.out_index.max()) + 1
    mu_e, mu_d = mu_e[:S_valid], mu_d[:T_valid]
    mean, V = _pca(np.concatenate([mu_e, mu_d]), k=max(pcs) + 1)
    fig, ax = plotting.new_figure(width=4.6, height=4.0)
    for mu, name in ((mu_e, "encoder"), (mu_d, "decoder")):
        z = (mu - mean) @ V.T
        x, y = z[:, pcs[0]], z[:, pcs[1]]
        ax.plot(x, y, "-o", color=COLORS[name], ms=3, lw=1.5,
                label=f"{name} $\\mu_{{{'s' if name == 'encoder' else 't'}}}$")
        ax.plot(x[0], y[0], "s", color=COLORS[name], ms=8)
        ax.plot(x[-1], y[-1], "*", color=COLORS[name], ms=13)
        for k in range(0, len(x), 5):
            ax.annotate(str(k), (x[k], y[k]), fontsize=7, color=COLORS[name], xytext=(3, 3),
                        textcoords="offset points")
    ax.set_xlabel(f"PC{pcs[0]}")
    ax.set_ylabel(f"PC{pcs[1]}")
    ax.set_title(f"{a.arch}: temporal components (square: first step, star: last)")
    ax.legend(fontsize=8)
    return fig


def p_tt(a: Analysis, member: int = 0) -> plt.Figure:
    """the temporal-temporal alignment mu^E_s . mu^D_t and its softmax over s."""
    S_valid = int(a.data.in_index.max()) + 1
    T_valid = int(a.data.out_index.max()) + 1
    D = a.temporal_alignment[member, :T_valid, :S_valid]
    fig, axes = plotting.new_figure(1, 2, width=4.0, height=3.6)
    axes = np.asarray(axes).ravel()
    sns.heatmap(_np(D).T, ax=axes[0], cmap="RdBu_r", center=0, square=True, xticklabels=4, yticklabels=4)
    axes[0].set_title(r"$\mu^E_s \cdot \mu^D_t$")
    sns.heatmap(_np(torch.softmax(D, -1)).T, ax=axes[1], cmap="Blues", vmin=0, vmax=1, square=True,
                xticklabels=4, yticklabels=4)
    axes[1].set_title(r"softmax$_s(\mu^E_s \cdot \mu^D_t)$")
    for ax in axes:
        ax.set_xlabel("decoder step t")
        ax.set_ylabel("encoder step s")
    return fig


def p_inp(a: Analysis, member: int = 0, max_points: int = 3000,
          readout_scale: float | None = None) -> plt.Figure:
    """input-delta view, ``h - mu`` of every valid state in the PCA space of all of them.

    Encoder states (light, o) coloured by input word; decoder states (dark, x)
    coloured by decoder input word; lines from the origin: the context readout
    row of each output word (the vectors the attended context is read out with).
    """
    enc, dec = a.enc, a.dec
    Xe = _np((enc.states - enc.temporal)[member][enc.valid[member]])
    le = _np(enc.labels[member][enc.valid[member]]).astype(int)
    Xd = _np((dec.states - dec.temporal)[member][dec.valid[member]])
    ld = _np(dec.labels[member][dec.valid[member]]).astype(int)
    mean, V = _pca(np.concatenate([Xe, Xd]), 2)
    rng = np.random.default_rng(0)
    fig, ax = plotting.new_figure(width=5.0, height=4.4)
    for X, lab, names, marker, alpha, shade in (
        (Xe, le, enc.label_names, "o", 0.25, 1.0),
        (Xd, ld, dec.label_names, "x", 0.5, 0.6),
    ):
        idx = rng.permutation(len(X))[:max_points]
        Z = (X[idx] - mean) @ V.T
        for k in np.unique(lab[idx]):
            m = lab[idx] == k
            col = np.array(WORD_COLORS[k % len(WORD_COLORS)]) * shade
            side = "enc" if marker == "o" else "dec in"
            ax.scatter(Z[m, 0], Z[m, 1], s=8, marker=marker, color=np.clip(col, 0, 1), alpha=alpha,
                       label=f"{side} {names[k]}")
    if a.model.config.arch != "VED":
        R = _np(a.model.context_readout_rows()[member])
        Rz = R @ V.T
        scale = readout_scale or (np.abs((Xe - mean) @ V.T).max()
                                  / max(np.linalg.norm(Rz, axis=1).max(), 1e-9))
        for y, name in enumerate(a.data.out_vocab.tokens):
            ax.plot([0, Rz[y, 0] * scale], [0, Rz[y, 1] * scale], color=COLORS["readout"], lw=2)
            ax.annotate(f"w[{name}]", (Rz[y, 0] * scale, Rz[y, 1] * scale), color=COLORS["readout"],
                        fontsize=8)
    ax.set_xlabel("PC0 of $h-\\mu$")
    ax.set_ylabel("PC1 of $h-\\mu$")
    ax.set_title(f"{a.arch}: input-delta components and readout rows (green)")
    ax.legend(fontsize=6, markerscale=1.5, ncol=2, loc="best")
    return fig


#: Cell size of the angle heat maps (inches): room for a three-digit angle at 8 pt, so the printed
#: numbers never run together; above ``_ANNOT_MAX`` rows or columns the cells stay small and only the
#: colour bar reads.
_CELL_W, _CELL_H, _ANNOT_MAX = 0.5, 0.3, 14


def _angle_heatmap(M: np.ndarray, xlabels, ylabels) -> tuple[plt.Figure, plt.Axes]:
    """A heat map of angles (degrees) sized by its number of cells, each cell's angle printed when the
    grid is small enough to print it legibly."""
    rows, cols = M.shape
    annot = max(rows, cols) <= _ANNOT_MAX
    cw, ch = (_CELL_W, _CELL_H) if annot else (0.22, 0.2)
    fig, ax = plotting.new_figure(width=max(4.4, cw * cols + 2.6), height=max(3.6, ch * rows + 1.8))
    sns.heatmap(M, ax=ax, cmap="viridis_r", vmin=0, vmax=120, annot=annot, fmt=".0f",
                annot_kws={"fontsize": 8}, xticklabels=list(xlabels), yticklabels=list(ylabels),
                cbar_kws={"label": "angle (degrees)"})
    ax.tick_params(labelsize=9)
    ax.tick_params(axis="y", labelrotation=0)  # words read across, not down
    return fig, ax


def p_ro(a: Analysis) -> plt.Figure:
    """angle between context readout rows (output words) and encoder chi (input words),
    mean over members."""
    ang = a.readout_alignment["angle"]
    M = _np(ang.mean(0))
    fig, ax = _angle_heatmap(M, a.data.in_vocab.tokens, a.data.out_vocab.tokens)
    ax.set_xlabel(r"encoder input word x ($\chi^E_x$)")
    ax.set_ylabel("readout row of output word y")
    ax.set_title(f"{a.arch}: input/readout alignment (mean of {ang.shape[0]})")
    return fig


def p_ved(a: Analysis, member: int = 0, n_traj: int = 3, max_points: int = 2000) -> plt.Figure:
    """hidden states in PCA space (encoder orange, decoder purple), a few sample trajectories
    (black) and the temporal components (thick lines)."""
    enc, dec = a.enc, a.dec
    He = _np(enc.states[member][enc.valid[member]])
    Hd = _np(dec.states[member][dec.valid[member]])
    mean, V = _pca(np.concatenate([He, Hd]), 2)
    rng = np.random.default_rng(0)
    fig, ax = plotting.new_figure(width=5.0, height=4.4)
    for X, name in ((He, "encoder"), (Hd, "decoder")):
        idx = rng.permutation(len(X))[:max_points]
        Z = (X[idx] - mean) @ V.T
        ax.scatter(Z[:, 0], Z[:, 1], s=5, color=COLORS[name], alpha=0.25, label=f"{name} states")
    for i in range(n_traj):
        L = int(a.data.in_index[i]) + 1
        ze = (_np(enc.states[member, i, :L]) - mean) @ V.T
        zd = (_np(dec.states[member, i, :L]) - mean) @ V.T
        ax.plot(ze[:, 0], ze[:, 1], "-", color="k", lw=0.7, alpha=0.7)
        ax.plot(zd[:, 0], zd[:, 1], "--", color="k", lw=0.7, alpha=0.7)
    S_valid = int(a.data.in_index.max()) + 1
    for comp, name in ((enc, "encoder"), (dec, "decoder")):
        z = (_np(comp.mu[member, :S_valid]) - mean) @ V.T
        ax.plot(z[:, 0], z[:, 1], "-", color=COLORS[name], lw=3, label=f"{name} $\\mu$")
    ax.set_xlabel("PC0")
    ax.set_ylabel("PC1")
    ax.set_title(f"{a.arch}: hidden states, 3 trajectories (black), temporal components")
    ax.legend(fontsize=7)
    return fig


def p_ro_pairs(a, rank: dict, label: str = "", member: int = 0, max_pairs: int = 12) -> plt.Figure:
    """Input/readout alignment on a word subset: angles between the readout rows of the output
    words and ``chi^E`` of the input words of a dictionary (diagonal = dictionary pairs)."""
    pairs = rank["pairs"][:max_pairs]
    iv, ov = a.data.in_vocab, a.data.out_vocab
    ang = _np(a.readout_alignment["angle"][member])
    M = np.array([[ang[ov.index(y), iv.index(x)] for x, _ in pairs] for _, y in pairs])
    fig, ax = _angle_heatmap(M, [x for x, _ in pairs], [y for _, y in pairs])
    ax.set_xlabel(r"input word x ($\chi^E_x$)")
    ax.set_ylabel("readout row of output word y")
    ax.set_title(f"{label}: input/readout alignment (dictionary pairs on the diagonal)", fontsize=9)
    return fig


def p_terms(analyses: Mapping[str, Analysis]) -> plt.Figure:
    """the nine term fractions (top-5 positions), mean +- sd over members, per analysis."""
    fig, ax = plotting.new_figure(width=7.5, height=3.4)
    n = len(analyses)
    width = 0.8 / max(n, 1)
    x = np.arange(len(TERM_NAMES))
    for j, (label, a) in enumerate(analyses.items()):
        m = _np(a.term_fractions["mean"])
        mu, sd = m.mean(0), (m.std(0, ddof=1) if m.shape[0] > 1 else np.zeros(m.shape[1]))
        ax.bar(x + (j - (n - 1) / 2) * width, mu, width, yerr=sd, label=label, capsize=2,
               color=(ARCH_COLORS.get(a.arch, WORD_COLORS[j])
                      if len({b.arch for b in analyses.values()}) == n else WORD_COLORS[j]))
    ax.set_xticks(x, [t.replace("_", "·") for t in TERM_NAMES], rotation=30)
    ax.set_ylabel("fraction of |alignment|")
    ax.set_title("alignment breakdown (encoder part · decoder part)")
    ax.legend(fontsize=8)
    return fig


def p_temporal_only(analyses: Mapping[str, Analysis]) -> plt.Figure:
    """Word accuracy with each sample's own attention, with the average attention matrix in its place and
    with the temporal-only attention ``softmax_s(mu^E_s . mu^D_t)`` in its place (same decoder states).

    Bars: mean over networks; dots: one per network.
    """
    kinds = [("own attention", lambda a: a.accuracy["word"], COLORS["attention"]),
             ("average attention matrix", lambda a: a.aam["substitution_word"], COLORS["pe"]),
             ("temporal-only attention", lambda a: a.aam["temporal_word"], "firebrick")]
    fig, ax = plotting.new_figure(width=max(4.4, 2.2 + 1.6 * len(analyses)), height=3.2)
    width = 0.8 / len(kinds)
    lowest = 1.0
    for i, a in enumerate(analyses.values()):
        for j, (label, get, colour) in enumerate(kinds):
            v = _np(get(a))
            x = i + (j - (len(kinds) - 1) / 2) * width
            ax.bar(x, v.mean(), width, color=colour, label=label if i == 0 else None)
            ax.plot(np.full(len(v), x), v, "o", ms=3, color="k")
            lowest = min(lowest, float(v.min()))
    ax.set_xticks(range(len(analyses)), list(analyses))
    ax.set_ylim(max(0.0, lowest - 0.05), 1.005)
    ax.set_ylabel("greedy word accuracy")
    ax.set_title("accuracy with the attention replaced")
    ax.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.12), frameon=False)
    return fig


def p_null_input(analyses: Mapping[str, Analysis], reference: Mapping[str, float] | None = None,
                 min_len: int | None = None) -> plt.Figure:
    """Temporal components against the null input, over time:
    ``||mu_t - h_null_t|| / ||mu_t||`` (left) and the angle between ``mu_t`` and
    ``h_null_t`` (right), encoder (orange) and decoder (purple); mean over networks, band = +- sd.

    ``reference``: ``{"relative": r, "angle": deg}`` drawn as dotted lines (the development notebook's
    single network); ``min_len``: a grey line where the shortest sequence ends.
    """
    fig, axes = plotting.new_figure(1, 2, width=4.2, height=3.2)
    axes = np.asarray(axes).ravel()
    styles = ["-", "--", ":", "-."]
    for k, (label, a) in enumerate(analyses.items()):
        for side in ("encoder", "decoder"):
            r = a.null_input[side]
            for ax, key in zip(axes, ("relative", "angle")):
                v = _np(r[key])
                mu = np.nanmean(v, 0)
                sd = np.nanstd(v, 0) if v.shape[0] > 1 else np.zeros_like(mu)
                steps = np.arange(len(mu))
                name = f"{label} {side}" if len(analyses) > 1 else side
                ax.plot(steps, mu, styles[k % len(styles)], color=COLORS[side], label=name)
                ax.fill_between(steps, mu - sd, mu + sd, color=COLORS[side], alpha=0.15)
    titles = (r"$\|\mu_t - h^{null}_t\| / \|\mu_t\|$", r"angle($\mu_t$, $h^{null}_t$), degrees")
    for ax, key, title in zip(axes, ("relative", "angle"), titles):
        if reference and key in reference:
            ax.axhline(reference[key], color="k", ls=":", lw=1, label="development notebook, one network")
        if min_len:
            ax.axvline(min_len, color="grey", ls="--", lw=1)
        ax.set_xlabel("step (encoder s, decoder t)")
        ax.set_title(title)
        ax.set_ylim(bottom=0)
    axes[0].legend(fontsize=7)
    return fig
