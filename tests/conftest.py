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
