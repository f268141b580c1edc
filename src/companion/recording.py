"""Make and verify records: run a chapter under a profile and keep its verdicts in ``results/``.

``companion record CHAPTER --profile paper`` calls :func:`record`; ``companion
verify CHAPTER`` calls :func:`verify`, which re-runs a record's parameters and
reports whether the verdicts and the estimates agree. What a record holds, and
everything that reads one, is the record store (:mod:`companion.records`).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import cache, config, prebuild, records, registry, runner
from . import claims as C


def cache_events(log_text: str) -> tuple[set, set]:
    """From a cache event log: the (kind, key) entries computed, and those loaded."""
    computed, loaded = set(), set()
    for line in log_text.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            (computed if parts[0] == "computed" else loaded).add((parts[1], parts[2]))
    return computed, loaded


def _stacked_from_earlier(computed: set) -> dict:
    """{(kind, key): [member keys]} of the entries stacked during the record (:func:`.netspec.store_stacked`)
    from members trained before it: what the record spent on such an entry is the stacking, a second, so
    it counts as read from the cache, at what those members cost (members trained during the record are
    in its own CPU time already)."""
    out = {}
    for kind, k in computed:
        parts = (cache.compute_cost(kind, k) or {}).get("assembled_from") or []
        earlier = [m for m in parts if (kind, m) not in computed]
        if earlier:
            out[(kind, k)] = earlier
    return out


def cache_reuse(log_text: str) -> dict[str, int]:
    """From a cache event log: entries trained during the record, and entries only read (trained before).

    An ensemble stacked from one-seed members (:mod:`companion.prebuild`) counts once, its members not;
    stacked during the record from members trained before it, it counts as read."""
    computed, loaded = cache_events(log_text)
    members = {(kind, m) for kind, k in computed
               for m in (cache.compute_cost(kind, k) or {}).get("assembled_from", [])}
    stacked = {e for e, earlier in _stacked_from_earlier(computed).items()
               if len(earlier) == len((cache.compute_cost(*e) or {}).get("assembled_from", []))}
    return {"trained": len(computed - members - stacked),
            "reused": len((loaded - computed - members) | stacked)}


def _owners(profile: str) -> dict[str, str]:
    """{network key: the first chapter, in book order, that declares it at ``profile``'s defaults}: the
    chapter whose cost counts a network that several chapters read (the book's total counts it once)."""
    from . import chapters, networks

    out: dict[str, str] = {}
    for ch in chapters.all_chapters():
        for spec in networks.chapter_specs(ch.id, profile):
            out.setdefault(spec.key, ch.id)
    return out


def pretrained_runs(chapter: str, profile: str, params: dict, log_text: str) -> dict | None:
    """The entries a record read from the model cache without computing them, each with what computing
    it took (its manifest, :func:`.cache.compute_cost`): the ``pretrained`` field of the record, which
    its cost counts (:mod:`companion.records`). None when it read nothing computed beforehand.

    Each run says which seed parameter it grows with (``scales_with``: the declared networks whose key
    changes with one more seed), and ``counted_in`` the chapter that owns it when another chapter
    declares it first (so the book's total counts it once)."""
    from . import networks

    computed, loaded = cache_events(log_text)
    stacked = _stacked_from_earlier(computed)
    reused = sorted((loaded - computed) | set(stacked))
    if not reused:
        return None
    specs = {x.key: x for x in networks.chapter_specs(chapter, profile, params)}
    settings = config.resolve(chapter, profile, **params).as_dict()
    grows: dict[str, str] = {}
    for name, value in settings.items():
        if name.endswith("seeds") and isinstance(value, int) and not isinstance(value, bool):
            try:
                more = {x.key for x in networks.chapter_specs(chapter, profile, {**params, name: value + 1})}
            except config.ConfigError:
                continue
            for k in specs:
                if k not in more:
                    grows.setdefault(k, name)
    owners = _owners(profile) if specs else {}
    runs, unknown = [], 0
    for kind, k in reused:
        cost = cache.compute_cost(kind, k)
        if (kind, k) in stacked:  # stacked here: what its members trained before the record cost
            parts = [cache.compute_cost(kind, m) for m in stacked[(kind, k)]]
            cost = None if None in parts else {
                "wall_s": round(sum(c.get("wall_s") or 0.0 for c in parts), 3),
                "cpu_s": (round(sum(c["cpu_s"] for c in parts), 3)
                          if all(c.get("cpu_s") is not None for c in parts) else None),
                "date": max((c["date"] for c in parts if c.get("date")), default="")}
        if cost is None:
            unknown += 1
            continue
        run = {"what": specs[k].description if k in specs else f"{kind} {k[:12]}", "key": k[:12],
               "cpu_s": cost["cpu_s"], "wall_s": cost["wall_s"], "trained": cost.get("date", "")}
        if k in grows:
            run["scales_with"] = grows[k]
        if owners.get(k, chapter) != chapter:
            run["counted_in"] = owners[k]
        runs.append(run)
    if not runs:
        return None
    how = ("read from the model cache: each entry's one-core cost as its cache manifest recorded it when it "
           "was computed (by a build, a prebuild or another record, before this record)")
    if unknown:
        how += f"; {unknown} more entries read carry no cost (stored before manifests kept it)"
    return {"how": how, "runs": runs}


def split_parameter(chapter: str, settings: dict[str, Any], name: str | None = None) -> tuple[str, list[str]]:
    """The list parameter a parallel record splits on, and its items as this run resolves them.

    Default: the first list parameter (layers, widths, ...) holding at least two items. A value
    like ``ks paper`` names a grid rather than listing it, so it cannot be split."""
    schema = config.schema(chapter)
    names = [name] if name else [n for n, p in schema.items() if p.items is not None]
    lists = ", ".join(x for x, p in schema.items() if p.items is not None) or "none"
    for n in names:
        if n not in schema or schema[n].items is None:
            raise config.ConfigError(f"{chapter} has no list parameter {n!r} to split a record on "
                                     f"(list parameters: {lists})")
        items = records._items(str(settings.get(n, "")))
        if len(items) >= 2 and "paper" not in items:
            return n, items
        if name:
            raise config.ConfigError(f"{chapter}: {n} = {settings.get(n)!r} has fewer than two items "
                                     "to split")
    raise config.ConfigError(f"{chapter} has no list parameter with two or more items; "
                             "record it with one worker")


def _warm(chapter: str, prof: str, raw: dict, name: str, items: list[str], workers: int, log) -> list[dict]:
    """Run the chapter once per item of ``name`` on ``workers`` processes, filling the shared model
    cache; the full run that follows then reads every training run from it."""
    from . import parallel

    base = {k: str(v) for k, v in raw.items()}
    tasks = [dict(chapter_id=chapter, profile=prof, params={**base, name: item}) for item in items]
    done = []
    for r in parallel.run_tasks(tasks, workers, log=log):
        if not r.get("ok"):
            raise RuntimeError(f"{chapter} with {name}={r['params'][name]} failed: "
                               f"{(r.get('error') or '').strip().splitlines()[-1:] or ['?']}")
        done.append({"value": r["params"][name], "seconds": round(r["seconds"], 1)})
        log(f"  {chapter} {name}={r['params'][name]}: {r['seconds']:.0f} s")
    return done


def record(chapter: str, raw_params: dict | None = None, profile: str = "paper",
           output_dir: str | Path | None = None, workers: int = 1, split: str | None = None,
           log=print, deviation: str | None = None) -> Path:
    """Execute ``chapter`` under ``profile`` (with ``raw_params`` overrides) and write its record
    (:func:`run_record` says how it runs).

    ``deviation``: the run replaces a setting of the authors' with one of ours (``raw_params`` says
    which); it is kept apart, under that name (:func:`.records.record_path`), so the chapter's own
    record and every count of verdicts stay at the authors' settings."""
    if deviation is not None:
        records.check_deviation(deviation)
        if not raw_params:
            raise config.ConfigError("a deviation record changes a setting: give it with -p NAME VALUE")
    data = run_record(chapter, raw_params, profile, output_dir, workers, split, log)
    if deviation is not None:
        data["deviation"] = deviation
    path = records.record_path(chapter, data["profile"], deviation)
    records._write(path, data)
    return path


def run_record(chapter: str, raw_params: dict | None = None, profile: str = "paper",
               output_dir: str | Path | None = None, workers: int = 1, split: str | None = None,
               log=print) -> dict:
    """Execute ``chapter`` under ``profile`` (with ``raw_params`` overrides); return its record.

    The networks the chapter declares are trained first, each as its own task on ``workers``
    processes (:mod:`companion.prebuild`), and counted in the record's times and cache use.
    ``workers`` > 1: the chapter then runs once per item of a list parameter (``split``, default the
    first with two or more items, e.g. the layers of a table) on that many processes sharing the model
    cache, then once in full from the cache. The record keeps the wall time of the whole, as ``core_s``
    the sum of the processes' wall times, and as ``cpu_s`` the CPU time they used (what one core
    would have spent, also when other work shared the machine)."""
    raw = dict(raw_params or {})
    params = runner.prepare(chapter, raw, profile)  # validates before anything runs
    prof = params.pop("profile")
    settings = config.resolve(chapter, prof, **params)
    split_name, split_items = (split_parameter(chapter, settings.as_dict(), split) if workers > 1
                               else (None, []))
    code = records.commit()  # the code that runs, taken before the (long) run
    with tempfile.TemporaryDirectory(prefix=f"record-{chapter}-") as tmp:
        # Every process of this record (kernels, workers) logs its cache events here, so the record can
        # say how many results it read that an earlier run had computed: its wall time omits those.
        events = Path(tmp) / "cache-events.log"
        before = os.environ.get(cache.LOG_ENV)
        os.environ[cache.LOG_ENV] = str(events)
        try:
            t0, c0 = time.perf_counter(), records.cpu_seconds()
            # Networks as tasks: the chapter's declared networks first, on `workers` processes.
            lost = prebuild.prebuild([(chapter, prof, params)], workers=workers, log=log)
            if lost:
                raise RuntimeError(prebuild.failure_text(lost[0]))
            warm = _warm(chapter, prof, raw, split_name, split_items, workers, log) if split_name else []
            t1 = time.perf_counter()
            out_dir = Path(output_dir or tmp)
            _, found = runner.run(chapter, params, prof, out_dir)
            wall = time.perf_counter() - t0
            final = time.perf_counter() - t1
            cpu = records.cpu_seconds() - c0
        finally:
            if before is None:
                os.environ.pop(cache.LOG_ENV, None)
            else:
                os.environ[cache.LOG_ENV] = before
        log_text = events.read_text() if events.is_file() else ""
        reuse = cache_reuse(log_text)
        pretrained = pretrained_runs(chapter, prof, params, log_text)
        tables_path = C.tables_file(out_dir / f"{chapter}.claims.json")
        tables = json.loads(tables_path.read_text()) if tables_path.is_file() else {}
    data = {
        "chapter": chapter,
        "profile": prof,
        "commit": code,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "machine": records.machine(),
        "parameters": settings.as_dict(),
        "overrides": {k: v for k, v in params.items()},
        "partial": records.partial(chapter, prof, params),
        "claims": [c.as_row() for c in found],
        "tables": tables,
        "cache": reuse,
    }
    if pretrained:
        data["pretrained"] = pretrained
    if split_name:
        data["workers"] = workers
        data["core_s"] = round(sum(w["seconds"] for w in warm) + final, 1)
        data["split"] = {"parameter": split_name, "runs": warm, "final_s": round(final, 1)}
    return data


# ---- staged records: add seeds until the findings decide ------------------------------------------

#: The looks of a staged record (seeds per look), declared before the run.
STAGES = (5, 10, 20, 40)
STAGED_METHOD = ("Bonferroni split over the looks declared before the run: with K looks each is decided "
                 "at level 1 - 0.05/K, so the chance that any look reports a pass or a fail the data do "
                 "not support stays at most 5 % per claim; a claim keeps the verdict of the first look at "
                 "which it decides, and later looks only add seeds for the others")


def stage_level(looks: int, level: float | None = None) -> float:
    """The per-look confidence level of a staged record with ``looks`` looks (Bonferroni)."""
    from . import stats

    return stats.per_look_level(looks, level)


def _settled(c: C.Claim, here: dict[str, C.Claim]) -> bool:
    """Decided for good: pass or fail, or not testable for a reason more seeds cannot change (set before
    the run, or a precondition that itself decided)."""
    if c.status in ("pass", "fail"):
        return True
    if c.status != "not testable":
        return False
    reg = registry.entries()
    entry = reg.get(c.id)
    if entry is None or entry.not_testable:
        return True
    return all(here[p].status in ("pass", "fail") for p in entry.requires if p in here)


def staged(run_stage, looks: list[int], log=print) -> dict:
    """Run the looks in turn until every finding has decided.

    ``run_stage(n_seeds, level) -> list[Claim]`` runs the chapter once with that many seeds, deciding
    at the per-look ``level`` (Bonferroni over ``len(looks)``). Returns ``{"claims": rows, "stages":
    [{n_seeds, level, claims}], "looks", "level", "stopped_at", "method"}``: each claim's row is the one
    from the first look at which it decided (its ``stage`` field; None: undecided at the last look run).
    """
    if not looks or sorted(set(looks)) != list(looks) or looks[0] < 1:
        raise config.ConfigError(f"stages must be increasing whole numbers >= 1, got {looks}")
    level = stage_level(len(looks))
    first: dict[str, tuple[int, dict]] = {}
    history, found = [], []
    for n in looks:
        found = run_stage(n, level)
        here = {c.id: c for c in found}
        history.append({"n_seeds": n, "level": level, "claims": [c.as_row() for c in found]})
        for c in found:
            if c.id not in first and _settled(c, here):
                first[c.id] = (n, c.as_row())
        open_ = [c.id for c in C.findings(found) if c.id not in first]
        log(f"  look at n_seeds={n} (level {level:.4g}): {len(open_)} findings undecided")
        if not open_:
            break
    rows = [{**first[c.id][1], "stage": first[c.id][0]} if c.id in first else {**c.as_row(), "stage": None}
            for c in found]
    return {"claims": rows, "stages": history, "looks": list(looks), "level": level,
            "stopped_at": history[-1]["n_seeds"], "method": STAGED_METHOD}


def merged_pretrained(looks: list[dict], started: str) -> dict | None:
    """The ``pretrained`` field of a staged record: every look's entries read from the model cache, each
    once, less those computed after ``started`` (an earlier look of this record computed them, and its
    ``cpu_s`` already counts them). Looks that read different networks (10 seeds, then 24) all count."""
    runs, seen, how = [], set(), None
    for data in looks:
        got = data.get("pretrained") or {}
        for run in got.get("runs", []):
            if run["key"] in seen or (run.get("trained") or "") >= started:
                continue
            seen.add(run["key"])
            runs.append(run)
            how = got["how"]
    return {"how": how, "runs": runs} if runs else None


def record_until_decided(chapter: str, raw_params: dict | None = None, profile: str = "paper",
                         max_seeds: int = 40, stages=STAGES, workers: int = 1, split: str | None = None,
                         log=print) -> Path:
    """``companion record CHAPTER --until-decided --max-seeds N``: record ``chapter`` with n_seeds set
    to each stage <= ``max_seeds`` in turn (:func:`staged`), passing the per-look level to the chapter
    in ``COMPANION_LEVEL``. The record keeps every stage; its claims are each claim's first decisive
    look. Nothing is written unless every stage ran."""
    from . import stats

    raw = dict(raw_params or {})
    if "n_seeds" not in config.schema(chapter):
        raise config.ConfigError(f"{chapter} has no n_seeds parameter: it cannot be recorded in stages")
    if "n_seeds" in raw:
        raise config.ConfigError("--until-decided sets n_seeds itself: drop -p n_seeds")
    looks = [int(n) for n in stages if int(n) <= max_seeds]
    if not looks:
        raise config.ConfigError(f"no stage in {list(stages)} is <= --max-seeds {max_seeds}")
    for n in looks:  # every stage's parameters are valid before anything runs
        runner.prepare(chapter, {**raw, "n_seeds": str(n)}, profile)
    records_run: list[dict] = []
    started = datetime.now(UTC).isoformat(timespec="seconds")

    def run_stage(n: int, level: float) -> list[C.Claim]:
        before = os.environ.get(stats.LEVEL_ENV)
        os.environ[stats.LEVEL_ENV] = repr(level)  # the kernel inherits it; the claims card decides at it
        try:
            data = run_record(chapter, {**raw, "n_seeds": str(n)}, profile, workers=workers, split=split,
                              log=log)
        finally:
            if before is None:
                os.environ.pop(stats.LEVEL_ENV, None)
            else:
                os.environ[stats.LEVEL_ENV] = before
        records_run.append(data)
        return records.recorded_claims(data)

    result = staged(run_stage, looks, log)
    data = dict(records_run[-1])
    for i, stage in enumerate(result["stages"]):
        stage.update(wall_s=records_run[i]["wall_s"], cpu_s=records_run[i]["cpu_s"],
                     commit=records_run[i]["commit"])
    data["wall_s"] = round(sum(r["wall_s"] for r in records_run), 1)
    data["cpu_s"] = round(sum(r["cpu_s"] for r in records_run), 1)
    pretrained = merged_pretrained(records_run, started)
    data.pop("pretrained", None)
    if pretrained:
        data["pretrained"] = pretrained
    data["claims"] = result.pop("claims")
    data["staged"] = {**{k: v for k, v in result.items() if k != "stages"}, "max_seeds": max_seeds}
    data["stages"] = result["stages"]
    path = records.record_path(chapter, data["profile"])
    records._write(path, data)
    return path



def verify(chapter: str, profile: str = "paper", deviation: str | None = None) -> tuple[bool, list[str]]:
    """Re-run a recorded chapter with its recorded parameters; (agree, differences). A staged record:
    its last look, at the level that look was decided at."""
    rec = records.load(chapter, profile, deviation)
    if rec is None:
        raise config.ConfigError(f"no record for {chapter!r} under {profile!r} "
                                 f"({records.record_path(chapter, profile, deviation)})")
    old = records.recorded_claims(rec)
    level = None
    if rec.get("staged"):  # a staged record: re-run its last look, at the per-look level it was decided at
        old = [C.from_row(r) for r in rec["stages"][-1]["claims"]]
        level = repr(rec["staged"]["level"])
    from . import stats

    before = os.environ.get(stats.LEVEL_ENV)
    if level is not None:
        os.environ[stats.LEVEL_ENV] = level
    try:
        with tempfile.TemporaryDirectory(prefix=f"verify-{chapter}-") as tmp:
            _, found = runner.run(chapter, rec.get("overrides", {}), rec["profile"], tmp)
    finally:
        if level is not None:
            if before is None:
                os.environ.pop(stats.LEVEL_ENV, None)
            else:
                os.environ[stats.LEVEL_ENV] = before
    diffs = records.compare(old, found)
    return not diffs, diffs
