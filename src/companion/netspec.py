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

A spec may name ``members``: specs of one seed each whose entries, stacked, are its own entry bit
for bit (an ensemble of independent networks; the paper's spec maker says which and the tests check
the identity). A build then trains the members as separate tasks, in parallel, and ``assemble``
stacks them into the spec's entry, so the longest task is one network and not one program. A member
may also be cut from an ensemble already in the cache that holds its seed (``derive``), so adding
seeds to a trained ensemble trains only the new ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from filelock import FileLock

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
    #: one-seed specs whose entries, stacked, are this entry (empty: it trains as one program)
    members: tuple[Spec, ...] = field(default=(), repr=False, compare=False)
    #: stores this entry from its members' entries, which must be in the cache (None without members)
    assemble: Callable[[], Any] | None = field(default=None, repr=False, compare=False)
    #: ``derive(store)``: whether a cached entry holds this one (a member of a stored ensemble); with
    #: ``store`` true, also store this entry cut from it, without training (None: never)
    derive: Callable[[bool], bool] | None = field(default=None, repr=False, compare=False)

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


def store_stacked(kind: str, config: Mapping[str, Any], scope: tuple[str, ...], stack: Callable[[], dict],
                  cost: Mapping[str, Any]) -> dict:
    """Store the entry that ``stack`` puts together from entries computed before, with their ``cost``
    in its manifest (what :func:`cache.cached` would record is the second the stacking took).

    Under the entry's own lock, as :func:`cache.cached` takes it, so a chapter that asks for the entry
    meanwhile waits and loads it. Not in :mod:`companion.cache` itself: that module is part of every
    entry's code fingerprint, and editing it would change every key."""
    hit = cache.load(kind, config, scope)
    if hit is not None:
        return hit
    pt, _ = cache._entry(kind, cache.key(kind, config, scope))
    lock_path = pt.with_suffix(".lock")
    pt.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(lock_path)):
        try:
            if cache.load(kind, config, scope) is None:
                cache.store(kind, config, stack(), scope, cost)
                cache._log_event("computed", kind, cache.key(kind, config, scope))
        finally:
            lock_path.unlink(missing_ok=True)
    return cache.load(kind, config, scope)
