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

No interval has zero width, and none leaves the statistic's range:

* **bounded means** (the rule declares ``range: [lo, hi]``: shares and accuracies in [0, 1],
  percentages in [0, 100]): the t interval, clipped to the range, while the data are spread and
  clear of the bounds. When the values show no spread, or the t interval reaches past a bound (the
  values pile against it, where the t's normal approximation fails), the values are scaled to [0, 1]
  and the interval is Wilson's score interval with the sum of the scaled values as successes in n
  trials. That is conservative: of all distributions on [0, 1] with a given mean, the Bernoulli has
  the largest variance, so the Wilson interval covers the mean of any of them at least as well as it
  covers a rate. Three networks all at accuracy 1.0 give [0.44, 1.0] ("0 failures in 3" allows a
  failure rate of about half), not [1.0, 1.0].
* **unbounded statistics with no spread** (all values equal, or both Welch samples constant): the
  interval is undefined, (-inf, inf), and the claim stays undecided ("no spread: interval
  undefined"); equal values over n seeds are not certainty, and without a range there is no
  conservative bound to fall back on.
* **rates** (Wilson, Newcombe) lie in range by construction and never have zero width.

The level is :data:`LEVEL` (95 %) unless a caller passes another; :func:`active_level` reads the
``COMPANION_LEVEL`` environment variable, which a staged record sets for each look (a Bonferroni
split of the error rate over the looks declared before the run, :func:`companion.records.staged`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from scipy import stats as st

LEVEL = 0.95
#: Environment variable carrying the confidence level of a staged record's look into the chapter run.
LEVEL_ENV = "COMPANION_LEVEL"
NO_SPREAD = "no spread: interval undefined"


def active_level() -> float:
    """The confidence level claims are decided at: ``COMPANION_LEVEL`` if set (a staged record's
    per-look level), else :data:`LEVEL`."""
    text = os.environ.get(LEVEL_ENV, "").strip()
    if not text:
        return LEVEL
    try:
        level = float(text)
    except ValueError:
        level = math.nan
    if not 0.5 <= level < 1.0:
        raise ValueError(f"{LEVEL_ENV} must be a confidence level in [0.5, 1), got {text!r}")
    return level


def per_look_level(looks: int, level: float | None = None) -> float:
    """The confidence level of each of ``looks`` looks at the data when ``level`` (default 95 %) is split
    over them (Bonferroni): 97.5 % for two."""
    base = LEVEL if level is None else level
    return 1.0 - (1.0 - base) / looks


def level_text(level: float) -> str:
    """``95%``, or ``98.75%`` for a per-look level."""
    return f"{100 * level:.4g}%"


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


def mean_interval(values: Iterable[float], method: str = "t", level: float = LEVEL,
                  bounds: tuple[float, float] | None = None) -> Interval:
    """Interval of the mean over seeds. ``method`` is ``t`` or ``bootstrap`` (BCa, seed 0).

    ``bounds``: the statistic's range ``(lo, hi)``; the interval then never leaves it and never has
    zero width (see the module's notes). Without bounds, values with no spread give an undefined
    interval (-inf, inf)."""
    if method not in ("t", "bootstrap"):
        raise ValueError(f"unknown interval method {method!r}; use 't' or 'bootstrap'")
    x = finite(values)
    n = len(x)
    if n == 0:
        nan = float("nan")
        return Interval(nan, nan, nan, 0, method)
    m = float(x.mean())
    if n == 1:
        return Interval(m, -math.inf, math.inf, 1, method)
    if bounds is not None:
        lo_b, hi_b = check_range(bounds)
        tol = 1e-9 * (hi_b - lo_b)  # float round-off at a bound (an accuracy of 1 + 1e-16) is not a breach
        if x.min() < lo_b - tol or x.max() > hi_b + tol:
            raise ValueError(f"values outside the declared range [{fmt(lo_b)}, {fmt(hi_b)}]: "
                             f"{fmt(float(x.min()))} .. {fmt(float(x.max()))}")
        x = np.clip(x, lo_b, hi_b)
        m = float(x.mean())
    if _no_spread(x):  # scipy would return nan bounds, or a width of round-off
        if bounds is not None:
            return bounded_wilson(m, n, bounds, level)
        return Interval(m, -math.inf, math.inf, n, f"{method} ({NO_SPREAD})")
    if method == "t":
        ci = st.ttest_1samp(x, popmean=m).confidence_interval(confidence_level=level)
    else:
        ci = st.bootstrap((x,), np.mean, confidence_level=level, method="BCa",
                          random_state=np.random.default_rng(0)).confidence_interval
    lo, hi = float(ci.low), float(ci.high)
    if bounds is not None and (lo < bounds[0] or hi > bounds[1]):
        return bounded_wilson(m, n, bounds, level)
    return Interval(m, lo, hi, n, method)


def _no_spread(x: np.ndarray) -> bool:
    """All values equal up to round-off (a billionth of their magnitude): differences of equal steps
    such as 0.9 - 0.8 and 0.8 - 0.7 differ in the 17th digit, which is not spread."""
    return float(np.ptp(x)) <= 1e-9 * max(1.0, float(np.abs(x).max()))


def check_range(bounds) -> tuple[float, float]:
    """``(lo, hi)`` as floats with lo < hi, both finite (else ValueError)."""
    try:
        lo, hi = (float(v) for v in bounds)
    except (TypeError, ValueError):
        raise ValueError(f"a range is two numbers [lo, hi], got {bounds!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"a range needs finite lo < hi, got [{lo}, {hi}]")
    return lo, hi


def bounded_wilson(mean: float, n: int, bounds, level: float = LEVEL) -> Interval:
    """Wilson's score interval for the mean of ``n`` values in ``bounds``: the mean scaled to [0, 1]
    times n as successes in n trials, mapped back (conservative: the Bernoulli has the largest
    variance of any distribution on the range with that mean)."""
    lo_b, hi_b = check_range(bounds)
    p = min(1.0, max(0.0, (mean - lo_b) / (hi_b - lo_b)))
    lo, hi = wilson(p, n, level)
    w = hi_b - lo_b
    return Interval(mean, lo_b + w * lo, lo_b + w * hi, n, "Wilson (bounded mean)")


def wilson(p: float, n: float, level: float = LEVEL) -> tuple[float, float]:
    """Wilson's score interval of a proportion ``p`` observed in ``n`` trials (n may be fractional
    successes' denominator; the formula is continuous in p). A ``p`` outside [0, 1] or ``n`` <= 0 is
    refused (ValueError): it is not a rate, e.g. a mean or a difference in percent read as one."""
    if not (math.isfinite(p) and 0.0 <= p <= 1.0):
        raise ValueError(f"Wilson's interval needs a rate in [0, 1], got {p!r}")
    if not n > 0:
        raise ValueError(f"Wilson's interval needs n > 0 trials, got {n!r}")
    z = float(st.norm.ppf(0.5 + level / 2))
    z2n = z * z / n
    centre = (p + z2n / 2) / (1 + z2n)
    half = z * math.sqrt(p * (1 - p) / n + z2n / (4 * n)) / (1 + z2n)
    return max(0.0, centre - half), min(1.0, centre + half)


def difference_interval(a: Iterable[float], b: Iterable[float], paired: bool = True,
                        level: float = LEVEL, bounds: tuple[float, float] | None = None) -> Interval:
    """Interval of mean(a - b): paired t over seeds, or Welch's t for independent samples.

    ``bounds``: the range of the difference; paired differences then get the bounded-mean interval,
    Welch's is clipped to it. No spread at all (and no range): undefined, (-inf, inf)."""
    a = np.asarray(list(a) if not hasattr(a, "__array__") else a, dtype=float).ravel()
    b = np.asarray(list(b) if not hasattr(b, "__array__") else b, dtype=float).ravel()
    if paired:
        if a.shape != b.shape:
            raise ValueError(f"paired samples need equal lengths, got {len(a)} and {len(b)}")
        keep = np.isfinite(a) & np.isfinite(b)
        d = a[keep] - b[keep]
        iv = mean_interval(d, level=level, bounds=bounds)
        method = "paired t" if iv.method == "t" else f"paired, {iv.method}"
        return Interval(iv.estimate, iv.lo, iv.hi, iv.n, method)
    a, b = finite(a), finite(b)
    n = min(len(a), len(b))
    if n == 0:
        nan = float("nan")
        return Interval(nan, nan, nan, 0, "Welch t")
    d = float(a.mean() - b.mean())
    if n == 1:
        return Interval(d, -math.inf, math.inf, n, "Welch t")
    if _no_spread(a) and _no_spread(b):
        return Interval(d, -math.inf, math.inf, n, f"Welch t ({NO_SPREAD})")
    ci = st.ttest_ind(a, b, equal_var=False).confidence_interval(confidence_level=level)
    lo, hi = float(ci.low), float(ci.high)
    if bounds is not None:
        lo_b, hi_b = check_range(bounds)
        lo, hi = max(lo, lo_b), min(hi, hi_b)
    return Interval(d, lo, hi, n, "Welch t")


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
