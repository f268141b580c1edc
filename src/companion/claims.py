"""Claims as data: every chapter records what the paper says and what we got.

A chapter builds a :class:`ChapterClaims` from its settings, calls
:meth:`~ChapterClaims.record` once per claim, and ends with
:meth:`~ChapterClaims.show`, which displays the "paper vs ours" table and saves
the claims as JSON. Two places receive them:

* the claims store ``<cache>/claims/<profile>/<chapter>.json``, for runs with the
  profile's default parameters: the book's scorecard page and
  ``companion scorecard`` read it;
* the file named by ``COMPANION_CLAIMS_FILE`` if set (``companion run`` sets it
  beside the executed notebook), for every run, overrides included.

The table is also embedded in the executed notebook as ``application/json``,
so an executed chapter carries its own claims.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from . import paths

CLAIMS_FILE_ENV = "COMPANION_CLAIMS_FILE"
COLUMNS = ["figure", "claim", "expected", "observed", "criterion", "status", "source"]


@dataclass
class Claim:
    """One checked statement: the paper's value or expected effect beside ours."""

    chapter: str
    paper: str
    figure: str
    id: str
    claim: str
    expected: str
    observed: str
    criterion: str
    passed: bool
    source: str = ""
    profile: str = ""
    overrides: dict = field(default_factory=dict)

    @property
    def status(self) -> str:
        return "pass" if self.passed else "FAIL"


def store_dir(profile: str) -> Path:
    return paths.cache_root() / "claims" / profile


def _paper_of(chapter: str) -> str:
    from . import chapters  # late import: chapters reads notebooks

    try:
        return chapters.get(chapter).paper
    except Exception:
        return ""


def _write_json(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        json.dump(rows, fh, indent=1)
    os.replace(tmp, path)


def to_frame(claims: list[Claim]) -> pd.DataFrame:
    rows = [{**asdict(c), "status": c.status} for c in claims]
    frame = pd.DataFrame(rows, columns=["chapter", "id", *COLUMNS, "passed", "profile"])
    return frame


def render_html(frame: pd.DataFrame, columns: list[str] = COLUMNS) -> str:
    """An HTML table with pass/fail coloured, for notebooks and the book."""

    def colour(v: str) -> str:
        return "color: #1a7f37; font-weight: bold" if v == "pass" else "color: #cf222e; font-weight: bold"

    shown = frame[columns].copy()
    styler = shown.style.hide(axis="index").map(colour, subset=["status"])
    return styler.to_html()


class ChapterClaims:
    """The claims of one chapter run."""

    def __init__(self, settings) -> None:
        self.settings = settings
        self.chapter = settings.chapter
        self.paper = _paper_of(self.chapter)
        self.claims: list[Claim] = []

    def record(
        self,
        *,
        id: str,
        figure: str,
        statement: str,
        expected: Any,
        observed: Any,
        criterion: str,
        passed: bool,
        source: str = "",
    ) -> Claim:
        """Record one claim. ``passed`` must be computed from the numbers."""
        if any(c.id == id for c in self.claims):
            raise ValueError(f"claim id {id!r} recorded twice in chapter {self.chapter!r}")
        claim = Claim(
            chapter=self.chapter,
            paper=self.paper,
            figure=figure,
            id=id,
            claim=statement,
            expected=str(expected),
            observed=str(observed),
            criterion=criterion,
            passed=bool(passed),
            source=source,
            profile=self.settings.profile,
            overrides=dict(self.settings.overrides),
        )
        self.claims.append(claim)
        return claim

    @property
    def frame(self) -> pd.DataFrame:
        return to_frame(self.claims)

    def save(self) -> list[Path]:
        rows = [asdict(c) for c in self.claims]
        written = []
        if not self.settings.overrides:
            path = store_dir(self.settings.profile) / f"{self.chapter}.json"
            _write_json(path, rows)
            written.append(path)
        extra = os.environ.get(CLAIMS_FILE_ENV)
        if extra:
            _write_json(Path(extra), rows)
            written.append(Path(extra))
        return written

    def show(self):
        """Save the claims and display the paper-vs-ours table (the last cell of a chapter)."""
        from IPython.display import display

        self.save()
        frame = self.frame
        passed = int(frame["passed"].sum()) if len(frame) else 0
        summary = f"{passed} of {len(frame)} claims pass (profile: {self.settings.profile})"
        html = f"<p><b>{summary}</b></p>" + render_html(frame)
        bundle = {
            "text/html": html,
            "text/plain": summary + "\n" + frame[COLUMNS].to_string(index=False),
            "application/json": {"claims": [asdict(c) for c in self.claims]},
        }
        display(bundle, raw=True)


def load_store(profile: str) -> list[Claim]:
    """All claims saved for ``profile`` (default-parameter runs), sorted by chapter."""
    out: list[Claim] = []
    folder = store_dir(profile)
    if folder.is_dir():
        for f in sorted(folder.glob("*.json")):
            out.extend(load_file(f))
    return out


def load_file(path: Path) -> list[Claim]:
    rows = json.loads(Path(path).read_text())
    return [Claim(**row) for row in rows]


def scorecard(profile: str) -> tuple[pd.DataFrame, list[str]]:
    """Every stored claim of every registered chapter, and the chapters with none stored."""
    from . import chapters

    claims = load_store(profile)
    known = {c.id: c for c in chapters.all_chapters()}
    order = {cid: i for i, cid in enumerate(known)}
    claims = [c for c in claims if c.chapter in known]
    claims.sort(key=lambda c: order[c.chapter])
    have = {c.chapter for c in claims}
    missing = [cid for cid in known if cid not in have]
    return to_frame(claims), missing


def show_scorecard(profile: str | None = None) -> None:
    """Display the scorecard: a summary per paper, then every claim (the book's scorecard page)."""
    from IPython.display import HTML, display

    from . import chapters, config

    prof = config.active_profile(profile)
    frame, missing = scorecard(prof)
    titles = {c.id: c for c in chapters.all_chapters()}
    parts = [f"<p>Profile of this build: <b>{prof}</b>. "
             f"{int(frame['passed'].sum()) if len(frame) else 0} of {len(frame)} claims pass.</p>"]
    if len(frame):
        frame = frame.assign(paper=[titles[c].paper for c in frame["chapter"]])
        summary = (
            frame.groupby("paper")["passed"].agg(passed="sum", total="count").reset_index()
        )
        parts.append(summary.to_html(index=False))
        for paper, group in frame.groupby("paper", sort=False):
            parts.append(f"<h3>{chapters.PAPERS.get(paper, paper)}</h3>")
            parts.append(render_html(group, ["chapter", *COLUMNS]))
    if missing:
        parts.append("<p>No claims stored yet for: " + ", ".join(missing) + ".</p>")
    display(HTML("\n".join(parts)))
