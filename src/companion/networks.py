"""Networks as tasks: the trainings each chapter declares (see :mod:`companion.netspec`).

A chapter's declaration lists, from its settings alone, the cached trainings its notebook will
fetch, so a build can train them as separate tasks (longest first, on many workers) before any
notebook runs (:mod:`companion.prebuild`). Declared: every Aitken et al. chapter
(:mod:`companion.aitken2021.declarations`) and every Pandey et al. chapter
(:mod:`companion.pandey2022.declarations`). A chapter without a declaration would keep training inside
its notebook, cached and locked as before (``--dry-run`` names such chapters). Cached evaluations that
train nothing (the English-French held-out scores) are not declared: the notebooks compute them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import config, netspec


def declarations() -> dict:
    """``{chapter id: declare(S) -> [Spec]}`` over both papers."""
    from .aitken2021.declarations import DECLARATIONS as aitken
    from .pandey2022.declarations import DECLARATIONS as pandey

    return {**aitken, **pandey}


def is_declared(chapter_id: str) -> bool:
    return chapter_id in declarations()


def chapter_specs(chapter_id: str, profile: str,
                  params: Mapping[str, Any] | None = None) -> list[netspec.Spec]:
    """The specs chapter ``chapter_id`` declares under ``profile`` with typed ``params`` overrides
    (``[]`` for an undeclared chapter, whose notebook trains what it needs itself)."""
    declare = declarations().get(chapter_id)
    if declare is None:
        return []
    S = config.resolve(chapter_id, profile, **dict(params or {}))
    return netspec.unique(declare(S))
