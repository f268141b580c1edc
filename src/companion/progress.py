"""Progress bars for training loops (``tqdm.auto``), quiet in tests and book builds.

``TQDM_DISABLE=1`` (set by the Makefile for tests and builds) silences every bar,
so nbval does not compare progress output and the rendered book shows no widget.
"""

from __future__ import annotations

import os

from tqdm.auto import tqdm


def progress(iterable=None, **kwargs):
    kwargs.setdefault("disable", os.environ.get("TQDM_DISABLE", "") not in ("", "0"))
    kwargs.setdefault("leave", False)
    kwargs.setdefault("mininterval", 0.5)
    return tqdm(iterable, **kwargs)
