"""A chapter's card: decide its registered claims, save them, show them beside the recorded run.

A chapter builds a :class:`ChapterCard` from its settings, calls
:meth:`~ChapterCard.check` once per claim with the observed data (one value
per seed, two paired samples, or a count), and ends with
:meth:`~ChapterCard.show`, which saves the verdicts to the claims store
(:mod:`companion.claims`) and displays them, live, beside the recorded
``paper`` run from the record store (:mod:`companion.records`).
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

import pandas as pd

from . import claims as C
from . import plan, registry, report, stats


def _paper_of(chapter: str) -> str:
    from . import chapters  # late import: chapters reads notebooks

    try:
        return chapters.get(chapter).paper
    except Exception:
        return ""


class ChapterCard:
    """The claims of one chapter run."""

    def __init__(self, settings) -> None:
        self.settings = settings
        self.chapter = settings.chapter
        self.paper = _paper_of(self.chapter)
        self.claims: list[C.Claim] = []
        self.links: list[registry.Entry] = []
        self.tables: dict[str, dict] = {}
        self.gates: dict[str, str] = {}
        self._shown = False

    def table(self, frame: pd.DataFrame, name: str = "ours beside the authors",
              listed: bool = True) -> pd.DataFrame:
        """Keep a chapter's summary table (ours beside the authors', row for row) for the recorded run.

        A recorded ``paper`` run stores these small tables with its claims, so the rows that only the
        ``paper`` profile runs appear in the book beside the live table. ``listed=False``: data the
        chapter draws from the record (e.g. training curves), not listed with its tables. Returns
        ``frame`` (display it)."""
        flat = frame.reset_index() if not isinstance(frame.index, pd.RangeIndex) else frame
        flat = flat.copy()
        flat.columns = [" / ".join(map(str, c)) if isinstance(c, tuple) else str(c) for c in flat.columns]
        self.tables[name] = json.loads(flat.to_json(orient="split", index=False, default_handler=str))
        if not listed:
            self.tables[name]["listed"] = False
        if self._shown:  # a table computed after the verdicts (a section of our own): keep it too
            self.save()
        return frame

    def check(self, cid: str, *, values=None, a=None, b=None, successes=None, trials=None,
              note: str = "") -> C.Claim:
        """Decide the registered claim ``cid`` from the observed data and record it.

        ``values``: one number per seed; ``a``/``b``: two samples (paired over seeds unless the rule
        says otherwise); ``successes``/``trials``: counts. ``note`` adds context to the observed column
        (e.g. the budget the runs had).
        """
        entry = registry.get(cid)
        if entry.chapter != self.chapter:
            raise ValueError(f"claim {cid!r} is owned by chapter {entry.chapter!r}; "
                             f"link to it with see({cid!r}) instead")
        if any(c.id == cid for c in self.claims):
            raise ValueError(f"claim id {cid!r} checked twice in chapter {self.chapter!r}")
        v = registry.decide(entry, values=values, a=a, b=b, successes=successes, trials=trials)
        status = v.status
        observed = self._observed_text(entry, v)
        notes = [n for n in (v.detail, note) if n]
        waived = bool(entry.testable_with) and bool(self.settings.get(entry.testable_with))
        if entry.not_testable and not waived:
            notes.append(f"rule alone would say {status}")
            status = "not testable"
            notes.append(f"not testable here: {entry.not_testable}")
        elif entry.requires:
            failed = self._failed_preconditions(entry)
            if failed:
                notes.append(f"rule alone would say {status}")
                status = "not testable"
                notes.append(C.PRECONDITION_NOT_MET + ", ".join(failed))
        target = entry.target()
        ref = entry.paper_value().get("value")
        revised = "; ".join(f"revised {r['date']}: {r['why']}" for r in entry.revisions)
        claim = C.Claim(
            chapter=self.chapter, paper=self.paper or entry.paper, figure=entry.figure, id=cid,
            claim=entry.statement, expected=entry.expected_text(),
            observed=observed + (f" — {'; '.join(notes)}" if notes else ""),
            criterion=entry.rule_text(), status=status, source=entry.source,
            profile=self.settings.profile, overrides=dict(self.settings.overrides),
            estimate=C._finite(v.estimate), lo=C._finite(v.lo), hi=C._finite(v.hi), n=int(v.n),
            test=entry.test,
            target_lo=C._finite(target[0]) if target else None,
            target_hi=C._finite(target[1]) if target else None,
            reference=C._finite(ref) if ref is not None else None, revised=revised, note="; ".join(notes),
            digest=entry.digest, tier=entry.tier,
        )
        self.claims.append(claim)
        return claim

    def _failed_preconditions(self, entry: registry.Entry) -> list[str]:
        """The preconditions of ``entry`` that did not pass. A precondition of this chapter must be
        checked before the findings that rest on it; one owned by another chapter is taken from
        :meth:`gate` when this chapter decided it on its own data, otherwise read from the claims store
        of this profile (missing there: treated as not met)."""
        out = []
        here = {c.id: c for c in self.claims}
        for pre in entry.requires:
            owner = registry.get(pre).chapter
            if owner == self.chapter:
                if pre not in here:
                    raise ValueError(f"{entry.id} requires {pre}: check the precondition first")
                ok = here[pre].status == "pass"
            elif pre in self.gates:
                ok = self.gates[pre] == "pass"
            else:
                stored = {c.id: c for c in C.load_store(self.settings.profile) if c.chapter == owner}
                ok = pre in stored and stored[pre].status == "pass"
            if not ok:
                out.append(pre)
        return out

    @staticmethod
    def _observed_text(entry: registry.Entry, v: registry.Verdict) -> str:
        if v.n == 0 or v.estimate is None or not math.isfinite(v.estimate):
            return "no data"
        t = entry.test
        iv = (f"[{stats.fmt(v.lo)}, {stats.fmt(v.hi)}]" if math.isfinite(v.lo) and math.isfinite(v.hi)
              else "[—]")
        if t.startswith("rate_") and "successes" in v.extra and isinstance(v.extra["successes"], int):
            return f"{v.extra['successes']}/{v.n} = {stats.fmt(v.estimate)} {iv} (Wilson)"
        if t in ("rate_higher", "rate_lower"):
            (k1, k2), (n1, n2) = v.extra["successes"], v.extra["trials"]
            return f"{k1}/{n1} vs {k2}/{n2}: difference {stats.fmt(v.estimate)} {iv} (Newcombe)"
        what = "difference" if t in ("greater", "less") else "mean"
        return f"{what} {stats.fmt(v.estimate)} {iv} ({v.method}, n={v.n})"

    def gate(self, cid: str, *, values=None, a=None, b=None, successes=None, trials=None) -> str:
        """Decide another chapter's precondition ``cid`` on this chapter's own data, to gate findings here.

        The data must be what the owner decides it on (the same cached networks), so the verdict is the
        owner's; deciding it here means a finding never waits for, or depends on the order of, the
        chapter that owns its precondition. Shown as a link (:meth:`see`), not counted here. Returns
        the status."""
        if registry.get(cid).tier != "precondition":
            raise ValueError(f"{cid!r} is a {registry.get(cid).tier}; only preconditions gate")
        entry = self.see(cid)
        v = registry.decide(entry, values=values, a=a, b=b, successes=successes, trials=trials)
        self.gates[cid] = v.status
        return v.status

    def see(self, cid: str) -> registry.Entry:
        """Point to a claim another chapter owns (the same runs): shown, not counted here."""
        entry = registry.get(cid)
        if entry.chapter == self.chapter:
            raise ValueError(f"claim {cid!r} belongs to this chapter: use check()")
        self.links.append(entry)
        return entry

    @property
    def frame(self) -> pd.DataFrame:
        return C.to_frame(self.claims)

    def save(self) -> list[Path]:
        rows = [c.as_row() for c in self.claims]
        written = []
        if not self.settings.overrides:
            path = C.store_dir(self.settings.profile) / f"{self.chapter}.json"
            C._write_json(path, rows)
            written.append(path)
        extra = os.environ.get(C.CLAIMS_FILE_ENV)
        if extra:
            C._write_json(Path(extra), rows)
            written.append(Path(extra))
            if self.tables:
                tables = C.tables_file(Path(extra))
                tables.write_text(json.dumps(self.tables, indent=1))
                written.append(tables)
        return written

    def show(self):
        """Save the verdicts and display the paper-vs-ours table (the last cell of a chapter)."""
        from IPython.display import display

        missing = [e.id for e in registry.for_chapter(self.chapter)
                   if e.id not in {c.id for c in self.claims}]
        if missing:
            raise RuntimeError(f"chapter {self.chapter} did not check its registered claims: "
                               f"{', '.join(missing)}")
        self.save()
        self._shown = True
        # the verdict box at the top of the chapter (a glued copy of the verdicts)
        report.glue_verdict(self.chapter, self.claims, self.settings.profile, self.settings.as_dict())
        frame = self.frame
        summary = (f"{C.counts_text(self.claims)} — profile {self.settings.profile} "
                   "(live: computed in this run)")
        shown = frame.copy()
        for col in ("claim", "expected", "observed"):  # the papers' symbols as math, not ASCII
            shown[col] = shown[col].map(lambda v: report.prose_html(v) if isinstance(v, str) else v)
        columns = list(C.COLUMNS)
        decide = {r["id"]: plan.to_decide(r) for r in plan.plan_rows(self.claims)}
        if any(decide.values()):  # undecided findings: which way they lean and what would decide them
            shown["to decide"] = [decide.get(cid, "") for cid in shown["id"]]
            columns.append("to decide")
        if any(c.status == "fail" for c in self.claims):  # every fail says why, briefly (in full below)
            shown["why it fails"] = [report.fail_short(c) for c in self.claims]
            columns.append("why it fails")
        html = f"<p><b>{summary}</b></p>" + C.render_html(shown, columns)
        html += recorded_html(self.chapter, self.settings.profile, live=self.claims,
                              live_params=self.settings.as_dict())
        html += fails_html(self.chapter, self.claims)
        if any(c.revised for c in self.claims):
            html += "<p><b>Revised criteria.</b></p><ul>" + "".join(
                f"<li><code>{c.id}</code>: {c.revised}</li>" for c in self.claims if c.revised) + "</ul>"
        if self.links:
            html += "<p>Decided in another chapter:</p><ul>" + "".join(
                f"<li>{report.prose_html(e.statement)} — see {report.chapter_link(e.chapter)}</li>"
                for e in self.links) + "</ul>"
        bundle = {
            "text/html": html,
            "text/plain": summary + "\n"
            + frame[["id", "expected", "observed", "status"]].to_string(index=False),
            "application/json": {"claims": [c.as_row() for c in self.claims]},
        }
        display(bundle, raw=True)


def fails_html(chapter: str, live: list[C.Claim]) -> str:
    """Why each claim of the chapter that fails (in this run or in its recorded ``paper`` run, a stale
    row included while its rule is registered) fails: the explanation in full, with its evidence."""
    from . import records

    rec = records.load(chapter, "paper")
    runs = [("this run", live), ("the recorded run at the papers' budget",
                                   records.recorded_claims(rec) if rec else [])]
    where: dict[str, list[str]] = {}
    for label, group in runs:
        for c in group:
            if c.status == "fail":
                where.setdefault(c.id, []).append(label)
    if not where:
        return ""
    items = []
    for cid, labels in where.items():
        e = registry.fail_entry(cid)
        text = (re.sub(r"`([^`]+)`", r"<code>\1</code>", report.prose_html(e.fail_text())) if e else
                "<i>no explanation registered yet</i>" if cid in registry.entries() else
                "<i>no longer registered (a stale recorded row)</i>")
        claim = registry.entries()[cid].statement if cid in registry.entries() else cid
        items.append(f"<li>{report.prose_html(claim)} (fails in {' and in '.join(labels)}). {text}</li>")
    return "<p><b>Why the fails fail.</b></p><ul>" + "".join(items) + "</ul>"


def recorded_frame(chapter: str, name: str, profile: str = "paper",
                   deviation: str | None = None) -> pd.DataFrame | None:
    """The table ``name`` a recorded run of ``chapter`` kept (:meth:`ChapterCard.table`), or None."""
    from . import records

    rec = records.load(chapter, profile, deviation)
    kept = (rec or {}).get("tables", {}).get(name)
    return None if kept is None else records.kept_frame(kept)


def recorded_table(chapter: str, name: str, title: str, profile: str = "paper", deviation: str | None = None,
                   make: str = ""):
    """A summary table that a recorded run kept (:meth:`ChapterCard.table` ``name``), shown in full with
    where it came from; without that record, one line saying how to make it (``make``: the ``-p``
    settings of the command). For a section whose numbers only the recorded budget produces."""
    from html import escape

    from IPython.display import HTML

    from . import records

    rec = records.load(chapter, profile, deviation)
    table = (rec or {}).get("tables", {}).get(name)
    if table is None:
        cmd = " ".join(x for x in (f"companion record {chapter} --profile {profile}", make,
                                    f"--deviation {deviation}" if deviation else "") if x)
        return HTML(f"<p><b>{escape(title, quote=False)}</b>: not recorded yet; "
                    f"<code>{escape(cmd, quote=False)}</code> makes it.</p>")
    frame = records.kept_frame(table)
    return HTML(f"<p><b>{escape(title, quote=False)}</b> — not live: "
                f"{escape(records.provenance(rec), quote=False)}; "
                f"{escape(records.verified_text(rec), quote=False)}.</p><div class='companion-wide'>"
                + frame.to_html(index=False, float_format=lambda x: f"{x:.3g}", na_rep="—") + "</div>")


def recorded_tables_html(rec: dict) -> str:
    """The summary tables of a recorded run, folded (the live tables are above, in the chapter)."""
    from html import escape

    out = ""
    for name, t in (rec.get("tables") or {}).items():
        if t.get("listed") is False:  # data a chapter draws, not a table to read
            continue
        frame = pd.DataFrame(t["data"], columns=t["columns"])
        out += (f"<details><summary>Recorded <code>{escape(rec['profile'])}</code> table: {escape(name)} "
                f"({len(frame)} rows)</summary><div class='companion-wide'>"
                + frame.to_html(index=False, float_format=lambda x: f"{x:.4g}", na_rep="—")
                + "</div></details>")
    return out


def recorded_html(chapter: str, live_profile: str, profile: str = "paper", live: list[C.Claim] | None = None,
                  live_params: dict | None = None) -> str:
    """The recorded ``paper`` verdicts of a chapter beside the live ones, with their provenance.

    Where a live verdict differs from the recorded one, the budgets that differ between the two runs
    are listed under the table: those are the candidates that explain the difference (the chapter's
    text says which one does)."""
    from html import escape

    from . import records

    if live_profile == profile:
        return ""
    rec = records.load(chapter, profile)
    if rec is None:
        return (f"<p><i>No recorded <code>{profile}</code> run of this chapter yet: "
                f"<code>companion record {chapter} --profile {profile}</code> makes one.</i></p>")
    old = records.recorded_claims(rec)
    stale = set(records.stale_ids(rec))
    rows = "".join(
        f"<tr><td><code>{escape(c.id)}</code></td><td>{escape(c.observed)}</td>"
        f"<td><span style='color: {C.COLOURS[c.status]}; font-weight: bold'>{c.status}"
        f"{' (stale: rule changed since)' if c.id in stale else ''}</span>"
        + (f"<br><small>{report.prose_html(why)}</small>" if (why := report.fail_short(c)) else "")
        + "</td></tr>" for c in old)
    missing = [cid for cid in stale if cid not in {c.id for c in old}]
    extra = (f"<p>Not in the record (registered after it was made): {', '.join(missing)}.</p>"
             if missing else "")
    now = {c.id: c for c in live or []}
    differ = [(now[c.id], c) for c in old
              if c.id in now and now[c.id].status != c.status and c.id not in stale]
    if differ:
        cuts = records.budget_differences(chapter, live_params or {}, rec.get("parameters", {}))
        extra += ("<p><b>Verdicts that differ between the two budgets:</b> "
                  + "; ".join(f"<code>{escape(a.id)}</code> {a.status} live, {b.status} recorded"
                              for a, b in differ)
                  + ". The runs differ in " + (escape(", ".join(cuts)) if cuts else "no budget parameter")
                  + " (live → recorded).</p>")
    return (f"<p><b>Recorded <code>{profile}</code> budget</b> — not live: "
            f"{escape(records.provenance(rec))}. "
            f"{C.counts_text(old)}.</p>"
            f"<table class='companion-claims'><thead><tr><th>claim</th>"
            f"<th>observed ({escape(records.label(rec))})"
            f"</th><th>status</th></tr></thead><tbody>{rows}</tbody></table>{extra}"
            + recorded_tables_html(rec))
