"""Progress bars for training loops, quiet in tests and book builds.

``TQDM_DISABLE=1`` (set by the Makefile for tests and builds) silences every
bar, so nbval does not compare progress output and the rendered book shows no
widget. In Jupyter with ipywidgets installed the bar is a widget
(``tqdm.auto``); without ipywidgets it is plain text, instead of tqdm.auto's
"IProgress not found" warning in every executed chapter.
"""

from __future__ import annotations

import importlib.util
import os

if importlib.util.find_spec("ipywidgets") is not None:
    from tqdm.auto import tqdm
else:
    from tqdm.std import tqdm


def progress(iterable=None, **kwargs):
    kwargs.setdefault("disable", os.environ.get("TQDM_DISABLE", "") not in ("", "0"))
    kwargs.setdefault("leave", False)
    kwargs.setdefault("mininterval", 0.5)
    return tqdm(iterable, **kwargs)
