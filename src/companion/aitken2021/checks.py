"""The numbers the one-to-one claims are decided by: one value per network.

Each function turns an :class:`~.analysis.Analysis` (or a trained ensemble) into
the per-network sample that a registered claim's rule judges, e.g.
``card.check("fig2/diagonal", values=checks.diagonal_share(a))``. The rules, the
thresholds and the authors' numbers live in the registry
(``src/companion/aitken2021/claims/<chapter>.yml``), never here.
"""

from __future__ import annotations

import numpy as np
import torch

from . import metrics as M
from .analysis import SOLVES, Analysis, solving_members
from .decompose import TEMPORAL_TEMPORAL, TERM_NAMES
from .train import TrainedEnsemble

__all__ = [
    "test_phrase_accuracy",
    "solves_task",
    "solving_members",
    "diagonal_share",
    "temporal_vs_largest_other",
    "average_attention_accuracy",
    "temporal_only_drop",
    "readout_angles",
    "temporal_diagonal_share",
    "temporal_dimension",
    "rest_dimension",
    "norm_ratio",
    "explained_share",
    "anti_diagonal_share",
    "growth",
]


def _np(x: torch.Tensor) -> np.ndarray:
    return x.detach().double().cpu().numpy()


def test_phrase_accuracy(ens: TrainedEnsemble) -> np.ndarray:
    """Phrase accuracy of each network on the 1000 fresh test sequences it was scored on after training."""
    return _np(torch.as_tensor(ens.test["phrase_accuracy"]))


def solves_task(ens: TrainedEnsemble, threshold: float = SOLVES) -> np.ndarray:
    """Boolean per network: test phrase accuracy at least ``threshold`` (the per-network precondition;
    the chapter-level precondition claims count these)."""
    return test_phrase_accuracy(ens) >= threshold


def diagonal_share(a: Analysis) -> np.ndarray:
    """Share of valid decoder steps whose attention argmax is the input at the same position."""
    return _np(a.diagonal)


def temporal_vs_largest_other(a: Analysis) -> tuple[np.ndarray, np.ndarray]:
    """The temporal-temporal share of the alignment and the largest share among the other eight terms."""
    m = a.term_fractions["mean"]  # (E, 9): each term's share, averaged over decoder steps
    tt = TERM_NAMES.index(TEMPORAL_TEMPORAL)
    others = torch.cat([m[:, :tt], m[:, tt + 1:]], -1)
    return _np(m[:, tt]), _np(others.max(-1).values)


def average_attention_accuracy(a: Analysis) -> np.ndarray:
    """Word accuracy when each sample's attention is replaced by the average attention matrix."""
    return _np(a.aam["substitution_word"])


def temporal_only_drop(a: Analysis) -> np.ndarray:
    """Word accuracy with each sample's own attention minus the word accuracy when that attention is
    replaced by the temporal-only attention ``softmax_s(mu^E_s . mu^D_t)`` (same decoder states)."""
    return _np(a.accuracy["word"] - a.aam["temporal_word"])


def readout_angles(a: Analysis) -> tuple[np.ndarray, np.ndarray]:
    """Mean angle (degrees) between chi^E of each input word and its translation's readout row, and
    the mean angle to the other words' readout rows."""
    r = M.readout_angles_on_off(a.readout_alignment["angle"], a.translation_pairs())
    return _np(r["on"]), _np(r["off"])


def temporal_diagonal_share(a: Analysis) -> np.ndarray:
    """Share of decoder steps where the temporal-only alignment mu^E_s . mu^D_t peaks at s = t."""
    return _np(a.temporal_diagonal)


def temporal_dimension(a: Analysis) -> np.ndarray:
    """Participation ratio of the temporal components (encoder and decoder together)."""
    return _np(a.temporal_dimension)


def rest_dimension(a: Analysis) -> np.ndarray:
    """Participation ratio of the rest of each state, ``h - mu``, over the valid encoder and decoder
    states together: the yardstick that :func:`temporal_dimension` is compared with.

    One network at a time: subtracting every network's ``mu`` at once for each network would allocate
    the whole ensemble's states per network (quadratic in the number of networks)."""
    out = []
    for e in range(a.enc.states.shape[0]):
        rest = [(c.states[e] - c.temporal[e])[c.valid[e]] for c in (a.enc, a.dec)]
        out.append(float(M.participation_ratio(torch.cat(rest))))
    return np.asarray(out)


def norm_ratio(a: Analysis, side: str = "encoder") -> np.ndarray:
    """Mean |mu| over mean |h - mu| on one side."""
    return _np(a.norm_ratio[side])


def explained_share(a: Analysis, side: str = "encoder") -> np.ndarray:
    """Share of the states' variance captured by mu + chi."""
    return _np(a.explained[side])


def anti_diagonal_share(a: Analysis) -> dict:
    """Reversed output, word rows only: share of rows whose attention argmax lies within one step of the
    mirrored input s = L - 1 - t (``within1``), exactly on it (``exact``), and the most common offset."""
    r = M.attention_argmax_offsets(a.trace.attention, a.data.meta["expected_source"], a.data)
    return {"within1": _np(r["within1"]), "exact": _np(r["exact"]), "mode": r["mode"].tolist()}


def growth(a: Analysis, key: str, start: int, stop: int) -> np.ndarray:
    """Encoder ``key`` ("variance" or "pr") at step ``stop`` over step ``start``, per network."""
    return _np(M.growth_ratio(a.variance_pr[key], start, stop))
