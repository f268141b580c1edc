"""The claims registry: schema checks, the decision rules' three outcomes, and its agreement with the
chapters."""

import json
import re

import pytest

from companion import chapters, config, registry
from companion.config import ConfigError


def entry(test, **rule):
    ref = rule.pop("paper", {"value": 10.0})
    return registry.Entry(id="demo/x", paper="pandey2022", chapter="demo", figure="F", statement="s",
                          source="[T]", statistic="st", rule={"test": test, **rule}, reference=ref,
                          added="2026-12-01")


def test_matches_three_outcomes():
    e = entry("matches", margin=2, min_n=3)
    assert registry.decide(e, values=[10.0, 10.5, 9.5, 10.2]).status == "pass"
    assert registry.decide(e, values=[20.0, 20.5, 19.5]).status == "fail"
    assert registry.decide(e, values=[5.0, 15.0, 11.0]).status == "undecided"   # too wide
    assert registry.decide(e, values=[10.0, 10.1]).status == "undecided"        # too few seeds


def test_matches_band_includes_the_papers_standard_error():
    e = entry("matches", margin=1, paper={"value": 10.0, "sd": 4.0, "n": 16})
    lo, hi = e.target()
    assert (lo, hi) == pytest.approx((10 - 1 - 1.96, 10 + 1 + 1.96))


def test_one_sided():
    e = entry("at_least", threshold=0.99)
    assert registry.decide(e, values=[1.0, 0.995, 0.999, 0.998, 0.997]).status == "pass"
    # equal values are not certainty: no spread leaves an unbounded statistic undecided, and a bounded
    # one gets Wilson's interval (3 of 3 networks at 1.0 allow a mean down to 0.44)
    flat = registry.decide(e, values=[1.0, 1.0, 1.0])
    assert flat.status == "undecided" and "no spread" in flat.detail
    bounded = registry.decide(entry("at_least", threshold=0.99, range=[0, 1]), values=[1.0, 1.0, 1.0])
    assert bounded.status == "undecided" and bounded.lo == pytest.approx(0.4385, abs=1e-4)
    assert registry.decide(entry("at_least", threshold=0.4, range=[0, 1]), values=[1.0] * 3).status == "pass"
    assert registry.decide(e, values=[0.5, 0.6, 0.55]).status == "fail"
    assert registry.decide(e, values=[0.95, 1.0, 1.0]).status == "undecided"
    assert registry.decide(entry("at_most", threshold=0.1), values=[0.5, 0.6, 0.55]).status == "fail"


def test_directional_needs_the_papers_direction():
    up = entry("greater")
    a, b = [5.0, 6.0, 7.0, 6.5], [1.0, 2.0, 2.5, 1.5]
    assert registry.decide(up, a=a, b=b).status == "pass"
    assert registry.decide(up, a=b, b=a).status == "fail"        # the opposite direction
    assert registry.decide(entry("less"), a=b, b=a).status == "pass"
    noisy = dict(a=[1.0, 3.0, 2.0, 1.5], b=[2.0, 1.0, 2.5, 1.0])
    assert registry.decide(up, **noisy).status == "undecided"
    # a minimal effect turns "cannot tell" into "fail" when the interval rules it out
    small = dict(a=[1.0, 1.1, 0.9, 1.05], b=[1.0, 1.0, 1.0, 1.0])
    assert registry.decide(entry("greater", min_effect=5.0), **small).status == "fail"


def test_rates():
    e = entry("rate_at_least", threshold=0.5, min_n=5)
    assert registry.decide(e, successes=19, trials=20).status == "pass"
    assert registry.decide(e, values=[False] * 18 + [True, True]).status == "fail"
    assert registry.decide(e, successes=3, trials=4).status == "undecided"  # too few trials
    h = entry("rate_higher", min_n=5)
    assert registry.decide(h, successes=(10, 2), trials=(10, 10)).status == "pass"
    assert registry.decide(h, successes=(2, 10), trials=(10, 10)).status == "fail"
    assert registry.decide(h, successes=(6, 5), trials=(10, 10)).status == "undecided"


def test_an_undecided_rate_still_shows_its_counts():
    # one seed per setting (a partial run) is undecided, and its row still prints the counts
    from companion.card import ChapterCard
    h = entry("rate_higher", min_n=5)
    v = registry.decide(h, successes=(1, 0), trials=(1, 1))
    assert v.status == "undecided"
    assert ChapterCard._observed_text(h, v).startswith("1/1 vs 0/1: difference 1")
    a = entry("rate_at_least", threshold=0.5, min_n=5)
    v = registry.decide(a, successes=2, trials=3)
    assert v.status == "undecided" and ChapterCard._observed_text(a, v).startswith("2/3 = ")


def test_wrong_data_is_refused():
    with pytest.raises(TypeError):
        registry.decide(entry("greater"), values=[1, 2, 3])


def test_schema_errors_are_one_line(tmp_path):
    with pytest.raises(ConfigError, match="must start with"):
        registry._check_entry("other/x", "demo", {"figure": "F"}, "f.yml")
    bad = {"figure": "F", "statement": "s", "source": "t", "statistic": "s", "added": "d",
           "rule": {"test": "bigger"}}
    with pytest.raises(ConfigError, match="rule.test"):
        registry._check_entry("demo/x", "demo", bad, "f.yml")
    bad["rule"] = {"test": "matches"}
    with pytest.raises(ConfigError, match="margin"):
        registry._check_entry("demo/x", "demo", bad, "f.yml")


def test_a_malformed_range_is_refused():
    base = {"figure": "F", "statement": "s", "source": "t", "statistic": "s", "added": "d"}
    for rng in ([1, 0], [0], "0,1", [0, float("inf")], [0, True], [0.5, 0.5]):
        with pytest.raises(ConfigError, match="rule.range"):
            registry._check_entry("demo/x", "demo", {**base, "rule": {"test": "at_least", "threshold": 0.5,
                                                                        "range": rng}}, "f.yml")
    with pytest.raises(ConfigError, match="rate lies in"):
        registry._check_entry("demo/x", "demo", {**base, "rule": {"test": "rate_at_least", "threshold": 0.5,
                                                                    "range": [0, 1]}}, "f.yml")
    registry._check_entry("demo/x", "demo", {**base, "rule": {"test": "at_least", "threshold": 0.5,
                                                                "range": [0, 100]}}, "f.yml")


def test_the_level_and_the_interval_method_are_stated_and_used(monkeypatch):
    e = entry("at_least", threshold=0.5, range=[0, 1])
    text = e.rule_text()
    assert text.startswith("95% interval") and "Wilson" in text and "[0, 1]" in text
    assert "undefined" in entry("greater").rule_text() and "Newcombe" in entry("rate_higher").rule_text()
    values = [0.58, 0.62, 0.6, 0.61, 0.59]
    assert registry.decide(e, values=values).status == "pass"
    strict = registry.decide(e, values=values, level=0.9999999)
    assert strict.status == "undecided" and strict.lo < registry.decide(e, values=values).lo
    monkeypatch.setenv("COMPANION_LEVEL", "0.9999999")  # a staged record's per-look level
    assert registry.decide(e, values=values).status == "undecided"
    assert not e.rule_text().startswith("95%")


# ---- the registry against the chapters -------------------------------------------------------------

CHECK = re.compile(r"""\.check\(\s*["']([^"']+)["']""")
SEE = re.compile(r"""\.see\(\s*["']([^"']+)["']""")


def _code(nb_path):
    nb = json.loads(nb_path.read_text())
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")


def test_registry_loads_and_every_owner_is_a_chapter():
    reg = registry.entries()
    ids = {c.id for c in chapters.all_chapters()}
    for e in reg.values():
        assert e.chapter in ids, f"{e.id}: no chapter {e.chapter!r}"
        e.rule_text(), e.expected_text()  # renders without error (table lookups resolve)


def test_a_declared_seed_parameter_is_one_of_its_chapters():
    """``seeds_parameter`` names a seed count of the claim's own chapter (the plan raises it); a name
    that is not a seed count is refused when the registry loads."""
    declared = [e for e in registry.entries().values() if e.seeds_parameter]
    assert {e.id for e in declared} >= {"tab-accuracy/ved-accuracy", "app-one-to-one/nongated-diagonal"}
    for e in declared:
        assert e.seeds_parameter in config.schema(e.chapter), f"{e.id}: {e.seeds_parameter!r}"
    base = {"figure": "F", "statement": "s", "source": "t", "statistic": "s", "added": "d",
            "rule": {"test": "at_least", "threshold": 0.5}}
    with pytest.raises(ConfigError, match="seeds_parameter"):
        registry._check_entry("demo/x", "demo", {**base, "seeds_parameter": "steps"}, "f.yml")


def test_each_claim_is_checked_once_by_its_owner_and_nowhere_else():
    reg = registry.entries()
    seen: dict[str, list[str]] = {}
    for ch in chapters.all_chapters():
        code = _code(ch.path)
        for cid in CHECK.findall(code):
            seen.setdefault(cid, []).append(ch.id)
        for cid in SEE.findall(code):
            assert cid in reg, f"{ch.id} links to unregistered claim {cid}"
    for cid, where in seen.items():
        assert cid in reg, f"{where} checks unregistered claim {cid}"
        assert where == [reg[cid].chapter], f"{cid} is checked by {where}, owned by {reg[cid].chapter}"
    for cid, e in reg.items():
        if any(CHECK.search(_code(ch.path)) for ch in chapters.all_chapters() if ch.id == e.chapter):
            assert cid in seen, f"{cid} is registered but its chapter {e.chapter} never checks it"


def test_revisions_are_dated_and_explained():
    for e in registry.entries().values():
        for r in e.revisions:
            assert str(r["date"]) and len(str(r["why"])) > 10, e.id


def test_per_cell_rule_passes_only_when_every_cell_passes():
    e = entry("at_least", threshold=-3, per_cell=3, min_n=3, range=[-100, 100])
    assert e.cell_level(0.95) == pytest.approx(1 - 0.05 / 3)
    good = [4.0, 5.0, 6.0, 5.5]  # mean 5.125, sd 0.854: the 98.33 % t quantile (3 df) 4.857 -> [3.05, 7.20]
    bad = [-9.0, -10.0, -11.0, -10.5]  # [-12.20, -8.05]: wholly below -3, this cell fails
    wide = [-20.0, 25.0, 3.0, -1.0]  # straddles -3 at the per-cell level
    v = registry.decide(e, values={"c1": good, "c2": good, "c3": good})
    assert v.status == "pass" and v.extra["cells"] == {"c1": "pass", "c2": "pass", "c3": "pass"}
    assert (v.lo, v.hi) == pytest.approx((3.0514, 7.1986), abs=1e-3)  # the Bonferroni t interval
    # one failing cell fails the claim, whatever the others say, and is the cell shown
    v = registry.decide(e, values={"c1": good, "c2": bad, "c3": wide})
    assert v.status == "fail" and v.extra["deciding_cell"] == "c2" and v.estimate == pytest.approx(-10.125)
    v = registry.decide(e, values={"c1": good, "c2": wide, "c3": good})
    assert v.status == "undecided" and v.extra["deciding_cell"] == "c2"
    # fewer cells than the statement covers: all passing is not "every cell"
    v = registry.decide(e, values={"c1": good, "c2": good})
    assert v.status == "undecided" and "of 2 cells run (3 needed)" in v.detail
    assert registry.decide(e, values={}).status == "undecided"


def test_per_cell_level_is_bonferroni_and_decides_what_one_cell_at_95_would_not():
    # a cell whose 95 % interval clears 0 but whose 98.33 % (three cells) interval does not
    e = entry("greater", per_cell=3, min_n=3)
    a, b = [2.0, 3.0, 1.0, 2.5, 1.5], [0.0] * 5  # mean 2, sd 0.79: lower end 1.018 at 95 %, 0.600 at 98.33 %
    alone = registry.decide(entry("greater", min_n=3), a=a, b=b)
    v = registry.decide(e, a={"x": a, "y": a, "z": a}, b={"x": b, "y": b, "z": b})
    assert alone.status == v.status == "pass"
    assert (alone.lo, v.lo) == pytest.approx((1.0184, 0.5997), abs=1e-3)
    tight = [0.6, 1.6, 0.1, 1.1, 0.6]  # mean 0.8: lower end 0.092 at 95 %, -0.210 at 98.33 %
    assert registry.decide(entry("greater", min_n=3), a=tight, b=b).status == "pass"
    bs = {"x": b, "y": b, "z": b}
    assert registry.decide(e, a={"x": tight, "y": a, "z": a}, b=bs).status == "undecided"
    assert "Bonferroni" in e.rule_text(0.95) and "98.33%" in e.rule_text(0.95)
    with pytest.raises(TypeError, match="per-cell"):
        registry.decide(e, a=a, b=b)


@pytest.mark.parametrize("rule, needle", [
    ({"test": "matches", "margin": 1, "per_cell": 3}, "rule.per_cell applies to"),
    ({"test": "greater", "per_cell": 1}, "whole number >= 2"),
    ({"test": "greater", "per_cell": True}, "whole number >= 2"),
])
def test_a_malformed_per_cell_rule_is_refused(rule, needle):
    raw = {"figure": "F", "statement": "s", "source": "[T]", "statistic": "st", "added": "2026-12-03",
           "paper": {"value": 1.0}, "rule": rule}
    with pytest.raises(ConfigError, match=re.escape(needle)):
        registry._check_entry("demo/x", "demo", raw, "demo.yml")
