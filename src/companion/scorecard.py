"""The scorecard page: counts per paper and chapter, a forest plot of every quantitative claim, the table.

The forest plot follows the meta-analysis convention: one row per claim, our
estimate with its 95 % interval, the paper's value (a diamond) and the band the
rule accepts (shaded). Claims have their own units (accuracy, FTPT in %, ratios,
differences), so each row is scaled to its own band: the x axis runs in units
of the band's half-width around its centre (for one-sided rules and
differences, around the threshold or 0), and the band is [-1, 1] (or a
half-line). The number printed at the right is the estimate in its own units.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import pandas as pd

from . import chapters, plotting  # noqa: F401  (plotting sets the theme)
from . import claims as C


def _scaled(c: C.Claim) -> tuple[float, float, float, float | None, tuple[float, float]] | None:
    """(estimate, lo, hi, paper, band) on the row's own scale, or None when there is nothing to draw."""
    if c.estimate is None:
        return None
    lo = c.lo if c.lo is not None else -math.inf
    hi = c.hi if c.hi is not None else math.inf
    if c.test == "matches" and c.target_lo is not None and c.target_hi is not None:
        centre, half = (c.target_lo + c.target_hi) / 2, (c.target_hi - c.target_lo) / 2
        band = (-1.0, 1.0)
        paper = 0.0
    elif c.target_lo is not None or c.target_hi is not None:  # one-sided: threshold at 0
        thr = c.target_lo if c.target_lo is not None else c.target_hi
        centre = thr
        half = max(abs(c.estimate - thr), (hi - lo) / 2 if math.isfinite(hi - lo) else 0, abs(thr) * 0.05,
                   1e-3)
        band = (0.0, math.inf) if c.target_lo is not None else (-math.inf, 0.0)
        paper = (c.reference - centre) / half if c.reference is not None else None
    else:  # a difference: 0 is no effect; the paper's direction is the band
        centre = 0.0
        half = max(abs(c.estimate), (hi - lo) / 2 if math.isfinite(hi - lo) else 0, 1e-6)
        band = (0.0, math.inf) if c.test in ("greater", "rate_higher") else (-math.inf, 0.0)
        paper = None
    half = half or 1.0
    return (c.estimate - centre) / half, (lo - centre) / half, (hi - centre) / half, paper, band


def forest(claims: list[C.Claim], title: str = "", clip: float = 4.0):
    """One row per claim with an estimate, grouped by chapter; returns the figure."""
    rows = [(c, s) for c in claims if (s := _scaled(c)) is not None]
    height = 0.28 * (len(rows) + 2 * len({c.chapter for c, _ in rows})) + 1.0
    fig, ax = plt.subplots(figsize=(9.0, max(2.0, height)), layout="constrained")
    y, labels, ticks, last = 0, [], [], None
    for c, (est, lo, hi, paper, band) in rows:
        if c.chapter != last:
            y += 1
            ax.text(-clip, -y, c.chapter, fontsize=8, fontweight="bold", va="center")
            y += 1
            last = c.chapter
        yy = -y
        blo, bhi = max(band[0], -clip), min(band[1], clip)
        ax.fill_between([blo, bhi], yy - 0.35, yy + 0.35, color="#dddddd", lw=0)
        colour = C.COLOURS[c.status]
        ax.plot([max(lo, -clip), min(hi, clip)], [yy, yy], color=colour, lw=2)
        ax.plot([max(min(est, clip), -clip)], [yy], "o", color=colour, ms=4)
        if paper is not None and abs(paper) <= clip:
            ax.plot([paper], [yy], "D", color="black", ms=4, mfc="white")
        ax.text(clip * 1.02, yy, f"{c.estimate:.3g}", fontsize=7, va="center")
        labels.append(c.id.split("/", 1)[1])
        ticks.append(yy)
        y += 1
    ax.set_yticks(ticks, labels, fontsize=7)
    ax.set_xlim(-clip, clip * 1.15)
    ax.set_ylim(-y - 0.5, 0)
    ax.axvline(0, color="#888888", lw=0.6)
    ax.set_xlabel("our estimate and 95% interval, in units of the claim's band (grey: what the rule accepts)")
    ax.grid(axis="y", visible=False)
    if title:
        ax.set_title(title, loc="left")
    return fig


def recorded_claims(profile: str = "paper") -> list[C.Claim]:
    """Every claim of every recorded run of ``profile`` (results/<profile>/*.json)."""
    from . import records

    out: list[C.Claim] = []
    for ch in chapters.all_chapters():
        rec = records.load(ch.id, profile)
        if rec is not None:
            out.extend(records.recorded_claims(rec))
    return out


def recorded_status(chapter: str, cid: str, profile: str = "paper") -> str:
    """A claim's verdict in the chapter's recorded run: 'pass', 'fail (stale)', or '—' when none."""
    from . import records

    rec = records.load(chapter, profile)
    if rec is None:
        return "—"
    row = next((r for r in rec.get("claims", []) if r["id"] == cid), None)
    if row is None:
        return "— (not in the record)"
    return row["status"] + (" (stale)" if cid in records.stale_ids(rec) else "")


def summary_frame(claims: list[C.Claim], by: str) -> pd.DataFrame:
    rows = {}
    for c in claims:
        key = getattr(c, by)
        rows.setdefault(key, {s: 0 for s in C.STATUSES})[c.status] += 1
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=list(C.STATUSES))
    frame["total"] = frame.sum(axis=1)
    return frame


def show(profile: str | None = None) -> None:
    """Render the scorecard page: summary, forest plots, then the table per paper."""
    from IPython.display import HTML, display

    from . import config

    prof = config.active_profile(profile)
    claims, missing = C.scorecard_claims(prof)
    display(HTML(f"<p>Profile of this build: <b>{prof}</b>. {C.counts_text(claims)}.</p>"))
    if not claims:
        display(HTML("<p>No claims stored yet: build the book or run the chapters.</p>"))
        return
    per_paper = summary_frame(claims, "paper")
    per_paper.columns = pd.MultiIndex.from_product([[f"{prof} (live)"], per_paper.columns])
    if prof != "paper":
        rec = recorded_claims()
        if rec:
            recorded = summary_frame(rec, "paper")
            recorded.columns = pd.MultiIndex.from_product([["paper (recorded)"], recorded.columns])
            per_paper = per_paper.join(recorded, how="outer").fillna(0).astype(int)
    per_paper = per_paper.rename(index=lambda p: chapters.PAPERS.get(p, p))
    display(HTML("<div class='companion-wide'>" + per_paper.to_html() + "</div>"))
    for paper, title in chapters.PAPERS.items():
        group = [c for c in claims if c.paper == paper]
        if not group:
            continue
        display(HTML(f"<h2>{title}</h2><p>{C.counts_text(group)}.</p>"))
        per_chapter = summary_frame(group, "chapter")
        if prof != "paper":
            from . import records

            per_chapter["paper (recorded)"] = [
                (records.label(r) + ": " + C.counts_text(records.recorded_claims(r))
                 + (" — stale" if records.stale_ids(r) else "")) if (r := records.load(ch, "paper")) else "—"
                for ch in per_chapter.index]
        display(HTML("<div class='companion-wide'>" + per_chapter.to_html() + "</div>"))
        fig = forest(group, title=f"{paper}: estimates against the papers' values")
        plt.show()
        plt.close(fig)
        frame = C.to_frame(group)
        shown = ["chapter", "claim", "expected", "observed", "status"]
        if prof != "paper":
            frame["paper (recorded)"] = [recorded_status(c.chapter, c.id) for c in group]
            shown.append("paper (recorded)")
        display(HTML("<div class='companion-wide'>" + C.render_html(frame, shown) + "</div>"))
    if missing:
        display(HTML("<p>No claims stored yet for: " + ", ".join(missing) + ".</p>"))


def show_criteria() -> None:
    """The "Claims and criteria" appendix: every registered claim, its rule, its source, its revisions."""
    from html import escape

    from IPython.display import HTML, display

    from . import registry

    reg = registry.entries()
    order = {c.id: i for i, c in enumerate(chapters.all_chapters())}
    for paper, title in chapters.PAPERS.items():
        group = sorted((e for e in reg.values() if e.paper == paper),
                       key=lambda e: (order.get(e.chapter, 999), e.id))
        parts = [f"<h2>{escape(title)}</h2><p>{len(group)} claims.</p>"]
        last = None
        for e in group:
            if e.chapter != last:
                parts.append(f"<h3>{escape(e.chapter)}</h3>")
                last = e.chapter
            revs = "".join(f"<li>revised {escape(str(r['date']))}: {escape(str(r['why']))}</li>"
                           for r in e.revisions)
            extra = f"<li><b>Not testable here:</b> {escape(e.not_testable)}</li>" if e.not_testable else ""
            parts.append(
                f"<div class='companion-criterion'><p><code>{escape(e.id)}</code> ({escape(e.figure)}): "
                f"{escape(e.statement)}</p><ul>"
                f"<li><b>Paper:</b> {escape(e.expected_text())} {escape(e.source)}</li>"
                f"<li><b>Statistic:</b> {escape(e.statistic)}</li>"
                f"<li><b>Rule:</b> {escape(e.rule_text())}</li>"
                f"<li><b>Written:</b> {escape(e.added)}</li>{revs}{extra}</ul></div>")
        display(HTML("\n".join(parts)))
