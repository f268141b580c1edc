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

import dataclasses
import html
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


def short_label(c: C.Claim, n: int = 48) -> str:
    """A forest-plot row's label: the claim's statement, cut at a word to ``n`` characters."""
    text = c.claim.replace("mu^E_s . mu^D_t", "μᴱ·μᴰ").replace("chi^E", "χᴱ")
    return text if len(text) <= n else text[: n - 1].rsplit(" ", 1)[0] + "…"


def forest(claims: list[C.Claim], title: str = "", clip: float = 4.0, recorded: list[C.Claim] | None = None,
           live_label: str = "live", names: dict[str, str] | None = None):
    """One row per claim with an estimate, grouped by chapter; returns the figure.

    ``recorded`` adds the papers'-budget estimate of the same claim (hollow square), scaled with the live
    row's band, so the two budgets sit on one row."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    rec = {c.id: c for c in recorded or []}
    rows = [(c, s) for c in claims if (s := _scaled(c)) is not None]
    height = 0.3 * (len(rows) + 2 * len({c.chapter for c, _ in rows})) + 1.6
    fig, ax = plt.subplots(figsize=(10.0, max(2.6, height)), layout="constrained")
    y, labels, ticks, last = 0, [], [], None
    for c, (est, lo, hi, paper, band) in rows:
        if c.chapter != last:
            y += 1
            ax.text(-clip, -y, (names or {}).get(c.chapter, c.chapter), fontsize=8, fontweight="bold",
                    va="center")
            y += 1
            last = c.chapter
        yy = -y
        blo, bhi = max(band[0], -clip), min(band[1], clip)
        ax.fill_between([blo, bhi], yy - 0.35, yy + 0.35, color="#dddddd", lw=0)
        colour = C.COLOURS[c.status]
        ax.plot([max(lo, -clip), min(hi, clip)], [yy, yy], color=colour, lw=2)
        ax.plot([max(min(est, clip), -clip)], [yy], "o", color=colour, ms=4)
        r = rec.get(c.id)
        if r is not None and r.estimate is not None:
            sr = _scaled(dataclasses.replace(c, estimate=r.estimate, lo=r.lo, hi=r.hi))
            if sr is not None:
                ax.plot([max(min(sr[0], clip), -clip)], [yy + 0.22], "s", color=C.COLOURS[r.status], ms=4,
                        mfc="white")
        if paper is not None and abs(paper) <= clip:
            ax.plot([paper], [yy], "D", color="black", ms=4, mfc="white")
        ax.text(clip * 1.02, yy, f"{c.estimate:.3g}", fontsize=7, va="center")
        labels.append(short_label(c))
        ticks.append(yy)
        y += 1
    ax.set_yticks(ticks, labels, fontsize=7)
    ax.set_xlim(-clip, clip * 1.15)
    ax.set_ylim(-y - 0.5, 0)
    ax.axvline(0, color="#888888", lw=0.6)
    ax.set_xlabel("estimate and 95% interval, in units of the claim's band (grey: what the rule accepts); "
                  "right: our estimate in the claim's units")
    ax.grid(axis="y", visible=False)
    handles = [Line2D([], [], color=C.COLOURS[s], marker="o", lw=2, ms=4, label=f"{live_label}: {s}")
               for s in ("pass", "fail", "undecided", "not testable")]
    if rec:
        handles.append(Line2D([], [], color="#444444", marker="s", mfc="white", lw=0, ms=4,
                              label="recorded, papers' budget (colour: its verdict)"))
    handles += [Line2D([], [], color="black", marker="D", mfc="white", lw=0, ms=4, label="the paper's value"),
                Patch(color="#dddddd", label="what the rule accepts")]
    ax.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=4, fontsize=7,
              frameon=False)
    if title:
        ax.set_title(title, loc="left", pad=40)
    return fig


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


def _verdict_cell(status: str, why: str = "") -> str:
    """A verdict, coloured; ``why``: the short reason a fail fails (:meth:`registry.Entry.fail_short`)."""
    from . import report

    word = status.split(" ")[0] if status else ""
    colour = C.COLOURS.get(word) or C.COLOURS.get(status.split(" (")[0], "#000")
    return f"<b style='color:{colour}'>{html.escape(status)}</b>" + (
        f"<br><small>why: {report.prose_html(why)}</small>" if why else "")


def _fail_why(cid: str, status: str) -> str:
    from . import registry

    e = registry.fail_entry(cid) if status.startswith("fail") else None
    return e.fail_short() if e else ""


def claims_table(group: list[C.Claim], prof: str, names: dict[str, str], links: dict[str, str]) -> str:
    """The claims as an HTML table: verdicts next to the statement (they stay on screen on a phone),
    then the paper's value, our observation and the rule in words."""
    from . import plan, report

    live_col = f"live: {prof} budget"
    decide = {r["id"]: plan.to_decide(r) for r in plan.plan_rows(group)}
    head = ["chapter", "claim", live_col] + (["recorded: papers' budget"] if prof != "paper" else []) + [
        "paper", "observed", "rule", "to decide"]
    rows = []
    for c in group:
        link = f"<a href='{links[c.chapter]}'>{html.escape(names.get(c.chapter, c.chapter))}</a>" \
            if c.chapter in links else html.escape(names.get(c.chapter, c.chapter))
        cells = [link, report.prose_html(c.claim, link), _verdict_cell(c.status, _fail_why(c.id, c.status))]
        if prof != "paper":
            rec = recorded_status(c.chapter, c.id)
            cells.append(_verdict_cell(rec, _fail_why(c.id, rec)))
        cells += [report.prose_html(c.expected, link), report.prose_html(c.observed, link),
                  html.escape(c.criterion), html.escape(decide.get(c.id, ""))]
        rows.append("<tr>" + "".join(f"<td data-label=\"{html.escape(h)}\">{v}</td>"
                                     for h, v in zip(head, cells)) + "</tr>")
    return ("<div class='companion-wide'><table class='companion-claims companion-scorecard'><thead><tr>"
            + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr></thead><tbody>"
            + "".join(rows) + "</tbody></table></div>")


def show(profile: str | None = None) -> None:
    """Render the scorecard page: contents, counts per budget, then per paper the forest plot and the
    findings, and the preconditions apart."""
    from IPython.display import HTML, display

    from . import config, report

    prof = config.active_profile(profile)
    live_col = f"live: {prof} budget"
    claims, missing = C.scorecard_claims(prof)
    from . import records

    rec = records.all_recorded_claims() if prof != "paper" else []
    names = {c.id: report.chapter_name(c) for c in chapters.all_chapters()}
    links = {c.id: f"notebooks/{c.path.parent.name}/{c.path.stem}.html" for c in chapters.all_chapters()}
    toc = "".join(f"<li><a href='#sc-{p}'>{html.escape(t)}</a></li>" for p, t in chapters.PAPERS.items())
    display(HTML("<nav class='companion-contents'><b>On this page</b><ul>"
                 "<li><a href='#sc-counts'>Counts per budget</a></li>" + toc
                 + "<li><a href='#sc-preconditions'>Preconditions (not counted)</a></li></ul></nav>"))
    head = f"<p id='sc-counts'>Findings, {live_col} (this build): <b>{C.counts_text(claims)}</b>."
    if rec:
        head += f" Findings, recorded at the papers' budget: <b>{C.counts_text(rec)}</b>."
    display(HTML(head + " Preconditions gate findings and are listed apart at the end.</p>"))
    if not claims:
        display(HTML("<p>No claims stored yet: build the book or run the chapters.</p>"))
        return
    found, pre = C.findings(claims), [c for c in claims if c.tier != "finding"]
    per_paper = summary_frame(found, "paper")
    per_paper.columns = pd.MultiIndex.from_product([[live_col], per_paper.columns])
    if rec:
        recorded = summary_frame(C.findings(rec), "paper")
        recorded.columns = pd.MultiIndex.from_product([["recorded: papers' budget"], recorded.columns])
        per_paper = per_paper.join(recorded, how="outer").fillna(0).astype(int)
    per_paper = per_paper.rename(index=lambda p: chapters.PAPERS.get(p, p))
    display(HTML("<div class='companion-wide'>" + per_paper.to_html() + "</div>"))
    from . import records

    for paper, title in chapters.PAPERS.items():
        group = [c for c in found if c.paper == paper]
        if not group:
            continue
        display(HTML(f"<h2 id='sc-{paper}'>{html.escape(title)}</h2><p>Findings, {live_col}: "
                     f"{C.counts_text(group)}.</p>"))
        per_chapter = summary_frame(group, "chapter")
        if rec:
            per_chapter["recorded: papers' budget"] = [
                C.counts_text(records.recorded_claims(r)) + (" — stale" if records.stale_ids(r) else "")
                if (r := records.load(ch, "paper")) else "—" for ch in per_chapter.index]
        per_chapter = per_chapter.rename(index=lambda ch: names.get(ch, ch))
        display(HTML("<div class='companion-wide'>" + per_chapter.to_html() + "</div>"))
        fig = forest(group, title=f"{title.split(',')[0]}: estimates against the papers' values",
                     recorded=rec, live_label=live_col, names=names)
        plt.show()
        plt.close(fig)
        display(HTML(claims_table(group, prof, names, links)))
    display(HTML("<h2 id='sc-preconditions'>Preconditions (not counted)</h2><p>The networks solve the "
                 "task: a finding that rests on a precondition that does not pass is not testable here.</p>"
                 + (claims_table(pre, prof, names, links) if pre else "<p>None in this build.</p>")))
    if missing:
        display(HTML("<p>No claims stored yet for: " + ", ".join(names.get(m, m) for m in missing) + ".</p>"))


def show_criteria() -> None:
    """The "Claims and criteria" appendix: every registered claim, its rule, its source, its revisions."""
    from html import escape

    from IPython.display import HTML, display

    from . import registry, report

    reg = registry.entries()
    names = {c.id: report.chapter_name(c) for c in chapters.all_chapters()}
    nav = ["<nav class='companion-contents'><b>On this page</b><ul>"]
    for paper, title in chapters.PAPERS.items():
        chs = [c.id for c in chapters.all_chapters() if c.paper == paper and registry.for_chapter(c.id)]
        nav.append(f"<li><a href='#cr-{paper}'>{escape(title)}</a><ul>"
                   + "".join(f"<li><a href='#cr-{ch}'>{escape(names[ch])}</a></li>" for ch in chs)
                   + "</ul></li>")
    display(HTML("".join(nav) + "</ul></nav>"))
    order = {c.id: i for i, c in enumerate(chapters.all_chapters())}
    for paper, title in chapters.PAPERS.items():
        group = sorted((e for e in reg.values() if e.paper == paper),
                       key=lambda e: (order.get(e.chapter, 999), e.id))
        parts = [f"<h2 id='cr-{paper}'>{escape(title)}</h2><p>{len(group)} claims.</p>"]
        last = None
        for e in group:
            if e.chapter != last:
                parts.append(f"<h3 id='cr-{e.chapter}'>{escape(names.get(e.chapter, e.chapter))}</h3>")
                last = e.chapter
            revs = "".join(f"<li>revised {escape(str(r['date']))}: {escape(str(r['why']))}</li>"
                           for r in e.revisions)
            extra = f"<li><b>Not testable here:</b> {escape(e.not_testable)}</li>" if e.not_testable else ""
            if e.if_fails:
                extra += f"<li><b>Where it fails:</b> {escape(e.fail_text())}</li>"
            parts.append(
                f"<div class='companion-criterion'><p><code>{escape(e.id)}</code> ({escape(e.figure)}): "
                f"{report.prose_html(e.statement)} <i>({escape(e.tier)})</i></p><ul>"
                f"<li><b>Paper:</b> {report.prose_html(e.expected_text())} {escape(e.source)}</li>"
                f"<li><b>Statistic:</b> {report.prose_html(e.statistic)}</li>"
                f"<li><b>Rule:</b> {escape(e.rule_text())}</li>"
                f"<li><b>Written:</b> {escape(e.added)}</li>{revs}{extra}</ul></div>")
        display(HTML("\n".join(parts)))


def show_close_calls(profile: str = "paper") -> None:
    """The criteria page's list of verdicts that rest on the plain level after an earlier look: decided
    findings of records run at a seed count raised above the profile's (chosen from an earlier
    record), whose verdict would not stand with the level split over the two looks
    (:func:`companion.plan.close_calls`)."""
    from html import escape

    from IPython.display import HTML, display

    from . import plan, report, stats

    rows = plan.close_calls(profile)
    if not rows:
        display(HTML("<p>No recorded verdict is in that position.</p>"))
        return
    level, base = stats.level_text(rows[0]["level"]), stats.level_text(stats.LEVEL)
    names = {c.id: report.chapter_name(c) for c in chapters.all_chapters()}

    def seeds(r):  # n_seeds 36 -> "36 seeds"
        return ", ".join(f"{v} {report.parameter_word(k)}" for k, v in r["seeds"].items())

    body = "".join(
        f"<tr><td><a href='#cr-{escape(r['chapter'])}'>{escape(names.get(r['chapter'], r['chapter']))}"
        f"</a></td><td>{report.prose_html(r['statement'])}</td><td>{escape(seeds(r))}</td>"
        f"<td>{escape(r['status'])}: {escape(r['observed'])}</td><td>{escape(r['at_level'])}</td></tr>"
        for r in rows)
    display(HTML(f"<p>{len(rows)} recorded verdicts would not stand at {level} per look:</p>"
                 "<div class='companion-wide'><table class='companion-scorecard'><thead><tr>"
                 "<th>chapter</th><th>finding</th><th>seeds (raised)</th>"
                 f"<th>recorded at {base}</th><th>at {level}</th></tr></thead><tbody>{body}</tbody>"
                 "</table></div>"))
