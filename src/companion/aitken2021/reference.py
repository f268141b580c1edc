"""The numbers of Aitken et al. (2021) the one-to-one chapters compare against, once, as tables.

The paper's own tables were not available to us; these numbers come from the first author's public
development code and notebook ([CODE] in the sources appendix). ``REFERENCE`` maps a table id to a
:class:`pandas.DataFrame`; the claims registry resolves ``paper: {table: T1, where: {...}, column: ...}``
against it, and the accuracy chapter sets the tables beside ours.

- ``T1``: test accuracy per (task, architecture) in the development notebook (1000 fresh sequences).
- ``T2``: the training recipe of the development code, one row per setting.
- ``T3``: analysis numbers the development notebook printed for a single network (not an ensemble);
  sanity targets for our observations, not thresholds.
"""
# ruff: noqa: E501  (data rows read best one row per line)
from __future__ import annotations

import pandas as pd

_T1 = [
    # task, arch, phrase accuracy, word accuracy, source
    ("one-to-one", "VED", 1.0, 1.0, "[CODE] development notebook, cells 114 and 116"),
    ("one-to-one", "AED", 1.0, 1.0, "[CODE] development notebook, cells 114 and 116"),
    ("one-to-one", "AO", 1.0, 1.0, "[CODE] development notebook, cells 114 and 116"),
]

_T2 = [
    # setting, value in the development code
    ("optimizer", "Adam"),
    ("Adam betas, eps", "(0.9, 0.99), 0.1"),
    ("learning rate", "0.1 x 0.9997^step"),
    ("gradient clipping (global norm, per network)", "10"),
    ("batch size", "128"),
    ("L2 in the loss (VED / AED, AO)", "1e-4 / 1e-3"),
    ("training steps AED, AO", "6000 (3 datasets x 2 epochs x 1000 batches)"),
    ("training steps VED", "6000"),
    ("sequences per dataset", "128,000"),
    ("teacher forcing", "training only (Feb 2021 runs)"),
    ("hidden size n", "128"),
    ("inputs", "one-hot"),
    ("GRU form", "renn (reset before U_c), learnable h0"),
    ("attention", "dot product, no scaling, mask -1e4"),
    ("AO input width / PE tau / amplitude", "50 / 20 / 1"),
    ("AO PE rotation", "random orthogonal, det +1, per network"),
    ("readout bias", "none"),
    ("networks per architecture", "1 (one-to-one development runs)"),
    ("test / analysis sequences", "1000"),
    ("vocabulary, lengths, padding", "3 words, 15-19, pad to 20"),
]

_T3 = [
    # quantity, value, network, source
    ("null input: mean ||mu_t - h_null_t|| / ||mu_t||", 0.12, "one development network (which one not recorded)", "[CODE] development notebook, cell 104"),
    ("null input: mean angle between mu_t and h_null_t (degrees)", 6.9, "one development network (which one not recorded)", "[CODE] development notebook, cell 104"),
]

REFERENCE: dict[str, pd.DataFrame] = {
    "T1": pd.DataFrame(_T1, columns=["task", "arch", "phrase_accuracy", "word_accuracy", "source"]),
    "T2": pd.DataFrame(_T2, columns=["setting", "development code"]),
    "T3": pd.DataFrame(_T3, columns=["quantity", "value", "network", "source"]),
}


def null_input_reference() -> dict[str, float]:
    """The development notebook's null-input comparison (T3) as ``{"relative": ..., "angle": ...}``."""
    t = REFERENCE["T3"].set_index("quantity")["value"]
    return {"relative": float(t[_T3[0][0]]), "angle": float(t[_T3[1][0]])}
