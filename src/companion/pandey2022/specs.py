"""Spec makers for this paper's batched training programs (see :mod:`companion.netspec`).

A program is described by a plain configuration (:func:`.train.ensemble_config`) that is its own
cache key, and :func:`.train.run` loads or trains it; :func:`program_spec` wraps exactly those two,
so a spec's key is the key ``run`` stores under, with nothing spelled out twice.

Cost estimate (seconds on one core): ``epoch cap x members x per-epoch seconds of the data set``,
read off the training times stored in the ``quick`` model cache on a 2-core machine (dataset 1:
0.031 s per member and epoch, dataset 2: 0.009 s, the error-mode distributions 0.003-0.005 s). It
ignores early stopping, so it overestimates most programs but is not a bound: against the CPU time of
about 150 table programs in the ``paper`` model cache (2026-12-05) a program took 0.01 to 1.5 times its
estimate, typically about a third. Those at the epoch cap (dataset 1, zeroth and first layers) took
1.0-1.3 times, the ECML-era variants 0.01-0.2 times (their members reach the stopping loss early, and a
stopped member costs nothing). It only orders the tasks and sizes ``--dry-run``; ``companion plan``
prices seeds from the recorded runs' measured CPU time where there are any.

The image programs (:func:`image_spec`) and the captioners (:func:`captioner_spec`) are priced from
whole programs in the ``paper`` model cache and records on the same machine (2026-12-05), because
early stopping dominates their cost: an SDC image program costs 1.6e-3 s per member and training
image (the entropy and sparsity programs on digits mosaics, which all stop at epoch 2 of 60, about
7.5e-4 s per member, epoch and image); a program with pre-trained or frozen parts 7.0e-3 s (the
initialisation table's record, less its pre-training priced at one member-epoch per seed and
pre-training epoch: its members train longer), a captioner 5.3e-4 s per captioner, epoch and training
image (the captioning chapters' program: 5 captioners x 40 epochs x 10,000 images in 1,062 s). Other
epoch caps are not priced.
"""

from __future__ import annotations

from functools import partial

from .. import netspec
from . import captioning, image_train
from . import train as T

#: seconds per member and epoch (see the module docstring); other data sets take dataset 1's
EPOCH_SECONDS = {"d1": 0.031, "d2": 0.009, "dist1": 0.003, "dist2": 0.003, "dist4": 0.005}
#: seconds per member and training image of an image program (plain / with pre-trained or frozen parts),
#: and per captioner, epoch and training image (see the module docstring)
IMAGE_SECONDS = 1.6e-3
IMAGE_INIT_SECONDS = 7.0e-3
PRETRAIN_SECONDS = 7.5e-4
CAPTION_SECONDS = 5.3e-4


def program_spec(cfg: dict) -> netspec.Spec:
    """The spec of ``train.run(cfg)``."""
    n = len(T.members(cfg))
    per_epoch = EPOCH_SECONDS.get(cfg["dataset"], EPOCH_SECONDS["d1"])
    ks = ",".join(f"{k:g}" for k in cfg["ks"])
    lrs = ",".join(f"{v:g}" for v in cfg["lrs"])
    focus = ",".join(dict.fromkeys(str(f[0][0]) if f[0] else "-" for f in cfg["widths"]))
    what = (f"{cfg['dataset']} {cfg['arch']} layer {cfg['layer']} {cfg['normaliser']} k={ks} lr={lrs} "
            f"focus{' zero' if cfg['focus_zero'] else ''} {focus} x{n}")
    return netspec.Spec(kind=T.CACHE_KIND, config=cfg, scope=T.CACHE_SCOPE,
                        description=f"{what}, {cfg['epochs']} epochs {cfg['dtype']}",
                        cost_s=float(cfg["epochs"]) * n * per_epoch, fetch=partial(T.run, cfg))


def image_spec(cfg: dict) -> netspec.Spec:
    """The spec of ``image_train.train_program(cfg)`` (an SDC program on image mosaics)."""
    data, members = cfg["data"], cfg["members"]
    n = len(members)
    norms = ",".join(dict.fromkeys(m["normaliser"] for m in members))
    ks = ",".join(dict.fromkeys(f"{m['k']:g}" for m in members))
    pre = f", pre-trained {cfg['pretrain_epochs']} epochs" if cfg["pretrain_epochs"] else ""
    what = (f"{data['source']} mosaics {data['n_train']} layer {cfg['layer']} {norms} k={ks} "
            f"lr={cfg['lr']:g} {cfg['optimizer']} x{n}{pre}")
    init = cfg["pretrain_epochs"] or any(m["train"] != "both" for m in members)
    # pre-training is its own cache entry, computed inside this program's training (one task)
    pre_s = len({m["seed"] for m in members}) * cfg["pretrain_epochs"] * data["n_train"] * PRETRAIN_SECONDS
    return netspec.Spec(kind=image_train.KIND, config=cfg, scope=image_train.SCOPE,
                        description=f"{what}, {cfg['epochs']} epochs",
                        cost_s=n * data["n_train"] * (IMAGE_INIT_SECONDS if init else IMAGE_SECONDS) + pre_s,
                        fetch=partial(image_train.train_program, cfg))


def captioner_spec(cfg: dict) -> netspec.Spec:
    """The spec of ``captioning.train_captioner(cfg)`` (one captioner per seed, one program)."""
    n = len(cfg["seeds"])
    source = "digits" if cfg["data_dir"] is None else "cifar10"
    return netspec.Spec(kind=captioning.KIND, config=cfg, scope=captioning.SCOPE,
                        description=f"captioners on {source} tiles {cfg['n_train']} width {cfg['width']} "
                                    f"x{n}, {cfg['epochs']} epochs",
                        cost_s=n * cfg["epochs"] * cfg["n_train"] * CAPTION_SECONDS,
                        fetch=partial(captioning.train_captioner, cfg))
