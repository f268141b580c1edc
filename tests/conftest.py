"""Every test gets its own empty cache folder, so tests never read or clobber a user's cache."""

import pytest


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    cache = tmp_path / "companion-cache"
    monkeypatch.setenv("COMPANION_CACHE", str(cache))
    monkeypatch.delenv("COMPANION_CLAIMS_FILE", raising=False)
    monkeypatch.setenv("TQDM_DISABLE", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    return cache


@pytest.fixture
def fig4_gated(monkeypatch):
    """The registry with Figure 4's finding requiring the VED and AED shares that solve the task, as it did
    until 2026-12-07: the one finding that rested on two preconditions, kept as the tests' case of it."""
    from dataclasses import replace

    from companion import registry
    real = registry.entries
    gated = ("tab-accuracy/ved-accuracy", "tab-accuracy/aed-accuracy")

    def entries():
        reg = dict(real())
        reg["fig4/ved-less-insightful"] = replace(reg["fig4/ved-less-insightful"], requires=gated)
        return reg
    monkeypatch.setattr(registry, "entries", entries)
