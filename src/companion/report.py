"""The reproduction report: what each paper found, whether it held, and where the evidence is.

Two views, both generated from the claims store of the build's profile (live) and the recorded
``paper`` runs in ``results/paper/`` (the papers' budget), never from hand-written numbers:

* the report page (the book's root): per paper its main findings in plain words, each with its
  verdict at both budgets, a one-line reason and links to the chapters that decide it; the counts of
  findings per budget; what is not testable here and why; what is still open and what would decide it.
  A Sphinx extension places it where a page has the directive ``{findings-report}``;
* the verdict box at the top of every chapter: :func:`glue_verdict` (called by the chapter's claims
  card when it shows its table) glues :data:`GLUE_KEY`, which the chapter's first cells show with
  ``{glue}``.

A main finding is a sentence of ours summarising a paper's abstract, decided by the registered claims
whose ids match its patterns (:data:`MAIN_FINDINGS`). Its verdict word follows from the verdicts of
those claims (:func:`verdict_word`).
"""

from __future__ import annotations

import fnmatch
import html
import re
from collections import Counter
from dataclasses import dataclass, field

from . import claims as C
from . import plan as plan_mod
from . import sphinxpages, stats

GLUE_KEY = "verdict-box"
#: The generated opening of a chapter's "At the papers' budget" section.
BUDGET_KEY = "paper-budget"
#: a finding not testable only because a precondition it requires is still undecided (claims.waiting)
WAITING = "waiting on an undecided precondition"
STATUS_ORDER = ("pass", "fail", "undecided", WAITING, "not testable", "stale")

#: Short headings for the report page (the full titles are in the sidebar and the sources appendix).
SHORT_TITLES = {"aitken2021": "Aitken et al. (2021): how encoder-decoder networks attend",
                "pandey2022": "Pandey et al. (2022): when attention is interpretable"}

#: Per paper: (plain statement of a main finding, patterns of the claim ids that decide it).
MAIN_FINDINGS: dict[str, list[tuple[str, tuple[str, ...]]]] = {
    "aitken2021": [
        ("On one-to-one translation, attention is set by the time step alone: the temporal components "
         "of encoder and decoder line up on the diagonal and carry most of the alignment.",
         ("fig2/diagonal", "fig2/temporal-*", "fig3/diagonal", "fig3/temporal-*", "fig2/norm-ratio",
          "fig3/norm-ratio")),
        ("The input components carry what to emit: each input word's component points along the readout "
         "of its translation.",
         ("fig2/readout-alignment", "fig3/readout-alignment", "fig5/*-readout-*")),
        ("The more the average attention matrix stands in for each sample's, the more the temporal "
         "components dominate; across tasks the networks lean on temporal or input components as the "
         "task needs.",
         ("fig5/temporal-share-*",
          "fig5/average-attention-*", "fig6/input-temporal-share-*")),
        ("On tasks whose attention leaves the diagonal (eSCAN, English to French), the input components "
         "move the attention onto the right source word.",
         ("fig5/offset-*", "fig6/attention-finds-*", "fig6/input-components-*",
          "fig6/and-suppressed-*", "fig5/escan-temporal-share", "fig5/word-variance-*")),
        ("The decomposition describes the encoder-decoder without attention (VED) less well.",
         ("fig4/*",)),
        ("With learned query, key and value maps, the temporal components align after the key/query "
         "projection and the input components lie along the readouts after the value projection.",
         ("app-learned-attention/*",)),
        ("The networks solve their tasks (accuracy tables and variants).",
         ("tab-accuracy-beyond/*", "app-one-to-one/*")),
    ],
    "pandey2022": [
        ("Attention models can be accurate without being interpretable, and ordinary training produces "
         "such models.",
         ("f-em1/*", "f-em2/*", "f-em3/*", "t-cifar-ent/accurate-not-interpretable",
          "t-cifar-ecml/accurate*", "f-coco/*", "t-coco/*", "t-d1/zeroth-*", "t-d2a/zeroth-*",
          "t-d2b/zeroth-*", "t-layer/zeroth-ftpt", "f-alpha/*")),
        ("Where the attention averages matters: averaging at a later layer makes models more "
         "interpretable (higher FTPT).",
         ("t-d1/*-raises-ftpt", "t-d1/second-ftpt", "t-d2a/first-raises-ftpt", "t-d2b/*-ftpt", "t-layer/d2-*",
          "t-cifar-ent/later-layer-*", "t-cifar-ecml/*-raises-ftpt", "t-cplx/first-raises-ftpt")),
        ("The sizes of the two networks matter: a more powerful classifier, or too weak a focus net, "
         "lowers interpretability.",
         ("t-cplx-d1/*", "t-cplx/ftpt-high")),
        ("Initialisation matters: a focus net that starts near zero, or pre-trained, gives more "
         "interpretable models.",
         ("t-init/*", "t-init-focus/*")),
        ("An entropy penalty on the attention helps in mild doses; too large a weight makes training "
         "fail.",
         ("t-d1/entropy-*", "t-d2a/entropy-*", "t-d2b/entropy-*", "t-cifar-ent/*-entropy-*",
          "t-cifar-ecml/entropy-*", "t-layer/lr-lowers-ftpt")),
        ("Attention that encourages sparsity (sparsemax, spherical softmax) improves interpretability.",
         ("t-a1/*", "t-a2/*", "t-cifar-sparse/*")),
        ("Models pick up the wrong segment early in training, together with the right one.",
         ("f-trend/*",)),
    ],
}


def observations() -> list[tuple[str, str, str, str, tuple[str, ...], tuple[tuple[str, str], ...]]]:
    """What the reproduction observed that the papers do not report: (paper, the observation in plain
    words, the chapter that measures it, the summary table its recorded runs keep, the columns to show,
    and the deviation records shown beside it as (name, label)). The numbers come from the records in
    ``results/paper/``."""
    from .aitken2021.failure import TRAP_TABLE  # late: the paper's library imports torch

    return [
        ("aitken2021",
         "At the authors' training settings some one-to-one AED networks solve the task and then lose it "
         "for good: they end wrong only at the first output word, whose attention sits on the end of the "
         "input. The paper reports no such failures. The table gives the share of networks that end this "
         "way (trapped), with its 95 % Wilson interval, at the authors' settings and with a smaller L2 "
         "weight of ours, and for the trapped networks the error rate at the first and the later output "
         "words and the first step's attention on the input's end of sequence (beside the other networks').",
         "tab-accuracy", TRAP_TABLE,
         ("architecture", "L2", "networks", "never solved", "recovered", "trapped", "trapped share",
          "interval low", "interval high", "first-word error (trapped)", "later-word error (trapped)",
          "EOS attention, first step (trapped)", "EOS attention, first step (others)"),
         (("l2-1e-4", "With L2 1e-4 for every architecture (our deviation, recorded apart)"),)),
    ]


def observations_html(href, names: dict[str, str]) -> str:
    """The section of the report on :func:`observations`, each with its recorded tables and their
    provenance ('not recorded yet' where a record is missing)."""
    from . import records

    e = html.escape
    found = observations()
    if not found:
        return ""
    parts = ["<h2>What the reproduction found that the papers do not report</h2>"]
    for _paper, text, chapter, table, columns, deviations in found:
        parts.append(f"<p>{e(text)} Measured in <a href='{e(href(chapter))}'>{e(names.get(chapter, chapter))}"
                     "</a>.</p>")
        for dev, what in ((None, "At the authors' settings"), *deviations):
            rec = records.load(chapter, "paper", dev)
            kept = (rec or {}).get("tables", {}).get(table)
            if kept is None:
                parts.append(f"<p><i>{e(what)}: not recorded yet.</i></p>")
                continue
            frame = records.kept_frame(kept)
            frame = frame[[c for c in columns if c in frame.columns]]
            parts.append(f"<p><b>{e(what)}</b> <small>({e(records.provenance(rec))}; "
                         f"{e(records.verified_text(rec))})</small></p><div class='companion-wide'>"
                         + frame.to_html(index=False, float_format=lambda x: f"{x:.2f}", na_rep="—")
                         + "</div>")
    return "\n".join(parts)


_TOKEN = r"(?:\b(?:mu|chi)\^[A-Z](?:_[a-z])?(?![A-Za-z])|\bW_[KQV]\b)"
_MATH = re.compile(rf"{_TOKEN}(?:\s*[.·]\s*{_TOKEN})*")
_SEP = re.compile(r"\s*[.·]\s*")


def _tex(seq: str) -> str:
    parts = re.findall(_TOKEN, seq)
    return " \\cdot ".join(("\\" + p) if p.startswith(("mu", "chi")) else p for p in parts)


def prose_html(text: str, table_link: str = "") -> str:
    """Plain registry text as HTML: the ASCII symbols (``mu^E_s . mu^D_t``, ``chi^E``, ``W_K``) as math that
    MathJax renders, and "the table above" (written for the chapter) pointing to that chapter's table."""
    out = html.escape(text)
    out = _MATH.sub(lambda m: f'<span class="math notranslate nohighlight">\\({_tex(m.group(0))}\\)</span>',
                    out)
    if table_link:
        out = out.replace("the table above", f"the table in {table_link}")
    return out


def chapter_name(ch) -> str:
    """The one name of a chapter used everywhere the book lists chapters."""
    return f"{ch.figure}: {ch.title}"


def chapter_link(chapter: str) -> str:
    """A link from one chapter's page to another's, named with the chapter's one name."""
    from . import chapters

    try:
        ch = chapters.get(chapter)
    except Exception:
        return html.escape(chapter)
    return (f"<a href='../{html.escape(ch.path.parent.name)}/{html.escape(ch.path.stem)}.html'>"
            f"{html.escape(chapter_name(ch))}</a>")


def related_chapters(chapter: str) -> list[tuple[str, str]]:
    """(chapter id, why) for the chapters that share this one's trained networks or decide a precondition
    of its findings."""
    from . import config, registry

    out: list[tuple[str, str]] = []
    try:
        groups = config.shared_runs()
    except Exception:
        groups = {}
    group = groups.get(chapter)
    if group:
        out += [(c, f"the same {group}") for c, g in groups.items() if g == group and c != chapter]
    for e in registry.for_chapter(chapter):
        for pre in e.requires:
            owner = registry.get(pre).chapter
            if owner != chapter and all(owner != c for c, _ in out):
                out.append((owner, "a precondition of its findings"))
    return out


def related_html(chapter: str) -> str:
    rel = related_chapters(chapter)
    if not rel:
        return ""
    by: dict[str, list[str]] = {}
    for ch, why in rel:
        by.setdefault(why, []).append(chapter_link(ch))
    return "<p>Related chapters: " + "; ".join(
        f"{html.escape(why)}: {', '.join(links)}" for why, links in by.items()) + ".</p>"


def matches(cid: str, patterns) -> bool:
    return any(fnmatch.fnmatchcase(cid, p) for p in patterns)


def verdict_word(counts: Counter) -> str:
    """A main finding's verdict from the verdicts of its claims."""
    p, f = counts.get("pass", 0), counts.get("fail", 0)
    u = counts.get("undecided", 0) + counts.get(WAITING, 0)  # more seeds can decide both
    if not (p or f or u):
        if counts.get("not testable"):
            return "not testable here"
        return "stale: re-record" if counts.get("stale") else "no runs"
    if p and f:
        return "mixed"
    if f:
        return "does not hold" if not u else "leans against"
    if p:
        return "holds" if not u else "holds in part"
    return "undecided"


WORD_COLOURS = {"holds": C.COLOURS["pass"], "holds in part": C.COLOURS["pass"],
                "does not hold": C.COLOURS["fail"], "leans against": C.COLOURS["fail"],
                "mixed": C.COLOURS["undecided"], "undecided": C.COLOURS["undecided"],
                "not testable here": C.COLOURS["not testable"], "no runs": C.COLOURS["not testable"],
                "stale: re-record": C.COLOURS["not testable"]}


def counts_line(counts: Counter) -> str:
    n = sum(counts.values())
    if not n:
        return "no claims"
    parts = [f"{counts[s]} {s}" for s in STATUS_ORDER if counts.get(s)]
    return ", ".join(parts) + f" (of {n})"


@dataclass
class FindingRow:
    text: str
    ids: list[str]
    chapters: list[str]
    live: Counter = field(default_factory=Counter)
    recorded: Counter = field(default_factory=Counter)
    reason: str = ""


def fail_short(claim: C.Claim) -> str:
    """Why ``claim`` fails, in a table cell's length ("" when it does not fail, or has no explanation)."""
    from . import registry

    e = registry.fail_entry(claim.id) if claim.status == "fail" else None
    return e.fail_short() if e else ""


def _short(text: str, n: int = 90) -> str:
    return text if len(text) <= n else text[: n - 1].rsplit(" ", 1)[0] + "…"


def stale_ids(recorded: list[C.Claim]) -> set[str]:
    """The recorded claims decided under a rule that has changed since (or that left the registry)."""
    from . import registry

    reg = registry.entries()
    return {c.id for c in recorded if c.id not in reg or reg[c.id].digest != c.digest}


def finding_rows(paper: str, live: list[C.Claim], recorded: list[C.Claim],
                 order: list[str], stale: set[str] = frozenset(),
                 labels: dict[str, str] | None = None) -> list[FindingRow]:
    """The paper's main findings with their claims' verdicts at both budgets (findings tier only). A
    recorded claim in ``stale`` counts as "stale": its verdict answered a rule that has changed since.
    With ``labels`` (chapter id -> its figure label, "Figure 2"), each claim named in a row's reason is
    prefixed by its chapter's label, since two chapters can state the same claim of two architectures."""

    def said(c: C.Claim) -> str:
        where = (labels or {}).get(c.chapter, "")
        return f"{where}: {_short(c.claim)}" if where else _short(c.claim)

    live_f = {c.id: c for c in C.findings(live) if c.paper == paper}
    rec_all = {c.id: c for c in C.findings(recorded) if c.paper == paper}
    rec_f = {cid: c for cid, c in rec_all.items() if cid not in stale}
    waits = {"live": C.waiting(live), "rec": C.waiting([c for c in recorded if c.id not in stale])}
    rows = []
    for text, patterns in MAIN_FINDINGS.get(paper, []):
        ids = sorted({cid for cid in (*live_f, *rec_all) if matches(cid, patterns)})
        chs = sorted({cid.split("/", 1)[0] for cid in ids},
                     key=lambda c: order.index(c) if c in order else 999)
        live_st = Counter(WAITING if i in waits["live"] else live_f[i].status for i in ids if i in live_f)
        rec_st = Counter("stale" if i not in rec_f else WAITING if i in waits["rec"] else rec_f[i].status
                         for i in ids if i in rec_all)
        row = FindingRow(text, ids, chs, live_st, rec_st)
        src = rec_f if rec_f.keys() & set(ids) else live_f
        waiting = waits["rec" if src is rec_f else "live"]
        against = [src[i] for i in ids if i in src and src[i].status == "fail"]
        open_ = [src[i] for i in ids if i in src and src[i].status == "undecided"]
        gated = [src[i] for i in ids if i in src and i in waiting]
        budget = "at the papers' budget" if src is rec_f else "in this build"
        if against:
            row.reason = f"Fails {budget}: " + "; ".join(
                said(c) + (f" (why: {why})" if (why := fail_short(c)) else "") for c in against[:2])
        elif open_ or gated:
            quoted = (open_ + gated)[:2]
            row.reason = f"Still open {budget}: " + "; ".join(said(c) for c in quoted)
            if any(c.id in waiting for c in quoted):  # say what the quoted waiting finding waits on
                pool = {c.id: c for c in (recorded if src is rec_f else live)}
                pre = {p.id: p for c in quoted if c.id in waiting for p in C.undecided_preconditions(c, pool)}
                row.reason += (" (waits on the networks solving the task, still undecided: "
                               + "; ".join(_short(p.claim, 70) for p in pre.values()) + ")")
        elif any(src[i].status == "pass" for i in ids if i in src):
            row.reason = f"Every decided claim passes {budget}."
        rows.append(row)
    return rows


def _verdict_html(counts: Counter) -> str:
    word = verdict_word(counts)
    return (f"<span class='cr-verdict' style='color:{WORD_COLOURS[word]}'>{html.escape(word)}</span>"
            f"<br><span class='cr-counts'>{html.escape(counts_line(counts))}</span>")


STYLE = """<style>
.companion-report table{width:100%;border-collapse:collapse;font-size:0.88rem}
.companion-report th,.companion-report td{border-bottom:1px solid #d0d7de;padding:0.35rem 0.4rem;
  vertical-align:top;text-align:left}
.companion-report .cr-verdict{font-weight:700}
.companion-report .cr-counts{font-size:0.78rem;color:#57606a}
.companion-report .cr-reason{font-size:0.8rem;color:#57606a;display:block;margin-top:0.2rem}
.companion-report .cr-headline{font-size:1rem;margin:0.3rem 0 0.8rem 0}
@media (max-width: 600px){
  .companion-report thead{display:none}
  .companion-report tr{display:block;border-bottom:2px solid #d0d7de;padding:0.3rem 0}
  .companion-report td{display:block;border:none;padding:0.15rem 0}
  .companion-report td[data-label]::before{content:attr(data-label) ": ";font-weight:600}
}
.companion-verdict{border:1px solid #d0d7de;border-left:4px solid #0969da;border-radius:6px;
  padding:0.5rem 0.8rem;margin:0.5rem 0 1rem 0;font-size:0.9rem;background:#f6f8fa}
.companion-verdict table{width:100%;border-collapse:collapse;font-size:0.85rem}
.companion-verdict th,.companion-verdict td{border-bottom:1px solid #d0d7de;padding:0.25rem 0.35rem;
  vertical-align:top;text-align:left}
@media (max-width: 600px){
  .companion-verdict thead{display:none}
  .companion-verdict tr{display:block;border-bottom:2px solid #d0d7de;padding:0.25rem 0}
  .companion-verdict td{display:block;border:none;padding:0.1rem 0}
  .companion-verdict td[data-label]::before{content:attr(data-label) ": ";font-weight:600}
}
</style>"""


def render_report(live_profile: str, live: list[C.Claim], recorded: list[C.Claim], href,
                  names: dict[str, str], order: list[str], papers: dict[str, str],
                  plan: list[dict] | None = None,
                  not_testable: list[tuple[str, str, str]] = (), stale: set[str] = frozenset(),
                  observations: str = "", labels: dict[str, str] | None = None,
                  close: list[dict] = ()) -> str:
    """The report page's HTML. ``href(chapter_id)`` gives a chapter's link, ``names`` its one name,
    ``labels`` its figure label (which prefixes the claims a finding's reason quotes);
    ``stale``: recorded claims whose rule changed since their run (counted apart, never as verdicts);
    ``observations``: the section of :func:`observations_html`; ``close``: the recorded verdicts that
    would not stand at the level split over two looks (:func:`companion.plan.close_calls`)."""
    e = html.escape

    def rec_text(claims: list[C.Claim]) -> str:
        current = [c for c in claims if c.id not in stale]
        old = len(C.findings([c for c in claims if c.id in stale]))
        return C.counts_text(current) + (f"; {old} more recorded under rules revised since (stale: re-record)"
                                         if old else "")

    live_col = f"live: {live_profile} budget" if live_profile != "paper" else "live: papers' budget"
    parts = [STYLE, "<div class='companion-report'>"]
    both = (f"<b>Findings at the papers' budget (recorded):</b> {e(rec_text(recorded))}. "
            if live_profile != "paper" else "")
    parts.append(f"<p class='cr-headline'>{both}<b>In this build ({e(live_col)}):</b> "
                 f"{e(C.counts_text(live))}. Preconditions (the networks solve the task) gate the findings "
                 f"and are not counted.</p>")
    for paper, title in papers.items():
        rows = finding_rows(paper, live, recorded, order, stale, labels)
        if not rows:
            continue
        rec_p = [c for c in recorded if c.paper == paper]
        live_p = [c for c in live if c.paper == paper]
        parts.append(f"<h2>{e(SHORT_TITLES.get(paper, title))}</h2>")
        chapters_p = {c.chapter for c in rec_p}
        near = [r for r in close if r["id"].split("/", 1)[0] in chapters_p]
        near_text = ""
        if near:
            one = len(near) == 1
            what = "is a close call: it" if one else "are close calls: they"
            near_text = (f" {len(near)} of the recorded verdicts {what} came at a seed count chosen after "
                         "an earlier record and would not stand with the level split over the two looks "
                         "(listed on the claims and criteria page).")
        parts.append(f"<p>Papers' budget: {e(rec_text(rec_p))}. {e(live_col)}: "
                     f"{e(C.counts_text(live_p))}.{e(near_text)}</p>")
        parts.append("<table><thead><tr><th>What the paper found</th><th>recorded: papers' budget</th>"
                     f"<th>{e(live_col)}</th><th>decided in</th></tr></thead><tbody>")
        for r in rows:
            links = ", ".join(f"<a href='{e(href(ch))}'>{e(names.get(ch, ch))}</a>" for ch in r.chapters)
            parts.append(
                f"<tr><td>{e(r.text)}<span class='cr-reason'>{prose_html(r.reason)}</span></td>"
                f"<td data-label=\"recorded: papers' budget\">{_verdict_html(r.recorded)}</td>"
                f"<td data-label='{e(live_col)}'>{_verdict_html(r.live)}</td>"
                f"<td data-label='decided in'>{links or '—'}</td></tr>")
        parts.append("</tbody></table>")
    if observations:
        parts.append(observations)
    if not_testable:
        parts.append("<h2>Not testable here</h2><p>Claims whose test our data or setup cannot make, "
                     "set before the runs:</p><ul>")
        for cid, statement, why in not_testable:
            ch = cid.split("/", 1)[0]
            parts.append(f"<li><a href='{e(href(ch))}'>{e(names.get(ch, ch))}</a>: {prose_html(statement)}. "
                         f"<i>Why:</i> {e(why)}</li>")
        parts.append("</ul>")
    if plan:
        parts.append("<h2>Still open, and what would decide it</h2><table><thead><tr><th>claim</th>"
                     "<th>verdict</th><th>leans</th><th>what would decide it</th></tr></thead><tbody>")
        for p in plan:
            ch = p.get("chapter", "")
            decide = [plan_mod.to_decide(p)]
            if p.get("method"):
                decide.append(str(p["method"]))
            parts.append(
                f"<tr><td><a href='{e(href(ch))}'>{e(names.get(ch, ch))}</a>: "
                f"{prose_html(_statement(p['id']))}</td>"
                f"<td data-label='verdict'>{e(str(p.get('status', '')))}</td>"
                f"<td data-label='leans'>{e(str(p.get('leans', '')))}</td>"
                f"<td data-label='what would decide it'>{e('; '.join(decide) or '—')}</td></tr>")
        parts.append("</tbody></table>")
    parts.append("</div>")
    return "\n".join(parts)


def _statement(cid: str) -> str:
    from . import registry

    try:
        return registry.get(cid).statement
    except Exception:
        return cid


def not_testable_rows() -> list[tuple[str, str, str]]:
    """(claim id, statement, why) for every finding set not testable here before the run."""
    from . import registry

    return [(e.id, e.statement, e.not_testable) for e in registry.entries().values()
            if e.not_testable and e.tier == "finding"]


def plan_for(claims: list[C.Claim]) -> list[dict]:
    """What would decide each undecided finding, and each one that waits on an undecided precondition
    (:func:`companion.plan.plan_rows`)."""
    return [r for r in plan_mod.plan_rows(claims)
            if (r["status"] == "undecided" or r.get("waits_on")) and not r["stale"]]


# --------------------------------------------------------------------------------------------
# The verdict box at the top of a chapter


def verdict_box_html(chapter: str, live: list[C.Claim], profile: str, recorded: list[C.Claim] | None = None,
                     cuts: list[str] | None = None) -> str:
    """What the paper says, what we found at each budget, why the budgets differ, where the table is."""
    e = html.escape
    if recorded is None:
        from . import records

        rec = records.load(chapter, "paper")
        recorded = records.recorded_claims(rec) if rec else []
    old = stale_ids(recorded)  # decided under a rule that has changed since: shown as stale, not as a verdict
    rec = {c.id: c for c in recorded}
    close = {r["id"]: r for r in plan_mod.close_calls("paper", chapter=chapter)}
    found = C.findings(live)
    pre = [c for c in live if c.tier != "finding"]
    live_col = f"live: {profile} budget"
    rows = []
    for c in found:
        r = rec.get(c.id)
        near = close.get(c.id)
        near_note = (f"<br><small>close call: {e(near['at_level'])} at {e(stats.level_text(near['level']))}"
                     " per look (the seed count was chosen after an earlier record)</small>" if near else "")
        rec_cell = ("—" if not r or profile == "paper" else "stale: re-record" if r.id in old
                    else f"<b style='color:{C.COLOURS[r.status]}'>{e(r.status)}</b>"
                    + (f"<br><small>why: {prose_html(why)}</small>" if (why := fail_short(r)) else "")
                    + near_note)
        rows.append(
            f"<tr><td>{prose_html(c.claim)}<br><small>paper: {prose_html(c.expected)}</small></td>"
            f"<td data-label='{e(live_col)}'><b style='color:{C.COLOURS[c.status]}'>{e(c.status)}</b>"
            f"<br><small>{prose_html(_short(c.observed, 70))}</small>"
            + (f"<br><small>why: {prose_html(why)}</small>" if (why := fail_short(c)) else "") + "</td>"
            + (f"<td data-label=\"recorded: papers' budget\">{rec_cell}</td>" if profile != "paper" else "")
            + "</tr>")
    head = (f"<tr><th>what the paper says</th><th>{e(live_col)}</th>"
            + ("<th>recorded: papers' budget</th>" if profile != "paper" else "") + "</tr>")
    lines = [f"<div class='companion-verdict'><p><b>Verdict.</b> In this run ({e(live_col)}): "
             f"{e(C.counts_text(live))}."]
    if recorded and profile != "paper":
        current = [c for c in recorded if c.id not in old]
        n_old = len(C.findings([c for c in recorded if c.id in old]))
        more = f"; {n_old} more recorded under rules revised since (stale: re-record)" if n_old else ""
        lines.append(f" At the papers' budget (recorded): {e(C.counts_text(current))}{more}.")
    lines.append("</p>")
    if found:
        lines.append(f"<table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>")
    differ = [c for c in found if c.id in rec and c.id not in old and rec[c.id].status != c.status]
    if differ and profile != "paper":
        why = (f" The papers' budget differs from this run in: {e(budget_words(cuts))}." if cuts else "")
        lines.append(f"<p>{len(differ)} of {len(found)} findings change verdict between the budgets."
                     f"{why} The section on the papers' budget below says which cut explains it.</p>")
    if pre:
        lines.append("<p>Preconditions (not counted): " + "; ".join(
            f"{prose_html(_short(c.claim, 70))} <b style='color:{C.COLOURS[c.status]}'>{e(c.status)}</b>"
            for c in pre) + ".</p>")
    lines.append(related_html(chapter))
    lines.append("<p>Details, rules and intervals: the claims table at the end of this chapter, and the "
                 "scorecard.</p></div>")
    return STYLE + "".join(lines)


#: Parameters whose name is not a word a reader knows.
PARAMETER_WORDS = {"compress_lr": "faster learning-rate decay for a short run",
                   "max_images": "images analysed",
                   "ved_steps": "VED training steps", "ved_seeds": "VED networks",
                   "variant_seeds": "networks per variant", "n_analysis": "analysis sequences"}
ONOFF = {"True": "on", "False": "off", "None": "default"}


def parameter_word(name: str) -> str:
    """A parameter's name in words: "ved_seeds" -> "VED networks", "n_seeds" -> "seeds"."""
    return PARAMETER_WORDS.get(name, name.removeprefix("n_").replace("_", " "))


def budget_words(cuts: list[str]) -> str:
    """``["n_seeds 2→10", "epochs 3→2500"]`` (live → recorded) in words: "seeds (2 here, 10 recorded), …"."""
    out = []
    for cut in cuts:
        name, _, change = cut.partition(" ")
        old, arrow, new = change.partition("→")
        words = parameter_word(name)
        old, new = (ONOFF.get(v.strip(), v.strip()) for v in (old, new))
        out.append(f"{words} ({old} here, {new} recorded)" if arrow else cut.replace("_", " "))
    return "; ".join(out)


def glue_verdict(chapter: str, live: list[C.Claim], profile: str, live_params: dict | None = None) -> None:
    """Glue the chapter's verdict box (:data:`GLUE_KEY`) for the ``{glue}`` cell at its top."""
    from IPython.display import HTML

    from . import records

    rec = records.load(chapter, "paper")
    recorded = records.recorded_claims(rec) if rec else []
    cuts = records.budget_differences(chapter, live_params or {}, rec.get("parameters", {})) if rec else []
    box = verdict_box_html(chapter, live, profile, recorded, cuts)
    budget = paper_budget_html(live, profile, recorded, cuts, records.provenance(rec) if rec else "")
    try:
        from myst_nb import glue
    except ImportError:  # outside the book's environment: nothing to glue into
        return
    glue(GLUE_KEY, HTML(box), display=False)
    glue(BUDGET_KEY, HTML(budget), display=False)


def paper_budget_html(live: list[C.Claim], profile: str, recorded: list[C.Claim], cuts: list[str],
                      provenance: str = "") -> str:
    """The recorded run at the papers' budget against this run: its provenance, how the budgets differ,
    its counts, and every finding whose verdict changes, with the recorded estimate."""
    e = html.escape
    if profile == "paper":
        return "<p>This build runs at the papers' budget: the verdicts in this chapter are live.</p>"
    if not recorded:
        return "<p><i>No run of this chapter is recorded at the papers' budget yet.</i></p>"
    now = {c.id: c for c in live}
    found = C.findings(recorded)
    out = [f"<p>The recorded run ({e(provenance)}): {e(C.counts_text(recorded))}; this run "
           f"(live: {e(profile)} budget): {e(C.counts_text(live))}."]
    if cuts:
        out.append(f" The papers' budget differs from this run in: {e(budget_words(cuts))}.")
    out.append("</p>")
    changed = [(now[c.id], c) for c in found if c.id in now and now[c.id].status != c.status]
    if changed:
        out.append("<p>Findings whose verdict changes between the budgets:</p><ul>")
        for a, b in changed:
            out.append(f"<li>{prose_html(a.claim)}: <b style='color:{C.COLOURS[a.status]}'>{e(a.status)}</b> "
                       f"live, <b style='color:{C.COLOURS[b.status]}'>{e(b.status)}</b> recorded "
                       f"(recorded: {prose_html(b.observed)}).</li>")
        out.append("</ul>")
    else:
        out.append("<p>No finding changes verdict between the two budgets.</p>")
    return STYLE + "<div class='companion-budget'>" + "".join(out) + "</div>"


# --------------------------------------------------------------------------------------------
# Sphinx glue: the {findings-report} directive, filled when its page is written

try:
    from docutils import nodes
    from docutils.parsers.rst import Directive
except ImportError:  # pragma: no cover
    nodes = None
    Directive = object

if nodes is not None:

    class findings_report(nodes.General, nodes.Element):  # noqa: N801
        """Placeholder, replaced by the report's HTML when the page is written."""

    class FindingsReportDirective(Directive):
        has_content = False

        def run(self):
            sphinxpages.remember(self.state.document.settings.env, "companion_report_docs")
            return [findings_report()]


def page_html(href, profile: str | None = None) -> str:
    """The whole report for ``profile`` (default: the build's), with ``href(chapter_id)`` for links."""
    from . import chapters, config, records

    prof = profile or config.active_profile(None)
    live, _ = C.scorecard_claims(prof)
    recorded = records.all_recorded_claims("paper")
    chs = chapters.all_chapters()
    names = {c.id: chapter_name(c) for c in chs}
    return render_report(prof, live, recorded, href, names, [c.id for c in chs], chapters.PAPERS,
                         plan=plan_for(live), not_testable=not_testable_rows(), stale=stale_ids(recorded),
                         observations=observations_html(href, names), labels={c.id: c.figure for c in chs},
                         close=plan_mod.close_calls("paper"))


def _fill(app, doctree, docname) -> None:
    placeholders = list(doctree.findall(findings_report))
    if not placeholders:
        return
    if app.builder.format != "html":
        for node in placeholders:
            node.replace_self([])
        return
    from . import chapters

    docs = {c.id: f"notebooks/{c.path.parent.name}/{c.path.stem}" for c in chapters.all_chapters()}
    markup = page_html(lambda ch: app.builder.get_relative_uri(docname, docs[ch]) if ch in docs else "#")
    for node in placeholders:
        node.replace_self(nodes.raw("", markup, format="html"))


def _alt_text(app, doctree, docname) -> None:
    """Give every image a description instead of its file path: the figure's caption where there is one,
    else the chapter's title and the section the image sits in."""
    title = next(iter(doctree.findall(nodes.title)), None)
    page = title.astext() if title is not None else docname
    for i, img in enumerate(doctree.findall(nodes.image), 1):
        alt = (img.get("alt") or "").strip()
        if alt and " " in alt and "/" not in alt:
            continue
        caption = None
        if isinstance(img.parent, nodes.figure):
            caption = next(iter(img.parent.findall(nodes.caption)), None)
        if caption is not None:
            img["alt"] = caption.astext()
            continue
        section = img.parent
        while section is not None and not isinstance(section, nodes.section):
            section = section.parent
        head = section[0].astext() if section is not None and len(section) else ""
        img["alt"] = f"Figure {i} of “{page}”" + (f", section “{head}”" if head and head != page else "")


def setup(app):
    # Math written by the generated pages (scorecard, criteria, verdict boxes) is typeset on every page.
    app.set_html_assets_policy("always")
    app.connect("doctree-resolved", _alt_text)
    app.add_node(findings_report)
    app.add_directive("findings-report", FindingsReportDirective)
    app.connect("doctree-resolved", _fill)
    sphinxpages.reread_always(app, "companion_report_docs")
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
