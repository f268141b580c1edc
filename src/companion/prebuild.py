"""The prebuild phase: train every declared network as its own task before any notebook runs.

A chapter is a long, indivisible task: Figure 5 alone trains six ensembles one after the other, so
no number of workers finishes the book before it. ``companion build``, ``record`` and ``sweep``
therefore first collect the trainings their chapters declare (:mod:`companion.networks`), drop
repeats (one cache key, one task, whichever chapters ask for it) and those already in the model
cache, and train the rest as separate tasks, longest first by their estimated cost, on local
processes or on a Dask cluster (:func:`companion.parallel.run_tasks`). The notebooks then find every
declared network in the shared model cache and only load it.

Guarantees carried over from chapters: a task stores its network through
:func:`companion.cache.cached` (atomic writes, one lock per entry), so two processes that need the
same network train it once and an interrupted training leaves nothing half-written. A task whose
worker dies is run again: on Dask the scheduler reschedules it on another worker; locally the dead
worker breaks the pool, so the tasks it lost run once more in a fresh pool, and a second loss is
reported as a failure.

A worker receives plain data (chapter, profile, parameters, cache key) and re-derives the spec from
the chapter's declaration; the key check makes sure it trains exactly what the client listed.
"""

from __future__ import annotations

import os
import socket
import time
import traceback
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import networks, parallel

#: (chapter id, profile, typed parameter overrides or None)
Request = tuple[str, str, Mapping[str, Any] | None]


@dataclass
class NetTask:
    """One declared network: which chapters need it, and how a worker finds it again."""

    key: str
    kind: str
    description: str
    cost_s: float
    cached: bool
    chapters: list[str]
    profile: str
    params: dict = field(default_factory=dict)

    def kwargs(self) -> dict:
        """The worker's arguments (:func:`train_network`), plain data for a process or a Dask worker."""
        # not `key`: Dask's submit() takes that keyword for itself
        return dict(chapter_id=self.chapters[0], profile=self.profile, params=self.params, net_key=self.key)


def collect(requests: Iterable[Request]) -> list[NetTask]:
    """Every network the requested chapter runs declare, once per cache key, longest first."""
    found: dict[str, NetTask] = {}
    for chapter_id, profile, params in requests:
        for spec in networks.chapter_specs(chapter_id, profile, params):
            task = found.get(spec.key)
            if task is None:
                found[spec.key] = NetTask(spec.key, spec.kind, spec.description, spec.cost_s,
                                          spec.is_cached(), [chapter_id], profile, dict(params or {}))
            elif chapter_id not in task.chapters:
                task.chapters.append(chapter_id)
    return sorted(found.values(), key=lambda t: (-t.cost_s, t.key))


def listing(tasks: list[NetTask], undeclared: list[str]) -> str:
    """The ``--dry-run`` text: one line per network, then what the notebooks train themselves."""
    todo = [t for t in tasks if not t.cached]
    lines = [f"networks: {len(todo)} to train, {len(tasks) - len(todo)} already in the model cache "
             f"(estimated {sum(t.cost_s for t in todo) / 3600:.2f} core-hours to train, longest first)"]
    if tasks:
        lines.append(f"  {'status':<7} {'est. s':>8}  {'key':<12}  {'kind':<20}  {'network':<60}  chapters")
    for t in tasks:
        status = "cached" if t.cached else "train"
        lines.append(f"  {status:<7} {t.cost_s:>8.0f}  {t.key[:12]}  {t.kind:<20}  {t.description:<60}  "
                     f"{','.join(t.chapters)}")
    if undeclared:
        lines.append("chapters that declare nothing and train inside their notebooks: "
                     + ", ".join(undeclared))
    return "\n".join(lines)


def train_network(chapter_id: str, profile: str, params: Mapping[str, Any] | None, net_key: str) -> dict:
    """Load or train one declared network here (a worker); returns plain data for the client.

    Errors come back as ``ok: False`` (not raised: Dask would run a network that fails by itself
    again on every worker)."""
    t0 = time.perf_counter()
    key = net_key
    out: dict[str, Any] = {"chapter": chapter_id, "key": key, "started": time.time(),
                           "host": socket.gethostname(), "pid": os.getpid()}
    try:
        os.environ.setdefault("TQDM_DISABLE", "1")  # a worker's log is no place for progress bars
        matches = [s for s in networks.chapter_specs(chapter_id, profile, params) if s.key == key]
        if not matches:
            raise RuntimeError(f"{chapter_id} no longer declares network {key[:12]} (is the worker's library "
                               "the client's?)")
        spec = matches[0]
        out.update(kind=spec.kind, description=spec.description, trained=not spec.is_cached())
        spec.fetch()
        out["ok"] = True
    except Exception as exc:
        out.update(ok=False, error=parallel._first_line(exc), traceback=traceback.format_exc())
    out["seconds"] = time.perf_counter() - t0
    out["ended"] = time.time()
    return out


def _line(r: dict, done: int, total: int, labels: Mapping[str, str]) -> str:
    name = f"network {str(r.get('key'))[:12]} {labels.get(r.get('key'), '')}"
    head = f"[{done:>{len(str(total))}}/{total}] {name}"
    if not r.get("ok"):
        return f"{head}  {r['seconds']:6.0f} s  FAILED: {r['error']}"
    how = "trained" if r.get("trained") else "found in the cache"
    return f"{head}  {r['seconds']:6.0f} s  {how} ({r.get('host')}:{r.get('pid')})"


def failure_text(r: dict) -> str:
    """One line for a failed network task."""
    return f"{r['chapter']}: network {str(r.get('key'))[:12]} failed: {r['error']}"


def undeclared(chapter_ids: Iterable[str]) -> list[str]:
    return [c for c in dict.fromkeys(chapter_ids) if not networks.is_declared(c)]


def prebuild(requests: list[Request], workers: int | None = None, scheduler: str | None = None,
             log=print, dry_run: bool = False) -> list[dict]:
    """Train the missing declared networks of ``requests``; returns the failures (empty: all there).

    ``dry_run``: print the task list (:func:`listing`) and train nothing."""
    requests = list(requests)
    tasks = collect(requests)
    skipped = undeclared(c for c, _, _ in requests)
    if dry_run:
        log(listing(tasks, skipped))
        return []
    todo = [t for t in tasks if not t.cached]
    if not todo:
        if tasks:
            log(f"networks: all {len(tasks)} declared networks are in the model cache")
        return []
    where = f"on {scheduler}" if scheduler else f"with {workers or os.cpu_count()} workers"
    log(f"networks: training {len(todo)} declared networks {where}, longest first "
        f"(estimated {sum(t.cost_s for t in todo) / 3600:.2f} core-hours)")
    labels = {t.key: t.description for t in todo}
    failures, done, pending = [], 0, [t.kwargs() for t in todo]
    for attempt in (1, 2):
        lost = []
        for r in parallel.run_tasks(pending, workers, scheduler, log=log, fn=train_network):
            if not r.get("ok") and r.get("lost") and attempt == 1 and not scheduler:
                # the local pool broke under it (a worker died): run it once more in a fresh pool
                lost.append(next(kw for kw in pending if kw["net_key"] == r["key"]))
                log(f"network {str(r['key'])[:12]} lost its worker ({r['error']}); it will run again")
                continue
            done += 1
            log(_line(r, done, len(todo), labels))
            if not r.get("ok"):
                failures.append(r)
        if not lost:
            break
        pending = lost
    return failures
