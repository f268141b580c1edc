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
    flat = stats.mean_interval([0.5, 0.5, 0.5])
    assert (flat.lo, flat.hi) == (0.5, 0.5)
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
