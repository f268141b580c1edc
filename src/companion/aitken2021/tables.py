"""The accuracy table (T1) and the hyperparameter table (T2): our reconstruction (no paper table is known).

T1 collects one row per (task, architecture) ensemble from *row providers*:
callables ``provider(S) -> list[(task_label, TrainedEnsemble)]`` registered in
:data:`ROW_PROVIDERS`. This module registers the one-to-one rows (VED, AED, AO
and the reversed / ``prev0`` variants on AED). A colleague adds eSCAN or
English-French rows with::

    from companion.aitken2021 import tables
    tables.ROW_PROVIDERS["eSCAN"] = lambda S: [("eSCAN", escan_ensemble(S2, "AED")), ...]

in a module listed in :data:`PROVIDER_MODULES` (imported on demand, skipped if
absent). A provider should obtain its ensembles through the same settings as its
own chapter (e.g. ``config.resolve("<its chapter>", profile=S.profile)``) so the
table reuses the cached networks instead of training new ones.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping

import pandas as pd

from .analysis import mean_sd, one_to_one_ensemble, train_config_from_settings
from .models import ModelConfig
from .reference import REFERENCE
from .train import TrainConfig, TrainedEnsemble, default_l2

__all__ = ["ROW_PROVIDERS", "PROVIDER_MODULES", "one_to_one_rows", "accuracy_rows", "accuracy_table",
           "hyperparameter_table"]

Provider = Callable[[Mapping], list]

#: Modules imported before the table is built, so that they can register providers.
PROVIDER_MODULES: list[str] = ["companion.aitken2021.ensembles"]


def one_to_one_rows(S: Mapping) -> list[tuple[str, TrainedEnsemble]]:
    """The one-to-one ensembles of this paper's chapters (the cache entries of Figs 2-4 and the appendix)."""
    rows = [("one-to-one", one_to_one_ensemble(S, arch)) for arch in ("VED", "AED", "AO")]
    rows.append(("one-to-one reversed", one_to_one_ensemble(S, "AED", reverse=True)))
    rows.append(("one-to-one prev0", one_to_one_ensemble(S, "AED", rules=("prev0",))))
    return rows


#: name -> provider; the table lists providers in insertion order.
ROW_PROVIDERS: dict[str, Provider] = {"one-to-one": one_to_one_rows}


def _import_providers() -> list[str]:
    loaded = []
    for name in PROVIDER_MODULES:
        try:
            importlib.import_module(name)
            loaded.append(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
    return loaded


def accuracy_rows(S: Mapping, providers: Mapping[str, Provider] | None = None) -> pd.DataFrame:
    """Raw T1 frame: task, arch, members, steps, word/phrase accuracy mean and sd, training seconds."""
    if providers is None:
        _import_providers()
        providers = ROW_PROVIDERS
    out = []
    for provider in providers.values():
        for task_label, ens in provider(S):
            w, ws = mean_sd(ens.test["word_accuracy"])
            p, ps = mean_sd(ens.test["phrase_accuracy"])
            out.append({
                "task": task_label,
                "arch": ens.arch,
                "members": len(ens.seeds),
                "seeds": f"{ens.seeds[0]}..{ens.seeds[-1]}",
                "steps": ens.train_config.steps,
                "word_mean": w, "word_sd": ws, "phrase_mean": p, "phrase_sd": ps,
                "train_seconds": ens.seconds,
            })
    return pd.DataFrame(out)


def accuracy_table(raw: pd.DataFrame) -> pd.DataFrame:
    """T1 for display: "mean ± sd" strings, one row per (task, architecture)."""
    fmt = lambda m, s: f"{m:.4f} ± {s:.4f}"  # noqa: E731
    ref = REFERENCE["T1"].set_index(["task", "arch"])["phrase_accuracy"]
    dev = [f"{ref[(t, a)]:.2f}" if (t, a) in ref.index else "—" for t, a in zip(raw["task"], raw["arch"])]
    return pd.DataFrame({
        "task": raw["task"],
        "architecture": raw["arch"],
        "networks": raw["members"],
        "training steps": raw["steps"],
        "word accuracy": [fmt(m, s) for m, s in zip(raw["word_mean"], raw["word_sd"])],
        "phrase accuracy": [fmt(m, s) for m, s in zip(raw["phrase_mean"], raw["phrase_sd"])],
        "phrase accuracy, development notebook": dev,
    })


def hyperparameter_table(S: Mapping) -> pd.DataFrame:
    """T2: the training and model settings, the development code's (:mod:`.reference`) beside this run's."""
    base = TrainConfig()
    aed = train_config_from_settings(S, "AED")
    ved = train_config_from_settings(S, "VED")
    ao = ModelConfig(arch="AO", in_vocab=4, out_vocab=4)
    ours = {
        "optimizer": "Adam",
        "Adam betas, eps": f"{tuple(base.betas)}, {base.eps}",
        "learning rate": (f"AED, AO: {aed.lr} x {aed.lr_decay:.5f}^step "
                          f"(ends at {aed.lr * aed.lr_decay ** aed.steps:.4f}); "
                          f"VED: {ved.lr} x {ved.lr_decay:.5f}^step"),
        "gradient clipping (global norm, per network)": f"{base.clip}",
        "batch size": f"{base.batch}",
        "L2 in the loss (VED / AED, AO)": (f"{ved.l2 if ved.l2 is not None else default_l2('VED'):g} / "
                                           f"{aed.l2 if aed.l2 is not None else default_l2('AED'):g}"),
        "training steps AED, AO": f"{aed.steps}",
        "training steps VED": f"{ved.steps}",
        "sequences per dataset": f"{aed.batch * aed.dataset_batches:,}",
        "teacher forcing": "training only; greedy for test and analysis",
        "hidden size n": f"{ModelConfig(arch='AED', in_vocab=4, out_vocab=4).hidden}",
        "inputs": "one-hot",
        "GRU form": "renn form, learnable h0",
        "attention": "dot product, no scaling, mask -1e4",
        "AO input width / PE tau / amplitude": f"{ao.input_dim} / {ao.pe_tau:g} / {ao.pe_amplitude:g}",
        "AO PE rotation": "Haar rotation per network (from its seed)",
        "readout bias": "none",
        "networks per architecture": (f"AED, AO: {S['n_seeds']}; VED: {S['ved_seeds']}; "
                                      f"reversed, prev0: {S['variant_seeds']}"),
        "test / analysis sequences": f"{aed.n_test} / {S['n_analysis']}",
        "vocabulary, lengths, padding": (f"{S['n_words']} words, {S['min_len']}-{S['max_len']}, "
                                         f"pad to {S['pad_to'] or S['max_len'] + 1}"),
    }
    table = REFERENCE["T2"].copy()
    table[f"this run ({S.profile})"] = [ours[k] for k in table["setting"]]
    return table
