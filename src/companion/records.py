"""Recorded runs: a chapter's verdicts under a profile, with their provenance, kept in the repository.

A ``paper`` run takes hours; a reader should not have to spend them to see its
result. ``companion record CHAPTER --profile paper`` executes the chapter and
writes ``results/<profile>/<chapter>.json``: the claims, the parameters it ran
with, the code commit, the date, the wall time and the machine. When fewer
seeds (or other smaller settings) than the profile's defaults were run, the
record says so under ``partial``. No weights and no executed notebook go into
the repository: a record is small and text.

This module is the record store: it reads and writes ``results/``, says which
recorded claims are *stale* (their rule changed in the registry since the record
was made), how two runs' budgets differ, and what the ``paper`` budget costs. It
runs nothing: making a record and verifying one is :mod:`companion.recording`.
Chapters show a record beside the live result (:meth:`companion.card.ChapterCard.show`).
"""

from __future__ import annotations

import json
import math
import os
import platform
import re
import resource
import subprocess
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import claims as C
from . import config, paths, registry

#: Relative tolerance for an estimate to count as reproduced by ``verify``.
VERIFY_RTOL = 1e-3
VERIFY_ATOL = 1e-6


def results_dir(profile: str) -> Path:
    return paths.repo_root() / "results" / profile


#: A deviation's name: lower-case words joined by hyphens, e.g. ``l2-1e-4``.
DEVIATION_NAME = re.compile(r"[a-z0-9][a-z0-9.-]*")


def check_deviation(name: str) -> str:
    """``name`` if it can name a deviation record, else a one-line ConfigError."""
    if not DEVIATION_NAME.fullmatch(name or ""):
        raise config.ConfigError(f"a deviation name is lower-case letters, digits, dots and hyphens "
                                 f"(e.g. l2-1e-4), got {name!r}")
    return name


def record_path(chapter: str, profile: str = "paper", deviation: str | None = None) -> Path:
    """``results/<profile>/<chapter>.json``; a deviation (a run with settings of ours in place of the
    authors', ``companion record --deviation NAME``) in ``results/<profile>/deviations/``, where the
    scorecard and every count of recorded verdicts do not look."""
    if deviation is not None:
        return results_dir(profile) / "deviations" / f"{chapter}.{check_deviation(deviation)}.json"
    return results_dir(profile) / f"{chapter}.json"


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=paths.repo_root(), capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def commit() -> str:
    """HEAD's hash, with ``+dirty`` when the library or the chapters have uncommitted changes."""
    head = _git("rev-parse", "HEAD") or "unknown"
    dirty = _git("status", "--porcelain", "--", "src", "notebooks", "_config.yml")
    return head + ("+dirty" if dirty else "")


def machine() -> str:
    import torch

    cpu = platform.processor() or platform.machine()
    dev = "cuda " + torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
    return f"{platform.system()} {cpu}, {os.cpu_count()} cores, torch {torch.__version__} ({dev})"


def _is_budget(name: str) -> bool:
    """Parameters that size the work (seeds, steps, epochs), not ones that pick a seed or a setting."""
    if name in ("n_words",):  # a task setting, not an amount of work
        return False
    return name.startswith("n_") or any(w in name for w in ("seeds", "steps", "epochs"))


def partial(chapter: str, profile: str, params: dict[str, Any]) -> dict[str, dict]:
    """Parameters set below the profile's default (fewer seeds, steps, epochs): what was cut."""
    out = {}
    for name, p in config.schema(chapter).items():
        if name not in params or name == "profile":
            continue
        full = p.default_for(profile)
        ran = params[name]
        if isinstance(full, (int, float)) and not isinstance(full, bool) and isinstance(ran, (int, float)) \
                and ran < full and _is_budget(name):
            out[name] = {"ran": ran, "profile": full}
        elif p.items is not None and isinstance(full, str) and isinstance(ran, str):
            # a list parameter (layers, entropy weights, widths) run with only some of its rows
            want, got = _items(full), _items(ran)
            # A named grid ('paper': the authors' entropy weights) run as an explicit list is treated as cut.
            if set(got) < set(want) or (want == ["paper"] and got != want):
                out[name] = {"ran": ran, "profile": full}
        elif p.choices is not None and full == "all" and ran != full:
            # a choice between some rows and all of them (t-init's rows): fewer rows ran
            out[name] = {"ran": ran, "profile": full}
    return out


def _items(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def budget_differences(chapter: str, live: dict[str, Any], recorded: dict[str, Any]) -> list[str]:
    """The work-sizing parameters (seeds, steps, epochs, sizes, list rows) that differ between two runs."""
    out = []
    for name, p in config.schema(chapter).items():
        a, b = live.get(name), recorded.get(name)
        if a == b or name in ("profile", "seed", "member", "example"):
            continue
        if _is_budget(name) or p.items is not None or name in ("width", "max_images", "compress_lr"):
            out.append(f"{name} {a}→{b}")
    return out


def label(rec: dict) -> str:
    cut = rec.get("partial") or {}
    if not cut:
        return rec["profile"]
    parts = ", ".join(f"{k} {v['ran']} of {v['profile']}" for k, v in cut.items())
    return f"{rec['profile']} (partial: {parts})"


def _write(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        json.dump(data, fh, indent=1, allow_nan=True)
        fh.write("\n")
    os.replace(tmp, path)


def mark_verified(chapter: str, profile: str, agree: bool, differences: list[str], wall_s: float,
                  deviation: str | None = None) -> Path:
    """Stamp a record with its latest verification: a re-run on a second process
    (``companion verify``), at which commit, when, and whether it agreed.

    Only the ``verified`` key changes; the recorded verdicts stay as they were."""
    path = record_path(chapter, profile, deviation)
    rec = load(chapter, profile, deviation)
    if rec is None:
        raise config.ConfigError(f"no record for {chapter!r} under {profile!r} ({path})")
    rec["verified"] = {"date": datetime.now(UTC).isoformat(timespec="seconds"), "commit": commit(),
                       "agree": bool(agree), "differences": list(differences), "wall_s": round(wall_s, 1)}
    _write(path, rec)
    return path


def verified_text(rec: dict) -> str:
    """One phrase: whether and how the record was verified."""
    v = rec.get("verified")
    if not v:
        return "not verified"
    when = f"{v['date'][:10]} at commit {v['commit'][:10]}"
    if v["agree"]:
        return f"verified {when}: the re-run agrees"
    return f"re-run {when} differs ({len(v['differences'])} differences)"


def cpu_seconds() -> float:
    """CPU time (user + system) of this process and of every child it has reaped: the kernels, and the
    worker processes with the kernels they reaped. Unlike wall time it does not grow when other work
    shares the cores, so it is what the record's training costs one core."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def load(chapter: str, profile: str = "paper", deviation: str | None = None) -> dict | None:
    path = record_path(chapter, profile, deviation)
    if not path.is_file():
        return None
    return json.loads(path.read_text())


def all_recorded_claims(profile: str = "paper") -> list[C.Claim]:
    """Every claim of every recorded run of ``profile`` (results/<profile>/*.json), in book order."""
    from . import chapters

    out: list[C.Claim] = []
    for ch in chapters.all_chapters():
        rec = load(ch.id, profile)
        if rec is not None:
            out.extend(recorded_claims(rec))
    return out


def kept_frame(kept: dict):
    """A table a record kept (``{"columns", "data"}``) as a DataFrame; JSON's nulls become NaN in
    every column that holds no text, so that they print as missing, not as the word None."""
    import pandas as pd

    frame = pd.DataFrame(kept["data"], columns=kept["columns"])
    for col in frame.columns:
        values = frame[col].dropna()
        if frame[col].dtype == object and all(isinstance(v, (int, float)) for v in values):
            frame[col] = pd.to_numeric(frame[col].astype(float))
    return frame


def recorded_claims(rec: dict) -> list[C.Claim]:
    return [C.from_row(r) for r in rec.get("claims", [])]


def stale_ids(rec: dict) -> list[str]:
    """Claims whose registry entry changed (or vanished) since the record was made, plus new claims."""
    reg = registry.entries()
    have = {r["id"]: r.get("digest", "") for r in rec.get("claims", [])}
    out = [cid for cid, d in have.items() if cid not in reg or reg[cid].digest != d]
    out += [e.id for e in registry.for_chapter(rec["chapter"]) if e.id not in have]
    return out


def provenance(rec: dict) -> str:
    commit_short = rec["commit"][:10] + ("+dirty" if rec["commit"].endswith("+dirty") else "")
    where = f" on {rec['workers']} processes" if rec.get("workers") else ""
    if rec.get("cpu_s") is not None:  # records since 2026-12-02
        where += f" ({rec['cpu_s'] / 60:.1f} CPU-min)"
    elif rec.get("workers"):
        where += f" ({rec['core_s'] / 60:.1f} core-min)"
    staged = rec.get("staged")
    if staged:  # a staged record: its looks, and where it stopped
        where += (f", staged: looks at n_seeds {', '.join(map(str, staged['looks']))} (each at level "
                  f"{staged['level']:.4g}), stopped at {staged['stopped_at']}")
    pre = rec.get("pretrained")
    if pre:  # the record itself only analysed networks trained beforehand: say what those cost
        runs = pre["runs"]
        cpu = sum(r.get("cpu_s") or r["wall_s"] for r in runs)
        unit = ("CPU-min" if all(r.get("cpu_s") is not None for r in runs)
                else "min, wall time where no CPU time was kept")
        where += f", after {len(runs)} training runs beforehand ({cpu / 60:.0f} {unit})"
    if rec.get("deviation"):  # our settings in place of the authors': say which
        changed = ", ".join(f"{k} {v}" for k, v in (rec.get("overrides") or {}).items())
        where += f"; a deviation from the authors' settings ({changed})"
    return (f"recorded {rec['date'][:10]} at commit {commit_short}, {label(rec)}, "
            f"wall time {rec['wall_s'] / 60:.1f} min{where} on {rec['machine']}")


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if math.isinf(a) or math.isinf(b):
        return a == b
    return math.isclose(a, b, rel_tol=VERIFY_RTOL, abs_tol=VERIFY_ATOL)


def compare(old: list[C.Claim], new: list[C.Claim]) -> list[str]:
    """Differences between two sets of verdicts, one line each (empty: they agree)."""
    a, b = {c.id: c for c in old}, {c.id: c for c in new}
    out = [f"{cid}: only in the record" for cid in a.keys() - b.keys()]
    out += [f"{cid}: only in the new run" for cid in b.keys() - a.keys()]
    for cid in sorted(a.keys() & b.keys()):
        x, y = a[cid], b[cid]
        if x.status != y.status:
            out.append(f"{cid}: verdict {x.status} -> {y.status}")
        for f in ("estimate", "lo", "hi"):
            if not _close(getattr(x, f), getattr(y, f)):
                out.append(f"{cid}: {f} {getattr(x, f)} -> {getattr(y, f)}")
    return out


# ---- cost of the papers' budgets ------------------------------------------------------------------

COST_FILE = "cost.json"


#: Parameter prefixes that size a separate set of networks (fig5: eSCAN and English-French ensembles).
_FAMILIES = ("escan", "enfr", "ved")


def budget_ratio(chapter: str, to: str = "paper", base: str = "quick") -> tuple[float, float, list[str]]:
    """How much more work ``to`` asks than ``base``, as a range.

    Each budget parameter (seeds, steps, epochs, training-set size, the number of items in list
    parameters such as layers or entropy weights) that differs gives a factor. Factors of one family
    of networks (the chapter's main runs, or the ``escan_*`` / ``enfr_*`` / ``ved_*`` ones) multiply:
    more seeds of longer runs. Families are separate parts of the chapter, so the chapter grows by at
    most the largest family's product (the upper end) and at least by about the largest single factor
    (the lower end, reached when that factor's part dominates). Epoch caps count in full, so chapters
    that stop early cost less. Returns (lower, upper, the factors)."""
    lower, family, factors = 1.0, {}, []
    for name, p in config.schema(chapter).items():
        a, b = p.default_for(base), p.default_for(to)
        if a == b or "analysis" in name or name == "n_test":  # evaluation sizes: cheap next to training
            continue
        if _is_budget(name) and isinstance(a, (int, float)) and isinstance(b, (int, float)) and a > 0:
            r = float(b) / float(a)
        elif p.items is not None and isinstance(a, str) and isinstance(b, str) and "paper" not in (a, b):
            r = len(b.split(",")) / max(1, len(a.split(",")))
        else:
            continue
        if r > 1.0:
            fam = next((f for f in _FAMILIES if name.startswith(f + "_")), "main")
            steps = name if any(w in name for w in ("steps", "epochs")) else None
            parts = family.setdefault(fam, {"seeds": 1.0, "steps": 1.0})
            if steps:  # escan_steps_aed / _ao train different networks: the longer one bounds the family
                parts["steps"] = max(parts["steps"], r)
            else:
                parts["seeds"] *= r
            lower = max(lower, r)
            factors.append(f"{name} {a}→{b}")
    upper = max([v["seeds"] * v["steps"] for v in family.values()] + [1.0])
    return lower, max(upper, lower), factors


def estimate_costs(quick_seconds: dict[str, float], workers: int = 2) -> dict:
    """Extrapolated ``paper`` cost per chapter (seconds on one core) from measured ``quick`` times."""
    rows = {}
    for ch, sec in sorted(quick_seconds.items()):
        try:
            lo, hi, factors = budget_ratio(ch)
        except config.ConfigError:
            continue
        rows[ch] = {"quick_s": round(sec, 1), "factors": factors,
                    "paper_s_low": round(sec * lo, 1), "paper_s_high": round(sec * hi, 1)}
    low = sum(r["paper_s_low"] for r in rows.values()) / 3600
    high = sum(r["paper_s_high"] for r in rows.values()) / 3600
    longest = (max((r["paper_s_low"] for r in rows.values()), default=0) / 3600,
               max((r["paper_s_high"] for r in rows.values()), default=0) / 3600)
    return {"method": "each chapter's quick wall time, measured in a cold parallel build, times its budget "
                      "ratios paper/quick: the largest single ratio (low) and their product (high); an "
                      "extrapolation, not a measurement",
            "chapters": rows, "total_core_hours": [round(low, 1), round(high, 1)],
            # A chapter is one task: on many workers the longest chapter bounds the wall time.
            "hours_on_workers": {str(w): [round(max(low / w, longest[0]), 1),
                                          round(max(high / w, longest[1]), 1)] for w in (2, 8, 32)}}


def write_costs(quick_seconds: dict[str, float]) -> Path:
    data = estimate_costs(quick_seconds)
    data.update({"commit": commit(), "date": datetime.now(UTC).isoformat(timespec="seconds"),
                 "machine": machine()})
    path = paths.repo_root() / "results" / COST_FILE
    _write(path, data)
    return path


def load_costs() -> dict:
    path = paths.repo_root() / "results" / COST_FILE
    return json.loads(path.read_text()) if path.is_file() else {}


def paper_cost(chapter: str, costs: dict | None = None) -> dict:
    """The best figure we have for a chapter's ``paper`` cost on one core, and where it comes from.

    A complete record: its measured wall time. A partial record: its wall time scaled up by what was
    cut (seeds, rows), as the cut parts are independent runs. No record, or one whose wall time is not
    its cost (it read cached results it did not compute, or ran some rows of a named grid): the
    extrapolation from the quick build (results/cost.json), a range."""
    rec = load(chapter, "paper")
    est = (costs if costs is not None else load_costs().get("chapters", {})).get(chapter)

    def extrapolated(why: str = "") -> dict:
        if est is None:
            return {"low_s": None, "high_s": None, "how": "not measured", "record": rec}
        return {"low_s": est["paper_s_low"], "high_s": est["paper_s_high"],
                "how": "extrapolated from quick" + (f" ({why})" if why else ""), "record": rec}

    if rec is None:
        return extrapolated()
    reused = rec.get("cache", {}).get("reused", 0)
    pre = rec.get("pretrained") or {}
    if pre and reused <= len(pre.get("runs", [])):
        return _pretrained_cost(rec)
    if reused and est is not None:
        return extrapolated(f"the record read {reused} cached results it did not compute")
    factors = _cut_factors(rec)
    scale = math.prod(factors.values()) if factors else 1.0
    if math.isnan(scale):
        if est is not None:
            return extrapolated("the record ran only some rows")
        scale = 1.0
    # One core's cost: the CPU time where the record has it (other work sharing the cores does not
    # inflate it), else the processes' summed wall time.
    s = rec.get("cpu_s", rec.get("core_s", rec["wall_s"])) * scale
    how = "measured" if scale == 1.0 else f"measured on {_cuts(rec)}, scaled"
    return {"low_s": s, "high_s": s, "how": how, "record": rec}


def _cuts(rec: dict) -> str:
    """The cuts of a partial record as its label names them: ``n_seeds 5 of 20, ...``."""
    return label(rec)[len(f"{rec['profile']} (partial: "):-1]


def _cut_factors(rec: dict) -> dict[str, float]:
    """``{parameter: full / ran}`` for each cut of a partial record (NaN: rows of a named grid or of an
    'all' choice, not a known fraction)."""
    out = {}
    for name, cut in (rec.get("partial") or {}).items():
        ran, full = cut["ran"], cut["profile"]
        if isinstance(ran, str) and _items(full) in (["paper"], ["all"]):
            out[name] = math.nan
        elif isinstance(ran, str):
            out[name] = len(_items(full)) / max(1, len(_items(ran)))
        elif ran:
            out[name] = float(full) / float(ran)
    return out


def _pretrained_cost(rec: dict) -> dict:
    """The cost of a record whose networks were trained beforehand, in separate processes of the same
    code, and listed in its ``pretrained`` field: each run's CPU time (else wall time) scaled by the
    one cut it depends on (``scales_with``: e.g. more eSCAN networks do not make the English-French
    ones dearer), plus the record's own analysis, scaled by the largest cut. A run marked
    ``counted_in`` another chapter (the same networks, trained once) is left to that chapter's cost,
    so the book's total counts it once."""
    factors, runs = _cut_factors(rec), rec["pretrained"]["runs"]
    total, elsewhere = 0.0, sorted({r["counted_in"] for r in runs if r.get("counted_in")})
    for run in runs:
        if not run.get("counted_in"):
            total += (run.get("cpu_s") or run["wall_s"]) * factors.get(run.get("scales_with") or "", 1.0)
    total += rec.get("cpu_s", rec["wall_s"]) * max(factors.values(), default=1.0)
    here = [r for r in runs if not r.get("counted_in")]
    if not elsewhere:
        how = "measured, with its networks trained beforehand"
    elif not here:
        how = "measured; its networks are counted with " + ", ".join(elsewhere)
    else:
        how = ("measured, with its networks trained beforehand (" + str(len(runs) - len(here))
               + " of them counted with " + ", ".join(elsewhere) + ")")
    if factors:
        how += f", on {_cuts(rec)}, scaled"
    return {"low_s": total, "high_s": total, "how": how, "record": rec}


def _dur(s: float | None) -> str:
    if s is None:
        return "?"
    return f"{s / 3600:.1f} h" if s >= 5400 else f"{s / 60:.0f} min"


def cost_table() -> str:
    """The table of ``paper`` costs (markdown) on the book's costs page, longest first, with the totals."""
    costs = load_costs().get("chapters", {})
    rows = []
    for ch in config.chapter_ids():
        c = paper_cost(ch, costs)
        quick = costs.get(ch, {}).get("quick_s")
        rows.append((c["high_s"] or 0.0, ch, quick, c))
    rows.sort(key=lambda r: (-r[0], r[1]))
    lines = ["| chapter | quick (measured) | paper, one core | how we know |", "|---|---:|---:|---|"]
    lo = hi = 0.0
    for _, ch, quick, c in rows:
        span = _dur(c["low_s"]) if c["low_s"] == c["high_s"] else f"{_dur(c['low_s'])} – {_dur(c['high_s'])}"
        lines.append(f"| {ch} | {'?' if quick is None else f'{quick:.0f} s'} | {span} | {c['how']} |")
        lo += c["low_s"] or 0.0
        hi += c["high_s"] or 0.0
    lines.append(f"| **total** | | **{lo / 3600:.1f} – {hi / 3600:.1f} core-hours** | |")
    # A chapter is one task: on many workers the longest chapter bounds the wall time.
    longest = (max((r[3]["low_s"] or 0.0) for r in rows), max((r[3]["high_s"] or 0.0) for r in rows))
    walls = "; ".join(f"{w} workers {max(lo / w, longest[0]) / 3600:.1f} – "
                      f"{max(hi / w, longest[1]) / 3600:.1f} h" for w in (2, 8, 32))
    return "\n".join(lines) + f"\n\nWall time of the whole `paper` book: {walls}."


def provenance_table(profile: str = "paper") -> str:
    """Every record of ``profile``, one markdown row per chapter: its findings' verdicts, its provenance."""
    rows = ["| chapter | findings | complete | verified | provenance |", "|---|---|---|---|---|"]
    for ch in config.chapter_ids():
        rec = load(ch, profile)
        if rec is None:
            continue
        found = C.findings(recorded_claims(rec))
        verdicts = C.counts_text(found) if found else "preconditions only"
        if stale_ids(rec):
            verdicts += "; stale (a rule changed since)"
        complete = "partial" if rec.get("partial") else "yes"
        rows.append(f"| {ch} | {verdicts} | {complete} | {verified_text(rec)} | "
                    f"{provenance(rec).replace('|', '/')} |")
    return "\n".join(rows)


if __name__ == "__main__":  # python -m companion.records: print the cost table of the book's costs page
    print(cost_table())
