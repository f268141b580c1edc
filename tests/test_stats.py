"""Known answers for the intervals that decide the claims."""

import math

import numpy as np
import pytest

from companion import stats


def test_t_interval_known_answer():
    # mean 2, n 4: half-width t_{0.975,3} * sd / sqrt(4)
    iv = stats.mean_interval([1.0, 1.0, 3.0, 3.0])
    sd = np.std([1.0, 1.0, 3.0, 3.0], ddof=1)
    half = 3.182446305284263 * sd / 2
    assert iv.estimate == 2.0 and iv.n == 4
    assert iv.lo == pytest.approx(2 - half) and iv.hi == pytest.approx(2 + half)


def test_degenerate_samples():
    one = stats.mean_interval([5.0])
    assert one.n == 1 and one.lo == -math.inf and one.hi == math.inf
    flat = stats.mean_interval([0.5, 0.5, 0.5])  # equal values are not certainty: undefined, not [m, m]
    assert (flat.lo, flat.hi) == (-math.inf, math.inf) and stats.NO_SPREAD in flat.method
    welch = stats.difference_interval([1.0, 1.0, 1.0], [0.0, 0.0, 0.0], paired=False)
    assert (welch.lo, welch.hi) == (-math.inf, math.inf)
    assert stats.mean_interval([]).n == 0
    assert stats.mean_interval([1.0, float("nan"), 3.0]).n == 2


def test_bootstrap_is_reproducible():
    x = np.random.default_rng(3).normal(size=20)
    a, b = stats.mean_interval(x, "bootstrap"), stats.mean_interval(x, "bootstrap")
    assert (a.lo, a.hi) == (b.lo, b.hi) and a.lo < x.mean() < a.hi


def test_paired_difference_uses_pairs():
    a = np.array([10.0, 20.0, 30.0, 40.0])
    b = a - np.array([1.0, 1.1, 0.9, 1.0])  # large spread across seeds, tiny within pairs
    paired = stats.difference_interval(a, b, paired=True)
    welch = stats.difference_interval(a, b, paired=False)
    assert paired.lo > 0  # the pairs show the effect
    assert welch.lo < 0   # independent samples cannot see it
    with pytest.raises(ValueError):
        stats.difference_interval([1, 2], [1, 2, 3], paired=True)


def test_wilson_known_answer():
    # Wilson 95% for 8/10: (0.4902, 0.9433) (standard tables)
    iv = stats.rate_interval(8, 10)
    assert iv.lo == pytest.approx(0.4902, abs=1e-4) and iv.hi == pytest.approx(0.9433, abs=1e-4)
    with pytest.raises(ValueError):
        stats.rate_interval(11, 10)


def test_newcombe_known_answer():
    # Newcombe (1998) example: 56/70 vs 48/80 -> difference 0.2, 95% CI (0.0524, 0.3339)
    iv = stats.rate_difference_interval(56, 70, 48, 80)
    assert iv.estimate == pytest.approx(0.2)
    assert iv.lo == pytest.approx(0.0524, abs=1e-3) and iv.hi == pytest.approx(0.3339, abs=1e-3)


def test_bounded_mean_without_spread_is_wilson_on_the_sum():
    # three networks all at accuracy 1.0: Wilson for 3/3 is (0.4385, 1.0), not [1, 1]
    iv = stats.mean_interval([1.0, 1.0, 1.0], bounds=(0, 1))
    assert iv.lo == pytest.approx(0.43850, abs=1e-4) and iv.hi == 1.0 and iv.lo < iv.hi
    assert "Wilson" in iv.method
    # a percentage: the same interval scaled to [0, 100]
    pct = stats.mean_interval([100.0] * 3, bounds=(0, 100))
    assert pct.lo == pytest.approx(43.850, abs=1e-2) and pct.hi == 100.0
    # the mean of values in [0, 1] at 0.8 over 10: as Wilson 8/10
    w = stats.mean_interval([0.8] * 10, bounds=(0, 1))
    assert (w.lo, w.hi) == pytest.approx((0.4902, 0.9433), abs=1e-4)


def test_bounded_mean_keeps_t_when_spread_and_clear_of_the_bounds():
    x = [70.0, 80.0, 75.0, 90.0, 60.0]
    assert stats.mean_interval(x, bounds=(0, 100)) == stats.mean_interval(x)


def test_bounded_mean_near_a_bound_never_leaves_the_range():
    x = [1.0, 1.0, 0.999]  # t would give [0.9976, 1.0007]: past the bound, and near-certain
    t = stats.mean_interval(x)
    assert t.hi > 1.0
    iv = stats.mean_interval(x, bounds=(0, 1))
    assert 0.0 <= iv.lo < iv.estimate < iv.hi <= 1.0 and iv.lo < 0.5
    rng = np.random.default_rng(1)
    for _ in range(200):  # any sample in range: an interval inside it, never of zero width
        size = int(rng.integers(2, 12))
        y = np.clip(rng.normal(rng.uniform(0.5, 1.0), rng.uniform(0, 0.2), size=size), 0, 1)
        iv = stats.mean_interval(y, bounds=(0, 1))
        assert 0.0 <= iv.lo < iv.hi <= 1.0


def test_bounded_values_outside_the_range_are_refused():
    with pytest.raises(ValueError, match="outside the declared range"):
        stats.mean_interval([0.5, 1.5, 0.7], bounds=(0, 1))
    assert stats.mean_interval([1.0 + 1e-15, 1.0, 0.9], bounds=(0, 1)).hi <= 1.0  # round-off is clipped
    with pytest.raises(ValueError):
        stats.check_range([1, 0])


def test_paired_difference_with_a_range_uses_the_bounded_mean():
    a, b = np.array([0.9, 0.8, 0.7]), np.array([0.8, 0.7, 0.6])  # every difference exactly 0.1
    iv = stats.difference_interval(a, b, paired=True, bounds=(-1, 1))
    assert -1 <= iv.lo < 0.1 < iv.hi <= 1 and "Wilson" in iv.method
    assert stats.difference_interval(a, b + 0.0, paired=True).lo == -math.inf


def test_level_from_the_environment(monkeypatch):
    assert stats.active_level() == stats.LEVEL
    monkeypatch.setenv(stats.LEVEL_ENV, "0.9875")
    assert stats.active_level() == 0.9875
    monkeypatch.setenv(stats.LEVEL_ENV, "95")
    with pytest.raises(ValueError, match=stats.LEVEL_ENV):
        stats.active_level()


def test_the_level_split_over_looks_known_answers():
    assert stats.per_look_level(1) == pytest.approx(0.95)
    assert stats.per_look_level(2) == pytest.approx(0.975)
    assert stats.per_look_level(4, 0.9) == pytest.approx(0.975)
