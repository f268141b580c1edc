"""Can a rule decide, and how many seeds would decide a claim: expected intervals, not new runs.

Two questions, both answered without training anything, from the interval a rule would see if the
mean and the spread we assume held exactly (a deterministic "expected interval": the interval the
rule's own method gives at that mean and standard deviation, no random draws):

* :func:`feasibility` (before the runs): with the paper's value and the paper's spread, does the
  rule pass at some n <= ``n_max`` (40) seeds, and does it fail at some n <= ``n_max`` when the
  effect is reversed? Reversed means mirrored across the rule's boundary: the opposite sign of a
  difference (greater/less, rate_higher/rate_lower); for at_least/at_most (and their rates) the value
  as far on the wrong side of the threshold as the paper's is on the right side; for matches a value
  as far outside the band as the paper's is inside it (the band's centre, so value ± 2 × half-width).
  Where the paper gives no value (or, for a difference, none of the paper's sign), the value is our
  recorded ``paper``-budget estimate turned to the paper's side (an effect as large as ours in the
  paper's direction), else the value the entry's ``assumed`` key states (our assumption, with its why);
  the assumed value also goes before a recorded estimate from fewer runs than the rule's ``min_n`` (one
  English→French network is no estimate the rule would accept).
  The spread, in order: the paper's sd; else the spread of our recorded run (backed out of its
  interval); else the ``assumed`` sd; else 10 % of the statistic's range, or of |value|. A recorded row
  is used only if it was decided by a rule of the same test (a record made under an earlier kind of
  rule holds another statistic). A rate difference simulates the paper's two rates where the entry
  gives them (``paper: {rates: [p1, p2]}``; reversed: the two swapped), else 0.5 ± d / 2. A finding must
  be able to pass and to fail; a precondition must be able to pass. ``n_max`` is 40, or more where the
  chapter's budget runs more seeds or the entry declares ``seeds_needed`` (at most
  :data:`companion.registry.SEEDS_CAP`); the rule must decide within that.
* :func:`seeds_to_decide` / :func:`plan_rows` (after a run): for an undecided finding, the side its
  estimate leans to (the estimate against the rule's boundary) and the smallest n at which the
  expected interval, at the observed mean and spread, excludes the boundary on that side (a power
  calculation at 50 % power: half the time the real interval at that n is wider or off-centre, so it
  is the least n, not a guarantee). The spread comes from the stored interval: sd = half-width × √n /
  t_{n-1} (t rows), per group for Welch rows; rates use Wilson's interval at the observed rate (and
  Newcombe's for two rates, at the observed counts). Capped at 1000 ("not with a feasible number").
  The level is a single look's 95 %; a staged record splits it over its looks and needs a little more.
  Rules that ask for a bootstrap interval are projected with the t interval (a bootstrap needs data).
  A recorded row whose claim digest differs from the registry's (the rule changed since the run) is
  *stale*: its estimate may be another statistic (a mean where the rule is now a rate), so no plan is
  computed from it; the row says "stale: re-record" instead.

Seeds and cost: the n still missing, scaled by the run's seeds per unit of n (a claim on the 5 of 10
networks that solve the task needs two seeds per network it lacks; pooled cells need fewer), times
the cost of one seed (:func:`seed_cost`): where the ``paper`` record measured the CPU time of the
training runs that grow with the seeds, that time plus its analysis per seed; else, for a chapter that
declares its networks, their cost model's marginal cost of one more seed plus the chapter's own time
per seed; else the chapter's measured one-core cost divided by its seeds. Rough, and said so: a
selection's share and a rule's n (rate trials, runs of an ensemble) may differ at more seeds.
The cost also grows faster than the seeds where a batched program stops early: it runs until its
slowest member stops (a stopped member is skipped, but every epoch keeps a fixed cost), so one slow new
seed lengthens the whole program. One of the alpha table's programs ran 1,525 epochs at 16 seeds,
against 980 for its first 10 seeds (2026-12-05).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass

from scipy import stats as st

from . import claims as C
from . import config, registry, stats

CAP = 1000
N_MAX = 40
DEFAULT_SPREAD = 0.10
#: a recorded estimate nearer its rule's boundary than this share of its spread is on the boundary: the
#: feasibility check then simulates the registry's ``assumed`` value, where there is one
ON_BOUNDARY = 0.01
#: The parameters that set a chapter's number of seeds, in the order they are looked for.
SEED_PARAMETERS = ("n_seeds", "escan_seeds")


# ---- expected intervals ---------------------------------------------------------------------------

def _t(n: float, level: float) -> float:
    return float(st.t.ppf(0.5 + level / 2, n))


def _z(level: float) -> float:
    return float(st.norm.ppf(0.5 + level / 2))


def expected_interval(entry: registry.Entry, mean: float, sd: float, n: int, level: float = stats.LEVEL,
                      rates: tuple[float, float] | None = None) -> stats.Interval:
    """The interval the entry's method gives at ``n`` if the sample mean were ``mean`` and the sample
    sd ``sd`` (per group for Welch; ignored for rates, whose spread follows from the rate).
    ``rates``: the two rates of a rate difference (default 0.5 ± mean / 2, the widest)."""
    t, r = entry.test, entry.rule
    if t in ("rate_at_least", "rate_at_most"):
        lo, hi = stats.wilson(min(1.0, max(0.0, mean)), n, level)
        return stats.Interval(mean, lo, hi, n, "Wilson")
    if t in ("rate_higher", "rate_lower"):
        p1, p2 = rates if rates is not None else (0.5 + mean / 2, 0.5 - mean / 2)
        (l1, h1), (l2, h2) = stats.wilson(p1, n, level), stats.wilson(p2, n, level)
        d = p1 - p2
        return stats.Interval(d, d - math.hypot(p1 - l1, h2 - p2), d + math.hypot(h1 - p1, p2 - l2), n,
                              "Newcombe")
    bounds = entry.bounds
    if n < 2:
        return stats.Interval(mean, -math.inf, math.inf, n, "t")
    welch = t in ("greater", "less") and not r.get("paired", True)
    if sd <= 0:
        if bounds is not None and not welch:
            return stats.bounded_wilson(mean, n, bounds, level)
        return stats.Interval(mean, -math.inf, math.inf, n, stats.NO_SPREAD)
    half = _t(2 * n - 2, level) * sd * math.sqrt(2 / n) if welch else _t(n - 1, level) * sd / math.sqrt(n)
    lo, hi = mean - half, mean + half
    if bounds is not None:
        if welch:
            lo, hi = max(lo, bounds[0]), min(hi, bounds[1])
        elif lo < bounds[0] or hi > bounds[1]:
            return stats.bounded_wilson(mean, n, bounds, level)
    return stats.Interval(mean, lo, hi, n, "Welch t" if welch else "t")


def _status(entry, mean, sd, n, level, rates=None) -> str:
    """The rule's outcome on the expected interval. A per-cell rule is simulated as K cells alike, each
    at the Bonferroni level: all pass or all fail together, so one cell at that level decides."""
    if n < entry.min_n:
        return "undecided"
    level = entry.cell_level(level)
    return registry.status_of(entry, expected_interval(entry, mean, sd, n, level, rates))


# ---- feasibility ----------------------------------------------------------------------------------

@dataclass
class Feasibility:
    """Whether a rule can decide at n <= n_max under the paper's value (and its reverse)."""

    id: str
    tier: str
    test: str
    value: float | None          # the value simulated (None: nothing to simulate)
    sd: float | None
    reversed: float | None
    source: str                  # where value and spread come from
    n_pass: int | None           # the least n at which it passes under the value (None: not <= n_max)
    n_fail: int | None           # the least n at which it fails under the reversed value
    n_max: int
    rates: tuple[float, float] | None = None   # a rate difference's two rates, where the paper gives them
    declared: str | None = None  # the registry's cannot_decide date: our runs showed no n decides it

    @property
    def ok(self) -> bool:
        """A finding must be able to pass and to fail; a precondition must be able to pass."""
        return self.n_pass is not None and (self.n_fail is not None or self.tier == "precondition")

    @property
    def accepted(self) -> bool:
        """The check is satisfied: the rule can decide, or our runs showed it cannot and the registry
        says so (``cannot_decide``). A declaration the check no longer bears out is not accepted."""
        return self.ok != bool(self.declared)

    def why(self) -> str:
        if self.value is None:
            return f"{self.id}: {self.source}"
        parts = []
        if self.rates is not None:
            parts.append(f"rates {stats.fmt(self.rates[0])} vs {stats.fmt(self.rates[1])}")
        if self.n_pass is None:
            parts.append(f"cannot pass at n <= {self.n_max} with the value {stats.fmt(self.value)}")
        if self.n_fail is None and self.tier != "precondition":
            parts.append(f"cannot fail at n <= {self.n_max} with the reversed value "
                         f"{stats.fmt(self.reversed)}")
        if self.declared and self.ok:
            parts.append(f"it can decide at n <= {self.n_max}, but the registry declares it cannot "
                         f"({self.declared}): remove the declaration")
        return f"{self.id} ({self.test}, sd {stats.fmt(self.sd)}, {self.source}): " + "; ".join(parts)


def recorded_row(entry: registry.Entry, profile: str = "paper") -> dict | None:
    """The entry's row in the recorded run of its chapter (results/<profile>/<chapter>.json), if any."""
    from . import records

    rec = records.load(entry.chapter, profile)
    return next((r for r in (rec or {}).get("claims", []) if r.get("id") == entry.id), None)


def row_sd(entry: registry.Entry, row: dict) -> float | None:
    """The per-seed spread behind a stored interval (None: not recoverable, e.g. no spread, one seed,
    a Wilson fallback, or a rate)."""
    lo, hi, n = row.get("lo"), row.get("hi"), int(row.get("n") or 0)
    if lo is None or hi is None or n < 2 or not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    if entry.test.startswith("rate") or "Wilson" in str(row.get("observed", "")):
        return None
    half = (hi - lo) / 2
    if entry.test in ("greater", "less") and not entry.rule.get("paired", True):
        return half / (_t(2 * n - 2, stats.LEVEL) * math.sqrt(2 / n))
    return half * math.sqrt(n) / _t(n - 1, stats.LEVEL)


def _boundary(entry: registry.Entry) -> float:
    t, r = entry.test, entry.rule
    if t == "matches":
        return float(entry.paper_value()["value"])
    if "threshold" in r:
        return float(r["threshold"])
    return 0.0


def _range_of(entry: registry.Entry) -> tuple[float, float] | None:
    if entry.test.startswith("rate_at"):
        return (0.0, 1.0)
    if entry.test.startswith("rate"):
        return (-1.0, 1.0)
    return entry.bounds


def assumed(entry: registry.Entry, row: dict | None = None) -> tuple[float | None, float | None, str]:
    """(value, sd, source) the feasibility check simulates; value None when there is nothing to use."""
    t = entry.test
    ref = entry.paper_value() if entry.reference else {}
    guess = entry.assumed or {}
    if row is not None and row.get("test") and row["test"] != t:
        row = None  # recorded under an earlier kind of rule: another statistic
    value, source = ref.get("value"), "paper's value"
    direction = registry.DIRECTIONAL.get(t)
    if value is not None and direction is not None and float(value) * direction <= 0:
        value = None  # a number of the wrong sign for a difference: a level, not the effect
    below_min = row is not None and int(row.get("n") or 0) < entry.min_n
    if value is None and row is not None and row.get("estimate") is not None and not (
            below_min and guess.get("value") is not None):  # a stated assumption beats a run the rule rejects
        est, source = float(row["estimate"]), "our recorded estimate, on the paper's side"
        if direction is not None:
            value = abs(est) * direction
        elif t in ("at_least", "at_most", "rate_at_least", "rate_at_most"):
            thr, above = float(entry.rule["threshold"]), t in ("at_least", "rate_at_least")
            value = thr + abs(est - thr) * (1 if above else -1)
        else:
            value = est
        if (guess.get("value") is not None and t != "matches"
                and abs(value - _boundary(entry)) < ON_BOUNDARY * (row_sd(entry, row) or 0.0)):
            # an estimate on the boundary shows no side, so the mirror has no effect to simulate
            value = None
    if value is None and guess.get("value") is not None:
        value, source = guess["value"], f"our assumed value ({guess['why']})"
    if value is None:
        return None, None, "no paper value and no recorded run: nothing to simulate"
    value = float(value)
    rng = _range_of(entry)
    if rng is not None:  # a mirrored estimate stays a possible value of the statistic
        value = min(max(value, rng[0]), rng[1])
    if t.startswith("rate"):
        return value, None, source
    sd = ref.get("sd")
    if sd is not None:
        return value, float(sd), source + ", paper's sd"
    recorded = row_sd(entry, row) if row is not None else None
    if recorded is not None and recorded > 0:
        return value, recorded, source + ", our recorded spread"
    if guess.get("sd") is not None:
        return value, float(guess["sd"]), source + f", our assumed sd ({guess['why']})"
    if rng is not None:
        return value, DEFAULT_SPREAD * (rng[1] - rng[0]), source + ", default spread 10 % of the range"
    base = abs(value) or abs(_boundary(entry)) or 1.0
    return value, DEFAULT_SPREAD * base, source + ", default spread 10 % of |value|"


def reverse(entry: registry.Entry, value: float) -> float:
    """The effect reversed: mirrored across the rule's boundary (kept inside the statistic's range)."""
    t = entry.test
    if t in registry.DIRECTIONAL:
        return -value
    if t == "matches":
        lo, hi = entry.target()
        half = (hi - lo) / 2
        rng = _range_of(entry)
        up, down = value + 2 * half, value - 2 * half
        if rng is not None and up >= rng[1]:  # at or past the bound: the other side
            return max(down, rng[0])
        return up
    thr = float(entry.rule["threshold"])
    out = 2 * thr - value
    rng = _range_of(entry)
    return min(max(out, rng[0]), rng[1]) if rng is not None else out


def _least_n(entry, value, sd, want: str, n_max: int, level: float, rates=None) -> int | None:
    for n in range(max(2, entry.min_n), n_max + 1):
        if _status(entry, value, sd, n, level, rates) == want:
            return n
    return None


def status_at_level(entry: registry.Entry, row: dict, level: float) -> str | None:
    """The verdict a recorded row would have had at ``level`` instead of 95 % (a look's share of the level
    when the seed count was chosen after an earlier look): the interval rebuilt by the rule's own method
    at the row's estimate, spread and n. Exact for t rows (the spread is backed out at the same n),
    Wilson rows (rebuilt from the rate or bounded mean) and two rates (Newcombe from the counts); a
    Welch row assumes groups of equal size, as the plan does. None: not rebuildable (a per-cell rule,
    no estimate, fewer than 2 seeds, a spread that cannot be recovered)."""
    est, n = row.get("estimate"), int(row.get("n") or 0)
    if entry.cells or est is None or not math.isfinite(est) or n < 2:
        return None
    t, observed = entry.test, str(row.get("observed", ""))
    if t in ("rate_higher", "rate_lower"):
        m = _COUNTS.search(observed)
        if not m:
            return None
        k1, n1, k2, n2 = map(int, m.groups())
        if min(n1, n2) < entry.min_n:
            return "undecided"
        return registry.status_of(entry, stats.rate_difference_interval(k1, n1, k2, n2, level))
    sd = 0.0  # rates: Wilson's interval follows from the rate
    if not t.startswith("rate"):
        sd = row_sd(entry, row)
        if sd is None:
            if entry.bounds is None or "Wilson" not in observed:
                return None
            sd = 0.0  # a bounded mean decided by Wilson's interval: rebuilt from the mean alone
    return _status(entry, est, sd, n, level)


def raised_seeds(chapter: str, rec: dict) -> dict[str, int]:
    """The work-sizing parameters a record ran above its profile's default: a count chosen, as a rule,
    from an earlier record's verdicts (``companion plan``), so that record was an earlier look."""
    from . import records

    out = {}
    schema = config.schema(chapter)
    for name, value in (rec.get("overrides") or {}).items():
        p = schema.get(name)
        if p is None or not records._is_budget(name) or isinstance(value, bool):
            continue
        full = p.default_for(rec.get("profile", "paper"))
        if isinstance(value, (int, float)) and isinstance(full, (int, float)) and value > full:
            out[name] = int(value)
    return out


def close_calls(profile: str = "paper", level: float | None = None, chapter: str | None = None) -> list[dict]:
    """Decided findings of records run at a raised seed count (:func:`raised_seeds`) whose verdict would
    not stand with the level split over two looks (``level``: the per-look level of two, 97.5 %);
    ``chapter``: that chapter's record only."""
    from . import records

    level = stats.per_look_level(2) if level is None else level
    reg = registry.entries()
    out = []
    paths = sorted(records.results_dir(profile).glob("*.json"))
    for path in paths if chapter is None else [p for p in paths if p.stem == chapter]:
        rec = records.load(path.stem, profile)
        raised = raised_seeds(path.stem, rec) if rec else {}
        if not raised:
            continue
        for row in rec.get("claims", []):
            entry = reg.get(row.get("id"))
            if entry is None or entry.tier != "finding" or row.get("status") not in ("pass", "fail"):
                continue
            then = status_at_level(entry, row, level)
            if then is not None and then != row["status"]:
                out.append({"chapter": path.stem, "id": entry.id, "statement": entry.statement,
                            "status": row["status"], "observed": row.get("observed", ""),
                            "seeds": raised, "level": level, "at_level": then})
    return out


def budget_seeds(chapter: str) -> int:
    """The seeds the chapter's ``paper`` budget already runs (0: no seed parameter)."""
    try:
        param = seed_parameter(chapter)
    except config.ConfigError:
        return 0
    return int(config.schema(chapter)[param].default_for("paper")) if param else 0


def feasibility(entry: registry.Entry, n_max: int | None = None, level: float = stats.LEVEL,
                row: dict | None = None) -> Feasibility:
    """Can ``entry``'s rule pass at n <= ``n_max`` if the paper's value holds, and fail if the effect
    is reversed? ``n_max`` default: 40, or the seeds the chapter's ``paper`` budget already runs where
    that is more (the error-mode ensembles: 50 to 200 cheap runs), or the entry's declared
    ``seeds_needed`` (capped at :data:`companion.registry.SEEDS_CAP`). ``row``: the recorded claim row to
    take a missing value or spread from (default: the chapter's ``paper`` record)."""
    if n_max is None:
        n_max = max(N_MAX, budget_seeds(entry.chapter))
        if entry.seeds_needed:
            n_max = max(n_max, min(int(entry.seeds_needed["n"]), registry.SEEDS_CAP))
    if row is None:
        row = recorded_row(entry)
    value, sd, source = assumed(entry, row)
    declared = entry.cannot_decide["date"] if entry.cannot_decide else None
    if value is None:
        return Feasibility(entry.id, entry.tier, entry.test, None, None, None, source, None, None, n_max,
                           declared=declared)
    rev = reverse(entry, value)
    sd_ = sd if sd is not None else 0.0
    rates = paper_rates(entry) if source.startswith("paper's value") else None
    if rates is not None:
        source += f", the paper's rates {stats.fmt(rates[0])} and {stats.fmt(rates[1])}"
    swapped = None if rates is None else (rates[1], rates[0])
    return Feasibility(entry.id, entry.tier, entry.test, value, sd, rev, source,
                       _least_n(entry, value, sd_, "pass", n_max, level, rates),
                       _least_n(entry, rev, sd_, "fail", n_max, level, swapped), n_max, rates, declared)


def paper_rates(entry: registry.Entry) -> tuple[float, float] | None:
    """The two rates behind a rate difference's paper value (``paper: {rates: [p1, p2]}``), or None."""
    if entry.test not in ("rate_higher", "rate_lower"):
        return None
    rates = entry.reference.get("rates")
    return None if rates is None else (float(rates[0]), float(rates[1]))


def feasibility_all(n_max: int | None = None) -> list[Feasibility]:
    return [feasibility(e, n_max) for e in registry.entries().values()]


# ---- seeds to decide ------------------------------------------------------------------------------

_COUNTS = re.compile(r"(\d+)/(\d+) vs (\d+)/(\d+)")


def leans(entry: registry.Entry, estimate: float) -> str:
    """The side the estimate lies on: ``pass`` or ``fail`` (``on the boundary`` when exactly on it)."""
    t = entry.test
    if t == "matches":
        lo, hi = entry.target()
        if lo < estimate < hi:
            return "pass"
        return "fail" if estimate < lo or estimate > hi else "on the boundary"
    b = _boundary(entry)
    if estimate == b:
        return "on the boundary"
    if t in ("at_least", "rate_at_least"):
        return "pass" if estimate > b else "fail"
    if t in ("at_most", "rate_at_most"):
        return "pass" if estimate < b else "fail"
    return "pass" if estimate * registry.DIRECTIONAL[t] > 0 else "fail"


def seeds_to_decide(entry: registry.Entry, row: dict, cap: int = CAP,
                    level: float = stats.LEVEL) -> tuple[str | None, int | None, str]:
    """(leans, n, how) for a stored claim row: the least n at which the expected interval at the
    observed mean and spread decides it (None: cannot say, or not within ``cap``)."""
    est, n = row.get("estimate"), int(row.get("n") or 0)
    if est is None or not math.isfinite(est):
        return None, None, "no estimate"
    t = entry.test
    rng = _range_of(entry) if t.startswith("rate") else None
    if rng is not None and not rng[0] <= est <= rng[1]:
        raise ValueError(f"{entry.id}: a {'rate' if t.startswith('rate_at') else 'difference of rates'} "
                         f"must lie in [{stats.fmt(rng[0])}, {stats.fmt(rng[1])}], the row has "
                         f"{stats.fmt(est)} (a row recorded under another rule? re-record it)")
    side = leans(entry, est)
    if side == "on the boundary":
        return side, None, "the estimate sits on the rule's boundary: no number of seeds decides it"
    rates, sd = None, 0.0
    if t in ("rate_higher", "rate_lower"):
        m = _COUNTS.search(str(row.get("observed", "")))
        if m:
            k1, n1, k2, n2 = map(int, m.groups())
            rates = (k1 / n1, k2 / n2) if n1 and n2 else None
        how = "Newcombe's interval at the observed rates" + ("" if rates else " (taken as 0.5 ± d/2)")
    elif t.startswith("rate"):
        how = "Wilson's interval at the observed rate"
    else:
        sd = row_sd(entry, row)
        guess = (entry.assumed or {}).get("sd")
        if sd is None and guess is not None and n >= 2 and "Wilson" in str(row.get("observed", "")):
            # a Wilson fallback hides the spread; the registry states the one measured beside it, so
            # project as the feasibility check does (the rule still falls back where t leaves the range)
            sd = float(guess)
            how = (f"expected t interval at the observed mean and our assumed sd {stats.fmt(sd)} "
                   f"({entry.assumed['why']}), Wilson's where it leaves the range")
        elif sd is None:
            if entry.bounds is None or n < 2:
                return side, None, "no spread measured (one seed, or all values equal): cannot project"
            sd, how = 0.0, "Wilson's interval of the bounded mean at the observed mean (no usable spread)"
        else:
            how = (f"expected {'Welch ' if 'paired' in entry.rule and not entry.rule['paired'] else ''}"
                   f"t interval at the observed mean and sd {stats.fmt(sd)}")
    how += f", {stats.level_text(level)}, 50 % power"

    def decided(k: int) -> bool:
        return _status(entry, est, sd, k, level, rates) == side

    lo_n = max(n + 1, entry.min_n, 2)
    if not decided(cap):
        return side, None, how + f"; not with a feasible number (> {cap})"
    hi_n = cap
    while lo_n < hi_n:  # the expected interval narrows as n grows: bisect the least deciding n
        mid = (lo_n + hi_n) // 2
        if decided(mid):
            hi_n = mid
        else:
            lo_n = mid + 1
    return side, hi_n, how


def seed_parameter(chapter: str) -> str | None:
    schema = config.schema(chapter)
    return next((p for p in SEED_PARAMETERS if p in schema), None)


def run_seeds(chapter: str, profile: str) -> dict[str, int]:
    """Every seed-count parameter of ``chapter`` (``n_seeds``, ``variant_seeds``, ``escan_seeds``...)
    and its value in the run the plan reads: the ``paper`` record's parameters, else the profile's."""
    schema = config.schema(chapter)
    names = [p for p in schema if p.endswith("seeds")]
    params = {}
    if profile == "paper":
        from . import records

        params = (records.load(chapter, "paper") or {}).get("parameters") or {}
    out = {}
    for p in names:
        v = params.get(p, schema[p].default_for(profile))
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            out[p] = v
    return out


def claim_seed_parameter(chapter: str, n: int, seeds: dict[str, int], declared: str = "") -> str | None:
    """The seed parameter whose networks a claim's n counts: the one its registry entry declares
    (``seeds_parameter``: VED claims count ``ved_seeds``, which ties with ``n_seeds``), else the smallest
    seed count that covers n (a claim on 3 variant networks in a chapter that also trains 10 of the main
    kind), else the largest (n pools several cells)."""
    if not seeds:
        return None
    if declared:
        if declared not in seeds:
            raise config.ConfigError(f"{chapter}: a claim declares seeds_parameter {declared!r}, not"
                                     f" one of the chapter's seed parameters ({', '.join(sorted(seeds))})")
        return declared
    covering = sorted((v, p) for p, v in seeds.items() if v >= n)
    if covering:
        return covering[0][1]
    return max(seeds.items(), key=lambda kv: kv[1])[0]


def declared_seed_cost(chapter: str, profile: str, param: str, seeds: int) -> float | None:
    """One-core training seconds that one more seed of ``param`` adds, from the networks the chapter
    declares (:mod:`companion.networks`, each with its cost model): the declared cost at ``seeds + 1``
    less the cost at ``seeds``. None where the chapter declares nothing that grows with ``param``.

    Unlike a record's measured time, this counts networks that another chapter or an earlier run
    trained (a record that only read them from the model cache measured none of their cost)."""
    from . import networks

    try:
        now = networks.chapter_specs(chapter, profile, {param: seeds})
        more = networks.chapter_specs(chapter, profile, {param: seeds + 1})
    except config.ConfigError:  # seeds + 1 beyond the parameter's range
        return None
    added = sum(x.cost_s for x in more) - sum(x.cost_s for x in now)
    return added if added > 0 else None


def _trained_in_record(chapter: str, rec: dict, param: str) -> bool:
    """Whether ``rec`` trained every network it used in its own run and read none from the cache, so its
    CPU time is its training and its analysis, and cut (if partial) only on ``param``. Not for a chapter
    whose networks are stacked from one-seed members (:mod:`companion.netspec`): a record made before
    :mod:`companion.recording` counted stacking at its members' cost has the stacking's second there."""
    from . import networks

    cache_counts = rec.get("cache") or {}
    if rec.get("pretrained") or not cache_counts.get("trained") or cache_counts.get("reused"):
        return False
    if set(rec.get("partial") or {}) - {param}:
        return False
    try:
        specs = networks.chapter_specs(chapter, "paper", rec.get("overrides") or {})
    except config.ConfigError:
        return False
    return not any(x.members for x in specs)


def _measured_seed_cost(chapter: str, param: str) -> tuple[float, str] | None:
    """(one-core seconds per seed, how) from the ``paper`` record's own measurements: the CPU time of the
    training runs it read that grow with ``param`` (their cache manifests), plus its analysis, per seed
    of the recorded setting; or, where it trained every network in its own run (:func:`_trained_in_record`),
    its CPU time per seed. None where the record has no such runs, is partial, or one of the runs kept
    only its wall time.

    Measured beats the cost model: the Pandey programs stop early, at a third of their epoch cap or less."""
    from . import records

    rec = records.load(chapter, "paper")
    runs = [r for r in ((rec or {}).get("pretrained") or {}).get("runs", []) if r.get("scales_with") == param]
    seeds = float(((rec or {}).get("parameters") or {}).get(param) or 0)
    if rec and seeds and _trained_in_record(chapter, rec, param):
        return (rec.get("cpu_s") or rec["wall_s"]) / seeds, (
            f"the record's measured CPU time (it trained every network itself), / {param} {int(seeds)}")
    # a partial record's runs cover only its cuts: the cost model below scales those
    if not runs or not seeds or rec.get("partial") or any(r.get("cpu_s") is None for r in runs):
        return None
    train = sum(r["cpu_s"] for r in runs)
    own = rec.get("cpu_s") or rec["wall_s"]
    return (train + own) / seeds, (f"the record's measured CPU time: its {len(runs)} training runs that grow "
                                   f"with {param} plus its analysis, / {param} {int(seeds)}")


def seed_cost(chapter: str, profile: str = "paper", param: str | None = None) -> tuple[float | None, str]:
    """(one-core seconds per seed, how it was computed) for ``chapter`` under ``profile``.

    ``paper``, where the record measured the CPU time of every training run that grows with the seeds:
    that (:func:`_measured_seed_cost`). Else a chapter that declares its networks: their cost model's
    marginal cost of one more seed (:func:`declared_seed_cost`) plus the chapter's own measured time
    per seed (its analysis). Else the chapter's measured one-core cost divided by its seeds."""
    from . import records

    param = param or seed_parameter(chapter)
    if param is None:
        return None, "the chapter has no seed parameter"
    seeds = config.schema(chapter)[param].default_for(profile)
    if profile == "paper" and seeds and (measured := _measured_seed_cost(chapter, param)) is not None:
        return measured
    if seeds and (train := declared_seed_cost(chapter, profile, param, int(seeds))) is not None:
        rec = records.load(chapter, "paper") if profile == "paper" else None
        if rec is not None:
            own = (rec.get("cpu_s") or rec["wall_s"]) / float(rec["parameters"].get(param) or seeds)
            where = "the record's CPU time"
        else:
            quick = records.load_costs().get("chapters", {}).get(chapter, {}).get("quick_s")
            own, where = (quick or 0.0) / float(seeds), "the quick build's wall time"
        return train + own, (f"the declared networks' estimated training time per added seed of {param}, "
                             f"plus {where} per seed (the analysis)")
    if profile == "paper":
        rec = records.load(chapter, "paper") or {}
        runs = (rec.get("pretrained") or {}).get("runs", [])
        if runs:  # networks trained beforehand: those that grow with this seed parameter, wherever counted
            factors = records._cut_factors(rec)
            train = sum((r.get("cpu_s") or r.get("wall_s") or 0.0) * factors.get(param, 1.0)
                        for r in runs if r.get("scales_with") == param)
            total = train + rec.get("cpu_s", rec["wall_s"]) * max(factors.values(), default=1.0)
            how = (f"one-core cost of the recorded training runs that scale with {param} (also those counted "
                   "with another chapter) plus the record's analysis")
        else:
            cost = records.paper_cost(chapter)
            total, how = cost["high_s"], f"paper cost on one core ({cost['how']})"
            if rec and "cache" not in rec:
                how += "; the record predates cache accounting, so networks an earlier chapter trained " \
                       "may be missing from it (a lower bound)"
    else:
        quick = records.load_costs().get("chapters", {}).get(chapter, {}).get("quick_s")
        total, how = quick, "quick wall time in a cold parallel build (results/cost.json)"
    if total is None or not seeds:
        return None, "no measured cost"
    return float(total) / float(seeds), f"{how} / {param} {seeds}"


def plan_rows(claims: list, profile: str | None = None, cap: int = CAP) -> list[dict]:
    """One row per finding among ``claims`` (``companion.claims.Claim``; preconditions are skipped).

    Keys: ``id``, ``chapter``, ``status``, ``n`` (the run's n), ``stale`` (the rule changed since the
    run, or the claim left the registry: nothing is computed from the row), ``leans`` (``pass``/``fail``/
    ``on the boundary``; None unless undecided), ``seeds_to_decide`` (total n that would decide it;
    None: cannot say or more than ``cap``), ``extra_seeds``, ``core_hours`` (for the extra seeds, at the
    measured per-seed cost of the chapter under ``profile``, default the claim's own), ``seeds_needed``
    (the seeds the registry declares the rule needs, or None), ``method`` (how both were computed, in
    words). The tier is the registry's where the claim is still registered. A finding not testable because a
    precondition it requires is undecided gets ``waits_on`` (that precondition's id), and its leaning,
    seeds, cost and ``seeds_needed`` are the precondition's."""
    reg = registry.entries()
    by_id = {c.id: c for c in claims}
    out, costs = [], {}
    for c in claims:
        e = reg.get(c.id)
        if (e.tier if e is not None else c.tier) != "finding":
            continue
        stale = e is None or c.digest != e.digest
        row = {"id": c.id, "chapter": c.chapter, "status": c.status, "n": c.n, "stale": stale, "leans": None,
               "seeds_to_decide": None, "extra_seeds": None, "core_hours": None,
               "seeds_needed": None if e is None or not e.seeds_needed else int(e.seeds_needed["n"]),
               "method": ""}
        out.append(row)
        if e is None:
            row["method"] = "stale: re-record (the claim is no longer in the registry)"
            continue
        if stale:
            row["method"] = ("stale: re-record (the rule changed since this run; its estimate may be "
                             "another statistic)")
            continue
        if c.status != "undecided":
            gates = _undecided_gates(c, by_id, reg) if c.status == "not testable" else []
            if not gates:
                row["method"] = "decided" if c.status != "not testable" else "not testable here"
                continue
            # gated by undecided preconditions: the seeds that would decide each (then the finding's own
            # rule applies to the same run). ``gates`` has one row per precondition, since deciding one
            # alone can leave the finding not testable (fig4 waits on VED and AED accuracy); the row's own
            # numbers are the first's.
            row["gates"] = []
            for gc, ge in gates:
                gate = {"id": gc.id, "chapter": gc.chapter, "status": gc.status, "n": gc.n, "leans": None,
                        "seeds_to_decide": None, "extra_seeds": None, "core_hours": None,
                        "seeds_needed": int(ge.seeds_needed["n"]) if ge.seeds_needed else None, "method": ""}
                _what_decides(gate, gc, ge, profile, cap, costs)
                row["gates"].append(gate)
            first = row["gates"][0]
            row.update({k: v for k, v in first.items() if k not in ("id", "chapter", "status", "n")},
                       waits_on=first["id"])
            continue
        _what_decides(row, c, e, profile, cap, costs)
    return out


def _what_decides(row: dict, c, e: registry.Entry, profile: str | None, cap: int, costs: dict) -> None:
    """Fill ``row`` (a :func:`plan_rows` row) with what would decide the undecided claim ``c``: its
    leaning, the seeds, the setting that would run them and their cost (``costs``: a per-call memo)."""
    side, n, how = seeds_to_decide(e, asdict(c), cap)
    if e.cannot_decide:  # our runs showed no feasible n decides it (the registry's why)
        row["cannot_decide"] = e.cannot_decide["date"]
    row.update(leans=side, seeds_to_decide=n, method=how)
    if n is None:
        return
    prof = profile or c.profile or "paper"
    param, row["extra_seeds"] = _seeds_for(c, n, prof)
    total = None
    if param is not None:  # the setting that would run them, and whether the configuration allows it
        total = run_seeds(c.chapter, prof)[param] + row["extra_seeds"]
        row["setting"] = f"-p {param} {total}"
        limit = config.schema(c.chapter)[param].max
        if limit is not None and total > limit:
            row["setting"] += f" (above its maximum {int(limit)} in _config.yml)"
    if (c.chapter, prof, param) not in costs:
        try:
            costs[c.chapter, prof, param] = seed_cost(c.chapter, prof, param)
        except config.ConfigError:
            costs[c.chapter, prof, param] = (None, "unknown chapter")
    per_seed, cost_how = costs[c.chapter, prof, param]
    if per_seed is not None:
        # A model-cache entry is one batched program over all its seeds, so a record with more seeds
        # trains every network again: the cost is the whole record's at the new setting.
        seeds_run = total if total is not None else row["extra_seeds"]
        row["core_hours"] = round(seeds_run * per_seed / 3600, 2)
        row["method"] += (f"; cost: {cost_how}, per seed, times the seeds of the new record (each cached "
                          "program holds all its seeds, so none is reused; rough: n is not always seeds)")


def _undecided_gates(claim, by_id: dict, reg: dict) -> list:
    """(claim, entry) of every precondition that ``claim`` requires whose recorded claim is undecided under
    its current rule, in the order required (:func:`companion.claims.undecided_preconditions`); empty for a
    finding not testable for another reason (a failed precondition, or set not testable before the run)."""
    return [(p, reg[p.id]) for p in C.undecided_preconditions(claim, by_id)
            if p.id in reg and p.digest == reg[p.id].digest]


def _seeds_for(c, n_needed: int, profile: str) -> tuple[str | None, int]:
    """(the seed parameter, the seeds to add) for a claim to reach ``n_needed`` in its rule's n.

    A rule's n is not always seeds: it counts only the networks that solve the task where a
    selection applies (fewer than the seeds trained), and the runs of every cell where cells are
    pooled (more). Scale by the run's seeds per unit of n (:func:`claim_seed_parameter` says which
    seeds), so that, e.g., a claim on the 5 solving networks of 10 trained asks for two seeds per
    network it lacks."""
    extra = max(0, n_needed - c.n)
    if c.chapter not in config.chapter_ids() or not c.n:
        return None, extra
    seeds = run_seeds(c.chapter, profile)
    entry = registry.entries().get(c.id)
    param = claim_seed_parameter(c.chapter, c.n, seeds, entry.seeds_parameter if entry else "")
    if not extra or param is None:
        return param, extra
    return param, math.ceil(extra * float(seeds[param]) / c.n - 1e-9)


def load_claims(profile: str, chapter: str | None = None) -> list:
    """The claims a plan is made from: the records (``paper``) or the claims store (other profiles)."""
    from . import claims, records

    if profile == "paper":
        found = []
        for ch in config.chapter_ids():
            rec = records.load(ch, "paper")
            if rec is not None:
                found.extend(records.recorded_claims(rec))
    else:
        found = claims.load_store(profile)
    return [c for c in found if chapter is None or c.chapter == chapter]


def to_decide(row: dict) -> str:
    """What would decide an undecided finding, in words (empty for a decided one): its leaning, the seeds
    that would decide it if the observed mean and spread hold, and their cost. A finding that waits on
    undecided preconditions gets the same for each of them."""
    if row.get("stale"):
        return "stale: re-record"
    gated = row.get("status") == "not testable" and row.get("waits_on")
    if row.get("status") != "undecided" and not gated:
        return ""
    if gated and len(row.get("gates", ())) > 1:
        return (f"waits on its {len(row['gates'])} preconditions, which are undecided: "
                + "; ".join(f"{g['id']} " + _what_decides_words(g, "") for g in row["gates"]))
    lean = f"leans {row['leans']}" if row.get("leans") else ""
    if gated:
        return ("waits on its precondition, which is undecided" + (f" and {lean}" if lean else "") + "; "
                + _what_decides_words(row, "the precondition ", lean=False))
    return _what_decides_words(row, "")


def _what_decides_words(row: dict, subject: str, lean: bool = True) -> str:
    """The leaning, seeds, cost and setting of one planned claim (``subject`` names it in the sentence)."""
    parts = [f"leans {row['leans']}"] if lean and row.get("leans") else []
    if row.get("seeds_to_decide") is None:
        parts.append("not with a feasible number of seeds at this spread")
    else:
        seeds = subject + f"decides at about n = {row['seeds_to_decide']}"
        if row.get("core_hours") is not None:
            extra = f"+{row['extra_seeds']} seeds, " if row.get("extra_seeds") is not None else ""
            seeds += f" ({extra}a record of about {row['core_hours']:.2f} core-hours)"
        if row.get("setting"):
            seeds += f", recorded with {row['setting']}"
        parts.append(seeds)
    if row.get("cannot_decide"):
        parts.append("beyond the seeds any rule may ask for, so the registry marks it as not decidable here "
                     "(its criterion says why)")
    return "; ".join(parts)


def plan_text(rows: list[dict]) -> str:
    lines = []
    for r in rows:
        needed = "" if r.get("seeds_needed") is None else f" (the rule needs about {r['seeds_needed']} seeds)"
        if r.get("stale"):
            lines.append(f"{r['id']:<52} n={r['n']:<4} {r['status']}, stale: re-record (rule changed since "
                         f"the run){needed}")
            continue
        if r["status"] != "undecided" and not r.get("waits_on"):
            continue
        if r.get("waits_on"):  # the numbers are the gating preconditions'
            gates = r.get("gates") or [{**r, "id": r["waits_on"]}]
            lines.append(f"{r['id']:<52} n={r['n']:<4} not testable: waits on "
                         + " and ".join(g["id"] for g in gates))
            lines.extend(_plan_line({**g, "id": f"  {g['id']}"}) for g in gates)
            continue
        lines.append(_plan_line(r))
    return "\n".join(lines) or "no undecided findings"


def _plan_line(r: dict) -> str:
    """One line of :func:`plan_text`: the leaning, the seeds that decide, their cost and setting."""
    needed = "" if r.get("seeds_needed") is None else f" (the rule needs about {r['seeds_needed']} seeds)"
    # no n: say why (the method's last clause: no feasible number, on the boundary, no spread)
    n = (f"— ({str(r.get('method') or 'cannot say').split('; ')[-1]})" if r["seeds_to_decide"] is None
         else str(r["seeds_to_decide"]))
    cost = ("" if r["core_hours"] is None
            else f", +{r['extra_seeds']} seeds, a record of ≈ {r['core_hours']:.2f} core-h")
    if r.get("setting"):
        cost += f" [{r['setting']}]"
    declared = ("" if not r.get("cannot_decide")
                else f" (the registry declares it cannot decide: {r['cannot_decide']})")
    return (f"{r['id']:<52} n={r['n']:<4} leans {r['leans'] or '?':<16} decides at n={n}{cost}"
            f"{needed}{declared}")


def as_json(rows: list[dict]) -> str:
    return json.dumps(rows, indent=1)
