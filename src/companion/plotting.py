"""The seaborn theme and small figure helpers shared by both papers' panels."""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import seaborn as sns

#: Colours used consistently across chapters (colour-blind safe palette).
PALETTE = sns.color_palette("colorblind")


def set_theme() -> None:
    """Apply the book's theme; every panel module calls this at import."""
    sns.set_theme(context="notebook", style="whitegrid", palette=PALETTE, font_scale=0.95)
    matplotlib.rcParams.update(
        {
            "figure.dpi": 100,
            "savefig.dpi": 150,
            "savefig.bbox": "tight",
            "axes.titlesize": "medium",
            "figure.autolayout": False,
        }
    )
    # A DataFrame shown in a chapter is shown whole (the page scrolls it), never cut to "…" columns.
    import pandas as pd

    pd.set_option("display.max_columns", None)
    pd.set_option("display.width", None)


def new_figure(nrows: int = 1, ncols: int = 1, *, width: float = 3.6, height: float = 3.2, **kwargs):
    """A figure of ``nrows x ncols`` panels of the given size each, with constrained layout."""
    kwargs.setdefault("layout", "constrained")
    kwargs.setdefault("squeeze", False if (nrows > 1 or ncols > 1) else True)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), **kwargs)
    return fig, axes


set_theme()
