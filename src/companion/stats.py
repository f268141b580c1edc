"""Summaries and intervals over seeds: the statistics the claims are decided by.

Every interval comes from :mod:`scipy.stats`; this module only picks the method
and hands back plain numbers. Three kinds of data reach a claim:

* one value per seed (a mean over seeds): a Student-t interval of the mean
  (``scipy.stats.ttest_1samp(...).confidence_interval``), or a BCa bootstrap
  interval with a fixed seed when the registry asks for one;
* two values per seed (does A raise B?): the t interval of the mean paired
  difference (``ttest_rel``), or Welch's interval of the difference of means
  (``ttest_ind(equal_var=False)``) when the two samples are not paired;
* a count of successes in trials (how often?): the Wilson score interval
  (``binomtest(...).proportion_ci(method="wilson")``); the difference of two
  rates uses Newcombe's hybrid score interval, which is built from the two
  Wilson intervals (scipy has no routine for it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from scipy import stats as st

LEVEL = 0.95


@dataclass(frozen=True)
class Interval:
    """An estimate with its confidence interval and the number of observations behind it."""

    estimate: float
    lo: float
    hi: float
    n: int
    method: str

    def __str__(self) -> str:
        return f"{fmt(self.estimate)} [{fmt(self.lo)}, {fmt(self.hi)}]"


def fmt(x: float) -> str:
    """A number with about three significant digits (no exponent for the ranges used here)."""
    if x is None or not math.isfinite(x):
        return str(x)
    a = abs(x)
    if a >= 100:
        return f"{x:.1f}"
    if a >= 10:
        return f"{x:.2f}"
    if a >= 1:
        return f"{x:.3f}"
    return f"{x:.3g}" if a else "0"


def finite(values: Iterable[float]) -> np.ndarray:
    """The values as a 1-D float array with non-finite entries removed."""
    x = np.asarray(list(values) if not hasattr(values, "__array__") else values, dtype=float).ravel()
    return x[np.isfinite(x)]


def mean_sd(values: Iterable[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (ddof=1; 0 for a single value)."""
    x = finite(values)
    if not len(x):
        return float("nan"), float("nan")
    return float(x.mean()), float(x.std(ddof=1)) if len(x) > 1 else 0.0


def mean_interval(values: Iterable[float], method: str = "t", level: float = LEVEL) -> Interval:
    """Interval of the mean over seeds. ``method`` is ``t`` or ``bootstrap`` (BCa, seed 0)."""
    x = finite(values)
    n = len(x)
    if n == 0:
        nan = float("nan")
        return Interval(nan, nan, nan, 0, method)
    m = float(x.mean())
    if n == 1:
        return Interval(m, -math.inf, math.inf, 1, method)
    if np.ptp(x) == 0:  # no spread: scipy would return nan bounds
        return Interval(m, m, m, n, method)
    if method == "t":
        ci = st.ttest_1samp(x, popmean=m).confidence_interval(confidence_level=level)
    elif method == "bootstrap":
        ci = st.bootstrap((x,), np.mean, confidence_level=level, method="BCa",
                          random_state=np.random.default_rng(0)).confidence_interval
    else:
        raise ValueError(f"unknown interval method {method!r}; use 't' or 'bootstrap'")
    return Interval(m, float(ci.low), float(ci.high), n, method)


def difference_interval(a: Iterable[float], b: Iterable[float], paired: bool = True,
                        level: float = LEVEL) -> Interval:
    """Interval of mean(a - b): paired t over seeds, or Welch's t for independent samples."""
    a = np.asarray(list(a) if not hasattr(a, "__array__") else a, dtype=float).ravel()
    b = np.asarray(list(b) if not hasattr(b, "__array__") else b, dtype=float).ravel()
    if paired:
        if a.shape != b.shape:
            raise ValueError(f"paired samples need equal lengths, got {len(a)} and {len(b)}")
        keep = np.isfinite(a) & np.isfinite(b)
        d = a[keep] - b[keep]
        iv = mean_interval(d, level=level)
        return Interval(iv.estimate, iv.lo, iv.hi, iv.n, "paired t")
    a, b = finite(a), finite(b)
    n = min(len(a), len(b))
    if n == 0:
        nan = float("nan")
        return Interval(nan, nan, nan, 0, "Welch t")
    d = float(a.mean() - b.mean())
    if n == 1:
        return Interval(d, -math.inf, math.inf, n, "Welch t")
    if np.ptp(a) == 0 and np.ptp(b) == 0:
        return Interval(d, d, d, n, "Welch t")
    ci = st.ttest_ind(a, b, equal_var=False).confidence_interval(confidence_level=level)
    return Interval(d, float(ci.low), float(ci.high), n, "Welch t")


def rate_interval(successes: int, trials: int, level: float = LEVEL) -> Interval:
    """Wilson score interval of a rate."""
    k, n = int(successes), int(trials)
    if n <= 0:
        nan = float("nan")
        return Interval(nan, nan, nan, 0, "Wilson")
    if not 0 <= k <= n:
        raise ValueError(f"successes must lie in 0..{n}, got {k}")
    ci = st.binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
    return Interval(k / n, float(ci.low), float(ci.high), n, "Wilson")


def rate_difference_interval(k1: int, n1: int, k2: int, n2: int, level: float = LEVEL) -> Interval:
    """Newcombe's hybrid score interval of p1 - p2, from the two Wilson intervals."""
    r1, r2 = rate_interval(k1, n1, level), rate_interval(k2, n2, level)
    n = min(r1.n, r2.n)
    if n == 0:
        nan = float("nan")
        return Interval(nan, nan, nan, 0, "Newcombe")
    d = r1.estimate - r2.estimate
    lo = d - math.sqrt((r1.estimate - r1.lo) ** 2 + (r2.hi - r2.estimate) ** 2)
    hi = d + math.sqrt((r1.hi - r1.estimate) ** 2 + (r2.estimate - r2.lo) ** 2)
    return Interval(d, lo, hi, n, "Newcombe")


def summary(values: Iterable[float], spec: str = "{:.3f}") -> str:
    """``mean ± sd (n)`` for printing."""
    m, s = mean_sd(values)
    n = len(finite(values))
    return f"{spec.format(m)} ± {spec.format(s)} (n={n})"
