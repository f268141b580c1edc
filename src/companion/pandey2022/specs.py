"""Spec makers for this paper's batched training programs (see :mod:`companion.netspec`).

A program is described by a plain configuration (:func:`.train.ensemble_config`) that is its own
cache key, and :func:`.train.run` loads or trains it; :func:`program_spec` wraps exactly those two,
so a spec's key is the key ``run`` stores under, with nothing spelled out twice.

Cost estimate (seconds on one core): ``epoch cap x members x per-epoch seconds of the data set``,
read off the training times stored in the ``quick`` model cache on a 2-core machine (dataset 1:
0.031 s per member and epoch, dataset 2: 0.009 s, the error-mode distributions 0.003-0.005 s). It
ignores early stopping, so it is an upper bound; it only orders the tasks and sizes ``--dry-run``.
"""

from __future__ import annotations

from functools import partial

from .. import netspec
from . import train as T

#: seconds per member and epoch (see the module docstring); other data sets take dataset 1's
EPOCH_SECONDS = {"d1": 0.031, "d2": 0.009, "dist1": 0.003, "dist2": 0.003, "dist4": 0.005}


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
