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

An ensemble whose spec names one-seed ``members`` (:mod:`companion.netspec`) is not one task: each of
its missing members is, and once they are all in the cache a second round stacks them into the
ensemble's entry (seconds each). Members are shared: the ensembles of seeds 1-10 and 1-3 train seeds
1-3 once. So the longest task of a build is one network, and a program of ten networks runs on ten
workers.
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
class Member:
    """A one-seed member of an ensemble task: in the cache, cut from a cached ensemble, or trained."""

    key: str
    cached: bool
    cost_s: float
    description: str
    #: a cached ensemble holds it (:func:`companion.aitken2021.specs.cut_member`)
    derivable: bool
    spec: Any = field(repr=False, compare=False)


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
    #: the one-seed members it is stacked from; empty: it trains as one program
    members: list[Member] = field(default_factory=list)

    def kwargs(self) -> dict:
        """The worker's arguments (:func:`train_network`), plain data for a process or a Dask worker."""
        # not `key`: Dask's submit() takes that keyword for itself
        return dict(chapter_id=self.chapters[0], profile=self.profile, params=self.params, net_key=self.key)


def collect(requests: Iterable[Request]) -> list[NetTask]:
    """Every network the requested chapter runs declare, once per cache key, longest first; networks of
    equal cost in the order declared (a chapter declares its seeds in order)."""
    found: dict[str, NetTask] = {}
    for chapter_id, profile, params in requests:
        for spec in networks.chapter_specs(chapter_id, profile, params):
            task = found.get(spec.key)
            if task is None:
                members = [Member(m.key, c, m.cost_s, m.description,
                                  not c and m.derive is not None and m.derive(False), m)
                           for m in spec.members for c in [m.is_cached()]]
                found[spec.key] = NetTask(spec.key, spec.kind, spec.description, spec.cost_s,
                                          spec.is_cached(), [chapter_id], profile, dict(params or {}),
                                          members)
            elif chapter_id not in task.chapters:
                task.chapters.append(chapter_id)
    return sorted(found.values(), key=lambda t: -t.cost_s)  # stable: ties stay in declared order


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
        if t.members and not t.cached:
            n_cached = sum(m.cached for m in t.members)
            n_cut = sum(m.derivable for m in t.members)
            lines.append(f"  {'':<7} {'':>8}  {'':<12}  {'':<20}  as {len(t.members)} one-seed tasks "
                         f"({n_cached} in the cache, {n_cut} cut from cached ensembles), then stacked")
    if undeclared:
        lines.append("chapters that declare nothing and train inside their notebooks: "
                     + ", ".join(undeclared))
    return "\n".join(lines)


def _declared_spec(chapter_id: str, profile: str, params: Mapping[str, Any] | None, key: str):
    """The spec (or one-seed member of a spec) with this key in the chapter's declaration."""
    for spec in networks.chapter_specs(chapter_id, profile, params):
        for s in (spec, *spec.members):
            if s.key == key:
                return s
    raise RuntimeError(f"{chapter_id} no longer declares network {key[:12]} (is the worker's library "
                       "the client's?)")


def train_network(chapter_id: str, profile: str, params: Mapping[str, Any] | None, net_key: str,
                  stack: bool = False) -> dict:
    """Load or train one declared network here (a worker); returns plain data for the client.
    ``stack``: store the entry from its members' entries instead (the second round).

    Errors come back as ``ok: False`` (not raised: Dask would run a network that fails by itself
    again on every worker)."""
    t0 = time.perf_counter()
    key = net_key
    out: dict[str, Any] = {"chapter": chapter_id, "key": key, "started": time.time(),
                           "host": socket.gethostname(), "pid": os.getpid()}
    try:
        os.environ.setdefault("TQDM_DISABLE", "1")  # a worker's log is no place for progress bars
        spec = _declared_spec(chapter_id, profile, params, key)
        out.update(kind=spec.kind, description=spec.description, trained=not spec.is_cached(), stacked=stack)
        if stack:
            spec.assemble()
        else:
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
    how = ("stacked from its members" if r.get("stacked") else "trained") if r.get("trained") \
        else "found in the cache"
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
    cut = cut_members(todo)
    if cut:
        log(f"networks: {cut} one-seed members cut from ensembles in the model cache (no training)")
    units = training_units(todo)
    split = sum(1 for t in todo if t.members)
    n_members = sum(1 for u in units if u.get("member"))
    log(f"networks: training {len(todo)} declared networks {where}, longest first "
        f"(estimated {sum(t.cost_s for t in todo) / 3600:.2f} core-hours)"
        + (f"; {split} of them as {n_members} one-seed tasks" if split else ""))
    failures = _run_round(units, workers, scheduler, log)
    failed = {f["key"] for f in failures}
    stacks = [dict(t.kwargs(), stack=True, label=t.description) for t in todo
              if t.members and not failed & {m.key for m in t.members}]
    return failures + _run_round(stacks, workers, scheduler, log)


def cut_members(todo: list[NetTask]) -> int:
    """Store every missing member that a cached ensemble holds, cut from it (here, in a second each);
    returns how many. The rest train as tasks."""
    n = 0
    for t in todo:
        for m in t.members:
            if not m.cached and m.derivable and m.spec.derive(True):
                m.cached, n = True, n + 1
    return n


def training_units(todo: list[NetTask]) -> list[dict]:
    """The first round's tasks (worker arguments), longest first: every missing network of a program
    without members, and every missing member of the others, once each. Tasks of equal cost keep the
    order declared, lowest seed first, so a build stopped part way leaves seeds 1..k trained, which a
    record at k seeds reads (in the order of their keys, it left seeds scattered over the range)."""
    units: dict[str, tuple[float, dict]] = {}
    for t in todo:
        if not t.members:
            units.setdefault(t.key, (t.cost_s, dict(t.kwargs(), label=t.description)))
            continue
        for m in t.members:
            if not m.cached:
                units.setdefault(m.key, (m.cost_s, dict(t.kwargs(), net_key=m.key, member=True,
                                                        label=m.description)))
    return [kw for _, kw in sorted(units.values(), key=lambda u: -u[0])]  # stable: ties in declared order


def _run_round(pending: list[dict], workers, scheduler, log) -> list[dict]:
    """Run one round of network tasks (worker arguments); returns the failures."""
    if not pending:
        return []
    labels = {kw["net_key"]: kw.pop("label", "") for kw in pending}
    for kw in pending:
        kw.pop("member", None)
    failures, done, total = [], 0, len(pending)
    for attempt in (1, 2):
        lost = []
        for r in parallel.run_tasks(pending, workers, scheduler, log=log, fn=train_network):
            if not r.get("ok") and r.get("lost") and attempt == 1 and not scheduler:
                # the local pool broke under it (a worker died): run it once more in a fresh pool
                lost.append(next(kw for kw in pending if kw["net_key"] == r["key"]))
                log(f"network {str(r['key'])[:12]} lost its worker ({r['error']}); it will run again")
                continue
            done += 1
            log(_line(r, done, total, labels))
            if not r.get("ok"):
                failures.append(r)
        if not lost:
            break
        pending = lost
    return failures
