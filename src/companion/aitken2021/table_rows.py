"""eSCAN and English->French rows for the accuracy table (T1).

:data:`PROVIDERS` maps a row group to ``provider(S) -> list[(task label, TrainedEnsemble)]``
in the form :func:`companion.aitken2021.tables.accuracy_rows` takes; importing this
module changes nothing elsewhere. Settings that carry the eSCAN block (fig5, fig6,
tab-accuracy-beyond) are used as they are; any other chapter's settings are replaced
by Figure 5's under the same profile, so a table trains nothing new once Figure 5 has run.
English->French rows report the held-out split (the trainer's own ``test`` numbers are drawn
from training pairs).
"""

from __future__ import annotations

from dataclasses import replace

from .. import config
from . import beyond, translation

__all__ = ["PROVIDERS", "escan_rows", "enfr_rows"]

BEYOND_CHAPTER = "fig5"


def _settings(S):
    return S if "escan_seeds" in S else config.resolve(BEYOND_CHAPTER, profile=S.profile)


def escan_rows(S) -> list:
    S5 = _settings(S)
    return [("eSCAN", beyond.escan_ensemble(S5, arch)) for arch in beyond.ARCHS]


def enfr_rows(S) -> list:
    S5 = _settings(S)
    if beyond.enfr_available(S5):
        return []
    rows = []
    for a in beyond.enfr_analyses(S5).values():
        held = translation.held_out_scores(a)
        test = {"word_accuracy": held["word"], "phrase_accuracy": held["phrase"]}
        rows.append(("English→French (held-out)", replace(a.ensemble, test=test)))
    return rows


PROVIDERS = {"eSCAN": escan_rows, "English-French": enfr_rows}
