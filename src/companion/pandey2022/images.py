"""Image mosaics for selective dependence classification (SDC) on real images.

The paper's image experiment turns a labelled image set into a 9-segment task:
each mosaic holds one *foreground* image (from one of K chosen classes; its class is the mosaic's label)
at a random position J ("fore_idx") and 8 *background* images from the remaining classes. The label depends
on segment J only, so an attention model is interpretable on a mosaic exactly when its largest attention
weight falls on J.

Two image sources are supported:

* ``load_digits_images()`` — scikit-learn's 8×8 handwritten digits (1797 images, shipped inside the
  scikit-learn package, so nothing is downloaded). This is the companion's **default**; it is NOT CIFAR-10.
  Foreground {0, 1, 2}, background {3, …, 9}.
* ``load_cifar10(data_dir)`` — CIFAR-10 from a directory the user provides (the standard
  ``cifar-10-batches-py`` python-pickle batches), foreground {airplane, automobile, bird} as in the paper.
  As in the authors' code only the 50k *training* batches are read.

Mosaics are stored as indices into an image bank, not as materialised 9-image stacks: a CIFAR mosaic set
of 6000 mosaics would otherwise take ~660 MB in float32. ``MosaicSet.segments(rows)`` gathers the images.

One deliberate difference from the authors: they drew test mosaics from the *same* image pools
as the training mosaics (new combinations of seen images). Here, by default, the images are first split
into disjoint train and test pools, so test numbers measure generalisation to unseen images
(``disjoint=False`` restores the authors' protocol).
"""
from __future__ import annotations

import pickle
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

__all__ = [
    "ImageDataError",
    "ImageSet",
    "MosaicSet",
    "MosaicSplit",
    "CIFAR10_CLASSES",
    "load_digits_images",
    "load_cifar10",
    "load_images",
    "make_mosaics",
    "mosaic_grid",
    "tile_boxes",
]

M_SEGMENTS = 9  # the authors: m = 9 in every experiment (3×3 mosaic)

CIFAR10_CLASSES = (
    "airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck",
)


class ImageDataError(ValueError):
    """A user-supplied image directory is missing or does not hold the expected files (one-line message)."""


@dataclass
class ImageSet:
    """A labelled image bank: ``images`` (N, C, H, W) float32 in [-1, 1], ``labels`` (N,) int64."""

    images: torch.Tensor
    labels: torch.Tensor
    class_names: tuple[str, ...]
    fg_classes: tuple[int, ...]
    name: str

    def __len__(self) -> int:
        return int(self.labels.shape[0])


# --------------------------------------------------------------------------------------------------
# Loaders
# --------------------------------------------------------------------------------------------------
def load_digits_images() -> ImageSet:
    """scikit-learn's 8×8 digits as a (1797, 1, 8, 8) bank scaled to [-1, 1] (pixel/16, then (x-0.5)/0.5,
    the same affine map the authors apply to CIFAR's [0, 1] pixels). Default foreground: digits 0, 1, 2."""
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.as_tensor(d.images, dtype=torch.float32).unsqueeze(1) / 16.0
    x = (x - 0.5) / 0.5
    y = torch.as_tensor(d.target, dtype=torch.int64)
    return ImageSet(x, y, tuple(str(i) for i in range(10)), (0, 1, 2), "digits")


class _ArrayUnpickler(pickle.Unpickler):
    """Unpickler that only rebuilds numpy arrays and plain containers.

    The CIFAR-10 python batches are pickles; a stray pickle in a user directory could run arbitrary code on
    load, so every global other than numpy's array-reconstruction helpers is refused."""

    _ALLOWED = {
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        ("numpy.core.multiarray", "scalar"),
        ("numpy._core.multiarray", "scalar"),
    }

    def find_class(self, module, name):  # noqa: D401 - pickle API
        if (module, name) in self._ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refusing to load global {module}.{name}")


def _read_batch(path: Path) -> tuple[np.ndarray, np.ndarray]:
    try:
        with open(path, "rb") as fh:
            obj = _ArrayUnpickler(fh, encoding="bytes").load()
    except Exception as exc:  # noqa: BLE001 - any read/unpickle failure is a malformed file
        raise ImageDataError(f"CIFAR-10 batch {path} could not be read as a python pickle "
                             f"({type(exc).__name__}: {exc})") from None
    if not isinstance(obj, dict):
        raise ImageDataError(f"CIFAR-10 batch {path} is not a dict (got {type(obj).__name__})")
    get = lambda key: obj.get(key.encode(), obj.get(key))  # noqa: E731 - bytes or str keys
    data, labels = get("data"), get("labels")
    if data is None or labels is None:
        raise ImageDataError(f"CIFAR-10 batch {path} lacks the 'data' or 'labels' entry")
    data = np.asarray(data)
    labels = np.asarray(labels, dtype=np.int64)
    if data.ndim != 2 or data.shape[1] != 3 * 32 * 32 or data.shape[0] != labels.shape[0]:
        raise ImageDataError(
            f"CIFAR-10 batch {path} has data of shape {data.shape} and {labels.shape[0]} labels; "
            "expected (n, 3072) and n labels"
        )
    if labels.size and (labels.min() < 0 or labels.max() > 9):
        raise ImageDataError(f"CIFAR-10 batch {path} has labels outside 0..9")
    return data, labels


def _cifar_dir(data_dir) -> Path:
    if data_dir is None or str(data_dir).strip() == "":
        raise ImageDataError("no CIFAR-10 directory given (data_dir is empty)")
    root = Path(str(data_dir)).expanduser()
    if not root.is_dir():
        raise ImageDataError(
            f"CIFAR-10 directory not found: {root} "
            "(expected the python batches data_batch_1..5 of cifar-10-python.tar.gz)"
        )
    nested = root / "cifar-10-batches-py"
    return nested if nested.is_dir() else root


def load_cifar10(data_dir, max_images: int | None = None) -> ImageSet:
    """Read CIFAR-10's training batches (``data_batch_1`` … ``data_batch_5``; whichever are present, in
    order) from ``data_dir`` or ``data_dir/cifar-10-batches-py``.

    Pixels are mapped to [-1, 1] (ToTensor + Normalize(0.5, 0.5) of the authors). ``max_images`` keeps the
    first n images (a scaled protocol can build its pools from a 10k-image subset). Raises
    :class:`ImageDataError` with a one-line message if the directory or a batch is missing or malformed."""
    root = _cifar_dir(data_dir)
    files = [root / f"data_batch_{i}" for i in range(1, 6) if (root / f"data_batch_{i}").is_file()]
    if not files:
        raise ImageDataError(f"no CIFAR-10 training batches (data_batch_1..5) in {root}")
    datas, labs, n = [], [], 0
    for f in files:
        d, l = _read_batch(f)
        datas.append(d)
        labs.append(l)
        n += len(l)
        if max_images is not None and n >= max_images:
            break
    data = np.concatenate(datas)
    labels = np.concatenate(labs)
    if max_images is not None:
        data, labels = data[:max_images], labels[:max_images]
    x = torch.as_tensor(data.astype(np.float32).reshape(-1, 3, 32, 32)) / 255.0
    x = (x - 0.5) / 0.5
    return ImageSet(x, torch.as_tensor(labels), CIFAR10_CLASSES, (0, 1, 2), "cifar10")


def load_images(data_dir=None, max_images: int | None = None) -> ImageSet:
    """The chapters' entry point: digits when ``data_dir`` is None, else CIFAR-10 from ``data_dir``."""
    if data_dir is None:
        return load_digits_images()
    return load_cifar10(data_dir, max_images=max_images)


# --------------------------------------------------------------------------------------------------
# Mosaics
# --------------------------------------------------------------------------------------------------
@dataclass
class MosaicSet:
    """N mosaics of ``m`` segments as indices into an image bank.

    idx[n, j] is the bank row of segment j of mosaic n; ``fore_idx[n]`` the foreground position J;
    ``labels[n]`` the foreground image's class re-indexed to 0..K-1."""

    bank: torch.Tensor = field(repr=False)
    idx: torch.Tensor
    labels: torch.Tensor
    fore_idx: torch.Tensor

    def __len__(self) -> int:
        return int(self.labels.shape[0])

    def segments(self, rows=None) -> torch.Tensor:
        """Images of the selected mosaics, shape (n, m, C, H, W) (rows: None, slice or index tensor)."""
        idx = self.idx if rows is None else self.idx[rows]
        return self.bank[idx]


@dataclass
class MosaicSplit:
    train: MosaicSet
    test: MosaicSet
    fg_classes: tuple[int, ...]
    bg_classes: tuple[int, ...]
    class_names: tuple[str, ...]
    source: str
    train_pool: torch.Tensor = field(repr=False)  # bank rows the training mosaics may use
    test_pool: torch.Tensor = field(repr=False)
    bank_labels: torch.Tensor = field(repr=False)  # class of every bank image

    @property
    def n_classes(self) -> int:
        return len(self.fg_classes)

    def fg_names(self) -> list[str]:
        return [self.class_names[c] for c in self.fg_classes]


def _draw(bank_labels, pool, fg, n, m, gen) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    is_fg = torch.isin(bank_labels[pool], fg)
    fg_pool, bg_pool = pool[is_fg], pool[~is_fg]
    if len(fg_pool) == 0 or len(bg_pool) == 0:
        raise ImageDataError("an image pool has no foreground or no background images; use more images")
    fore = torch.randint(0, m, (n,), generator=gen)
    fg_pick = fg_pool[torch.randint(0, len(fg_pool), (n,), generator=gen)]
    idx = bg_pool[torch.randint(0, len(bg_pool), (n, m), generator=gen)]  # with replacement
    idx[torch.arange(n), fore] = fg_pick
    # label = position of the foreground class inside fg (0..K-1)
    labels = (bank_labels[fg_pick].unsqueeze(1) == fg.unsqueeze(0)).int().argmax(1).long()
    return idx, labels, fore


def make_mosaics(
    images: ImageSet,
    n_train: int,
    n_test: int,
    seed: int,
    fg_classes: Sequence[int] | None = None,
    bg_classes: Sequence[int] | None = None,
    test_fraction: float = 0.5,
    disjoint: bool = True,
    m: int = M_SEGMENTS,
) -> MosaicSplit:
    """Build train and test SDC mosaics from a labelled image bank, every draw from ``seed``.

    Steps: (1) keep images of fg ∪ bg classes; (2) if ``disjoint``, split them at random into a train pool
    and a test pool (``test_fraction`` of the images go to the test pool), else both splits use all images
    (the authors' protocol); (3) per mosaic draw J ~ U{0..m-1}, a foreground image uniformly from the
    pool's fg images, and m background images uniformly with replacement from the pool's bg images, then
    put the foreground image at J. Classes are equal-sized in both data sets, so drawing uniformly over
    the pooled foreground images matches "class uniform, then an image" of the authors."""
    fg = tuple(int(c) for c in (images.fg_classes if fg_classes is None else fg_classes))
    all_classes = tuple(sorted(set(images.labels.tolist())))
    bg_all = [c for c in all_classes if c not in fg]
    bg = tuple(int(c) for c in (bg_classes if bg_classes is not None else bg_all))
    if set(fg) & set(bg):
        raise ValueError(f"foreground {fg} and background {bg} classes overlap")
    if not 0.0 < test_fraction < 1.0:
        raise ValueError("test_fraction must lie in (0, 1)")
    gen = torch.Generator().manual_seed(int(seed))
    fg_t = torch.tensor(fg)
    keep = torch.nonzero(torch.isin(images.labels, torch.tensor(fg + bg))).squeeze(1)
    if disjoint:
        perm = keep[torch.randperm(len(keep), generator=gen)]
        n_test_pool = int(round(test_fraction * len(perm)))
        test_pool, train_pool = perm[:n_test_pool].sort().values, perm[n_test_pool:].sort().values
    else:
        train_pool = test_pool = keep
    tr = _draw(images.labels, train_pool, fg_t, n_train, m, gen)
    te = _draw(images.labels, test_pool, fg_t, n_test, m, gen)
    return MosaicSplit(
        train=MosaicSet(images.images, *tr),
        test=MosaicSet(images.images, *te),
        fg_classes=fg,
        bg_classes=bg,
        class_names=images.class_names,
        source=images.name,
        train_pool=train_pool,
        test_pool=test_pool,
        bank_labels=images.labels,
    )


def mosaic_grid(segments: torch.Tensor, rows: int = 3) -> torch.Tensor:
    """Arrange (m, C, H, W) segments as one (C, rows*H, cols*W) image in raster order (segment j at row
    j // cols, column j % cols). The model never sees this layout; it is for pictures and for the
    captioning analogue."""
    m, c, h, w = segments.shape
    cols = m // rows
    g = segments.reshape(rows, cols, c, h, w).permute(2, 0, 3, 1, 4)
    return g.reshape(c, rows * h, cols * w)


def tile_boxes(h: int, w: int, rows: int = 3, cols: int = 3) -> list[tuple[int, int, int, int]]:
    """Pixel boxes (top, left, bottom, right; bottom/right exclusive) of each tile of a rows×cols grid."""
    return [(r * h, c * w, (r + 1) * h, (c + 1) * w) for r in range(rows) for c in range(cols)]
