"""Panels of the image chapters: FTPT / FFPF bars, training curves, mosaics with their attention weights,
captioner heat maps with the objects' boxes and the overlap masks.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from .. import plotting
from . import captioning, overlap
from . import images as images_mod

plotting.set_theme()


# --------------------------------------------------------------------------------------------------
def plot_category_bars(df: pd.DataFrame, group_cols: list[str], split: str = "train", title: str = "",
                       paper: pd.DataFrame | None = None, paper_label: str = "authors"):
    """Stacked bars of FTPT / FFPT / FTPF / FFPF (mean over seeds) per setting.

    ``paper``: the authors' settings (the ``group_cols`` and ``{split}_ftpt``, ``{split}_ffpt``, mean over
    their runs); where a bar's setting is one of theirs, their FTPT (diamond) and FTPT + FFPT (triangle) are
    marked on it, in the legend as ``paper_label``."""
    cats = ["ftpt", "ffpt", "ftpf", "ffpf"]
    g = df.groupby(group_cols, sort=False)[[f"{split}_{c}" for c in cats]].mean()
    labels = [" / ".join(str(v) for v in (idx if isinstance(idx, tuple) else (idx,))) for idx in g.index]
    fig, ax = plotting.new_figure(width=max(4.0, 0.75 * len(labels) + 2), height=3.4)
    bottom = np.zeros(len(g))
    colours = ["#222222", "#888888", "#4c72b0", "#dd8452"]
    for c, col in zip(cats, colours):
        vals = g[f"{split}_{c}"].to_numpy()
        ax.bar(range(len(g)), vals, bottom=bottom, color=col, label=c.upper())
        bottom += vals
    marked = _paper_marks(g.index, group_cols, paper, split) if paper is not None else []
    for n, (i, ftpt, ffpt) in enumerate(marked):
        first = n == 0
        ax.plot([i], [ftpt], "D", ms=7, mfc="white", mec="#c0392b", mew=1.6, clip_on=False,
                label=f"{paper_label}: FTPT" if first else None)
        ax.plot([i], [ftpt + ffpt], "v", ms=7, mfc="white", mec="#c0392b", mew=1.6, clip_on=False,
                label=f"{paper_label}: FTPT + FFPT" if first else None)
    ax.set_xticks(range(len(g)))
    ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)
    ax.set_ylabel(f"% of {split} mosaics")
    ax.set_ylim(0, 100)
    handles, names = ax.get_legend_handles_labels()
    order = sorted(range(len(names)), key=lambda j: names[j].startswith(paper_label))  # ours first
    ax.legend([handles[j] for j in order], [names[j] for j in order], ncol=3 if marked else 4, fontsize=8,
              loc="lower center", bbox_to_anchor=(0.5, 1.0))
    if title:
        ax.set_title(title, pad=38 if marked else 24)
    return fig


def _paper_marks(index, group_cols: list[str], paper: pd.DataFrame,
                 split: str) -> list[tuple[int, float, float]]:
    """(bar position, the authors' FTPT, their FFPT) for every bar whose setting the authors ran (numbers
    compared with np.isclose, so k = 0.003 matches whatever float the run stored)."""
    out = []
    for i, idx in enumerate(index):
        key = idx if isinstance(idx, tuple) else (idx,)
        keep = np.ones(len(paper), dtype=bool)
        for col, v in zip(group_cols, key):
            col_v = paper[col].to_numpy()
            keep &= (np.isclose(col_v.astype(float), float(v)) if isinstance(v, (int, float, np.number))
                     and not isinstance(v, bool) else col_v == v)
        rows = paper[keep]
        if len(rows) == 1 and pd.notna(rows[f"{split}_ftpt"].iloc[0]):
            out.append((i, float(rows[f"{split}_ftpt"].iloc[0]), float(rows[f"{split}_ffpt"].iloc[0])))
    return out


def plot_paired_seeds(df: pd.DataFrame, column: str, settings: list[tuple[str, dict]], ylabel: str = "",
                      title: str = ""):
    """One thin line per seed through ``column`` at each setting (a label and a ``column=value`` filter), the
    mean over seeds thick: the paired comparisons the claims make, seed by seed."""
    fig, ax = plotting.new_figure(width=max(4.0, 1.2 * len(settings) + 1.5), height=3.2)
    per = []
    for _, where in settings:
        sel = df
        for key, v in where.items():
            sel = sel[np.isclose(sel[key], v)] if isinstance(v, float) else sel[sel[key] == v]
        per.append(sel.set_index("seed")[column])
    table = pd.concat(per, axis=1)
    x = np.arange(len(settings))
    for j, (seed, row) in enumerate(table.iterrows()):
        ax.plot(x, row.to_numpy(dtype=float), "o-", color=plotting.PALETTE[j % len(plotting.PALETTE)],
                lw=1, ms=3, alpha=0.8, label=f"seed {seed}")
    ax.plot(x, table.mean(axis=0).to_numpy(dtype=float), "s-", color="black", lw=2.5, ms=6, label="mean")
    ax.set_xticks(x)
    ax.set_xticklabels([label for label, _ in settings], fontsize=8)
    ax.set_ylabel(ylabel or column)
    ax.legend(fontsize=7, ncol=2)
    if title:
        ax.set_title(title)
    return fig


def plot_curves(result: dict, indices, labels, key_pairs=(("ftpt", "-"), ("ffpt", "--"))):
    """Training-minibatch FTPT (solid) and FFPT (dashed) against epoch for selected members."""
    fig, ax = plotting.new_figure(width=5.0, height=3.2)
    for j, (i, lab) in enumerate(zip(indices, labels)):
        col = plotting.PALETTE[j % len(plotting.PALETTE)]
        for key, ls in key_pairs:
            y = result["curves"][key][i].numpy()
            ax.plot(np.arange(1, len(y) + 1), y, ls, color=col, label=f"{lab} {key.upper()}")
    ax.set_xlabel("epoch")
    ax.set_ylabel("% of training minibatches")
    ax.legend(fontsize=7, ncol=2)
    return fig


def plot_mosaic_attention(split: images_mod.MosaicSplit, result: dict, member_index: int, n: int = 6,
                          title: str = ""):
    """Test mosaics with the attention weight of each tile; the foreground tile is outlined green, the
    attended (argmax) tile red when it differs."""
    n = min(n, result["examples_alpha"].shape[1])
    fig, axes = plotting.new_figure(1, n, width=2.0, height=2.25)
    axes = np.atleast_1d(axes).ravel()
    alpha = result["examples_alpha"][member_index]
    pred = result["examples_pred"][member_index]
    names = split.fg_names()
    for j in range(n):
        ax = axes[j]
        segs = split.test.segments(slice(j, j + 1))[0]
        img = images_mod.mosaic_grid(segs).permute(1, 2, 0).numpy() * 0.5 + 0.5
        h = segs.shape[-1]
        _show(ax, img)
        fore = int(split.test.fore_idx[j])
        focus = int(alpha[j].argmax())
        for t in range(9):
            r, c = divmod(t, 3)
            ax.text(c * h + h / 2, r * h + h * 0.92, f"{float(alpha[j, t]):.2f}", ha="center", va="bottom",
                    fontsize=7, color="#cf222e" if t == focus else "#0b5394")
        for t, colr in ((fore, "#1a7f37"), (focus, "#cf222e")):
            if t == fore and colr == "#cf222e":
                continue
            r, c = divmod(t, 3)
            ax.add_patch(_rect(c * h - 0.5, r * h - 0.5, h, h, colr))
        ax.set_title(f"y={names[int(split.test.labels[j])]}  ŷ={names[int(pred[j])]}", fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
    if title:
        fig.suptitle(title, fontsize=9)
    return fig


def _show(ax, img) -> None:
    """An image in [0, 1] (H, W, C): grey digits, colour CIFAR-10."""
    grey = img.shape[-1] == 1
    ax.imshow(img.squeeze(-1) if grey else img.clip(0, 1), cmap="gray_r" if grey else None)


def _rect(x, y, w, h, colour):
    from matplotlib.patches import Rectangle

    return Rectangle((x, y), w, h, fill=False, edgecolor=colour, linewidth=2)


def plot_beta_bars(frame: pd.DataFrame, table: pd.DataFrame):
    """Mean β of each mask: a dot per captioner, a bar for their mean, a cross for the authors' COCO value."""
    keys = ["top10", "top20", "random10"]
    paper = table.set_index("score")["paper COCO train"]
    fig, ax = plotting.new_figure(width=4.2, height=3.0)
    for i, key in enumerate(keys):
        vals = frame[key].to_numpy(dtype=float)
        ax.bar(i, np.nanmean(vals), color=plotting.PALETTE[i % len(plotting.PALETTE)], alpha=0.5)
        ax.plot(np.full(len(vals), i), vals, "o", color="#222222", ms=4)
        label = "paper (COCO train)" if i == 0 else None
        ax.plot(i, paper[key], "x", color="#cf222e", ms=9, mew=2, label=label)
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels(["top-10 %", "top-20 %", "random-10 %"])
    ax.set_ylabel("mean β over correct object words")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    return fig


def plot_caption_examples(S, result: dict, member_index: int = 0, n: int = 4, class_names=None):
    """Per example image: the image with each caption object's box, then the upsampled attention of each
    generated word, with its top-10 % β."""
    _, test = _caption_data(S)
    toks = result["examples_tokens"][member_index]
    grid = result["examples_alpha"][member_index]
    n = min(n, grid.shape[0])
    T = toks.shape[1] - 1
    fig, axes = plotting.new_figure(n, T + 1, width=1.9, height=2.0)
    names = class_names or [str(i) for i in range(10)]
    S_ = test.size
    for i in range(n):
        img = test.images[i].permute(1, 2, 0).numpy() * 0.5 + 0.5
        ax = axes[i, 0]
        _show(ax, img)
        for tl in test.tiles[i].tolist():
            t, l, b, r = captioning.tile_box(tl, S_)
            ax.add_patch(_rect(l - 0.5, t - 0.5, r - l, b - t, "#1a7f37"))
        ax.set_title("truth: " + " ".join(names[int(c)] for c in test.tokens[i, :-1]), fontsize=8)
        for t in range(T):
            ax = axes[i, t + 1]
            up = overlap.upsample_attention(grid[i, t], (S_, S_))
            _show(ax, img)
            ax.imshow(up.numpy(), cmap="magma", alpha=0.6)
            w = int(toks[i, t])
            label = names[w] if w < 10 else "<end>"
            beta = float("nan")
            if w < 10:
                u = torch.zeros(S_, S_, dtype=torch.bool)
                for tl in (test.classes[i] == w).nonzero().flatten().tolist():
                    u |= overlap.box_mask(S_, S_, captioning.tile_box(tl, S_))
                    t0, l0, b0, r0 = captioning.tile_box(tl, S_)
                    ax.add_patch(_rect(l0 - 0.5, t0 - 0.5, r0 - l0, b0 - t0, "#1a7f37"))
                if u.any():
                    beta = float(overlap.beta(u, overlap.topk_mask(up, 0.1)))
            ax.set_title(f"'{label}'  β10={beta:.2f}" if not math.isnan(beta) else f"'{label}'", fontsize=8)
    for ax in axes.ravel():
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
    return fig


def plot_mask_panels(S, result: dict, member_index: int = 0, example: int = 0, step: int = 0, seed: int = 0):
    """The paper's motivation panels for one word: full attention, top-10 %, top-20 %, random-10 % masks
    with the object's box, and β of each."""
    _, test = _caption_data(S)
    grid = result["examples_alpha"][member_index]
    toks = result["examples_tokens"][member_index]
    S_ = test.size
    up = overlap.upsample_attention(grid[example, step], (S_, S_))
    w = int(toks[example, step])
    u = torch.zeros(S_, S_, dtype=torch.bool)
    if w < 10:
        for tl in (test.classes[example] == w).nonzero().flatten().tolist():
            u |= overlap.box_mask(S_, S_, captioning.tile_box(tl, S_))
    masks = {"attention": None, "top-10 %": overlap.topk_mask(up, 0.1),
             "top-20 %": overlap.topk_mask(up, 0.2),
             "random-10 %": overlap.random_mask(up.shape, 0.1, torch.Generator().manual_seed(seed))}
    fig, axes = plotting.new_figure(1, 4, width=2.2, height=2.4)
    img = test.images[example].permute(1, 2, 0).numpy() * 0.5 + 0.5
    for ax, (name, m) in zip(axes.ravel(), masks.items()):
        _show(ax, img)
        if m is None:
            ax.imshow(up.numpy(), cmap="magma", alpha=0.6)
            ax.set_title(f"attention for '{w if w < 10 else '<end>'}'", fontsize=8)
        else:
            ax.imshow(m.numpy(), cmap="Reds", alpha=0.55)
            ax.set_title(f"{name}: β={float(overlap.beta(u, m)):.2f}" if u.any() else name, fontsize=8)
        ys, xs = torch.nonzero(u, as_tuple=True)
        if len(ys):
            for tl in (test.classes[example] == w).nonzero().flatten().tolist():
                t0, l0, b0, r0 = captioning.tile_box(tl, S_)
                ax.add_patch(_rect(l0 - 0.5, t0 - 0.5, r0 - l0, b0 - t0, "#1a7f37"))
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
    return fig


def _caption_data(S):
    return captioning.make_caption_data(S.n_train, S.n_test, S.seed, 3, S.data_dir, S.max_images)
