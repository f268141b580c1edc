"""Spec makers for this paper's trained ensembles (see :mod:`companion.netspec`).

:func:`ensemble_spec` describes the entry :func:`.train.trained_ensemble` stores for the same
arguments, and fetches it through that very function, so a chapter that loads its ensemble
through a spec and a build that trains the spec as a task share one cache entry.

Why the cache key is computed here and not by ``trained_ensemble`` itself: ``train.py`` is part
of the code fingerprint of every trained ensemble (``TRAIN_SCOPE``), so splitting it in two would
change the keys of networks that took many core-hours to train. ``tests/test_netspec.py`` pins the
key computed here to the key ``trained_ensemble`` logs.

Cost estimate (seconds on one core): ``steps x networks x (per-step seconds of the architecture +
readout seconds) x padded length / 20``. The per-step seconds were read off the training times stored
in the ``quick`` and ``paper`` model caches on a 2-core machine (AED and VED about 0.05 s per network
and step at 20 positions, AO 0.025 s, the non-gated AO 0.011 s). Those networks read out a handful of
words, so their time is mostly per-operation overhead; a readout over thousands of words is not. The
readout term, ``READOUT_SECONDS`` per readout weight at 20 positions, was calibrated on the
English-French ``paper`` record (7,543 French words: 3,801 CPU-s per AED and 2,578 per AO network
over 10,000 steps, where the first term alone gave 275 and 138; with it, 4,521 and 2,261). The
estimates order the tasks (longest first) and size the ``--dry-run`` listing and the build
simulator, nothing else, so they need only be right to a factor of about two.
"""

from __future__ import annotations

from functools import partial

from .. import netspec
from .. import progress as _progress
from .models import ModelConfig
from .tasks import Task
from .train import TRAIN_SCOPE, TrainConfig, member_seeds, trained_ensemble

ENSEMBLE_KIND = "aitken2021-ensemble"  # the kind trained_ensemble stores under
#: seconds per network and training step at 20 positions (see the module docstring)
STEP_SECONDS = {"AED": 0.05, "VED": 0.05, "AO": 0.025, "nongated": 0.011}
#: seconds per readout weight (readout input width x output words), network and step at 20 positions
READOUT_SECONDS = 4e-7
#: positions assumed for a task that names no padded length (eSCAN outputs, English-French)
DEFAULT_POSITIONS = 20


def positions(task_config: dict) -> int:
    """Padded sequence length of a task's configuration (the cost grows with it)."""
    if task_config.get("pad_to"):
        return int(task_config["pad_to"])
    if task_config.get("max_len"):
        return int(task_config["max_len"]) + 1
    return DEFAULT_POSITIONS


def readout_weights(model_config: dict) -> int:
    """Weights of the readout: the hidden state, and for AED/VED-style decoders with attention the
    context beside it, to every output word."""
    hidden = int(model_config.get("hidden", 128))
    width = hidden if model_config.get("arch") in ("AO", "VED") else 2 * hidden
    return width * int(model_config.get("out_vocab", 0))


def cost(arch: str, steps: int, n_networks: int, task_config: dict,
         model_config: dict | None = None) -> float:
    """Estimated seconds on one core (see the module docstring)."""
    per_step = STEP_SECONDS.get(arch, STEP_SECONDS["AED"])
    if model_config:
        per_step += READOUT_SECONDS * readout_weights(model_config)
    return float(steps) * n_networks * per_step * positions(task_config) / DEFAULT_POSITIONS


def ensemble_config(arch: str, task: Task, seed: int, n_seeds: int, train: TrainConfig | None = None,
                    model_options: dict | None = None) -> dict:
    """The cache configuration ``trained_ensemble`` builds for these arguments (same fields, same order)."""
    train = train or TrainConfig()
    seeds = member_seeds(seed, n_seeds)
    opts = dict(model_options or {})
    model_cfg = ModelConfig(arch=arch, in_vocab=len(task.in_vocab), out_vocab=len(task.out_vocab), **opts)
    return {"model": model_cfg.as_dict(), "task": task.config(), "seeds": seeds, "train": train.as_dict()}


def ensemble_spec(arch: str, task: Task, seed: int, n_seeds: int, train: TrainConfig | None = None,
                  model_options: dict | None = None, description: str = "", fetch=None) -> netspec.Spec:
    """The spec of ``trained_ensemble(arch, task, seed, n_seeds, train, model_options)``.

    ``fetch`` (default: that call, with the chapter's progress bar) is what loads or trains it; a
    caller whose own function wraps ``trained_ensemble`` (e.g. the learned-attention ensembles) passes
    that function, so the declaration fetches through the chapter's code path."""
    train = train or TrainConfig()
    cfg = ensemble_config(arch, task, seed, n_seeds, train, model_options)
    if fetch is None:
        fetch = partial(trained_ensemble, arch, task, seed=int(seed), n_seeds=int(n_seeds), train=train,
                        model_options=model_options, progress=_progress.progress)
    label = description or f"{arch} x{len(cfg['seeds'])}"
    return netspec.Spec(kind=ENSEMBLE_KIND, config=cfg, scope=TRAIN_SCOPE,
                        description=f"{label} (seed {cfg['seeds'][0]}+), {train.steps} steps",
                        cost_s=cost(arch, train.steps, len(cfg["seeds"]), cfg["task"], cfg["model"]),
                        fetch=fetch)
