"""A declared training: what a chapter trains, as data, without training it.

A :class:`Spec` names one entry of the model cache (:mod:`companion.cache`) by
its ``kind``, ``config`` and code ``scope``, exactly as the training code passes
them to :func:`companion.cache.cached`, and carries ``fetch``: the function the
chapter itself calls to load or train that entry. A chapter's declaration
(settings -> specs) and its notebook are built from the same spec makers, so a
build can train every network of a chapter as its own task before the notebook
runs, and the notebook then only loads. Why the key is spelled out here as well
as inside the training code: the modules that train are part of their entries'
code fingerprint, and editing them would change the keys of networks worth many
core-hours; the tests pin each spec's key to the key the training code logs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import cache


@dataclass(frozen=True)
class Spec:
    """One cached training: its cache entry, a description, an estimated cost, and how to get it."""

    kind: str
    config: Mapping[str, Any]
    scope: tuple[str, ...]
    description: str
    #: estimated seconds on one core (see the paper's spec makers for how it is estimated)
    cost_s: float
    #: loads the entry, training and storing it first if it is missing (the chapter's own call)
    fetch: Callable[[], Any] = field(repr=False, compare=False)

    @property
    def key(self) -> str:
        return cache.key(self.kind, self.config, self.scope)

    def is_cached(self) -> bool:
        """True when the entry's manifest and payload are both in the cache (no hash check: a damaged
        entry is found, and recomputed, when it is loaded)."""
        payload, manifest = cache._entry(self.kind, self.key)
        return manifest.is_file() and payload.is_file()


def unique(specs: Iterable[Spec]) -> list[Spec]:
    """The specs without repeats (same cache key), first occurrence kept."""
    seen: dict[str, Spec] = {}
    for s in specs:
        seen.setdefault(s.key, s)
    return list(seen.values())
