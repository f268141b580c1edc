"""Claims as data: each chapter decides the registered claims it owns and saves the verdicts.

A chapter builds a :class:`companion.card.ChapterCard` from its settings, calls
its ``check`` once per claim with the observed data (one value per seed, two
paired samples, or a count), and ends with its ``show``. This module holds the
verdicts as data (:class:`Claim`, the claims store, counts); it never reads
records or runs anything. The statement, the paper's number and the decision
rule come from the registry (:mod:`companion.registry`), never from the notebook.
Verdicts have four outcomes: ``pass``, ``fail``, ``undecided`` (the interval does not settle the rule yet)
and ``not testable`` (set before the run: our data or setup cannot test the statement, or a
precondition it rests on did not pass; one still undecided makes the finding *waiting*, counted apart as
open, :func:`waiting`). Claims come in two tiers: *findings* (statements of a paper, the only
ones counted in headlines) and *preconditions* (the networks solve the task; they gate findings).

Two places receive the verdicts:

* the claims store ``<cache>/claims/<profile>/<chapter>.json``, for runs with the
  profile's default parameters: the scorecard page and ``companion scorecard`` read it;
* the file named by ``COMPANION_CLAIMS_FILE`` if set (``companion run`` sets it
  beside the executed notebook), for every run, overrides included.

The table is also embedded in the executed notebook as ``application/json``.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import pandas as pd

from . import paths, registry

CLAIMS_FILE_ENV = "COMPANION_CLAIMS_FILE"
STATUSES = ("pass", "fail", "undecided", "not testable")
COLUMNS = ["figure", "claim", "expected", "observed", "criterion", "status", "source"]
COLOURS = {"pass": "#1a7f37", "fail": "#cf222e", "undecided": "#9a6700", "not testable": "#57606a"}


@dataclass
class Claim:
    """One decided claim: the paper's statement and number, our estimate and interval, the verdict."""

    chapter: str
    paper: str
    figure: str
    id: str
    claim: str
    expected: str
    observed: str
    criterion: str
    status: str
    source: str = ""
    profile: str = ""
    overrides: dict = field(default_factory=dict)
    estimate: float | None = None
    lo: float | None = None
    hi: float | None = None
    n: int = 0
    test: str = ""
    target_lo: float | None = None
    target_hi: float | None = None
    reference: float | None = None
    revised: str = ""
    note: str = ""
    digest: str = ""
    tier: str = "finding"

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"claim {self.id}: status must be one of {STATUSES}, got {self.status!r}")

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    def as_row(self) -> dict:
        return {**asdict(self), "passed": self.passed}


def store_dir(profile: str) -> Path:
    return paths.cache_root() / "claims" / profile


def _write_json(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        json.dump(rows, fh, indent=1, allow_nan=True)
    os.replace(tmp, path)


def _finite(x: Any) -> float | None:
    return float(x) if x is not None and math.isfinite(float(x)) else None


def findings(claims: list[Claim]) -> list[Claim]:
    """The claims that count in headlines (preconditions gate them and are shown apart)."""
    return [c for c in claims if c.tier == "finding"]


def counts(claims: list[Claim]) -> dict[str, int]:
    out = {s: 0 for s in STATUSES}
    for c in claims:
        out[c.status] += 1
    return out


#: how a chapter notes a finding made not testable by its preconditions (not by our data or setup)
PRECONDITION_NOT_MET = "precondition not met: "


def undecided_preconditions(claim: Claim, by_id: dict[str, Claim]) -> list[Claim]:
    """The preconditions ``claim`` requires (registry) whose verdicts in ``by_id`` are undecided, in the order
    required, when they are what made it not testable; empty when one of them failed (no seeds for the
    others make the finding testable) or when our data or setup cannot test it anyway."""
    if claim.status == "not testable" and PRECONDITION_NOT_MET not in claim.note:
        return []
    entry = registry.entries().get(claim.id)
    required = [by_id[pid] for pid in (entry.requires if entry else ()) if pid in by_id]
    if any(p.status == "fail" for p in required):
        return []
    return [p for p in required if p.status == "undecided"]


def waiting(claims: list[Claim]) -> set[str]:
    """Ids of the findings among ``claims`` that are not testable only because a precondition they require
    is still undecided: open questions that more networks can settle, unlike a finding our data or setup
    cannot test, or one whose networks fail the task."""
    by_id = {c.id: c for c in claims}
    return {c.id for c in findings(claims) if c.status == "not testable"
            and undecided_preconditions(c, by_id)}


def counts_text(claims: list[Claim]) -> str:
    """Counts of the findings among ``claims`` (preconditions are not counted). A finding that waits on an
    undecided precondition is counted apart from those not testable here, since more seeds can decide it."""
    found = findings(claims)
    c = counts(found)
    wait = len(waiting(claims))
    text = f"{c['pass']} pass, {c['fail']} fail, {c['undecided']} undecided"
    if wait:
        text += f", {wait} waiting on an undecided precondition"
    if c["not testable"] - wait:
        text += f", {c['not testable'] - wait} not testable here"
    return text + f" (of {len(found)} findings)"


def to_frame(claims: list[Claim]) -> pd.DataFrame:
    rows = [c.as_row() for c in claims]
    return pd.DataFrame(rows, columns=["chapter", "id", *COLUMNS, "passed", "profile", "estimate", "lo", "hi",
                                       "n", "reference", "target_lo", "target_hi", "revised", "note"])


def render_html(frame: pd.DataFrame, columns: list[str] = COLUMNS) -> str:
    """An HTML table with the status coloured, wrapped to the page (class ``companion-claims``)."""

    def colour(v: str) -> str:
        return f"color: {COLOURS.get(v, '#000')}; font-weight: bold"

    shown = frame[columns].copy()
    coloured = [c for c in columns if c == "status" or c.startswith("paper (recorded")]
    styler = shown.style.hide(axis="index").map(lambda v: colour(str(v).split(" ")[0]), subset=coloured)
    styler = styler.set_table_attributes('class="companion-claims"')
    return styler.to_html()


def tables_file(claims_file: Path) -> Path:
    """Where a run's summary tables go, beside its claims file."""
    return claims_file.with_name(claims_file.name.removesuffix(".json") + ".tables.json")


_FIELDS = {f.name for f in fields(Claim)}


def from_row(row: dict) -> Claim:
    """A Claim from a stored row (older rows carried only ``passed``)."""
    data = {k: v for k, v in row.items() if k in _FIELDS}
    if "status" not in data or data["status"] not in STATUSES:
        data["status"] = "pass" if row.get("passed") else "fail"
    if data.get("tier") not in registry.TIERS:
        # older rows have no tier: the registry's, where the claim still exists
        known = registry.entries()
        data["tier"] = known[data["id"]].tier if data.get("id") in known else "finding"
    return Claim(**data)


def load_file(path: Path) -> list[Claim]:
    rows = json.loads(Path(path).read_text())
    return [from_row(row) for row in rows]


def load_store(profile: str) -> list[Claim]:
    """All claims saved for ``profile`` (default-parameter runs), sorted by chapter file."""
    out: list[Claim] = []
    folder = store_dir(profile)
    if folder.is_dir():
        for f in sorted(folder.glob("*.json")):
            out.extend(load_file(f))
    return out


def scorecard(profile: str) -> tuple[pd.DataFrame, list[str]]:
    """Every stored claim of every registered chapter (book order), and the chapters with none stored."""
    claims, missing = scorecard_claims(profile)
    return to_frame(claims), missing


def scorecard_claims(profile: str) -> tuple[list[Claim], list[str]]:
    from . import chapters

    known = {c.id: c for c in chapters.all_chapters()}
    order = {cid: i for i, cid in enumerate(known)}
    claims = [c for c in load_store(profile) if c.chapter in known]
    claims.sort(key=lambda c: order[c.chapter])
    have = {c.chapter for c in claims}
    owners = {e.chapter for e in registry.entries().values()}
    missing = [cid for cid in known if cid in owners and cid not in have]
    return claims, missing
