import json

import pytest
import torch

from companion import cache


def _payload():
    return {"w": torch.arange(6.0).reshape(2, 3), "acc": 0.5, "name": "x", "curve": [1, 2, 3]}


def test_round_trip_and_hit_without_recompute():
    calls = []

    def compute():
        calls.append(1)
        return _payload()

    a = cache.cached("demo", {"seed": 1, "lr": 0.1}, compute)
    b = cache.cached("demo", {"lr": 0.1, "seed": 1}, compute)  # key order does not matter
    assert len(calls) == 1
    assert torch.equal(a["w"], b["w"]) and b["acc"] == 0.5 and b["curve"] == [1, 2, 3]


def test_config_seed_and_code_change_the_key(monkeypatch):
    k1 = cache.key("demo", {"seed": 1})
    assert k1 != cache.key("demo", {"seed": 2})
    assert k1 != cache.key("other", {"seed": 1})
    cache.fingerprint.cache_clear()
    monkeypatch.setattr(cache, "fingerprint", lambda scope=(): "different code")
    assert k1 != cache.key("demo", {"seed": 1})


def test_fingerprint_reads_code_not_docstrings_or_comments():
    base = b'"""Module."""\n\ndef f(x):\n    """Double it."""\n    return 2 * x\n'
    reworded = (b'"""Module, reworded."""\n# a comment\n\ndef f(x):\n    """Twice x."""\n\n'
                b"    return 2 * x  # why\n")
    changed = b'"""Module."""\n\ndef f(x):\n    """Double it."""\n    return 3 * x\n'
    only_doc = b'def g():\n    """Nothing to do."""\n'
    assert cache.code_text(base) == cache.code_text(reworded)
    assert cache.code_text(base) != cache.code_text(changed)
    assert cache.code_text(only_doc) == cache.code_text(b"def g():\n    pass\n")
    # A string statement after the first is code, not a docstring.
    assert cache.code_text(b"x = 1\n'text'\n") != cache.code_text(b"x = 1\n")


def test_corrupt_payload_is_detected_and_recomputed():
    cache.cached("demo", {"seed": 3}, _payload)
    k = cache.key("demo", {"seed": 3})
    pt, manifest = cache._entry("demo", k)
    pt.write_bytes(pt.read_bytes()[:-10] + b"garbage!!!")
    assert cache.load("demo", {"seed": 3}) is None
    assert not manifest.exists()  # damaged entries are removed
    out = cache.cached("demo", {"seed": 3}, lambda: {"v": torch.ones(1)})
    assert torch.equal(out["v"], torch.ones(1))


def test_partial_entry_without_manifest_is_a_miss():
    k = cache.key("demo", {"seed": 4})
    pt, manifest = cache._entry("demo", k)
    pt.parent.mkdir(parents=True)
    pt.write_bytes(b"half a file")
    assert cache.load("demo", {"seed": 4}) is None


def test_failed_compute_leaves_nothing(_isolated_cache):
    def boom():
        raise RuntimeError("training diverged")

    with pytest.raises(RuntimeError):
        cache.cached("demo", {"seed": 5}, boom)
    leftovers = [p for p in _isolated_cache.rglob("*") if p.is_file()] if _isolated_cache.exists() else []
    assert leftovers == []


class Evil:
    """Stands for any pickled object that weights_only loading must refuse."""


def test_loads_are_weights_only():
    """A payload holding arbitrary Python objects cannot be loaded back: it is treated as damaged."""
    cache.store("demo", {"seed": 6}, {"obj": Evil()})
    assert cache.load("demo", {"seed": 6}) is None


def test_manifest_records_config_in_clear():
    cache.cached("demo", {"seed": 7, "tag": "a"}, _payload)
    _, manifest = cache._entry("demo", cache.key("demo", {"seed": 7, "tag": "a"}))
    meta = json.loads(manifest.read_text())
    assert meta["config"] == {"seed": 7, "tag": "a"} and len(meta["sha256"]) == 64


def test_manifest_keeps_what_computing_the_entry_cost():
    def busy():
        t = 0.0
        for i in range(300_000):  # some CPU work to measure
            t += i ** 0.5
        return _payload()

    cache.cached("demo", {"seed": 8}, busy)
    k = cache.key("demo", {"seed": 8})
    cost = cache.compute_cost("demo", k)
    assert set(cost) == {"wall_s", "cpu_s", "date", "host"}
    assert cost["cpu_s"] > 0 and cost["wall_s"] > 0
    # a load does not touch it; an entry stored without it says so
    cache.cached("demo", {"seed": 8}, busy)
    assert cache.compute_cost("demo", k) == cost
    cache.store("demo", {"seed": 9}, _payload())
    assert cache.compute_cost("demo", cache.key("demo", {"seed": 9})) is None
    assert cache.compute_cost("demo", "0" * 64) is None


def test_non_plain_config_is_refused():
    with pytest.raises(TypeError):
        cache.key("demo", {"f": object()})
