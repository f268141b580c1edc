"""Panels of attention: one sample's attention matrix, the average attention matrix standing in for each
sample's across tasks, where the attention finds its source, and learned attention before and after its
projections. Each function returns a matplotlib Figure; colours follow :mod:`.style`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from ... import plotting
from ..analysis import Analysis
from .style import ARCH_COLORS, COLORS, TASK_MARKERS
from .style import to_numpy as _np

__all__ = ["p_att", "p_aam", "p_groups", "p_source", "p_qkv_temporal", "p_qkv_values"]


def _sample_tokens(a: Analysis, i: int) -> tuple[list[str], list[str], int, int]:
    L_in, L_out = int(a.data.in_index[i]), int(a.data.out_index[i])
    ins = a.data.in_vocab.decode(a.data.inputs[i, : L_in + 1])
    outs = a.data.out_vocab.decode(a.data.targets[i, : L_out + 1])
    return ins, outs, L_in, L_out


def p_att(a: Analysis, member: int = 0, sample: int = 0) -> plt.Figure:
    """one sample's attention (rows: encoder step s, columns: decoder step t) and the
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
