"""Every registered rule can decide: with the paper's value (and spread) it passes at a feasible
number of seeds, and with the effect reversed it fails (preconditions need only be able to pass).
Plus known answers for the check itself."""

import math

import pytest

from companion import plan, registry


def entry(test, paper=None, tier="finding", **rule):
    return registry.Entry(id=f"demo/{test}", paper="pandey2022", chapter="demo", figure="F", statement="s",
                          source="[T]", statistic="st", rule={"test": test, **rule},
                          reference=paper or {}, added="2026-12-01", tier=tier)


def test_every_rule_in_the_registry_can_decide():
    flagged = [f.why() for f in plan.feasibility_all() if not f.ok]
    assert not flagged, f"{len(flagged)} rules cannot decide:\n" + "\n".join(flagged)


def test_a_threshold_above_the_range_cannot_pass():
    e = entry("at_least", paper={"value": 0.9, "sd": 0.05}, threshold=1.2, range=[0, 1])
    f = plan.feasibility(e, row={})
    assert f.n_pass is None and not f.ok and "cannot pass" in f.why()


def test_accuracy_at_least_099_cannot_be_shown_with_40_networks():
    # every network at 1.0: Wilson's lower end at n = 40 is 40 / 43.84 = 0.912 < 0.99
    e = entry("at_least", paper={"value": 1.0, "sd": 0.0}, threshold=0.99, range=[0, 1])
    assert plan.feasibility(e, row={}).n_pass is None
    ok = entry("at_least", paper={"value": 1.0, "sd": 0.0}, threshold=0.8, range=[0, 1])
    f = plan.feasibility(ok, row={})
    # 3.84 / (n + 3.84) <= 0.2 from n = 16 (Wilson for n of n)
    assert f.n_pass == 16 and f.n_fail is not None and f.ok


def test_a_band_narrower_than_the_interval_can_get_cannot_pass():
    # sd 30 over n <= 40: the t interval's half-width is at least 2.02 * 30 / sqrt(40) = 9.6 > margin 5
    e = entry("matches", paper={"value": 70.0, "sd": 30.0}, margin=5)
    f = plan.feasibility(e, row={})
    assert f.n_pass is None and not f.ok
    wide = entry("matches", paper={"value": 70.0, "sd": 30.0}, margin=12)
    assert plan.feasibility(wide, row={}).n_pass is not None


def test_known_least_n_for_a_difference():
    # effect 1 sd: the t interval excludes 0 when t_{n-1} / sqrt(n) < 1, first at n = 7
    # (t_{5} / sqrt 6 = 1.05, t_{6} / sqrt 7 = 0.925)
    e = entry("greater", paper={"value": 2.0, "sd": 2.0}, min_n=3)
    f = plan.feasibility(e, row={})
    assert (f.n_pass, f.n_fail, f.reversed) == (7, 7, -2.0) and f.ok


def test_reversed_effects():
    assert plan.reverse(entry("less"), -3.0) == 3.0
    assert plan.reverse(entry("at_least", threshold=0.9, range=[0, 1]), 1.0) == pytest.approx(0.8)
    assert plan.reverse(entry("at_most", threshold=0.05, range=[0, 1]), 0.0) == pytest.approx(0.1)
    m = entry("matches", paper={"value": 90.0}, margin=5, range=[0, 100])
    assert plan.reverse(m, 90.0) == 80.0  # 90 + 10 leaves the range: the other side


def test_a_precondition_needs_only_to_pass_and_nothing_to_simulate_is_flagged():
    pre = entry("at_least", paper={"value": 1.0, "sd": 0.0}, threshold=0.5, range=[0, 1], tier="precondition")
    f = plan.feasibility(pre, row={})
    assert f.ok and f.n_pass is not None
    none = plan.feasibility(entry("greater"), row={})
    assert none.value is None and not none.ok and "nothing to simulate" in none.why()


def test_a_rate_of_zero_failures():
    # rate_at_least 0.05 with an error-mode share of 0.25: passes early; the reversed share (0) needs
    # 3.84 / (n + 3.84) < 0.05, n >= 73
    e = entry("rate_at_least", paper={"value": 0.25}, threshold=0.05, min_n=10)
    f = plan.feasibility(e, n_max=200, row={})
    assert f.n_fail == 73 and f.n_pass is not None
    assert plan.feasibility(e, n_max=40, row={}).n_fail is None
    assert not math.isnan(f.sd or 0.0)
