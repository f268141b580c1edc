"""Execute chapters in parallel: local processes, or tasks on a Dask distributed cluster.

One function, :func:`execute`, runs one chapter on a worker (a local process or
a Dask worker) and returns everything the client needs as plain data: the
executed notebook (JSON text), the claims (rows), the seconds it took. The
client (:func:`run_tasks`) writes those where a local run puts them, so the
same code serves ``make book``, ``companion run --scheduler`` and
``companion sweep``.

Two ways to execute a chapter:

* ``params=None``: as the book does, the notebook unchanged (no injected
  parameters cell) with the profile from ``COMPANION_PROFILE``. The executed
  notebook then hashes like its source, so adding it to Jupyter Book's
  execution cache (jupyter-cache) makes ``jupyter-book build`` use it instead
  of executing again;
* ``params={...}``: a normal :func:`companion.runner.run` (papermill) with
  those overrides, as ``companion run`` does.

Each worker process runs one chapter at a time on one intra-op thread: the
models are chains of small matrix products, where one process per core beats
threads (see :mod:`companion.device`).
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import multiprocessing
import os
import re
import socket
import tempfile
import threading
import time
import traceback
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from filelock import FileLock

from . import cache, chapters, claims, config, paths

#: Environment of every worker process and kernel: one thread per process.
THREAD_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
#: Per-cell timeout when the book's _config.yml names none.
DEFAULT_TIMEOUT = 1800
TIMINGS_FILE = "timings.json"

# runner.run hands the claims file to the kernel through os.environ; in a worker
# with several threads, runs must not interleave there.
_RUN_LOCK = threading.Lock()


class ClusterError(RuntimeError):
    """The cluster cannot be used (unreachable, or its workers run another library)."""


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _first_line(exc: BaseException) -> str:
    text = _ANSI.sub("", str(exc)).strip()
    # nbclient puts the failing cell first and the error last; the error says more.
    lines = [ln for ln in text.splitlines() if ln.strip()]
    last = lines[-1] if lines else ""
    return f"{type(exc).__name__}: {last}"[:500]


#: nbclient's error when a kernel exits before its first reply: nothing of the notebook has run yet.
KERNEL_START_FAILED = "Kernel died before replying to kernel_info"
KERNEL_START_TRIES = 3


def with_kernel_retry(run, tries: int = KERNEL_START_TRIES):
    """``run()``, started again (up to ``tries`` times in all) when its kernel dies before it replies.

    Why: jupyter_client picks the kernel's ports by binding port 0 and closing it, so two kernels started at
    the same moment (parallel chapters, a local pool beside a Dask cluster) can be handed the same port;
    the loser exits with "Address already in use". No cell has run then, so starting again is safe. Any
    other error, or the same one ``tries`` times, is raised."""
    for attempt in range(1, tries + 1):
        try:
            return run()
        except RuntimeError as exc:
            if KERNEL_START_FAILED not in str(exc) or attempt == tries:
                raise
            time.sleep(0.5 * attempt)


def book_timeout() -> int:
    import yaml

    cfg = yaml.safe_load((paths.repo_root() / "book" / "_config.yml").read_text()) or {}
    return int((cfg.get("execute") or {}).get("timeout") or DEFAULT_TIMEOUT)


def execute(
    chapter_id: str,
    profile: str,
    params: Mapping[str, Any] | None = None,
    source: str | None = None,
    timeout: int | None = None,
) -> dict:
    """Execute one chapter here (a worker); returns plain data for the client.

    ``source`` is the notebook's JSON as the client read it, so a worker runs
    exactly the client's cells (its own checkout must hold the same library).
    Execution errors come back as ``ok: False`` with the traceback; they are
    not raised, so Dask does not retry a chapter that fails by itself.
    """
    import nbformat

    t0 = time.perf_counter()
    out: dict[str, Any] = {
        "chapter": chapter_id,
        "started": time.time(),
        "params": dict(params) if params is not None else None,
        "host": socket.gethostname(),
        "pid": os.getpid(),
    }
    try:
        chapter = chapters.get(chapter_id)
        with tempfile.TemporaryDirectory(prefix=f"companion-{chapter_id}-") as tmp:
            from . import runner

            if params is None:
                from nbclient import NotebookClient

                nb = (
                    nbformat.reads(source, as_version=4)
                    if source
                    else nbformat.read(chapter.path, as_version=4)
                )
                claims_file = Path(tmp) / "claims.json"
                env = {
                    **runner.KERNEL_ENV,
                    **os.environ,
                    **THREAD_ENV,
                    config.PROFILE_ENV: profile,
                    claims.CLAIMS_FILE_ENV: str(claims_file),
                    "TQDM_DISABLE": "1",
                }

                def run_client():
                    client = NotebookClient(
                        nb,
                        timeout=timeout or book_timeout(),
                        kernel_name="python3",
                        allow_errors=False,
                        record_timing=False,
                        resources={"metadata": {"path": str(chapter.path.parent)}},
                    )
                    client.execute(env=env)

                with_kernel_retry(run_client)
            else:
                with _RUN_LOCK:  # papermill's kernel inherits os.environ: one thread, as in the book
                    saved = {k: os.environ.get(k) for k in THREAD_ENV}
                    os.environ.update(THREAD_ENV)
                    try:
                        out_nb, _ = with_kernel_retry(
                            lambda: runner.run(chapter_id, params, profile, tmp, timeout))
                    finally:
                        for k, v in saved.items():
                            if v is None:
                                os.environ.pop(k, None)
                            else:
                                os.environ[k] = v
                nb = nbformat.read(out_nb, as_version=4)
                claims_file = Path(tmp) / f"{chapter_id}.claims.json"
            out["notebook"] = nbformat.writes(nb)
            out["claims"] = json.loads(claims_file.read_text()) if claims_file.is_file() else []
        out["ok"] = True
    except Exception as exc:  # the chapter failed; report it, do not retry it
        out.update(ok=False, error=_first_line(exc), traceback=traceback.format_exc())
    out["seconds"] = time.perf_counter() - t0
    out["ended"] = time.time()
    return out


# --- where results land -----------------------------------------------------------


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file in the same folder (never half-written)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def status_of(claim) -> str:
    """``pass``, ``fail`` or ``undecided`` (works with claims that only have ``passed``)."""
    s = getattr(claim, "status", None)
    if not isinstance(s, str):
        s = "pass" if getattr(claim, "passed", False) else "fail"
    return s.lower()


def counts(rows: list[dict]) -> dict[str, int]:
    """Verdict counts of the findings among claim rows (read through ``claims.load_file``)."""
    n = {s: 0 for s in claims.STATUSES}
    if rows:
        with tempfile.TemporaryDirectory() as tmp:
            f = Path(tmp) / "c.json"
            f.write_text(json.dumps(rows))
            for c in claims.findings(claims.load_file(f)):
                s = status_of(c)
                n[s] = n.get(s, 0) + 1
    return n


def progress_line(result: dict, done: int, total: int, label: str | None = None) -> str:
    name = label or result["chapter"]
    if not result.get("ok"):
        head = f"[{done:>{len(str(total))}}/{total}] {name:<22} {result['seconds']:6.0f} s"
        return f"{head}  FAILED: {result['error']}"
    n = counts(result["claims"])
    where = f"{result['host']}:{result['pid']}"
    return (
        f"[{done:>{len(str(total))}}/{total}] {name:<22} {result['seconds']:6.0f} s  "
        f"pass {n['pass']}  fail {n['fail']}  undecided {n['undecided']}  not testable {n['not testable']}  "
        f"({where})"
    )


# --- measured durations, for longest-first and `companion list` ---------------------


def load_timings(path: Path) -> dict[str, dict[str, float]]:
    try:
        data = json.loads(Path(path).read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def record_timing(paths_: list[Path], profile: str, chapter_id: str, seconds: float) -> None:
    """Remember a chapter's last execution time per profile (read-modify-write under a lock)."""
    for path in paths_:
        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(path) + ".lock"):
            data = load_timings(path)
            data.setdefault(profile, {})[chapter_id] = round(float(seconds), 1)
            atomic_write(path, json.dumps(data, indent=1, sort_keys=True))


def cache_timings_file() -> Path:
    return paths.cache_root() / TIMINGS_FILE


def longest_first(ids: list[str], timings: Mapping[str, float]) -> list[str]:
    """Chapters by their last measured time, longest first; never-measured ones first, in book order."""
    order = {c: i for i, c in enumerate(ids)}
    return sorted(ids, key=lambda c: (c in timings, -timings.get(c, 0.0), order[c]))


# --- running tasks: local processes or a Dask cluster -------------------------------


def _init_worker() -> None:
    os.environ.update(THREAD_ENV)


def connect(scheduler: str, timeout: float = 20):
    """A Dask client for ``scheduler``, after checking its workers run this library."""
    from distributed import Client

    try:
        client = Client(scheduler, timeout=timeout)
    except Exception as exc:  # unreachable, wrong address
        raise ClusterError(f"cannot reach the Dask scheduler at {scheduler}: {_first_line(exc)}") from None
    try:
        info = client.scheduler_info()
        if not info.get("workers"):
            client.wait_for_workers(1, timeout=timeout)
        ours = cache.fingerprint(())
        theirs = client.run(cache.fingerprint, ())
        other = sorted(w for w, fp in theirs.items() if fp != ours)
        if other:
            raise ClusterError(
                f"workers {', '.join(other)} run another version of the companion library; "
                "install the same checkout on every worker"
            )
    except Exception as exc:
        client.close()
        if isinstance(exc, ClusterError):
            raise
        raise ClusterError(f"no usable workers at {scheduler}: {_first_line(exc)}") from None
    return client


def next_startable(pending: list[dict], running_groups: Mapping[str, int],
                   groups: Mapping[str, str]) -> dict | None:
    """The first pending task whose shared-runs group has no task running (ungrouped: always)."""
    for kw in pending:
        g = groups.get(kw["chapter_id"])
        if g is None or not running_groups.get(g):
            return kw
    return None


def _lost(kw: Mapping, exc: BaseException) -> dict:
    """The result of a task whose worker died (or whose pool could no longer start it)."""
    return {
        "chapter": kw["chapter_id"],
        "params": kw.get("params"),
        "key": kw.get("net_key"),  # a network task's cache key (companion.prebuild)
        "ok": False,
        "lost": True,
        "error": _first_line(exc),
        "traceback": traceback.format_exc(),
        "seconds": 0.0,
    }


def run_tasks(
    tasks: list[dict], workers: int | None = None, scheduler: str | None = None, log=print,
    groups: Mapping[str, str] | None = None, fn=None,
) -> Iterator[dict]:
    """Run ``fn`` (default :func:`execute`) once per task (its keyword arguments); yield each result as
    it finishes. ``fn`` is a module-level function (workers import it) returning plain data with at
    least ``ok``, ``seconds`` and, when not ok, ``error``.

    Tasks start in the order given (put the longest first). Locally: ``workers``
    processes (default: one per core). With ``scheduler``: tasks on that Dask
    cluster; a worker that dies mid-task has its task run again elsewhere.

    ``groups`` maps a chapter to the group of chapters that read the same cached
    training runs (``shared_runs`` in ``_config.yml``). Locally, two chapters of
    one group never run at once: the second would only wait on the first's cache
    lock while holding a worker, so the worker takes an ungrouped chapter instead.

    A local worker process that dies breaks the whole pool: its task and every task the pool can no
    longer start come back as failures with ``lost: True`` (the caller may run them again in a new
    pool), instead of an exception that would drop the results still to come.
    """
    if not tasks:
        return
    fn = fn or execute
    if scheduler:
        from distributed import as_completed

        client = connect(scheduler)
        try:
            info = client.scheduler_info()
            board = (
                client.dashboard_link
                if "dashboard" in info.get("services", {})
                else "not served (install bokeh on the scheduler's machine)"
            )
            log(f"cluster: {scheduler}, {len(info['workers'])} workers, dashboard: {board}")
            futures = {}
            for i, kw in enumerate(tasks):
                # A higher priority starts first; pure=False: a rerun is a new task.
                fut = client.submit(
                    fn,
                    **kw,
                    pure=False,
                    priority=len(tasks) - i,
                    # a network task's key says so (a chapter's starts with the chapter id)
                    key=(f"{'' if fn is execute else 'network-'}{kw['chapter_id']}-{i}-{os.getpid()}-"
                         f"{time.time_ns()}"),
                )
                futures[fut] = kw
            for fut in as_completed(futures):
                try:
                    yield fut.result()
                except Exception as exc:  # e.g. KilledWorker: the task killed worker after worker
                    yield _lost(futures[fut], exc)
        finally:
            client.close()
        return
    n = max(1, int(workers or os.cpu_count() or 1))
    groups = dict(groups or {})
    ctx = multiprocessing.get_context("spawn")  # no forked torch/kernel state
    with cf.ProcessPoolExecutor(
        max_workers=min(n, len(tasks)), mp_context=ctx, initializer=_init_worker
    ) as pool:
        pending, futures, busy, lost = list(tasks), {}, {}, []

        def start_what_can() -> None:
            while pending and len(futures) < n:
                kw = next_startable(pending, busy, groups)
                if kw is None:  # only grouped tasks left, their groups busy: wait for one to end
                    return
                pending.remove(kw)
                try:
                    fut = pool.submit(fn, **kw)
                except cf.process.BrokenProcessPool as exc:  # a worker died: nothing more starts here
                    lost.append(_lost(kw, exc))
                    continue
                g = groups.get(kw["chapter_id"])
                if g is not None:
                    busy[g] = busy.get(g, 0) + 1
                futures[fut] = kw

        try:
            start_what_can()
            while futures:
                done, _ = cf.wait(futures, return_when=cf.FIRST_COMPLETED)
                for fut in done:
                    kw = futures.pop(fut)
                    g = groups.get(kw["chapter_id"])
                    if g is not None:
                        busy[g] -= 1
                    try:
                        result = fut.result()
                    except Exception as exc:  # the worker process died
                        result = _lost(kw, exc)
                    start_what_can()  # before yielding: the caller's work on a result keeps workers busy
                    yield result
                while lost:
                    yield lost.pop(0)
        finally:
            for fut in futures:
                fut.cancel()
