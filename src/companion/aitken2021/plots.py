"""Panel library for the Aitken et al. (2021) chapters: one function per panel, each returns a Figure.

Panel ids follow the reference note (section 5.1). Colours follow the Fig. 7
caption [SUM-liner]: encoder orange, decoder purple, readout green, recurrence
blue, attention gold; positional encoding grey. Figure compositions in the
chapters are reconstructed (the paper's layouts are not known).
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
import torch
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch

from .. import plotting
from .analysis import Analysis, mean_sd
from .decompose import TERM_NAMES

plotting.set_theme()

__all__ = [
    "COLORS",
    "p_att",
    "p_temp",
    "p_tt",
    "p_inp",
    "p_ro",
    "p_terms",
    "p_varpr",
    "p_ved",
    "p_norm",
    "p_temporal_only",
    "p_null_input",
    "p_arch",
    "p_accuracy",
    "p_loss",
]

COLORS = {
    "encoder": "#E08A2E",
    "decoder": "#7B4FA6",
    "readout": "#3A9A5B",
    "recurrence": "#3B6FB6",
    "attention": "#D4A017",
    "pe": "#9A9A9A",
}
ARCH_COLORS = {"VED": "#7F7F7F", "AED": "#3B6FB6", "AO": "#C0504D"}
WORD_COLORS = sns.color_palette("colorblind", 10)


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().double().cpu().numpy()


def _pca(X: np.ndarray, k: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Mean and the top-k principal directions (rows) of ``X``."""
    mean = X.mean(0)
    _, _, vt = np.linalg.svd(X - mean, full_matrices=False)
    return mean, vt[:k]


def _sample_tokens(a: Analysis, i: int) -> tuple[list[str], list[str], int, int]:
    L_in, L_out = int(a.data.in_index[i]), int(a.data.out_index[i])
    ins = a.data.in_vocab.decode(a.data.inputs[i, : L_in + 1])
    outs = a.data.out_vocab.decode(a.data.targets[i, : L_out + 1])
    return ins, outs, L_in, L_out


# --------------------------------------------------------------------------- P-att


def p_att(a: Analysis, member: int = 0, sample: int = 0) -> plt.Figure:
    """P-att: one sample's attention (rows: encoder step s, columns: decoder step t) and the
    average attention matrix over the analysis set (greedy decoding)."""
    fig, axes = plotting.new_figure(1, 2, width=4.2, height=3.9)
    axes = np.asarray(axes).ravel()
    ins, outs, L_in, L_out = _sample_tokens(a, sample)
    att = _np(a.trace.attention[member, sample, : L_out + 1, : L_in + 1]).T
    sns.heatmap(att, ax=axes[0], cmap="Blues", vmin=0, vmax=1, cbar=False, xticklabels=outs, yticklabels=ins,
                square=True)
    axes[0].set_title(f"{a.arch}: sample {sample}")
    axes[0].set_xlabel("decoder step t (target word)")
    axes[0].set_ylabel("encoder step s (input word)")
    aam = _np(a.trace.attention[member].mean(0)).T
    sns.heatmap(aam, ax=axes[1], cmap="Blues", vmin=0, vmax=1, cbar=True, square=True,
                xticklabels=4, yticklabels=4)
    axes[1].set_title(f"average attention matrix (n={len(a.data)})")
    axes[1].set_xlabel("decoder step t")
    axes[1].set_ylabel("encoder step s")
    for ax in axes:
        ax.tick_params(labelsize=7)
    return fig


# --------------------------------------------------------------------------- P-temp


def p_temp(a: Analysis, member: int = 0, pcs: tuple[int, int] = (0, 1)) -> plt.Figure:
    """P-temp: temporal components mu^E_s (orange) and mu^D_t (purple) in the PCA space of their union."""
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


# --------------------------------------------------------------------------- P-tt


def p_tt(a: Analysis, member: int = 0) -> plt.Figure:
    """P-tt: the temporal-temporal alignment mu^E_s . mu^D_t and its softmax over s."""
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


# --------------------------------------------------------------------------- P-inp


def p_inp(a: Analysis, member: int = 0, max_points: int = 3000,
          readout_scale: float | None = None) -> plt.Figure:
    """P-inp: input-delta view, ``h - mu`` of every valid state in the PCA space of all of them.

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


# --------------------------------------------------------------------------- P-ro


def p_ro(a: Analysis) -> plt.Figure:
    """P-ro: angle between context readout rows (output words) and encoder chi (input words),
    mean over members."""
    ang = a.readout_alignment["angle"]
    fig, ax = plotting.new_figure(width=4.4, height=3.6)
    sns.heatmap(_np(ang.mean(0)), ax=ax, cmap="viridis_r", vmin=0, vmax=120, annot=True, fmt=".0f",
                xticklabels=a.data.in_vocab.tokens, yticklabels=a.data.out_vocab.tokens,
                cbar_kws={"label": "angle (degrees)"})
    ax.set_xlabel(r"encoder input word x ($\chi^E_x$)")
    ax.set_ylabel("readout row of output word y")
    ax.set_title(f"{a.arch}: input/readout alignment (mean of {ang.shape[0]})")
    return fig


# --------------------------------------------------------------------------- P-terms


def p_terms(analyses: Mapping[str, Analysis]) -> plt.Figure:
    """P-terms: the nine term fractions (M1, top-5 positions), mean +- sd over members, per analysis."""
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


# --------------------------------------------------------------------------- P-varpr


def p_varpr(analyses: Mapping[str, Analysis], min_len: int | None = None) -> plt.Figure:
    """P-varpr: total variance and participation ratio of the states against time (encoder then decoder).

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


# --------------------------------------------------------------------------- P-ved


def p_ved(a: Analysis, member: int = 0, n_traj: int = 3, max_points: int = 2000) -> plt.Figure:
    """P-ved: hidden states in PCA space (encoder orange, decoder purple), a few sample trajectories
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


# --------------------------------------------------------------------------- P-norm


def p_norm(analyses: Mapping[str, Analysis]) -> plt.Figure:
    """P-norm: M8 norm ratio ||mu|| / ||h - mu|| and M9 ||mu - h(null input)|| / ||mu||,
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


# --------------------------------------------------------------------------- temporal-only attention


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


# --------------------------------------------------------------------------- null input (M9)


def p_null_input(analyses: Mapping[str, Analysis], reference: Mapping[str, float] | None = None,
                 min_len: int | None = None) -> plt.Figure:
    """M9 against time: ``||mu_t - h_null_t|| / ||mu_t||`` (left) and the angle between ``mu_t`` and
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


# --------------------------------------------------------------------------- P-arch (Fig. 7)


def _box(ax, xy, w, h, color, text, fontsize=8):
    ax.add_patch(FancyBboxPatch(xy, w, h, boxstyle="round,pad=0.02,rounding_size=0.08", fc=color, ec="k",
                                lw=0.8, alpha=0.9))
    ax.text(xy[0] + w / 2, xy[1] + h / 2, text, ha="center", va="center", fontsize=fontsize, color="white")


def _arrow(ax, a, b, color, style="-|>", lw=1.2, rad=0.0):
    ax.add_patch(FancyArrowPatch(a, b, arrowstyle=style, mutation_scale=8, color=color, lw=lw,
                                 connectionstyle=f"arc3,rad={rad}"))


def p_arch(n_steps: int = 3) -> plt.Figure:
    """P-arch (Fig. 7): VED, AED and AO drawn as boxes and arrows.

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


# --------------------------------------------------------------------------- extras


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
