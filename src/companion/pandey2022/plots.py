"""Figures of the Pandey et al. (2022) chapters. Every function returns a matplotlib Figure.

Error-mode panels (reconstructed layout): (a) base data, foreground
classes coloured and background brown; (b) contour of the learned focus *score* f(x) over the plane
with 25 base points per class; (c) decision regions of the classification net (argmax over a grid of
candidate averaged points) with 25 averaged points z per class; (d) FTPT (black solid), FFPT (black
dashed), FTPF (grey solid), FFPF (grey dashed) in % against epochs.
"""
from __future__ import annotations

import textwrap

import numpy as np
import seaborn as sns
import torch

from ..plotting import PALETTE, new_figure, set_theme
from .metrics import CATEGORIES

set_theme()

BG_COLOUR = "#8c564b"  # brown, as in the authors' figures
CAT_STYLE = {"ftpt": ("black", "-"), "ffpt": ("black", "--"), "ftpf": ("grey", "-"), "ffpf": ("grey", "--")}
CAT_LABEL = {"ftpt": "FTPT", "ffpt": "FFPT", "ftpf": "FTPF", "ffpf": "FFPF"}

#: Plot windows of the note (x range, y range) per error-mode distribution.
GRIDS = {"dist1": ((0, 10), (-6, 6)), "dist2": ((-4, 10), (-8.5, 6)), "dist4": ((1.4, 2.42), (-3.5, 8.5)),
         "d1": ((1.5, 8), (2, 9))}


_FG_ORDER = [0, 1, 2, 3, 4, 6, 7, 8, 9]  # skip the palette's brown: brown marks background


def _fg_colour(c):
    return PALETTE[_FG_ORDER[c % len(_FG_ORDER)]]


def _grid(name, n=200):
    (x0, x1), (y0, y1) = GRIDS[name]
    xx, yy = np.meshgrid(np.linspace(x0, x1, n), np.linspace(y0, y1, n))
    return xx, yy, torch.tensor(np.stack([xx.ravel(), yy.ravel()], 1))


def scatter_data(ax, data, per_class=None, marker="o", s=8):
    bx, by = data.base_x.numpy(), data.base_y.numpy()
    for c in sorted(set(by.tolist())):
        pts = bx[by == c][:per_class]
        is_fg = c in data.fg_classes
        lab = f"fg {c}" if is_fg else ("bg" if c == data.bg_classes[0] else None)
        ax.scatter(pts[:, 0], pts[:, 1], s=s, marker=marker, color=_fg_colour(c) if is_fg else BG_COLOUR,
                   label=lab, alpha=0.8 if marker == "o" else 1.0, linewidths=1)
    ax.set_xlabel("$x_1$")
    ax.set_ylabel("$x_2$")


def category_curves(ax, epochs, curves: dict, member: int = 0, title=None):
    for cat in CATEGORIES:
        col, ls = CAT_STYLE[cat]
        ax.plot(np.asarray(epochs), curves[cat][member].numpy(), color=col, ls=ls, lw=2.5,
                label=CAT_LABEL[cat])
    ax.set_xlabel("epoch")
    ax.set_ylabel("% of mosaics")
    ax.set_ylim(-3, 103)
    if title:
        ax.set_title(title)


@torch.no_grad()
def error_mode_panels(data, ens, result, member: int = 0, normaliser="softmax", split="test"):
    """The four panels (a)-(d) for one member of a trained error-mode ensemble."""
    name = data.name
    fig, axes = new_figure(1, 4, width=3.6, height=3.3)
    axes = axes.ravel()
    ax = axes[0]
    scatter_data(ax, data)
    ax.set_title("(a) data")
    ax.legend(fontsize=7, markerscale=1.5, loc="best")

    xx, yy, pts = _grid(name)
    pts = pts.to(ens.dtype).reshape(-1, 1, 2)  # each grid point as a one-segment "mosaic"
    scores, _ = ens.focus_scores(pts)
    f = scores[member, :, 0].reshape(xx.shape).numpy()
    ax = axes[1]
    cs = ax.contourf(xx, yy, f, levels=60, cmap="viridis")
    fig.colorbar(cs, ax=ax, shrink=0.8, label="focus score f(x)")
    scatter_data(ax, data, per_class=25, marker="x", s=25)
    ax.set_title("(b) focus score")

    logits = ens.classify(pts.reshape(1, -1, 2).expand(ens.size, -1, -1).contiguous())
    region = logits[member].argmax(-1).reshape(xx.shape).numpy()
    ax = axes[2]
    K = data.n_classes
    cols = [_fg_colour(c) for c in range(K)]
    ax.contourf(xx, yy, region, levels=np.arange(-0.5, K), colors=cols, alpha=0.25)
    tr = ens(data.x_train.to(ens.dtype))
    z = tr.z[member].numpy()
    y = data.y_train.numpy()
    for c in range(K):
        zc = z[y == c][:25]
        ax.scatter(zc[:, 0], zc[:, 1], marker="x", s=25, color=cols[c], label=f"z of class {c}")
    ax.set_xlim(*GRIDS[name][0])
    ax.set_ylim(*GRIDS[name][1])
    ax.set_xlabel("$z_1$")
    ax.set_ylabel("$z_2$")
    ax.set_title("(c) decision regions, averaged z")
    ax.legend(fontsize=7, loc="best")

    category_curves(axes[3], result["epochs"], result["curves"][split], member, f"(d) categories ({split})")
    axes[3].legend(fontsize=7, loc="center right")
    return fig


def ensemble_outcomes(ffpt, acc, seeds, highlight=None, title="final FFPT vs accuracy per seed"):
    """Scatter of final accuracy vs FFPT, one point per seed (where does each run land?)."""
    fig, ax = new_figure(1, 1, width=4.8, height=3.6)
    ffpt, acc = np.asarray(ffpt), np.asarray(acc)
    ax.scatter(ffpt, acc, s=30, color=PALETTE[0], zorder=3)
    if highlight is not None:
        i = list(seeds).index(highlight)
        ax.scatter([ffpt[i]], [acc[i]], s=120, facecolors="none", edgecolors=PALETTE[3], lw=2, zorder=4,
                   label=f"showcased seed {highlight}")
        ax.legend(fontsize=8)
    ax.set_xlabel("FFPT (%)")
    ax.set_ylabel("accuracy (%)")
    ax.set_title(title)
    return fig


def ensemble_curves(epochs, curves, cat="ffpt", labels=None, title=None):
    """One category's curve for every member (thin lines) and their mean (thick)."""
    fig, ax = new_figure(1, 1, width=5, height=3.4)
    v = curves[cat].numpy()
    for e in range(v.shape[0]):
        ax.plot(np.asarray(epochs), v[e], color="grey", lw=0.8, alpha=0.6)
    ax.plot(np.asarray(epochs), v.mean(0), color="black", lw=2.5, label=f"mean {CAT_LABEL[cat]}")
    ax.set_xlabel("epoch")
    ax.set_ylabel(f"{CAT_LABEL[cat]} (%)")
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title)
    return fig


def table_heatmap(frame, value: str, row: str, col: str, title=None, fmt=".1f", cmap="viridis",
                  vmin=0, vmax=100, ax=None):
    """Heatmap of ``value`` averaged over a long-format table's rows (one cell per (row, col))."""
    pivot = frame.pivot_table(index=row, columns=col, values=value, aggfunc="mean")
    if ax is None:
        fig, ax = new_figure(1, 1, width=max(3.5, 1.1 * pivot.shape[1] + 1.5),
                             height=max(2.5, 0.6 * pivot.shape[0] + 1))
    else:
        fig = ax.figure
    sns.heatmap(pivot, annot=True, fmt=fmt, cmap=cmap, vmin=vmin, vmax=vmax, ax=ax, cbar=False)
    if title:
        ax.set_title(title)
    return fig


def paired_heatmaps(frame, value_ours: str, value_paper: str, row: str, col: str, title=""):
    """Paper (left) and ours (right) as two heatmaps on one colour scale."""
    fig, axes = new_figure(1, 2, width=4.2, height=max(2.6, 0.55 * frame[row].nunique() + 1.2))
    axes = axes.ravel()
    table_heatmap(frame, value_paper, row, col, title=f"paper: {title}", ax=axes[0])
    table_heatmap(frame, value_ours, row, col, title=f"ours: {title}", ax=axes[1])
    return fig


def trend_grid(epochs, curves, members: list, titles: list, ncols: int = 4):
    """F-TREND: the four category curves of several runs, one small panel per run."""
    n = len(members)
    nrows = (n + ncols - 1) // ncols
    fig, axes = new_figure(nrows, ncols, width=3.0, height=2.5, squeeze=False)
    for i, ax in enumerate(axes.flat):
        if i >= n:
            ax.axis("off")
            continue
        category_curves(ax, epochs, curves, members[i], titles[i])
        if i:
            ax.set_xlabel("")
    axes.flat[0].legend(fontsize=6)
    return fig


def trend_panels(items: list[dict], ncols: int = 3):
    """F-TREND across settings: one panel per setting (``label``, a program ``result`` and the ``members``
    that are its runs), the mean over its runs of each category's training curve (thick) and every run's
    FFPT (thin dashed)."""
    n = len(items)
    ncols = max(1, min(ncols, n))
    nrows = (n + ncols - 1) // ncols
    fig, axes = new_figure(nrows, ncols, width=3.0, height=2.4, squeeze=False, sharey=True)
    for i, ax in enumerate(axes.flat):
        if i >= n:
            ax.axis("off")
            continue
        it = items[i]
        ep, cur, idx = np.asarray(it["result"]["epochs"]), it["result"]["curves"]["train"], it["members"]
        for e in idx:
            ax.plot(ep, cur["ffpt"][e].numpy(), color="black", ls="--", lw=0.6, alpha=0.35)
        for cat in CATEGORIES:
            col, ls = CAT_STYLE[cat]
            ax.plot(ep, cur[cat][idx].numpy().mean(0), color=col, ls=ls, lw=2.2, label=CAT_LABEL[cat])
        ax.set_ylim(-3, 103)
        ax.set_title(textwrap.fill(it["label"], 32), fontsize=9)
        ax.set_xlabel("epoch" if i >= n - ncols else "")
        if i % ncols == 0:
            ax.set_ylabel("% of training mosaics")
    axes.flat[0].legend(fontsize=6)
    return fig


def max_alpha_hist(split: dict, title="largest attention weight", ax=None):
    """F-ALPHA: histograms of max alpha for interpretable (FTPT) and non-interpretable (FFPT) points."""
    if ax is None:
        fig, ax = new_figure(1, 1, width=4.5, height=3.2)
    else:
        fig = ax.figure
    bins = np.linspace(0, 1, 41)
    for key, col in (("ftpt", PALETTE[0]), ("ffpt", PALETTE[3])):
        v = split[key].numpy()
        if v.size:
            ax.hist(v, bins=bins, color=col, alpha=0.6, density=True, label=f"{CAT_LABEL[key]} (n={v.size})")
    ax.set_xlabel("max$_j$ alpha$_j$")
    ax.set_ylabel("density")
    ax.set_title(title)
    ax.legend(fontsize=8)
    return fig


def trend_lines(frame, x: str, y: str, hue: str, title=None, ylabel=None, paper=None,
                paper_label: str = "authors"):
    """Mean +- sd of ``y`` against ``x`` (e.g. FTPT vs classifier width), one line per ``hue``,
    with every run as a faint dot.

    ``paper``: the authors' runs, ``{x value: [one value per run]}``; drawn beside ours at each ``x`` they
    ran as black crosses (their runs) and a black diamond with bars (their mean +- sd), in the legend
    as ``paper_label``."""
    fig, ax = new_figure(1, 1, width=4.8, height=3.4)
    xs = list(dict.fromkeys(frame[x].tolist()))
    pos = {v: i for i, v in enumerate(xs)}
    hues = list(dict.fromkeys(frame[hue].tolist()))
    for j, h in enumerate(hues):
        g = frame[frame[hue] == h]
        off = (j - (len(hues) - 1) / 2) * 0.08
        st = g.groupby(x, sort=False)[y].agg(["mean", "std"]).reindex([v for v in xs if v in set(g[x])])
        px = [pos[v] + off for v in st.index]
        col = PALETTE[j % len(PALETTE)]
        ax.errorbar(px, st["mean"], yerr=st["std"].fillna(0), marker="o", capsize=3, color=col,
                    label=f"ours: {hue} {h}" if paper else f"{hue} {h}")
        ax.scatter([pos[v] + off for v in g[x]], g[y], s=10, color=col, alpha=0.35)
    if paper:
        # to the right of ours, so the two never hide each other
        shown = [(pos[v], np.asarray(vals, dtype=float)) for v, vals in paper.items()
                 if v in pos and len(vals)]
        off = (len(hues) + 1) / 2 * 0.08 + 0.06
        for k, (p, vals) in enumerate(shown):
            sd = vals.std(ddof=1) if len(vals) > 1 else 0.0
            ax.errorbar([p + off], [vals.mean()], yerr=[sd], marker="D", ms=6, capsize=3, color="black",
                        mfc="white", lw=1.2, label=f"{paper_label}: mean ± sd" if k == 0 else None)
            ax.scatter(np.full(len(vals), p + off), vals, marker="x", s=18, color="black", lw=1,
                       label=f"{paper_label}: each run" if k == 0 else None, zorder=3)
    ax.set_xticks(range(len(xs)), [str(v) for v in xs])
    ax.set_xlabel(x)
    ax.set_ylabel(ylabel or y)
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title)
    return fig


def architecture_schematic():
    """F-ARCH: the SDC attention model drawn with boxes and arrows (no data involved)."""
    fig, ax = new_figure(1, 1, width=9.5, height=4.2)
    ax.axis("off")
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 5)
    box = dict(boxstyle="round,pad=0.3", fc="white", ec="black")
    for j, yv in enumerate(np.linspace(4.4, 0.6, 5)):
        lab = ("$x_J$ (foreground)" if j == 2
               else ("$\\vdots$" if j == 3 else f"$x_{{{j + 1 if j < 3 else 9}}}$"))
        fc = "#fde0b6" if j == 2 else "#e8e8e8"
        ax.text(0.7, yv, lab, ha="center", va="center", bbox=dict(boxstyle="round", fc=fc, ec="grey"),
                fontsize=9)
        ax.annotate("", xy=(2.2, yv), xytext=(1.45, yv), arrowprops=dict(arrowstyle="->"))
    ax.text(2.9, 2.5, "focus_net f\n(shared weights,\napplied to each\nsegment)", ha="center", va="center",
            bbox=dict(boxstyle="round,pad=0.5", fc="#cfe2f3", ec="black"), fontsize=9)
    ax.annotate("", xy=(4.5, 3.3), xytext=(3.7, 3.0), arrowprops=dict(arrowstyle="->"))
    ax.text(5.1, 3.4, "scores $f(x_j)$\n$\\to$ alpha = softmax /\nsparsemax / spherical", ha="center",
            va="center", bbox=box, fontsize=8)
    ax.annotate("", xy=(4.5, 1.6), xytext=(3.7, 2.0), arrowprops=dict(arrowstyle="->"))
    ax.text(5.1, 1.5, "features $\\phi_\\ell(x_j)$\n$\\ell=0$: $x_j$;  "
            "$\\ell\\geq1$:\ntanh(layer $\\ell$ of f)",
            ha="center", va="center", bbox=box, fontsize=8)
    ax.annotate("", xy=(6.5, 2.5), xytext=(5.9, 3.2), arrowprops=dict(arrowstyle="->"))
    ax.annotate("", xy=(6.5, 2.5), xytext=(5.9, 1.7), arrowprops=dict(arrowstyle="->"))
    ax.text(7.0, 2.5, "$z=\\sum_j \\alpha_j\\,\\phi_\\ell(x_j)$", ha="center", va="center", bbox=box,
            fontsize=9)
    ax.annotate("", xy=(8.0, 2.5), xytext=(7.75, 2.5), arrowprops=dict(arrowstyle="->"))
    ax.text(8.9, 2.5, "classification_net g\n$\\hat y=\\arg\\max g(z)$", ha="center", va="center",
            bbox=dict(boxstyle="round,pad=0.5", fc="#d9ead3", ec="black"), fontsize=9)
    ax.text(5.0, 0.1, "interpretable on x  $\\Leftrightarrow$  "
            "$\\arg\\max_j \\alpha_j = J$ (the foreground index)",
            ha="center", fontsize=9, style="italic")
    return fig


def mosaic_example(data, index: int = 0):
    """One mosaic of a 2-D dataset: the 9 segments over the base data, foreground highlighted."""
    fig, ax = new_figure(1, 1, width=4.6, height=3.8)
    scatter_data(ax, data, s=4)
    seg = data.x_train[index].numpy()
    J = int(data.fore_train[index])
    ax.scatter(seg[:, 0], seg[:, 1], s=80, facecolors="none", edgecolors="black", lw=1.5, label="segments")
    ax.scatter([seg[J, 0]], [seg[J, 1]], s=160, marker="*", color="gold", edgecolors="black",
               label=f"foreground (J={J}, y={int(data.y_train[index])})")
    ax.legend(fontsize=7, loc="best")
    ax.set_title(f"{data.name}: mosaic #{index}")
    return fig


def category_figure(epochs, curves, member: int = 0, title=None):
    """Panel (d) alone: the four category curves of one run."""
    fig, ax = new_figure(1, 1, width=4.6, height=3.3)
    category_curves(ax, epochs, curves, member, title)
    ax.legend(fontsize=7, loc="center right")
    return fig
