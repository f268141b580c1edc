"""Colours and helpers shared by the panels of :mod:`companion.aitken2021.plots`.

Colours follow the caption of the paper's Figure 7 [SUM-liner]: encoder orange, decoder purple,
readout green, recurrence blue, attention gold; positional encoding grey. Layouts are ours: the
paper's figures are reconstructed (their layouts are not known).
"""

from __future__ import annotations

import numpy as np
import seaborn as sns
import torch

from ... import plotting

plotting.set_theme()

COLORS = {
    "encoder": "#E08A2E",
    "decoder": "#7B4FA6",
    "readout": "#3A9A5B",
    "recurrence": "#3B6FB6",
    "attention": "#D4A017",
    "pe": "#9A9A9A",
}
ARCH_COLORS = {"VED": "#7F7F7F", "AED": "#3B6FB6", "AO": "#C0504D"}
WORD_COLORS = sns.color_palette("colorblind", 10)
TASK_MARKERS = {"one-to-one": "o", "eSCAN": "s", "En-Fr": "^"}


def to_numpy(t) -> np.ndarray:
    return torch.as_tensor(t).detach().double().cpu().numpy()
