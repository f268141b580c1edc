"""One-seed member tasks: an Aitken et al. ensemble stacked from networks trained one seed at a time is,
bit for bit, the ensemble trained as one batched program, so a build may train it either way.

Known answers: the batched program itself (``train_ensemble`` on all seeds), trained here beside the
members, on every architecture, task and model option the chapters declare an ensemble with."""

import json
from collections import Counter

import pytest
import torch

from companion import cache, networks, prebuild, recording
from companion.aitken2021 import specs
from companion.aitken2021.models import ModelConfig
from companion.aitken2021.train import _train_limited

#: (chapter, smoke parameters, description prefix): one-to-one AED / AO / VED and the reversed and
#: prev0 variants, eSCAN AED / AO (one-hot padded to 100 for AO), English-French (learned embedding), and
#: the learned-attention AEDs (query/key/value, multi-head)
CASES = [
    ("fig2", {"n_seeds": 3, "steps": 60}, "one-to-one AED"),
    ("fig3", {"n_seeds": 3, "steps": 60}, "one-to-one AO"),
    ("tab-accuracy", {"ved_seeds": 3, "steps": 60, "ved_steps": 60}, "one-to-one VED"),
    ("tab-accuracy", {"variant_seeds": 3, "steps": 60}, "one-to-one reversed AED"),
    ("tab-accuracy", {"variant_seeds": 3, "steps": 60}, "one-to-one prev0 AED"),
    ("fig5", {"escan_seeds": 3}, "eSCAN AED"),
    ("fig5", {"escan_seeds": 3}, "eSCAN AO"),
    ("fig5", {"enfr_seeds": 2}, "English-French AED"),
    ("fig5", {"enfr_seeds": 2}, "English-French AO"),
    ("app-learned-attention", {"n_seeds": 3, "steps": 60}, "one-to-one QKV AED"),
    ("app-multihead", {"n_seeds": 3, "steps": 60}, "one-to-one multi-head AED"),
]


def _spec(chapter, params, prefix):
    (spec,) = [s for s in networks.chapter_specs(chapter, "smoke", params)
               if s.description.startswith(prefix)]
    return spec


def _batched(spec) -> dict:
    """The same ensemble trained as one program, on the training threads (what ``trained_ensemble``
    computes)."""
    one = spec.members[0].fetch  # trained_ensemble's own call (a chapter's wrapper may fetch the whole)
    _, task = one.args
    return _train_limited(ModelConfig.from_dict(spec.config["model"]), task, spec.config["seeds"],
                          one.keywords["train"])


def _assert_same(a: dict, b: dict) -> None:
    assert a["seeds"] == b["seeds"] and a["history"]["step"] == b["history"]["step"]
    for part in ("state", "history", "test"):
        keys = [k for k in a[part] if k != "step"]
        assert keys == [k for k in b[part] if k != "step"]
        for k in keys:
            assert a[part][k].shape == b[part][k].shape, (part, k)
            assert torch.equal(a[part][k], b[part][k]), (part, k, (a[part][k] - b[part][k]).abs().max())


@pytest.mark.parametrize("chapter,params,prefix", CASES, ids=[c[2] for c in CASES])
def test_an_ensemble_stacked_from_one_seed_members_is_the_batched_program_bit_for_bit(chapter, params,
                                                                                     prefix):
    spec = _spec(chapter, params, prefix)
    assert [m.config["seeds"] for m in spec.members] == [[s] for s in spec.config["seeds"]]
    assert len(spec.members) >= 2 and not spec.is_cached()
    for m in spec.members:
        m.fetch()
    spec.assemble()
    stacked = cache.load(spec.kind, spec.config, spec.scope)
    _assert_same(stacked, _batched(spec))
    # the manifest keeps what the members cost, added up, and which entries it was stacked from
    cost = cache.compute_cost(spec.kind, spec.key)
    member_costs = [cache.compute_cost(m.kind, m.key) for m in spec.members]
    assert cost["assembled_from"] == [m.key for m in spec.members]
    assert cost["cpu_s"] == pytest.approx(sum(c["cpu_s"] for c in member_costs), abs=0.01)
    assert stacked["seconds"] == pytest.approx(sum(cache.load(m.kind, m.config, m.scope)["seconds"]
                                                   for m in spec.members))


def test_stacking_needs_every_member_and_one_ensemble():
    spec = _spec("fig2", {"n_seeds": 2, "steps": 20}, "one-to-one AED")
    with pytest.raises(RuntimeError, match="member seed 1 of the ensemble is not in the model cache"):
        spec.assemble()
    assert not spec.is_cached()
    a = _spec("fig2", {"n_seeds": 1, "steps": 20}, "one-to-one AED").fetch().payload
    b = _spec("fig2", {"n_seeds": 1, "steps": 30, "seed": 2}, "one-to-one AED").fetch().payload
    with pytest.raises(ValueError, match="members differ in their train configuration"):
        specs.stack_payloads([a, b])


def test_a_build_trains_members_as_tasks_shares_them_and_stacks_them(tmp_path, monkeypatch):
    log = tmp_path / "events.log"
    monkeypatch.setenv(cache.LOG_ENV, str(log))
    params = {"n_seeds": 3, "steps": 40}
    spec = _spec("fig2", params, "one-to-one AED")
    lines: list[str] = []
    assert prebuild.prebuild([("fig2", "smoke", params)], workers=2, log=lines.append) == []
    assert any("1 of them as 3 one-seed tasks" in ln for ln in lines), lines
    assert sum("stacked from its members" in ln for ln in lines) == 1, lines

    def computed():
        events = (ln.split() for ln in log.read_text().splitlines())
        return Counter(k for ev, _, k, _ in events if ev == "computed")

    assert computed() == Counter({**{m.key: 1 for m in spec.members}, spec.key: 1})
    # a record that trained them counts one trained entry, the ensemble
    assert recording.cache_reuse(log.read_text()) == {"trained": 1, "reused": 0}
    # the chapter's own call now only loads the stacked entry
    ens = spec.fetch()
    assert ens.seeds == [1, 2, 3] and computed()[spec.key] == 1
    # seeds 1-4 share three members with seeds 1-3: only seed 4 trains
    log.unlink()
    more = _spec("fig2", {"n_seeds": 4, "steps": 40}, "one-to-one AED")
    assert prebuild.prebuild([("fig2", "smoke", {"n_seeds": 4, "steps": 40})], workers=2,
                             log=lines.append) == []
    assert computed() == Counter({more.members[3].key: 1, more.key: 1})
    manifest = json.loads(cache._entry(more.kind, more.key)[1].read_text())
    assert manifest["compute"]["assembled_from"] == [m.key for m in more.members]
    # a record that stacks it counts the three members trained before it at their training cost (the
    # stacking itself takes a second); seed 4, trained during the record, is in the record's own time
    cost = {m.key: cache.compute_cost(m.kind, m.key)["cpu_s"] for m in more.members}
    pre = recording.pretrained_runs("fig2", "smoke", {"n_seeds": 4, "steps": 40}, log.read_text())
    (run,) = [r for r in pre["runs"] if r["key"] == more.key[:12]]
    assert run["cpu_s"] == pytest.approx(sum(cost[m.key] for m in more.members[:3]), abs=0.01)
    assert run["scales_with"] == "n_seeds"
    # stacked only from members trained before: read, not trained
    log.unlink()
    two = _spec("fig2", {"n_seeds": 2, "steps": 40}, "one-to-one AED")
    assert prebuild.prebuild([("fig2", "smoke", {"n_seeds": 2, "steps": 40})], workers=1,
                             log=lines.append) == []
    assert computed() == Counter({two.key: 1})
    assert recording.cache_reuse(log.read_text()) == {"trained": 0, "reused": 1}
    (run,) = [r for r in recording.pretrained_runs("fig2", "smoke", {"n_seeds": 2, "steps": 40},
                                                   log.read_text())["runs"] if r["key"] == two.key[:12]]
    assert run["cpu_s"] == pytest.approx(cost[two.members[0].key] + cost[two.members[1].key], abs=0.01)


def test_dry_run_says_an_ensemble_trains_as_one_seed_tasks():
    tasks = prebuild.collect([("fig2", "smoke", {"n_seeds": 3})])
    text = prebuild.listing(tasks, [])
    assert "one-to-one AED x3" in text
    assert "as 3 one-seed tasks (0 in the cache, 0 cut from cached ensembles), then stacked" in text
    units = prebuild.training_units([t for t in tasks if not t.cached])
    assert len(units) == 3 and all(u["member"] for u in units)
    # equal costs keep the declared order, lowest seed first: a build stopped part way leaves seeds 1..k
    assert [u["label"].split(": seed ")[1].split()[0] for u in units] == ["1", "2", "3"]
    per_seed = prebuild.training_units(prebuild.collect([("t-init", "smoke", {})]))
    assert [u["net_key"] for u in per_seed] == [x.key for x in networks.chapter_specs("t-init", "smoke")]


def test_on_several_training_threads_an_ensemble_trains_as_one_program(monkeypatch):
    monkeypatch.setenv("COMPANION_TRAIN_THREADS", "2")
    assert _spec("fig2", {"n_seeds": 3}, "one-to-one AED").members == ()
    monkeypatch.setenv("COMPANION_TRAIN_THREADS", "1")
    assert len(_spec("fig2", {"n_seeds": 3}, "one-to-one AED").members) == 3


def test_more_seeds_for_a_trained_ensemble_train_only_the_new_ones(tmp_path, monkeypatch):
    """Seeds 1-3 trained as one batched program; asking for seeds 1-5 cuts members 1-3 out of it and
    trains 4 and 5. The result is the batched program on seeds 1-5, bit for bit."""
    log = tmp_path / "events.log"
    monkeypatch.setenv(cache.LOG_ENV, str(log))
    three = _spec("fig2", {"n_seeds": 3, "steps": 40}, "one-to-one AED")
    three.fetch()  # the chapter's own call: one batched program, no member entries
    assert not any(m.is_cached() for m in three.members)
    five = _spec("fig2", {"n_seeds": 5, "steps": 40}, "one-to-one AED")
    text = prebuild.listing(prebuild.collect([("fig2", "smoke", {"n_seeds": 5, "steps": 40})]), [])
    assert "as 5 one-seed tasks (0 in the cache, 3 cut from cached ensembles)" in text
    log.unlink()
    lines: list[str] = []
    assert prebuild.prebuild([("fig2", "smoke", {"n_seeds": 5, "steps": 40})], workers=2,
                             log=lines.append) == []
    assert any("3 one-seed members cut from ensembles in the model cache" in ln for ln in lines), lines
    assert sum("trained (" in ln for ln in lines) == 2, lines  # seeds 4 and 5
    cut = cache.compute_cost(five.kind, five.members[0].key)
    assert cut["cut_from"] == three.key
    _assert_same(cache.load(five.kind, five.config, five.scope), _batched(five))
