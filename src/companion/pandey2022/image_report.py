"""Chapter-level functions for the image chapters (T-CIFAR-ENT, T-CIFAR-SPARSE, T-INIT, F-COCO, T-COCO):
the programs each chapter trains (built from its settings), the paper's numbers, tables and panels.

The paper's CIFAR/COCO numbers are copied from the reference note (§6), which took them from the
authors' repository ([REPO-AAAI], [REPO-EXPL], [REPO 13_COCO]). The AAAI CIFAR tables list one row per
seed; the means ± sd here are computed from those rows.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from .. import plotting
from . import captioning, image_train, images as images_mod, overlap

plotting.set_theme()

SOURCES = ("softmax", "sparsemax", "spherical")

# --------------------------------------------------------------------------------------------------
# The paper's numbers (note §6). Lists run over seeds 0, 1, 2.
# --------------------------------------------------------------------------------------------------
PAPER_CIFAR = {
    # (layer, normaliser, k) — "last" = the last conv layer (the paper's "sixth" on CIFAR): {metric: [seed0, seed1, seed2]}
    ("zeroth", "softmax", 0.0): {"train_acc": [99.12, 99.25, 99.41], "train_ftpt": [84.49, 79.69, 84.36],
                                 "train_sparsity": [3.78, 4.19, 3.93], "train_entropy": [0.884, 1.037, 0.923],
                                 "test_acc": [95.00, 95.58, 95.66], "test_ftpt": [81.13, 76.58, 81.71],
                                 "test_sparsity": [4.00, 4.51, 4.18], "test_entropy": [0.958, 1.124, 1.000]},
    ("zeroth", "softmax", 0.003): {"train_acc": [99.25, 99.14, 99.18], "train_ftpt": [85.68, 81.41, 85.55],
                                   "test_acc": [95.34, 95.16, 95.30], "test_ftpt": [82.15, 78.49, 82.30]},
    ("zeroth", "softmax", 0.005): {"train_acc": [98.99, 72.03, 98.89], "train_ftpt": [85.29, 36.13, 85.40],
                                   "test_acc": [95.17, 61.98, 94.91], "test_ftpt": [82.06, 36.41, 81.94]},
    ("last", "softmax", 0.0): {"train_acc": [99.42, 98.68, 98.79], "train_ftpt": [88.08, 81.83, 84.42],
                                "test_acc": [94.92, 94.20, 93.87], "test_ftpt": [84.19, 78.58, 80.44]},
    ("last", "softmax", 0.005): {"train_acc": [99.12, 99.52, 99.25], "train_ftpt": [88.07, 87.47, 86.89],
                                  "test_acc": [94.39, 95.58, 94.78], "test_ftpt": [83.63, 83.99, 82.98]},
    ("zeroth", "sparsemax", 0.0): {"train_acc": [99.01, 98.98, 99.05], "train_ftpt": [86.03, 85.74, 85.23],
                                   "train_sparsity": [1.89, 1.66, 1.95],
                                   "test_acc": [94.7, 95.32, 95.47], "test_ftpt": [82.88, 82.9, 82.51],
                                   "test_sparsity": [1.98, 1.73, 2.02]},
    ("last", "sparsemax", 0.0): {"train_acc": [98.95, 98.9, 99.15], "train_ftpt": [86.33, 83.00, 86.94],
                                  "train_sparsity": [2.33, 2.35, 2.37],
                                  "test_acc": [94.39, 94.59, 94.55], "test_ftpt": [82.26, 79.82, 82.56]},
    ("zeroth", "spherical", 0.0): {"train_acc": [99.26, 99.01, 99.13], "train_ftpt": [85.08, 84.54, 88.55],
                                   "train_sparsity": [4.78, 4.05, 4.00],
                                   "test_acc": [94.77, 94.81, 95.42], "test_ftpt": [81.62, 81.28, 85.26]},
    ("last", "spherical", 0.0): {"train_acc": [99.34, 98.97, 99.09], "train_ftpt": [87.80, 87.77, 85.81],
                                  "train_sparsity": [6.19, 4.75, 4.77],
                                  "test_acc": [94.17, 94.72, 93.34], "test_ftpt": [83.13, 83.78, 81.60]},
}

#: T-INIT, CNN-6 rows of the authors' 16-experiment table (one run each) [REPO-EXPL].
PAPER_INIT = {
    ("R", "R", "none"): {"train_acc": 33, "test_acc": 32, "train_ftpt": 6, "train_ffpt": 26, "test_ftpt": 6, "test_ffpt": 26},
    ("R", "R", "both"): {"train_acc": 99, "test_acc": 93, "train_ftpt": 85, "train_ffpt": 14, "test_ftpt": 80, "test_ffpt": 12},
    ("R", "R", "classify"): {"train_acc": 99, "test_acc": 44, "train_ftpt": 11, "train_ffpt": 87, "test_ftpt": 5, "test_ffpt": 38},
    ("P", "R", "both"): {"train_acc": 99, "test_acc": 97, "train_ftpt": 97, "train_ffpt": 2, "test_ftpt": 94, "test_ffpt": 2},
    ("P", "R", "classify"): {"train_acc": 99, "test_acc": 98, "train_ftpt": 99, "train_ffpt": 0, "test_ftpt": 98, "test_ffpt": 0},
    ("R", "P", "both"): {"train_acc": 99, "test_acc": 93, "train_ftpt": 86, "train_ffpt": 13, "test_ftpt": 82, "test_ffpt": 11},
    ("R", "P", "focus"): {"train_acc": 99, "test_acc": 95, "train_ftpt": 90, "train_ffpt": 8, "test_ftpt": 87, "test_ffpt": 7},
    ("P", "P", "none"): {"train_acc": 99, "test_acc": 99, "train_ftpt": 99, "train_ffpt": 0, "test_ftpt": 99, "test_ffpt": 0},
}
INIT_ROWS = tuple(PAPER_INIT)

#: T-COCO, average β over generated object words with a COCO box [REPO 13_COCO].
PAPER_COCO = {"random10": {"train": 0.181, "val": 0.181}, "top10": {"train": 0.369, "val": 0.367},
              "top20": {"train": 0.429, "val": 0.429}}
#: F-COCO per-image scores shown next to the heat maps.
PAPER_COCO_EXAMPLES = {"motorcycle": 0.371, "dog": 0.79, "baseball bat": 0.0, "man": 0.427, "frisbee": 0.065}


def mean_sd(values) -> tuple[float, float]:
    v = np.asarray(values, dtype=float)
    return float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0


def fmt(values, digits: int = 1) -> str:
    if values is None or len(values) == 0:
        return "—"
    m, s = mean_sd(values)
    return f"{m:.{digits}f} ± {s:.{digits}f}" if len(values) > 1 else f"{m:.{digits}f}"


def data_note(S) -> str:
    """One sentence saying which data the chapter ran on."""
    if S.data_dir is None:
        return ("Data: scikit-learn's 8×8 handwritten digits (foreground 0, 1, 2), **not CIFAR-10**; "
                "the paper's numbers are for CIFAR-10 mosaics and are shown for the direction of effects, "
                "not for agreement of values.")
    return f"Data: CIFAR-10 training batches from `{S.data_dir}` (foreground airplane, automobile, bird)."


# --------------------------------------------------------------------------------------------------
# T-CIFAR-ENT and T-CIFAR-SPARSE share their programs (one per averaging layer)
# --------------------------------------------------------------------------------------------------
def parse_ks(text: str) -> list[float]:
    try:
        ks = [float(t) for t in str(text).replace(" ", "").split(",") if t != ""]
    except ValueError:
        raise ValueError(f"entropy_ks must be comma-separated numbers, got {text!r}") from None
    if not ks or any(not 0.0 <= k < 1.0 for k in ks):
        raise ValueError(f"entropy_ks must hold values in [0, 1), got {text!r}")
    return sorted(set(ks))


def image_data(S) -> dict:
    return image_train.data_config(S.data_dir, S.n_train, S.n_test, data_seed=S.seed,
                                   max_images=S.max_images)


def seeds_of(S) -> list[int]:
    return list(range(S.seed, S.seed + S.n_seeds))


def ent_sparse_programs(S) -> dict:
    """Train (or load) the two programs behind T-CIFAR-ENT and T-CIFAR-SPARSE: for the zeroth and the last
    conv layer, every seed × (softmax at each k of ``entropy_ks``, sparsemax, spherical softmax)."""
    data = image_data(S)
    ks = parse_ks(S.entropy_ks)
    members = []
    for s in seeds_of(S):
        members += [image_train.member(s, k, "softmax") for k in ks]
        members += [image_train.member(s, 0.0, "sparsemax"), image_train.member(s, 0.0, "spherical")]
    out = {}
    for layer in (0, image_train.last_layer(data)):
        cfg = image_train.program_config(data, members, layer=layer, width=S.width, lr=S.lr, batch=S.batch,
                                         epochs=S.epochs, stop_loss=0.05)
        out[layer] = image_train.train_program(cfg)
    return out


def member_frame(results: dict) -> pd.DataFrame:
    """One row per trained member of every program in ``results`` ({layer: result})."""
    rows = []
    for layer, r in results.items():
        for i, m in enumerate(r["members"]):
            row = {"layer": "zeroth" if layer == 0 else "last", "conv_layer": int(layer), "normaliser": m["normaliser"], "k": m["k"],
                   "seed": m["seed"], "focus_init": m["focus_init"], "classify_init": m["classify_init"],
                   "train_part": m["train"], "stop_epoch": int(r["stop_epoch"][i])}
            for split in ("train", "test"):
                for key in ("acc", "ftpt", "ffpt", "ftpf", "ffpf", "sparsity", "simplex_dist", "entropy_bits"):
                    row[f"{split}_{key}"] = float(r[split][key][i])
            rows.append(row)
    return pd.DataFrame(rows)


def compare_table(df: pd.DataFrame, keys: list[tuple], metrics=("train_acc", "train_ftpt", "train_ffpt",
                  "test_acc", "test_ftpt", "test_sparsity", "test_entropy_bits")) -> pd.DataFrame:
    """Rows (layer, normaliser, k): ours as mean ± sd over seeds, the paper's CIFAR mean ± sd beside."""
    out = []
    for layer, norm, k in keys:
        sel = df[(df.layer == layer) & (df.normaliser == norm) & (np.isclose(df.k, k))]
        row = {"layer": layer, "normaliser": norm, "k": k, "runs": len(sel),
               "failed (acc<90)": int((sel.train_acc < 90).sum())}
        for mkey in metrics:
            row[f"ours {mkey}"] = fmt(sel[mkey].tolist(), 2 if any(w in mkey for w in ("sparsity", "entropy", "simplex")) else 1)
        pk = PAPER_CIFAR.get((layer, norm, k), {})
        for mkey in ("train_acc", "train_ftpt", "test_acc", "test_ftpt", "train_sparsity"):
            row[f"paper {mkey}"] = fmt(pk.get(mkey), 2 if "sparsity" in mkey else 1)
        out.append(row)
    return pd.DataFrame(out)


def group_stats(df: pd.DataFrame, layer: str, norm: str, k: float, col: str) -> list[float]:
    sel = df[(df.layer == layer) & (df.normaliser == norm) & (np.isclose(df.k, k))]
    return sel[col].tolist()


# --------------------------------------------------------------------------------------------------
# T-INIT
# --------------------------------------------------------------------------------------------------
def init_program(S) -> dict:
    """Every seed × the note's initialisation / training-part rows, zeroth-layer softmax, one program."""
    data = image_data(S)
    # (R, R, none) is not trained: it is the initial state of the (R, R, both) members (see init_frame)
    members = [image_train.member(s, 0.0, "softmax", fi, ci, part)
               for s in seeds_of(S) for (fi, ci, part) in INIT_ROWS if (fi, ci, part) != ("R", "R", "none")]
    cfg = image_train.program_config(data, members, layer=0, width=S.width, lr=S.lr, batch=S.batch,
                                     epochs=S.epochs, stop_loss=0.05, pretrain_epochs=S.pretrain_epochs)
    return image_train.train_program(cfg)


def init_frame(result: dict) -> pd.DataFrame:
    """Members of the T-INIT program, plus (R, R, none) rows read from the initial state of the
    (R, R, both) members (identical nets before any update)."""
    df = member_frame({0: result})
    rows = []
    for i, m in enumerate(result["members"]):
        if (m["focus_init"], m["classify_init"], m["train"]) == ("R", "R", "both"):
            row = df.iloc[i].to_dict()
            row.update({"train_part": "none", "stop_epoch": 0})
            for split in ("train", "test"):
                for key in ("acc", "ftpt", "ffpt", "ftpf", "ffpf", "sparsity", "simplex_dist", "entropy_bits"):
                    row[f"{split}_{key}"] = float(result["initial"][split][key][i])
            rows.append(row)
    return pd.concat([pd.DataFrame(rows), df], ignore_index=True)


def init_table(df: pd.DataFrame) -> pd.DataFrame:
    out = []
    for fi, ci, part in INIT_ROWS:
        sel = df[(df.focus_init == fi) & (df.classify_init == ci) & (df.train_part == part)]
        p = PAPER_INIT[(fi, ci, part)]
        row = {"focus init": fi, "classifier init": ci, "trained": part, "runs": len(sel)}
        for key in ("train_acc", "test_acc", "train_ftpt", "train_ffpt", "test_ftpt", "test_ffpt"):
            row[f"ours {key}"] = fmt(sel[key].tolist())
            row[f"paper {key}"] = p[key]
        out.append(row)
    return pd.DataFrame(out)


def init_select(df, fi, ci, part, col) -> list[float]:
    return df[(df.focus_init == fi) & (df.classify_init == ci) & (df.train_part == part)][col].tolist()


# --------------------------------------------------------------------------------------------------
# Panels
# --------------------------------------------------------------------------------------------------
def plot_category_bars(df: pd.DataFrame, group_cols: list[str], split: str = "train", title: str = ""):
    """Stacked bars of FTPT / FFPT / FTPF / FFPF (mean over seeds) per setting."""
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
    ax.set_xticks(range(len(g)))
    ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)
    ax.set_ylabel(f"% of {split} mosaics")
    ax.set_ylim(0, 100)
    ax.legend(ncol=4, fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    if title:
        ax.set_title(title, pad=24)
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
        ax.imshow(img.squeeze(-1) if img.shape[-1] == 1 else img.clip(0, 1), cmap="gray_r" if img.shape[-1] == 1 else None)
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


def _rect(x, y, w, h, colour):
    from matplotlib.patches import Rectangle

    return Rectangle((x, y), w, h, fill=False, edgecolor=colour, linewidth=2)


# --------------------------------------------------------------------------------------------------
# F-COCO / T-COCO
# --------------------------------------------------------------------------------------------------
def captioner(S) -> dict:
    cfg = captioning.captioner_config(seeds_of(S), S.n_train, S.n_test, S.epochs, data_seed=S.seed,
                                      width=S.width, lr=S.lr, data_dir=S.data_dir, max_images=S.max_images)
    return captioning.train_captioner(cfg)


def caption_data(S):
    return captioning.make_caption_data(S.n_train, S.n_test, S.seed, 3, S.data_dir, S.max_images)


def coco_frame(result: dict) -> pd.DataFrame:
    rows = []
    for e, s in enumerate(result["seeds"]):
        b = result["betas"][e]
        rows.append({"seed": s, "word acc %": float(result["word_acc"][e]),
                     "caption acc %": float(result["caption_acc"][e]), "words": b["n_words"],
                     "top10": b["top10"], "top20": b["top20"], "random10": b["random10"],
                     "random20": b["random20"], "peak in box %": b["peak_in_box"],
                     "top10 q10": b.get("top10_q10", float("nan")), "top10 median": b.get("top10_median", float("nan")),
                     "top10 q90": b.get("top10_q90", float("nan")), "% words top10 < 0.2": b.get("top10_below_0.2", float("nan")),
                     "box area fraction": b.get("box_area_fraction", float("nan"))})
    return pd.DataFrame(rows)


def coco_table(df: pd.DataFrame) -> pd.DataFrame:
    ok = df[df["word acc %"] >= 50]
    rows = []
    for key in ("random10", "top10", "top20"):
        rows.append({"score": key, "ours (all seeds)": fmt(df[key].tolist(), 3),
                     "ours (seeds with word acc ≥ 50 %)": fmt(ok[key].tolist(), 3) if len(ok) else "—",
                     "paper COCO train": PAPER_COCO[key]["train"], "paper COCO val": PAPER_COCO[key]["val"]})
    return pd.DataFrame(rows)


def plot_caption_examples(S, result: dict, member_index: int = 0, n: int = 4, class_names=None):
    """Per example image: the image with each caption object's box, then the upsampled attention of each
    generated word, with its top-10 % β."""
    _, test = caption_data(S)
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
        ax.imshow(img.squeeze(-1) if img.shape[-1] == 1 else img.clip(0, 1), cmap="gray_r" if img.shape[-1] == 1 else None)
        for tl in test.tiles[i].tolist():
            t, l, b, r = captioning.tile_box(tl, S_)
            ax.add_patch(_rect(l - 0.5, t - 0.5, r - l, b - t, "#1a7f37"))
        ax.set_title("truth: " + " ".join(names[int(c)] for c in test.tokens[i, :-1]), fontsize=8)
        for t in range(T):
            ax = axes[i, t + 1]
            up = overlap.upsample_attention(grid[i, t], (S_, S_))
            ax.imshow(img.squeeze(-1) if img.shape[-1] == 1 else img.clip(0, 1), cmap="gray_r" if img.shape[-1] == 1 else None)
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
    _, test = caption_data(S)
    grid = result["examples_alpha"][member_index]
    toks = result["examples_tokens"][member_index]
    S_ = test.size
    up = overlap.upsample_attention(grid[example, step], (S_, S_))
    w = int(toks[example, step])
    u = torch.zeros(S_, S_, dtype=torch.bool)
    if w < 10:
        for tl in (test.classes[example] == w).nonzero().flatten().tolist():
            u |= overlap.box_mask(S_, S_, captioning.tile_box(tl, S_))
    masks = {"attention": None, "top-10 %": overlap.topk_mask(up, 0.1), "top-20 %": overlap.topk_mask(up, 0.2),
             "random-10 %": overlap.random_mask(up.shape, 0.1, torch.Generator().manual_seed(seed))}
    fig, axes = plotting.new_figure(1, 4, width=2.2, height=2.4)
    img = test.images[example].permute(1, 2, 0).numpy() * 0.5 + 0.5
    for ax, (name, m) in zip(axes.ravel(), masks.items()):
        ax.imshow(img.squeeze(-1) if img.shape[-1] == 1 else img.clip(0, 1), cmap="gray_r" if img.shape[-1] == 1 else None)
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
