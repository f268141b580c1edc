"""The eSCAN and English->French ensembles, their analysis sets and their rows of the accuracy table.

On one-to-one translation the right attention is the diagonal, which the
temporal components alone can produce. eSCAN and English->French keep the
attention close to the diagonal but move it by input-dependent amounts
[SUM-bohrium]. This module trains those networks (one batched program per
ensemble, cached, through :func:`companion.aitken2021.train.trained_ensemble`)
and runs them on their analysis sets; the analyses live elsewhere:
:mod:`.offdiagonal` (how attention leaves the diagonal), :mod:`.comparison`
(one-to-one vs eSCAN vs English->French) and :mod:`.translation` (English->French scores).

Every setting comes from a chapter's :class:`companion.config.Settings`; the
chapters fig5, fig6 and tab-accuracy-beyond share the eSCAN block of the root
``_config.yml`` (one YAML anchor), so each ensemble is trained once per book build.
"""

from __future__ import annotations

from dataclasses import replace

import torch

from .. import config
from ..device import train_threads
from . import translation
from .analysis import Analysis, analyse, one_to_one_ensemble
from .decompose import decompose_decoder, decompose_encoder
from .enfr import EnFrDataError, EnFrTask
from .escan import ESCAN
from .specs import ensemble_spec
from .train import TrainConfig, TrainedEnsemble

__all__ = ["ARCHS", "escan_spec", "enfr_spec", "one_to_one_settings",
           "escan_ensemble", "enfr_task", "enfr_available", "enfr_ensemble", "analyse_enfr",
           "escan_analyses", "enfr_analyses", "one_to_one_analyses", "ESCAN_PAIRS", "PROVIDERS", "escan_rows",
           "enfr_rows"]

ARCHS = ("AED", "AO")
ESCAN_L2 = 1e-4  # [CODE] eSCAN AED and AO
ENFR_L2 = 1e-4  # [REC] as eSCAN
AO_ESCAN_OPTIONS = {"emb_dim": 100, "pe_tau": 100.0}  # [CODE] one-hot padded to 100, PE time scale 100
ENFR_OPTIONS = {"embedding": "learned", "emb_dim": 128}  # [REC] a learned 128-d embedding for En-Fr only
ENFR_AO_OPTIONS = {**ENFR_OPTIONS, "pe_tau": 100.0}  # [REC]
ENFR_SPLIT_SEED = 0  # the train/test split is fixed; network seeds vary
N_TEST = 1000  # fresh eSCAN sequences for the trainer's test accuracy
#: eSCAN (input word, output word) translation pairs for the input/readout alignment
ESCAN_PAIRS = (("run", "I_RUN"), ("walk", "I_WALK"), ("jump", "I_JUMP"), ("left", "I_TURN_LEFT"),
               ("<.>", "<.>"))
#: chapters whose settings define the one-to-one AED / AO ensembles (the same cache entries)
O2O_CHAPTERS = {"AED": "fig2", "AO": "fig3"}


def _frozen(ens: TrainedEnsemble) -> TrainedEnsemble:
    ens.model.requires_grad_(False)  # analysis only from here on
    return ens


def escan_spec(S, arch: str):
    """The spec (:mod:`companion.netspec`) of AED or AO on eSCAN: seeds ``S.seed .. S.seed +
    S.escan_seeds - 1``, one batched program. :func:`escan_ensemble` fetches it; the chapters'
    declarations (:mod:`.declarations`) list it."""
    steps = S.escan_steps_aed if arch == "AED" else S.escan_steps_ao
    train = TrainConfig(steps=steps, l2=ESCAN_L2, dataset_batches=min(steps, 1000), n_test=N_TEST)
    return ensemble_spec(arch, ESCAN(), seed=S.seed, n_seeds=S.escan_seeds, train=train,
                         model_options=AO_ESCAN_OPTIONS if arch == "AO" else None,
                         description=f"eSCAN {arch} x{S.escan_seeds}")


def escan_ensemble(S, arch: str) -> TrainedEnsemble:
    """AED or AO on eSCAN (:func:`escan_spec`), loaded or trained, frozen for analysis."""
    with train_threads():
        ens = escan_spec(S, arch).fetch()
    return _frozen(ens)


def enfr_task(S) -> EnFrTask:
    """The English-French task of a chapter's settings (fixed split; subset sizes from the settings)."""
    return EnFrTask(data_path=S.data_path, seed=ENFR_SPLIT_SEED, max_len=S.enfr_max_len,
                    n_train=S.enfr_train, n_test=S.enfr_test)


def enfr_available(S) -> str:
    """``""`` when the English-French pairs can be read, else why not (the chapters then mark the
    English-French panels *not reproduced* instead of faking them)."""
    try:
        enfr_task(S).corpus  # noqa: B018 - loads (and caches) the corpus
    except EnFrDataError as exc:
        return f"English-French not reproduced: {exc}"
    return ""


def enfr_spec(S, arch: str):
    """The spec of AED or AO on English-French with a learned embedding (needs the corpus: see
    :func:`enfr_available`). :func:`enfr_ensemble` fetches it; the declarations list it."""
    steps = S.enfr_steps
    train = TrainConfig(steps=steps, l2=ENFR_L2, dataset_batches=min(steps, 1000), n_test=256)
    return ensemble_spec(arch, enfr_task(S), seed=S.seed, n_seeds=S.enfr_seeds, train=train,
                         model_options=ENFR_AO_OPTIONS if arch == "AO" else ENFR_OPTIONS,
                         description=f"English-French {arch} x{S.enfr_seeds}")


def enfr_ensemble(S, arch: str) -> TrainedEnsemble:
    """AED or AO on English-French (:func:`enfr_spec`), loaded or trained, frozen for analysis.

    The trainer's own ``test`` numbers come from ``task.sample`` (training pairs);
    held-out scores are in :mod:`.translation`.
    """
    with train_threads():
        ens = enfr_spec(S, arch).fetch()
    return _frozen(ens)


@torch.no_grad()
def analyse_enfr(ens: TrainedEnsemble) -> Analysis:
    """Greedy pass over the held-out split and its decomposition (as :func:`analysis.analyse`)."""
    data = ens.task.test_set()
    with train_threads():
        trace = ens.model(data, mode="greedy")
    return Analysis(ens, data, trace, decompose_encoder(trace, data), decompose_decoder(trace, data))


def escan_analyses(S) -> dict[str, Analysis]:
    """``{arch: Analysis}`` of the eSCAN ensembles on ``S.n_analysis`` fresh sequences."""
    with train_threads():
        return {arch: analyse(escan_ensemble(S, arch), n=S.n_analysis, seed=S.seed) for arch in ARCHS}


def enfr_analyses(S) -> dict[str, Analysis]:
    """``{arch: Analysis}`` of the English-French ensembles on the held-out split."""
    return {arch: analyse_enfr(enfr_ensemble(S, arch)) for arch in ARCHS}


def one_to_one_settings(S, arch: str):
    """The settings whose one-to-one ``arch`` ensemble these chapters reuse: Figure 2's (AED) or
    Figure 3's (AO) under the same profile, so nothing is trained twice."""
    return config.resolve(O2O_CHAPTERS[arch], profile=S.profile)


def one_to_one_analyses(S) -> dict[str, Analysis]:
    """``{arch: Analysis}`` of the one-to-one AED / AO ensembles that Figures 2 and 3 train
    (:func:`one_to_one_settings`)."""
    out = {}
    for arch in ARCHS:
        with train_threads():
            out[arch] = analyse(one_to_one_ensemble(one_to_one_settings(S, arch), arch), n=S.n_analysis,
                                seed=S.seed)
    return out


# ---- rows of the accuracy table ---------------------------------------------------------------------
# :data:`PROVIDERS` maps a row group to ``provider(S) -> list[(task label, TrainedEnsemble)]`` in the form
# :func:`companion.aitken2021.tables.accuracy_rows` takes. Settings that carry the eSCAN block (fig5, fig6,
# tab-accuracy-beyond) are used as they are; any other chapter's settings are replaced by Figure 5's under
# the same profile, so a table trains nothing new once Figure 5 has run. English->French rows report the
# held-out split (the trainer's own ``test`` numbers are drawn from training pairs).

BEYOND_CHAPTER = "fig5"


def _settings(S):
    return S if "escan_seeds" in S else config.resolve(BEYOND_CHAPTER, profile=S.profile)


def escan_rows(S) -> list:
    S5 = _settings(S)
    return [("eSCAN", escan_ensemble(S5, arch)) for arch in ARCHS]


def enfr_rows(S) -> list:
    S5 = _settings(S)
    if enfr_available(S5):
        return []
    rows = []
    for a in enfr_analyses(S5).values():
        held = translation.held_out_scores(a)
        test = {"word_accuracy": held["word"], "phrase_accuracy": held["phrase"]}
        rows.append(("English→French (held-out)", replace(a.ensemble, test=test)))
    return rows


PROVIDERS = {"eSCAN": escan_rows, "English-French": enfr_rows}
