"""The claims registry: every claim's statement, paper value, statistic and decision rule, in one place.

Each paper keeps its registry in ``src/companion/<paper>/claims/<chapter>.yml``:
one file per owning chapter, one entry per claim. A chapter decides a claim in
one line, ``card.check("t-d1/zeroth-ftpt", values=ftpt_per_seed)``; the rule and
the paper's number come from here, never from the notebook. An entry::

    t-d1/zeroth-ftpt:                 # <chapter>/<name>; the file is the owning chapter
      figure: T-D1
      statement: mean training FTPT at the zeroth layer without entropy regularisation
      source: "[REPO-AAAI]"
      paper: {value: 74.72, sd: 11.63, n: 10}     # or {table: T-D1, where: {layer: zeroth, k: 0},
                                                  #     column: ftpt}
      statistic: mean over seeds of the training FTPT (%)
      rule: {test: matches, margin: 10, min_n: 5}
      added: 2026-12-01                            # the day the rule was written, before the runs it judges
      revisions:                                   # a rule changed after seeing results keeps why
        - {date: 2026-12-02, why: "..."}
      tier: finding                                # finding (default: counts in every headline) or
                                                   # precondition (gates findings; shown, never counted)
      requires: [t-d1/solves-task]                 # optional: preconditions this finding rests on; when one
                                                   # fails, the finding is "not testable" (not failed)
      not_testable: "..."                          # optional: our data or setup cannot test the statement,
                                                   # known before the run (e.g. the digit stand-in)
      testable_with: data_dir                      # optional: ... unless this chapter parameter is set
      seeds_needed: {n: 60, why: "..."}            # optional: the rule cannot decide at 40 seeds even if the
                                                   # paper's value holds; the seeds it needs (<= 100), and why
      assumed: {value: 20, sd: 11.6, why: "..."}   # optional: what the feasibility check simulates where the
                                                   # paper gives no number and no record has one (our
                                                   # assumption, never shown as the paper's)
      cannot_decide: {date: 2026-12-06, why: "..."}  # optional: our recorded runs show the rule cannot
                                                   # decide at a feasible n (shown with the rule)
      if_fails:                                    # optional, required of every claim that fails: why it
        kind: setup                                # fails, one of disagreement (with the paper), setup (one
        why: "..."                                 # the papers do not state: our choice) or stand-in (the
        evidence: "..."                            # digit stand-in data); shown wherever a fail is shown

Decision rules (95 % intervals, :mod:`companion.stats`), each with three outcomes:

``matches``      values per seed; pass if the interval of our mean lies inside the paper's value
                 ± (margin + 1.96 × the paper's standard error when its sd and n are known); fail if
                 it lies entirely outside; otherwise undecided.
``at_least``     values per seed; pass if the interval's lower end >= threshold; fail if its upper
``at_most``      end < threshold (mirrored for at_most); otherwise undecided.
``greater``      two samples a, b (paired over seeds unless ``paired: false``): the interval of
``less``         mean(a - b) must exclude 0 in the paper's direction to pass; it fails if it excludes
                 0 the other way, or if it rules out an effect as large as ``min_effect`` (when given).
``rate_at_least`` successes of trials; the Wilson interval against ``threshold``, as at_least/at_most.
``rate_at_most``
``rate_higher``  two rates (successes=(k1, k2), trials=(n1, n2)); Newcombe's interval of p1 - p2,
``rate_lower``   decided as greater/less.

Every rule has ``min_n`` (default 3): with fewer seeds (or trials) the claim is undecided.

``per_cell: K`` (at_least, at_most, greater, less) turns a rule into a statement about every one of the K
cells of the paper's table (e.g. "in every width cell"). The chapter passes the data cell by cell (a
mapping cell label -> values, or -> a and b); each cell is decided by the rule on its own, at the level
1 - (1 - level) / K (Bonferroni: the error rate split over the K cells, so that the chance that any cell
errs stays within the rule's). The claim passes when all K cells pass, fails when any cell fails, and is
undecided otherwise (fewer than K cells run included). The verdict's estimate and interval are those of
the deciding cell: a failing cell, else the cell closest to failing.

``paper: {value: d, rates: [p1, p2]}`` (rate_higher / rate_lower only): the two rates behind the paper's
difference d = p1 - p2 (each in [0, 1]), where the paper's runs give them (e.g. the share of the
authors' runs above a level, derived from their per-run values or their mean and SD). The feasibility
check (:mod:`companion.plan`) simulates these two rates; without them it takes 0.5 ± d / 2, the rates
of largest variance.

``seeds_needed: {n, why}``: the few rules that cannot decide with 40 seeds even if the paper's value (and
the paper's spread, or ours where the paper gives none) holds. ``n`` (at most :data:`SEEDS_CAP`) is the
number of seeds the rule is checked against instead; ``companion plan`` and the criterion text show it.
``assumed: {value, sd, why}`` (value and sd each optional, why required): our assumption for the
feasibility check where neither the paper nor a recorded run gives a value or a spread. Neither key
changes how a claim is decided, so neither is part of the claim's digest.

``cannot_decide: {date, why}``: our recorded runs measured an effect so small against its spread that the
rule cannot decide at any number of seeds up to :data:`SEEDS_CAP`, so the feasibility check flags it. The
rule is kept as written (changing it after seeing the runs would test another statement) and the claim
stays undecided; the declaration says so where the rule is shown, with the date and why. It must stay
true: the feasibility check fails a declared rule that it no longer flags. Not part of the digest.

``if_fails: {kind, why, evidence}``: why the claim fails where it does (under ``quick`` or in a recorded
run), of one of :data:`FAIL_KINDS`: a genuine disagreement with the paper, a setup the papers do not state
(our choice, and the alternative tried), or the stand-in data. ``why`` is a sentence or two, ``evidence``
what shows it (a record, an alternative tried, or what would test it, not yet tested). Shown beside every
fail: short (the kind and the first sentence of ``why``) in tables, in full in the chapter. It explains a
verdict and does not change it, so it is not part of the digest either.

``seeds_parameter: <name>`` (optional): the chapter parameter that counts the networks behind the claim's
n, where a chapter has several (``ved_seeds`` beside ``n_seeds``, both 10 at the papers' budget), so that
``companion plan`` raises the right one. Without it the plan takes the smallest seed count that covers n.
It does not change how the claim is decided and is not part of the digest.

``range: [lo, hi]`` (optional, mean and difference rules) declares a bounded statistic (a share or an
accuracy in [0, 1], a percentage in [0, 100]); its interval then never leaves the range and never has
zero width: the t interval while the values are spread and clear of the bounds, else Wilson's score
interval of the scaled mean (:mod:`companion.stats`). Without a range, values with no spread leave
the claim undecided (the interval is undefined). A malformed range is refused when the registry loads.

Claims are decided at :func:`companion.stats.active_level` (95 %, or the per-look level of a staged
record, passed in ``COMPANION_LEVEL``); ``decide(..., level=...)`` overrides it.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from . import paths, stats
from .config import ConfigError

PAPERS = ("aitken2021", "pandey2022")
TESTS = ("matches", "at_least", "at_most", "greater", "less",
         "rate_at_least", "rate_at_most", "rate_higher", "rate_lower")
DIRECTIONAL = {"greater": 1, "less": -1, "rate_higher": 1, "rate_lower": -1}
TIERS = ("finding", "precondition")
KEYS = {"figure", "statement", "source", "paper", "statistic", "rule", "added", "revisions", "not_testable",
        "testable_with", "see_also", "tier", "requires", "seeds_needed", "assumed", "if_fails",
        "cannot_decide", "seeds_parameter"}
#: Why a claim fails: the three kinds, in the words a reader sees (short, for a table cell; in full).
FAIL_KINDS = {"disagreement": "disagrees with the paper",
              "setup": "our setup",
              "stand-in": "the stand-in data"}
FAIL_KINDS_FULL = {"disagreement": "A genuine disagreement with the paper",
                   "setup": "Our setup: a choice of ours that the papers do not state or do not make",
                   "stand-in": "The stand-in data: digits where the paper has CIFAR-10 or COCO"}
#: The most seeds a ``seeds_needed`` declaration may ask for (100 until 2026-12-05; 150 since, when a
#: claim without a paper value, FFPT rising early, measured an effect that decides only at about 114).
SEEDS_CAP = 150
RULE_KEYS = {"test", "margin", "threshold", "min_n", "min_effect", "paired", "interval", "range", "per_cell"}
#: Rules that may be decided cell by cell (``per_cell: K``).
CELL_TESTS = ("at_least", "at_most", "greater", "less")
#: Rules whose statistic is a mean (or a difference of means) and so may declare a ``range``.
MEAN_TESTS = ("matches", "at_least", "at_most", "greater", "less")


@dataclass(frozen=True)
class Entry:
    """One registered claim."""

    id: str
    paper: str
    chapter: str
    figure: str
    statement: str
    source: str
    statistic: str
    rule: dict
    reference: dict            # the paper's number as given in the file (value / sd / n / text / table)
    added: str
    revisions: tuple = ()
    not_testable: str = ""
    testable_with: str = ""
    see_also: tuple = ()
    tier: str = "finding"
    requires: tuple = ()
    seeds_needed: dict | None = None   # {n, why}: seeds the rule needs beyond 40 (feasibility and plan)
    assumed: dict | None = None        # {value, sd, why}: our assumption for the feasibility check
    if_fails: dict | None = None       # {kind, why, evidence}: why the claim fails (explains, never decides)
    cannot_decide: dict | None = None  # {date, why}: our runs show no feasible number of seeds decides it
    seeds_parameter: str = ""          # the parameter that counts the claim's networks (plan) if ambiguous

    @property
    def test(self) -> str:
        return self.rule["test"]

    @property
    def min_n(self) -> int:
        return int(self.rule.get("min_n", 3))

    @property
    def cells(self) -> int:
        """K of a ``per_cell: K`` rule (0: decided on the pooled data)."""
        return int(self.rule.get("per_cell") or 0)

    def cell_level(self, level: float) -> float:
        """The level each cell is decided at: Bonferroni's 1 - (1 - level) / K (``level`` itself when the
        rule is not per cell)."""
        return 1.0 - (1.0 - level) / self.cells if self.cells else level

    @property
    def bounds(self) -> tuple[float, float] | None:
        """The statistic's declared range ``(lo, hi)``, or None (unbounded)."""
        r = self.rule.get("range")
        return None if r is None else stats.check_range(r)

    def interval_text(self) -> str:
        """How this rule's interval is computed, in words (the criteria appendix states it per rule)."""
        t, r = self.test, self.rule
        if t in ("rate_at_least", "rate_at_most"):
            return "Wilson score interval of the rate"
        if t in ("rate_higher", "rate_lower"):
            return "Newcombe's hybrid score interval of the difference of two rates"
        if t in ("greater", "less") and not r.get("paired", True):
            base = "Welch t interval of the difference of means"
            if self.bounds:
                lo, hi = self.bounds
                return base + f", clipped to the range [{stats.fmt(lo)}, {stats.fmt(hi)}]"
            return base + "; no spread in either sample: undefined (undecided)"
        what = "mean paired difference" if t in ("greater", "less") else "mean"
        how = "BCa bootstrap (seed 0)" if r.get("interval") == "bootstrap" else "t"
        if self.bounds:
            lo, hi = self.bounds
            return (f"{how} interval of the {what}, in the range [{stats.fmt(lo)}, {stats.fmt(hi)}]; "
                    "when the values show no spread or the interval reaches past a bound: Wilson score "
                    "interval of the mean scaled to [0, 1] (sum of the values as successes in n trials)")
        return f"{how} interval of the {what}; values with no spread: undefined (undecided)"

    def fail_short(self) -> str:
        """Why the claim fails, for a table cell: the kind in words and the first sentence of ``why``
        ("" without an explanation)."""
        if not self.if_fails:
            return ""
        why = str(self.if_fails["why"]).strip()
        first = why.split(". ", 1)[0].rstrip(".")
        if len(first) > 140:
            first = first[:139].rsplit(" ", 1)[0] + "…"
        return f"{FAIL_KINDS[self.if_fails['kind']]}: {first}"

    def fail_text(self) -> str:
        """Why the claim fails, in full: the kind in words, ``why`` and ``evidence``."""
        if not self.if_fails:
            return ""
        f = self.if_fails
        return f"{FAIL_KINDS_FULL[f['kind']]}. {str(f['why']).strip()} Evidence: {str(f['evidence']).strip()}"

    @property
    def digest(self) -> str:
        """A hash of what decides the claim (rule, paper value, statement): a recorded result whose
        digest differs from the registry's is stale."""
        what = {"rule": self.rule, "paper": self.reference, "statement": self.statement,
                # the key keeps its first name, so a claim whose decision did not change keeps its digest
                "undecidable": self.not_testable}
        if self.tier != "finding" or self.requires:  # only where they change what decides the claim
            what.update(tier=self.tier, requires=list(self.requires))
        blob = json.dumps(what, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def paper_value(self) -> dict:
        """``{value, sd, n, text}`` of the paper's number (table lookups resolved)."""
        ref = dict(self.reference)
        if "table" in ref:
            ref.update(_lookup(self.paper, ref))
        return ref

    def target(self) -> tuple[float, float] | None:
        """The acceptance band for ``matches`` and the threshold line for one-sided rules."""
        t = self.test
        if t == "matches":
            ref = self.paper_value()
            half = float(self.rule["margin"])
            if ref.get("sd") is not None and ref.get("n"):
                half += 1.96 * float(ref["sd"]) / math.sqrt(float(ref["n"]))
            return float(ref["value"]) - half, float(ref["value"]) + half
        if t in ("at_least", "rate_at_least"):
            return float(self.rule["threshold"]), math.inf
        if t in ("at_most", "rate_at_most"):
            return -math.inf, float(self.rule["threshold"])
        return None

    def expected_text(self) -> str:
        ref = self.paper_value()
        parts = []
        if ref.get("value") is not None:
            v = stats.fmt(float(ref["value"]))
            if ref.get("sd") is not None:
                v += f" ± {stats.fmt(float(ref['sd']))}"
            if ref.get("n"):
                v += f" (n={ref['n']})"
            parts.append(v)
        if ref.get("text"):
            parts.append(str(ref["text"]))
        return "; ".join(parts) or "—"

    def rule_text(self, level: float | None = None) -> str:
        text = self._rule_text(level)
        if self.seeds_needed:
            text += (f" Needs about {self.seeds_needed['n']} seeds to decide even if the paper's value "
                     f"holds: {self.seeds_needed['why']}")
        if self.cannot_decide:
            text += (f" Our runs show it cannot decide at a feasible number of seeds "
                     f"({self.cannot_decide['date']}): {self.cannot_decide['why']}")
        return text

    def _rule_text(self, level: float | None = None) -> str:
        level = stats.active_level() if level is None else level
        if self.cells:
            k = self.cells
            return (f"Per cell, in each of the {k} cells: {self._cell_rule_text(self.cell_level(level))} "
                    f"Every cell passes → pass; any cell fails → fail; otherwise (fewer than {k} cells run "
                    f"included) undecided. Each cell at {stats.level_text(self.cell_level(level))}: the "
                    f"{stats.level_text(1 - level)} error rate of a {stats.level_text(level)} interval "
                    f"split over the {k} cells (Bonferroni).")
        return self._cell_rule_text(level)

    def _cell_rule_text(self, level: float) -> str:
        r, t, n = self.rule, self.test, self.min_n
        pct = stats.level_text(level)
        how = f" Interval: {self.interval_text()}."
        if t == "matches":
            lo, hi = self.target()
            extra = " + 1.96 × paper SE" if self.paper_value().get("sd") is not None else ""
            return (f"{pct} interval of our mean inside [{stats.fmt(lo)}, {stats.fmt(hi)}] "
                    f"(paper ± {stats.fmt(float(r['margin']))}{extra}) → pass; entirely outside → fail; "
                    f"n ≥ {n}.{how}")
        if t in ("at_least", "at_most"):
            op = "≥" if t == "at_least" else "≤"
            return f"{pct} interval of our mean {op} {stats.fmt(float(r['threshold']))} → pass; " \
                   f"entirely on the other side → fail; n ≥ {n}.{how}"
        if t in ("rate_at_least", "rate_at_most"):
            op = "≥" if t == "rate_at_least" else "≤"
            return f"{pct} Wilson interval of the rate {op} {stats.fmt(float(r['threshold']))} → pass; " \
                   f"entirely on the other side → fail; trials ≥ {n}"
        sign = ">" if DIRECTIONAL[t] > 0 else "<"
        what = "p1 − p2 (Newcombe)" if t.startswith("rate") else (
            "mean paired difference a − b" if r.get("paired", True) else "difference of means a − b (Welch)")
        text = f"{pct} interval of {what} {sign} 0 → pass; {'<' if sign == '>' else '>'} 0 → fail"
        if r.get("min_effect") is not None:
            text += f", or excludes an effect of {stats.fmt(float(r['min_effect']))} → fail"
        return text + f"; n ≥ {n}" + ("" if t.startswith("rate") else f".{how}")


@dataclass
class Verdict:
    status: str                 # pass | fail | undecided
    estimate: float | None
    lo: float | None
    hi: float | None
    n: int
    method: str
    detail: str = ""
    extra: dict = field(default_factory=dict)


def _lookup(paper: str, ref: dict) -> dict:
    """Resolve ``{table, where, column[, sd_column, n, n_column]}`` against
    ``companion.<paper>.reference``."""
    mod = importlib.import_module(f"companion.{paper}.reference")
    table = mod.REFERENCE[ref["table"]]
    rows = table
    for k, v in (ref.get("where") or {}).items():
        rows = rows[rows[k] == v]
    if len(rows) != 1:
        raise ConfigError(f"{paper} reference {ref['table']} {ref.get('where')}: "
                          f"{len(rows)} rows match, need 1")
    row = rows.iloc[0]
    out = {"value": float(row[ref["column"]])}
    if ref.get("sd_column"):
        out["sd"] = float(row[ref["sd_column"]])
    if ref.get("n_column"):
        out["n"] = int(row[ref["n_column"]])
    return out


def _check_entry(cid: str, chapter: str, raw: Any, where: str) -> None:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: {cid}: an entry must be a mapping")
    if not cid.startswith(chapter + "/"):
        raise ConfigError(f"{where}: claim id {cid!r} must start with '{chapter}/' (the owning chapter)")
    unknown = set(raw) - KEYS
    if unknown:
        raise ConfigError(f"{where}: {cid}: unknown keys {sorted(unknown)}; allowed: {sorted(KEYS)}")
    for k in ("figure", "statement", "source", "statistic", "rule", "added"):
        if k not in raw:
            raise ConfigError(f"{where}: {cid}: missing {k!r}")
    rule = raw["rule"]
    if not isinstance(rule, dict) or rule.get("test") not in TESTS:
        raise ConfigError(f"{where}: {cid}: rule.test must be one of {', '.join(TESTS)}")
    bad = set(rule) - RULE_KEYS
    if bad:
        raise ConfigError(f"{where}: {cid}: unknown rule keys {sorted(bad)}; allowed: {sorted(RULE_KEYS)}")
    t = rule["test"]
    if t == "matches" and ("margin" not in rule or "paper" not in raw):
        raise ConfigError(f"{where}: {cid}: a 'matches' rule needs rule.margin and a paper value")
    if t in ("at_least", "at_most", "rate_at_least", "rate_at_most") and "threshold" not in rule:
        raise ConfigError(f"{where}: {cid}: rule {t!r} needs rule.threshold")
    if "range" in rule:
        if t not in MEAN_TESTS:
            raise ConfigError(f"{where}: {cid}: rule.range applies to mean rules ({', '.join(MEAN_TESTS)}); "
                              "a rate lies in [0, 1] already")
        rng = rule["range"]
        if not (isinstance(rng, list) and len(rng) == 2
                and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in rng)
                and all(math.isfinite(v) for v in rng) and rng[0] < rng[1]):
            raise ConfigError(f"{where}: {cid}: rule.range must be [lo, hi], two finite numbers with "
                              f"lo < hi, got {rng!r}")
    if "per_cell" in rule:
        k = rule["per_cell"]
        if t not in CELL_TESTS:
            raise ConfigError(f"{where}: {cid}: rule.per_cell applies to {', '.join(CELL_TESTS)}")
        if not (isinstance(k, int) and not isinstance(k, bool) and k >= 2):
            raise ConfigError(f"{where}: {cid}: rule.per_cell is the number of cells, a whole number >= 2, "
                              f"got {k!r}")
    if raw.get("tier", "finding") not in TIERS:
        raise ConfigError(f"{where}: {cid}: tier must be one of {', '.join(TIERS)}")
    if not isinstance(raw.get("requires", []), list):
        raise ConfigError(f"{where}: {cid}: requires must be a list of precondition ids")
    for rev in raw.get("revisions") or []:
        if not (isinstance(rev, dict) and {"date", "why"} <= set(rev)):
            raise ConfigError(f"{where}: {cid}: each revision needs a date and a why")
    ref = raw.get("paper")
    if isinstance(ref, dict) and "rates" in ref:
        rates = ref["rates"]
        if t not in ("rate_higher", "rate_lower"):
            raise ConfigError(f"{where}: {cid}: paper.rates belongs to a rate_higher/rate_lower rule")
        if not (isinstance(rates, list) and len(rates) == 2
                and all(_number(v) and 0 <= v <= 1 for v in rates)):
            raise ConfigError(f"{where}: {cid}: paper.rates must be [p1, p2], two rates in [0, 1], "
                              f"got {rates!r}")
        if ref.get("value") is not None and abs(rates[0] - rates[1] - float(ref["value"])) > 1e-6:
            raise ConfigError(f"{where}: {cid}: paper.rates {rates} differ by {rates[0] - rates[1]:.4g}, "
                              f"not by the paper's value {ref['value']}")
    need = raw.get("seeds_needed")
    if need is not None:
        if not (isinstance(need, dict) and set(need) == {"n", "why"} and isinstance(need["n"], int)
                and not isinstance(need["n"], bool) and str(need["why"]).strip()):
            raise ConfigError(f"{where}: {cid}: seeds_needed must be {{n: <whole number>, why: <text>}}")
        if not 2 <= need["n"] <= SEEDS_CAP:
            raise ConfigError(f"{where}: {cid}: seeds_needed.n must lie in 2..{SEEDS_CAP}, got {need['n']}")
    fails = raw.get("if_fails")
    if fails is not None:
        if not (isinstance(fails, dict) and set(fails) == {"kind", "why", "evidence"}
                and all(isinstance(fails[k], str) and fails[k].strip() for k in ("why", "evidence"))):
            raise ConfigError(f"{where}: {cid}: if_fails must be {{kind: <kind>, why: <text>, "
                              "evidence: <text>}}, both texts non-empty")
        if fails["kind"] not in FAIL_KINDS:
            raise ConfigError(f"{where}: {cid}: if_fails.kind must be one of {', '.join(FAIL_KINDS)}, "
                              f"got {fails['kind']!r}")
    cannot_decide = raw.get("cannot_decide")
    if cannot_decide is not None and not (
            isinstance(cannot_decide, dict) and set(cannot_decide) == {"date", "why"}
            and str(cannot_decide["date"]).strip() and str(cannot_decide["why"]).strip()):
        raise ConfigError(f"{where}: {cid}: cannot_decide must be {{date: <YYYY-MM-DD>, why: <text>}}")
    param = raw.get("seeds_parameter")
    if param is not None and not (isinstance(param, str) and param.endswith("seeds")):
        raise ConfigError(f"{where}: {cid}: seeds_parameter must name a seed-count parameter of the chapter "
                          f"(ending in 'seeds'), got {param!r}")
    guess = raw.get("assumed")
    if guess is not None:
        if not (isinstance(guess, dict) and "why" in guess and str(guess["why"]).strip()
                and set(guess) <= {"value", "sd", "why"} and set(guess) - {"why"}
                and all(_number(guess[k]) for k in ("value", "sd") if k in guess)
                and guess.get("sd", 1) > 0):
            raise ConfigError(f"{where}: {cid}: assumed must be {{value: <number>, sd: <number > 0>, "
                              "why: <text>}} with a why and at least one of value, sd")


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def registry_dir(paper: str) -> Path:
    return paths.PACKAGE_DIR / paper / "claims"


@lru_cache(maxsize=4)
def _load(stamp: tuple) -> dict[str, Entry]:
    out: dict[str, Entry] = {}
    for paper in PAPERS:
        folder = registry_dir(paper)
        for f in sorted(folder.glob("*.yml")):
            chapter = f.stem
            data = yaml.safe_load(f.read_text(encoding="utf-8")) or {}
            if not isinstance(data, dict):
                raise ConfigError(f"{f}: expected a mapping of claim ids")
            for cid, raw in data.items():
                _check_entry(cid, chapter, raw, str(f))
                if cid in out:
                    raise ConfigError(f"{f}: claim id {cid!r} is registered twice")
                ref = raw.get("paper") or {}
                if not isinstance(ref, dict):
                    ref = {"text": str(ref)}
                out[cid] = Entry(
                    id=cid, paper=paper, chapter=chapter, figure=str(raw["figure"]),
                    statement=str(raw["statement"]).strip(), source=str(raw["source"]),
                    statistic=str(raw["statistic"]).strip(), rule=dict(raw["rule"]), reference=ref,
                    added=str(raw["added"]), revisions=tuple(raw.get("revisions") or ()),
                    not_testable=str(raw.get("not_testable") or "").strip(),
                    testable_with=str(raw.get("testable_with") or ""),
                    see_also=tuple(raw.get("see_also") or ()),
                    tier=str(raw.get("tier", "finding")), requires=tuple(raw.get("requires") or ()),
                    seeds_needed=raw.get("seeds_needed"), assumed=raw.get("assumed"),
                    if_fails=raw.get("if_fails"),
                    cannot_decide=({k: str(v) for k, v in raw["cannot_decide"].items()}
                                 if raw.get("cannot_decide") else None),
                    seeds_parameter=str(raw.get("seeds_parameter") or ""),
                )
    for e in out.values():
        for pre in e.requires:
            if pre not in out or out[pre].tier != "precondition":
                raise ConfigError(f"{registry_dir(e.paper) / (e.chapter + '.yml')}: {e.id}: requires "
                                  f"{pre!r}, which is not a registered precondition")
    return out


def entries() -> dict[str, Entry]:
    """Every registered claim by id (re-read when a registry file changes)."""
    files = [f for p in PAPERS for f in sorted(registry_dir(p).glob("*.yml"))]
    return _load(tuple((str(f), f.stat().st_mtime_ns) for f in files))


def get(cid: str) -> Entry:
    reg = entries()
    if cid not in reg:
        raise ConfigError(f"claim {cid!r} is not in the registry "
                          "(src/companion/<paper>/claims/<chapter>.yml)")
    return reg[cid]


def fail_entry(cid: str) -> Entry | None:
    """The registered entry of ``cid`` when it explains a fail (``if_fails``), else None (a claim that has
    left the registry included: a recorded row may outlive its rule)."""
    e = entries().get(cid)
    return e if e is not None and e.if_fails else None


def for_chapter(chapter: str) -> list[Entry]:
    return [e for e in entries().values() if e.chapter == chapter]


# ---- deciding -------------------------------------------------------------------------------------

def _one_sided(iv: stats.Interval, threshold: float, above: bool) -> str:
    if above:
        return "pass" if iv.lo >= threshold else ("fail" if iv.hi < threshold else "undecided")
    return "pass" if iv.hi <= threshold else ("fail" if iv.lo > threshold else "undecided")


def _directional(iv: stats.Interval, sign: int, min_effect: float | None) -> str:
    lo, hi = (iv.lo, iv.hi) if sign > 0 else (-iv.hi, -iv.lo)  # in the paper's direction
    if lo > 0:
        return "pass"
    if hi < 0 or (min_effect is not None and hi < float(min_effect)):
        return "fail"
    return "undecided"


def status_of(entry: Entry, iv: stats.Interval) -> str:
    """The rule's outcome for an interval (``min_n`` aside): the one place the rules are applied, by
    :func:`decide` to observed data and by :mod:`companion.plan` to expected intervals."""
    t, r = entry.test, entry.rule
    if t == "matches":
        lo, hi = entry.target()
        if lo <= iv.lo and iv.hi <= hi:
            return "pass"
        return "fail" if iv.hi < lo or iv.lo > hi else "undecided"
    if t in ("at_least", "at_most", "rate_at_least", "rate_at_most"):
        return _one_sided(iv, float(r["threshold"]), above=t in ("at_least", "rate_at_least"))
    return _directional(iv, DIRECTIONAL[t], r.get("min_effect"))


def _no_spread(iv: stats.Interval) -> str:
    return stats.NO_SPREAD if stats.NO_SPREAD in iv.method else ""


def decide(entry: Entry, *, values=None, a=None, b=None, successes=None, trials=None,
           level: float | None = None) -> Verdict:
    """Apply the entry's rule to the observed data, at ``level`` (default
    :func:`companion.stats.active_level`: 95 %, or a staged record's per-look level)."""
    r, t = entry.rule, entry.test
    level = stats.active_level() if level is None else float(level)
    if entry.cells:
        return _decide_cells(entry, level, values=values, a=a, b=b)
    if t in ("matches", "at_least", "at_most"):
        if values is None:
            raise TypeError(f"{entry.id}: rule {t!r} needs values=<one number per seed>")
        iv = stats.mean_interval(values, method=r.get("interval", "t"), level=level, bounds=entry.bounds)
        if iv.n < entry.min_n:
            return Verdict("undecided", iv.estimate, iv.lo, iv.hi, iv.n, iv.method,
                           f"needs n ≥ {entry.min_n}, has {iv.n}")
        return Verdict(status_of(entry, iv), iv.estimate, iv.lo, iv.hi, iv.n, iv.method, _no_spread(iv))
    if t in ("greater", "less"):
        if a is None or b is None:
            raise TypeError(f"{entry.id}: rule {t!r} needs a=<values> and b=<values>")
        iv = stats.difference_interval(a, b, paired=bool(r.get("paired", True)), level=level,
                                       bounds=entry.bounds)
        if iv.n < entry.min_n:
            return Verdict("undecided", iv.estimate, iv.lo, iv.hi, iv.n, iv.method,
                           f"needs n ≥ {entry.min_n}, has {iv.n}")
        return Verdict(status_of(entry, iv), iv.estimate, iv.lo, iv.hi, iv.n, iv.method, _no_spread(iv))
    if t in ("rate_at_least", "rate_at_most"):
        if values is not None:
            flags = [bool(v) for v in values]
            successes, trials = sum(flags), len(flags)
        if successes is None or trials is None:
            raise TypeError(f"{entry.id}: rule {t!r} needs successes= and trials= (or values=<booleans>)")
        iv = stats.rate_interval(successes, trials, level)
        counts = {"successes": int(successes)}
        if iv.n < entry.min_n:
            return Verdict("undecided", iv.estimate, iv.lo, iv.hi, iv.n, iv.method,
                           f"needs ≥ {entry.min_n} trials, has {iv.n}", extra=counts)
        return Verdict(status_of(entry, iv), iv.estimate, iv.lo, iv.hi, iv.n, iv.method, extra=counts)
    # rate_higher / rate_lower
    if successes is None or trials is None or len(successes) != 2 or len(trials) != 2:
        raise TypeError(f"{entry.id}: rule {t!r} needs successes=(k1, k2) and trials=(n1, n2)")
    iv = stats.rate_difference_interval(successes[0], trials[0], successes[1], trials[1], level)
    # the counts travel with every verdict, undecided too: the chapter prints them
    counts = {"successes": list(map(int, successes)), "trials": list(map(int, trials))}
    if iv.n < entry.min_n:
        return Verdict("undecided", iv.estimate, iv.lo, iv.hi, iv.n, iv.method,
                       f"needs ≥ {entry.min_n} trials per rate, has {iv.n}", extra=counts)
    return Verdict(status_of(entry, iv), iv.estimate, iv.lo, iv.hi, iv.n, iv.method, extra=counts)


_ORDER = {"fail": 0, "undecided": 1, "pass": 2}


def _decide_cells(entry: Entry, level: float, *, values=None, a=None, b=None) -> Verdict:
    """A ``per_cell: K`` rule: each cell decided alone at the Bonferroni level; all K pass -> pass, any
    fails -> fail, else undecided. ``values`` (or ``a`` and ``b``): a mapping cell label -> the cell's
    data."""
    data = values if values is not None else a
    if not isinstance(data, dict) or (values is None and not isinstance(b, dict)):
        raise TypeError(f"{entry.id}: a per-cell rule needs values={{cell: values}} "
                        "(or a={cell: values}, b={cell: values})")
    single = Entry(**{**entry.__dict__, "rule": {k: v for k, v in entry.rule.items() if k != "per_cell"}})
    lv = entry.cell_level(level)
    cells = {}
    for label in data:
        if values is not None:
            cells[label] = decide(single, values=values[label], level=lv)
        elif label in b:
            cells[label] = decide(single, a=a[label], b=b[label], level=lv)
    k = entry.cells
    counts = {s: sum(v.status == s for v in cells.values()) for s in ("pass", "fail", "undecided")}
    if counts["fail"]:
        status = "fail"
    elif counts["pass"] == len(cells) and len(cells) >= k:
        status = "pass"
    else:
        status = "undecided"
    detail = (f"per cell at {stats.level_text(lv)}: {counts['pass']} pass, {counts['fail']} fail, "
              f"{counts['undecided']} undecided, of {len(cells)} cells run ({k} needed)")
    if not cells:
        nan = float("nan")
        return Verdict("undecided", nan, nan, nan, 0, "per cell", detail)
    above = entry.test in ("at_least", "greater")

    def closeness(item):  # worst status first, then the cell whose interval lies nearest the wrong side
        v = item[1]
        edge = v.lo if above else -v.hi
        return _ORDER[v.status], edge if math.isfinite(edge) else -math.inf

    label, v = min(cells.items(), key=closeness)
    extra = {"cells": {c: cv.status for c, cv in cells.items()}, "deciding_cell": label}
    return Verdict(status, v.estimate, v.lo, v.hi, v.n, f"{v.method}, per cell",
                   f"{detail}; shown: {label}" + (f" ({v.detail})" if v.detail else ""), extra)
