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

import json
import os
from dataclasses import replace
from functools import partial

import torch

from .. import cache, netspec, paths
from .. import progress as _progress
from ..device import THREADS_ENV
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
                  model_options: dict | None = None, description: str = "", fetch=None,
                  split: bool = False) -> netspec.Spec:
    """The spec of ``trained_ensemble(arch, task, seed, n_seeds, train, model_options)``.

    ``fetch`` (default: that call, with the chapter's progress bar) is what loads or trains it; a
    caller whose own function wraps ``trained_ensemble`` (e.g. the learned-attention ensembles) passes
    that function, so the declaration fetches through the chapter's code path. Such an ensemble is split
    into one-seed members only when the caller says (``split``) that its wrapper sets up nothing the
    one-seed trainings need beyond ``trained_ensemble``'s own arguments."""
    train = train or TrainConfig()
    cfg = ensemble_config(arch, task, seed, n_seeds, train, model_options)
    members: tuple[netspec.Spec, ...] = ()
    own_fetch = fetch is not None
    if fetch is None:
        fetch = partial(trained_ensemble, arch, task, seed=int(seed), n_seeds=int(n_seeds), train=train,
                        model_options=model_options, progress=_progress.progress)
    if (split or not own_fetch) and len(cfg["seeds"]) > 1 and stackable():
        span = f"{cfg['seeds'][0]}-{cfg['seeds'][-1]}"
        members = tuple(replace(m, description=f"{description or arch}: seed {s} of {span}, "
                                               f"{train.steps} steps",
                                derive=partial(cut_member, m.config))
                        for s in cfg["seeds"]
                        for m in [ensemble_spec(arch, task, s, 1, train, model_options)])
    label = description or f"{arch} x{len(cfg['seeds'])}"
    return netspec.Spec(kind=ENSEMBLE_KIND, config=cfg, scope=TRAIN_SCOPE,
                        description=f"{label} (seed {cfg['seeds'][0]}+), {train.steps} steps",
                        cost_s=cost(arch, train.steps, len(cfg["seeds"]), cfg["task"], cfg["model"]),
                        fetch=fetch, members=members,
                        assemble=partial(assemble, cfg, [m.config for m in members]) if members else None)


def stackable() -> bool:
    """Whether one-seed members stack into the batched program bit for bit here: on one training
    thread, the default (``tests/test_members.py``). On more, a product's sums may be split
    differently for one network than for ten, so the ensemble then trains as one program."""
    return int(os.environ.get(THREADS_ENV) or 1) == 1


def stack_payloads(payloads: list[dict]) -> dict:
    """One ensemble's payload from its members' (``train_ensemble``'s layout): every tensor stacked
    along the member axis, the seeds joined, the training times added. Each member trains on its own
    data streams, with its own loss, clipping and Adam moments, so the stack is what one batched
    program computes (``tests/test_netspec.py`` checks it bit for bit)."""
    first = payloads[0]
    for p in payloads[1:]:
        for name in ("model", "train", "task"):
            if p[name] != first[name]:
                raise ValueError(f"members differ in their {name} configuration; they are not one ensemble")
        if p["history"]["step"] != first["history"]["step"]:
            raise ValueError("members logged different steps; they are not one ensemble")
    # history rows are logged steps, columns members: (rows, E, ...) joined on axis 1
    history = {"step": list(first["history"]["step"]),
               **{k: torch.cat([p["history"][k] for p in payloads], dim=1 if v.dim() > 1 else 0)
                  for k, v in first["history"].items() if k != "step"}}
    return {
        "state": {k: torch.cat([p["state"][k] for p in payloads]) for k in first["state"]},
        "seeds": [s for p in payloads for s in p["seeds"]],
        "model": first["model"],
        "train": first["train"],
        "task": first["task"],
        "history": history,
        "test": {k: torch.cat([p["test"][k] for p in payloads]) for k in first["test"]},
        "seconds": float(sum(p["seconds"] for p in payloads)),
    }


def slice_payload(payload: dict, i: int) -> dict:
    """Member ``i`` of an ensemble's payload, as its own one-network payload (the inverse of
    :func:`stack_payloads`; its training time is the ensemble's share)."""
    history = {"step": list(payload["history"]["step"]),
               **{k: (v[:, i:i + 1] if v.dim() > 1 else v) for k, v in payload["history"].items()
                  if k != "step"}}
    return {
        "state": {k: v[i:i + 1].clone() for k, v in payload["state"].items()},
        "seeds": [payload["seeds"][i]],
        "model": payload["model"],
        "train": payload["train"],
        "task": payload["task"],
        "history": {k: (v.clone() if torch.is_tensor(v) else v) for k, v in history.items()},
        "test": {k: v[i:i + 1].clone() for k, v in payload["test"].items()},
        "seconds": float(payload["seconds"]) / len(payload["seeds"]),
    }


def holder_of(member_config: dict) -> tuple[dict, int] | None:
    """A cached ensemble of this code and these settings whose seeds include the member's: (its
    configuration, the member's index), or None. Read from the manifests of the model cache."""
    seed = member_config["seeds"][0]
    want = cache._canonical({k: v for k, v in member_config.items() if k != "seeds"})
    code = cache.fingerprint(TRAIN_SCOPE)
    for manifest in sorted((paths.cache_root() / ENSEMBLE_KIND).glob("*/*.json")):
        try:
            meta = json.loads(manifest.read_text())
        except (OSError, ValueError):
            continue
        cfg = meta.get("config") or {}
        seeds = cfg.get("seeds") or []
        if (meta.get("code") != code or len(seeds) < 2 or seed not in seeds
                or {k: v for k, v in cfg.items() if k != "seeds"} != want):
            continue
        stored = manifest.with_suffix(".pt").is_file()
        if stored and cache.key(ENSEMBLE_KIND, cfg, TRAIN_SCOPE) == meta.get("key"):
            return cfg, seeds.index(seed)
    return None


def cut_member(member_config: dict, store: bool = True) -> bool:
    """Whether a cached ensemble holds this one-seed member (:func:`holder_of`); with ``store``, store the
    member cut from it. The cut is what training the seed alone computes, bit for bit (the identity
    :func:`stack_payloads` relies on), so adding seeds to a trained ensemble trains only the new ones."""
    found = holder_of(member_config)
    if found is None or not store:
        return found is not None
    cfg, i = found
    payload = cache.load(ENSEMBLE_KIND, cfg, TRAIN_SCOPE)
    if payload is None:
        return False
    k = cache.key(ENSEMBLE_KIND, cfg, TRAIN_SCOPE)
    whole = cache.compute_cost(ENSEMBLE_KIND, k) or {}
    n = len(cfg["seeds"])
    cost_of = {"wall_s": round((whole.get("wall_s") or 0.0) / n, 3), "date": whole.get("date"),
               "host": whole.get("host", ""), "cut_from": k}
    if whole.get("cpu_s") is not None:
        cost_of["cpu_s"] = round(whole["cpu_s"] / n, 3)
    netspec.store_stacked(ENSEMBLE_KIND, member_config, TRAIN_SCOPE, lambda: slice_payload(payload, i),
                          cost_of)
    return True


def assemble(config: dict, member_configs: list[dict]) -> dict:
    """Store the ensemble entry ``config`` stacked from its members' entries (all in the cache).

    Its manifest keeps the members' training cost, added up, and their keys: the stacking itself
    takes a second."""
    payloads, costs = [], []
    for m in member_configs:
        p = cache.load(ENSEMBLE_KIND, m, TRAIN_SCOPE)
        if p is None:
            raise RuntimeError(f"member seed {m['seeds'][0]} of the ensemble is not in the model cache")
        payloads.append(p)
        costs.append(cache.compute_cost(ENSEMBLE_KIND, cache.key(ENSEMBLE_KIND, m, TRAIN_SCOPE)) or {})
    cost_of = {"wall_s": round(sum(c.get("wall_s") or 0.0 for c in costs), 3),
               "date": max((c["date"] for c in costs if c.get("date")), default=None),
               "host": ",".join(sorted({c["host"] for c in costs if c.get("host")})),
               "assembled_from": [cache.key(ENSEMBLE_KIND, m, TRAIN_SCOPE) for m in member_configs]}
    if all(c.get("cpu_s") is not None for c in costs):
        cost_of["cpu_s"] = round(sum(c["cpu_s"] for c in costs), 3)
    return netspec.store_stacked(ENSEMBLE_KIND, config, TRAIN_SCOPE, lambda: stack_payloads(payloads),
                                 cost_of)
