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

from . import cache, config, records, runner
from . import claims as C


def cache_reuse(log_text: str) -> dict[str, int]:
    """From a cache event log: entries trained during the record, and entries only read (trained before)."""
    computed, loaded = set(), set()
    for line in log_text.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            (computed if parts[0] == "computed" else loaded).add((parts[1], parts[2]))
    return {"trained": len(computed), "reused": len(loaded - computed)}


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
           log=print) -> Path:
    """Execute ``chapter`` under ``profile`` (with ``raw_params`` overrides) and write its record.

    ``workers`` > 1: the chapter first runs once per item of a list parameter (``split``, default the
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
        reuse = cache_reuse(events.read_text() if events.is_file() else "")
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
    if split_name:
        data["workers"] = workers
        data["core_s"] = round(sum(w["seconds"] for w in warm) + final, 1)
        data["split"] = {"parameter": split_name, "runs": warm, "final_s": round(final, 1)}
    path = records.record_path(chapter, prof)
    records._write(path, data)
    return path


def verify(chapter: str, profile: str = "paper") -> tuple[bool, list[str]]:
    """Re-run a recorded chapter with its recorded parameters; (agree, differences)."""
    rec = records.load(chapter, profile)
    if rec is None:
        raise config.ConfigError(f"no record for {chapter!r} under {profile!r} "
                                 f"({records.record_path(chapter, profile)})")
    with tempfile.TemporaryDirectory(prefix=f"verify-{chapter}-") as tmp:
        _, found = runner.run(chapter, rec.get("overrides", {}), rec["profile"], tmp)
    diffs = records.compare(records.recorded_claims(rec), found)
    return not diffs, diffs
