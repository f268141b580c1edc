"""Synthetic selective-dependence (SDC) data of Pandey et al. (2022): base points and 9-segment mosaics.

Every mosaic has ``M = 9`` segments; exactly one (at ``fore_idx``) is drawn from a *foreground*
class, which is also the mosaic's label; the other eight come from *background* classes and carry no
label information. The attention model is interpretable on a mosaic when its largest weight falls on
``fore_idx``.

Constructions:

* ``dist1`` / ``dist2`` / ``dist4``: the error-mode toy distributions (uniform boxes in 2-D). The
  authors drew the dist-1/2 base points without a seed; here every draw comes from
  ``numpy.random.RandomState(data_seed)`` (base points first, then train mosaics, then test mosaics).
  dist-4 mosaics use one ``RandomState`` per mosaic (seed ``j`` for train mosaic ``j``, ``3000 + j``
  for test), as the authors' per-mosaic reseeding does.
* ``d1`` (Dataset 1) and ``d2`` (Dataset 2): base points from ``RandomState(12)`` and one
  ``RandomState(j)`` per mosaic ``j`` in 0..5999, first 3000 = train, last 3000 = test, as in the
  authors' scripts (legacy NumPy streams, so the draws are reproducible across machines).

Tensors are returned in float64 (the authors' dtype); callers cast if they train in float32.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import torch

M = 9  #: segments per mosaic in every experiment of the paper

#: Uniform boxes of the error-mode distributions: class -> ((x1_low, x1_high), (x2_low, x2_high)).
#: The last class of each entry is background. Order of the bounds as written in the note; numpy
#: samples between them even when low > high, so we store them sorted.
BOXES = {
    "dist1": [((5, 6), (2, 4)), ((5, 6), (-5, -3)), ((8, 9), (-2, 0)), ((1, 2), (-1, 5))],
    "dist2": [((5, 6), (2, 4)), ((5, 6), (-5, -3)), ((-3, -2), (-2, 0)), ((1, 2), (-8, 5))],
    "dist4": [((1.5, 1.6), (7, 7.1)), ((1.5, 1.6), (5, 5.1)), ((1.5, 1.6), (3, 3.1)),
              ((1.5, 1.6), (1, 1.1)), ((1.5, 1.6), (-1, -0.9)), ((1.5, 1.6), (-3, -2.9)),
              ((2.1, 2.2), (2.0, 2.1))],
}
BASE_SIZE = {"dist1": 1200, "dist2": 1200, "dist4": 2100}

#: Dataset 1: class means (covariance 0.01 I); classes 0-2 foreground, 3-9 a ring of background.
D1_MEANS = [(4, 6.5), (5.5, 6), (4.5, 4.5), (3, 3.5), (2.5, 5.5), (3.5, 8), (5.5, 8), (7, 6.5),
            (6.5, 4.5), (5, 3)]
#: Dataset 2: 5-D means; covariance = ones(5,5) + 15 e_k e_k^T with k = D2_STRETCH[c].
D2_MEANS = [(3, 3, 3, 3, 0), (4, 4, 4, 4, 0), (10, 5, 5, 10, 0), (-10, -10, -10, -10, 0),
            (-21, 4, 4, -21, 0), (-10, 18, 18, -10, 0), (4, 20, 4, 20, 0), (4, -20, -20, 4, 0),
            (20, 20, 20, 20, 0), (20, -10, -10, 20, 0)]
D2_STRETCH = [1, 0, 1, 1, 0, 1, 0, 0, 1, 1]

DATASETS = ("dist1", "dist2", "dist4", "d1", "d2")


@dataclass
class MosaicData:
    """A train/test pair of mosaic sets plus the base points they were cut from (for plots)."""

    name: str
    x_train: torch.Tensor      # (N, 9, d) float64
    y_train: torch.Tensor      # (N,) int64, foreground class re-indexed 0..K-1
    fore_train: torch.Tensor   # (N,) int64, position of the foreground segment
    x_test: torch.Tensor
    y_test: torch.Tensor
    fore_test: torch.Tensor
    base_x: torch.Tensor       # (N_base, d) float64
    base_y: torch.Tensor       # (N_base,) int64 base class
    n_classes: int             # K (foreground classes)
    fg_classes: tuple = field(default=())
    bg_classes: tuple = field(default=())

    @property
    def dim(self) -> int:
        return self.x_train.shape[-1]

    def describe(self) -> dict:
        return {"dataset": self.name, "segment_dim": self.dim, "K": self.n_classes,
                "train": int(self.x_train.shape[0]), "test": int(self.x_test.shape[0]),
                "base_points": int(self.base_x.shape[0]), "fg_classes": list(self.fg_classes),
                "bg_classes": list(self.bg_classes)}


def _boxes_points(rs: np.random.RandomState, name: str):
    boxes, n = BOXES[name], BASE_SIZE[name]
    y = rs.randint(0, len(boxes), n)
    x = np.zeros((n, 2))
    for c, (b1, b2) in enumerate(boxes):
        sel = y == c
        low = [min(b1), min(b2)]
        high = [max(b1), max(b2)]
        x[sel] = rs.uniform(low=low, high=high, size=(int(sel.sum()), 2))
    return x, y


def _vector_mosaics(rs, x, y, fg, bg, n):
    """n mosaics drawn from one stream: fg class, fg position, then one point per segment."""
    fg_pools = [np.flatnonzero(y == c) for c in fg]
    bg_pool = np.flatnonzero(np.isin(y, bg))
    label = rs.randint(0, len(fg), n)
    fore = rs.randint(0, M, n)
    idx = bg_pool[rs.randint(0, len(bg_pool), (n, M))]
    for c, pool in enumerate(fg_pools):
        sel = np.flatnonzero(label == c)
        idx[sel, fore[sel]] = pool[rs.randint(0, len(pool), len(sel))]
    return x[idx], label, fore


def _per_mosaic_class_sampled(x, y, fg, bg, seeds):
    """One RandomState per mosaic; background class drawn per segment, then a point of that class."""
    pools = {c: np.flatnonzero(y == c) for c in (*fg, *bg)}
    out = np.zeros((len(seeds), M, x.shape[1]))
    label = np.zeros(len(seeds), dtype=np.int64)
    fore = np.zeros(len(seeds), dtype=np.int64)
    for r, s in enumerate(seeds):
        rs = np.random.RandomState(s)
        fg_class = rs.randint(0, len(fg))
        pos = rs.randint(0, M)
        for i in range(M):
            if i == pos:
                b = rs.choice(pools[fg[fg_class]], size=1)
            else:
                bc = rs.randint(min(bg), max(bg) + 1)
                b = rs.choice(pools[bc], size=1)
            out[r, i] = x[b[0]]
        label[r], fore[r] = fg_class, pos
    return out, label, fore


def _t(a, dtype=torch.float64):
    return torch.as_tensor(np.ascontiguousarray(a), dtype=dtype)


def _pack(name, xtr, ytr, ftr, xte, yte, fte, bx, by, K, fg, bg):
    return MosaicData(name, _t(xtr), _t(ytr, torch.int64), _t(ftr, torch.int64), _t(xte),
                      _t(yte, torch.int64), _t(fte, torch.int64), _t(bx), _t(by, torch.int64), K,
                      tuple(fg), tuple(bg))


def error_mode_data(name: str, data_seed: int = 0, n_train: int = 3000, n_test: int = 1000) -> MosaicData:
    rs = np.random.RandomState(data_seed)
    x, y = _boxes_points(rs, name)
    n_cls = len(BOXES[name])
    fg, bg = list(range(n_cls - 1)), [n_cls - 1]
    if name == "dist4":
        xtr, ytr, ftr = _per_mosaic_class_sampled(x, y, fg, bg, range(n_train))
        xte, yte, fte = _per_mosaic_class_sampled(x, y, fg, bg, range(3000, 3000 + n_test))
    else:
        xtr, ytr, ftr = _vector_mosaics(rs, x, y, fg, bg, n_train)
        xte, yte, fte = _vector_mosaics(rs, x, y, fg, bg, n_test)
    return _pack(name, xtr, ytr, ftr, xte, yte, fte, x, y, len(fg), fg, bg)


def dataset1(n_total: int = 6000, n_train: int = 3000) -> MosaicData:
    """Dataset 1: 2-D, foreground classes inside a ring of background classes (needs a nonlinear focus)."""
    rs = np.random.RandomState(12)
    y = rs.randint(0, 10, 5000)
    x = np.zeros((5000, 2))
    rs = np.random.RandomState(12)
    for c, mean in enumerate(D1_MEANS):
        sel = y == c
        x[sel] = rs.multivariate_normal(mean, 0.01 * np.eye(2), size=int(sel.sum()))
    fg, bg = [0, 1, 2], list(range(3, 10))
    xs, lab, fore = _per_mosaic_class_sampled(x, y, fg, bg, range(n_total))
    return _pack("d1", xs[:n_train], lab[:n_train], fore[:n_train], xs[n_train:], lab[n_train:],
                 fore[n_train:], x, y, 3, fg, bg)


def dataset2(n_total: int = 6000, n_train: int = 3000) -> MosaicData:
    """Dataset 2: 5-D elongated Gaussian blobs; background drawn uniformly from the pooled bg points."""
    rs = np.random.RandomState(12)
    xs, ys = [], []
    for c, mean in enumerate(D2_MEANS):
        cov = np.ones((5, 5))
        cov[D2_STRETCH[c], D2_STRETCH[c]] = 16.0
        xs.append(rs.multivariate_normal(mean, cov, 500))
        ys.append(np.full(500, c))
    x, y = np.concatenate(xs), np.concatenate(ys)
    fg_pool, bg_pool = x[:1500], x[1500:]
    out = np.zeros((n_total, M, 5))
    lab = np.zeros(n_total, dtype=np.int64)
    fore = np.zeros(n_total, dtype=np.int64)
    for j in range(n_total):
        r = np.random.RandomState(j)
        bg_idx = r.randint(0, 3500, 8)
        fg_idx = r.randint(0, 1500)
        pos = r.randint(0, M)
        segs = list(bg_pool[bg_idx])
        segs.insert(pos, fg_pool[fg_idx])
        out[j] = np.stack(segs)
        lab[j], fore[j] = fg_idx // 500, pos
    return _pack("d2", out[:n_train], lab[:n_train], fore[:n_train], out[n_train:], lab[n_train:],
                 fore[n_train:], x, y, 3, [0, 1, 2], list(range(3, 10)))


@lru_cache(maxsize=16)
def load(name: str, data_seed: int = 0) -> MosaicData:
    """The named dataset (memoised: generation is deterministic). ``data_seed`` only affects dist-1/2/4."""
    if name in BOXES:
        return error_mode_data(name, data_seed)
    if name == "d1":
        return dataset1()
    if name == "d2":
        return dataset2()
    raise ValueError(f"unknown dataset {name!r}; choose one of {DATASETS}")


def subset(d: MosaicData, n_train: int, n_test: int | None = None) -> MosaicData:
    """The first ``n_train`` / ``n_test`` mosaics (for fast tests and smoke runs)."""
    n_test = n_train if n_test is None else n_test
    return MosaicData(d.name, d.x_train[:n_train], d.y_train[:n_train], d.fore_train[:n_train],
                      d.x_test[:n_test], d.y_test[:n_test], d.fore_test[:n_test], d.base_x, d.base_y,
                      d.n_classes, d.fg_classes, d.bg_classes)
