"""eSCAN and English->French rows for the accuracy table (T1), through its provider hook.

:mod:`companion.aitken2021.tables` imports this module (``PROVIDER_MODULES``) and
lists every registered provider. The rows reuse the cached ensembles of the
Figure 5 chapter: the settings are ``config.resolve("fig5", profile=S.profile)``,
so building the table trains nothing new once Figure 5 has run.

English->French rows report the **held-out split** (the trainer's own ``test``
numbers are drawn with ``task.sample``, i.e. from training pairs, so they are
replaced here by :func:`companion.aitken2021.beyond.held_out_accuracy`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from .. import config
from . import beyond, tables

BEYOND_CHAPTER = "fig5"


def _settings(S: Mapping):
    return config.resolve(BEYOND_CHAPTER, profile=getattr(S, "profile", None))


def escan_rows(S: Mapping) -> list:
    S5 = _settings(S)
    return [("eSCAN", beyond.escan_ensemble(S5, arch)) for arch in ("AED", "AO")]


def enfr_rows(S: Mapping) -> list:
    S5 = _settings(S)
    tasks, _ = beyond.available_tasks(S5)
    if "En-Fr" not in tasks:
        return []
    rows = []
    for arch in ("AED", "AO"):
        ens = beyond.enfr_ensemble(S5, arch)
        held = beyond.held_out_accuracy(S5, arch)
        rows.append(("English→French (held-out)",
                     replace(ens, test={"word_accuracy": held["word"], "phrase_accuracy": held["phrase"]})))
    return rows


tables.ROW_PROVIDERS["eSCAN"] = escan_rows
tables.ROW_PROVIDERS["English-French"] = enfr_rows
