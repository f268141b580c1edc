import json

import pytest

from companion import claims, registry
from companion.card import ChapterCard
from companion.config import Settings


def _settings(overrides=None, profile="smoke", chapter="demo"):
    return Settings(chapter=chapter, profile=profile, values={"seed": 1}, overrides=overrides or {})


@pytest.fixture
def demo_registry(monkeypatch):
    reg = {
        "demo/acc": registry.Entry(id="demo/acc", paper="pandey2022", chapter="demo", figure="F-X",
                                   statement="accuracy is high", source="[T]", statistic="mean accuracy",
                                   rule={"test": "at_least", "threshold": 0.9}, reference={"value": 0.99},
                                   added="2026-12-01"),
        "demo/ftpt": registry.Entry(id="demo/ftpt", paper="pandey2022", chapter="demo", figure="F-X",
                                    statement="FTPT as the paper", source="[T]", statistic="mean FTPT",
                                    rule={"test": "matches", "margin": 5}, reference={"value": 70.0},
                                    added="2026-12-01",
                                    revisions=({"date": "2026-12-02", "why": "margin widened for a test"},)),
        "other/x": registry.Entry(id="other/x", paper="pandey2022", chapter="other", figure="F-Y",
                                  statement="elsewhere", source="[T]", statistic="s",
                                  rule={"test": "greater"}, reference={}, added="2026-12-01"),
    }
    monkeypatch.setattr(registry, "entries", lambda: reg)
    return reg


def test_default_runs_feed_the_store(demo_registry):
    card = ChapterCard(_settings())
    c = card.check("demo/acc", values=[0.99, 1.0, 0.995])
    assert c.status == "pass" and c.passed and c.n == 3 and c.lo <= c.estimate <= c.hi
    assert card.save() == [claims.store_dir("smoke") / "demo.json"]
    back = claims.load_store("smoke")
    assert [x.id for x in back] == ["demo/acc"] and back[0].status == "pass" and back[0].profile == "smoke"


def test_runs_with_overrides_do_not_touch_the_store(tmp_path, monkeypatch, demo_registry):
    out = tmp_path / "run" / "demo.claims.json"
    monkeypatch.setenv(claims.CLAIMS_FILE_ENV, str(out))
    card = ChapterCard(_settings({"seed": 3}))
    card.check("demo/acc", values=[0.1, 0.2, 0.15])
    assert card.save() == [out]
    assert claims.load_store("smoke") == []
    row = json.loads(out.read_text())[0]
    assert row["status"] == "fail" and row["passed"] is False and row["overrides"] == {"seed": 3}


def test_three_outcomes_and_revision_notes(demo_registry):
    card = ChapterCard(_settings())
    c = card.check("demo/ftpt", values=[50.0, 90.0, 71.0])
    assert c.status == "undecided" and "revised 2026-12-02" in c.revised
    assert claims.counts(card.claims) == {"pass": 0, "fail": 0, "undecided": 1, "not testable": 0}


def test_duplicates_and_foreign_claims_are_refused(demo_registry):
    card = ChapterCard(_settings())
    card.check("demo/acc", values=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="twice"):
        card.check("demo/acc", values=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="owned by chapter 'other'"):
        card.check("other/x", a=[1, 2, 3], b=[0, 1, 2])
    assert card.see("other/x").chapter == "other"


def test_show_refuses_a_chapter_that_skipped_a_claim(demo_registry, monkeypatch):
    monkeypatch.setattr(registry, "for_chapter",
                        lambda ch: [e for e in demo_registry.values() if e.chapter == ch])
    card = ChapterCard(_settings())
    card.check("demo/acc", values=[1.0, 1.0, 1.0])
    with pytest.raises(RuntimeError, match="demo/ftpt"):
        card.show()


def test_old_rows_load_with_a_status(tmp_path):
    f = tmp_path / "old.json"
    f.write_text(json.dumps([{"chapter": "c", "paper": "p", "figure": "F", "id": "c/x", "claim": "s",
                              "expected": "e", "observed": "o", "criterion": "k", "passed": False}]))
    assert claims.load_file(f)[0].status == "fail"


def test_frame_status_column(demo_registry):
    card = ChapterCard(_settings())
    card.check("demo/acc", values=[0.1, 0.2, 0.15])
    frame = card.frame
    assert list(frame["status"]) == ["fail"]
    assert "fail" in claims.render_html(frame)


def test_not_testable_unless_a_parameter_is_set(monkeypatch):
    e = registry.Entry(id="demo/up", paper="pandey2022", chapter="demo", figure="F", statement="s",
                       source="t", statistic="s", rule={"test": "greater"}, reference={}, added="2026-12-01",
                       not_testable="digit mosaics stand in for CIFAR-10", testable_with="data_dir")
    monkeypatch.setattr(registry, "entries", lambda: {e.id: e})
    data = dict(a=[5.0, 6.0, 7.0], b=[1.0, 2.0, 2.5])
    digits = ChapterCard(Settings(chapter="demo", profile="smoke", values={"data_dir": None},
                                           overrides={}))
    assert digits.check("demo/up", **data).status == "not testable"
    cifar = ChapterCard(Settings(chapter="demo", profile="smoke", values={"data_dir": "/data/cifar"},
                                          overrides={"data_dir": "/data/cifar"}))
    assert cifar.check("demo/up", **data).status == "pass"


def test_failed_precondition_makes_its_findings_not_testable(monkeypatch):
    def entry(cid, **kw):
        return registry.Entry(id=cid, paper="aitken2021", chapter="demo", figure="F", statement="s",
                              source="t", statistic="s", reference={}, added="2026-12-01", **kw)

    pre = entry("demo/solves", rule={"test": "rate_at_least", "threshold": 0.5, "min_n": 3},
                tier="precondition")
    find = entry("demo/effect", rule={"test": "greater"}, requires=("demo/solves",))
    monkeypatch.setattr(registry, "entries", lambda: {pre.id: pre, find.id: find})
    data = dict(a=[5.0, 6.0, 7.0], b=[1.0, 2.0, 2.5])
    ok = ChapterCard(_settings())
    assert ok.check("demo/solves", successes=10, trials=10).status == "pass"
    assert ok.check("demo/effect", **data).status == "pass"
    bad = ChapterCard(_settings())
    assert bad.check("demo/solves", successes=0, trials=10).status == "fail"
    gated = bad.check("demo/effect", **data)
    assert gated.status == "not testable" and "demo/solves" in gated.note
    # only findings count in the headline
    assert claims.counts_text(bad.claims).endswith("(of 1 findings)")


def test_a_precondition_owned_elsewhere_gates_when_decided_here(monkeypatch, tmp_path):
    monkeypatch.setenv("COMPANION_CACHE", str(tmp_path))  # an empty claims store: the owner has not run

    def entry(cid, chapter, **kw):
        return registry.Entry(id=cid, paper="aitken2021", chapter=chapter, figure="F", statement="s",
                              source="t", statistic="s", reference={}, added="2026-12-01", **kw)

    pre = entry("owner/solves", "owner", rule={"test": "rate_at_least", "threshold": 0.5, "min_n": 3},
                tier="precondition")
    find = entry("demo/effect", "demo", rule={"test": "greater"}, requires=("owner/solves",))
    monkeypatch.setattr(registry, "entries", lambda: {pre.id: pre, find.id: find})
    data = dict(a=[5.0, 6.0, 7.0], b=[1.0, 2.0, 2.5])
    # not decided here and not in the store: not met
    assert ChapterCard(_settings()).check("demo/effect", **data).status == "not testable"
    solved = ChapterCard(_settings())
    assert solved.gate("owner/solves", successes=10, trials=10) == "pass"
    assert solved.check("demo/effect", **data).status == "pass"
    assert [e.id for e in solved.links] == ["owner/solves"] and not any(c.id == "owner/solves"
                                                                        for c in solved.claims)
    unsolved = ChapterCard(_settings())
    assert unsolved.gate("owner/solves", successes=0, trials=10) == "fail"
    assert unsolved.check("demo/effect", **data).status == "not testable"
    with pytest.raises(ValueError, match="only preconditions gate"):
        ChapterCard(_settings()).gate("demo/effect", **data)
