"""Build the book: execute the chapters in parallel, then let Jupyter Book render them.

    python -m companion.bookbuild [--path-output DIR] [--profile P] [--workers N | --scheduler ADDR]
                                  [--chapters ID,ID] [--no-sphinx] [--dry-run]

1. Jupyter Book's execution cache (jupyter-cache, ``_build/.jupyter_cache``)
   keys an executed notebook on its code cells only: an edit of the library, or
   another profile, would otherwise be served old outputs. A stamp of (profile,
   library fingerprint, claims registry) next to the build clears that cache
   when it changes; a chapter whose recorded ``paper`` result changed since it
   was last executed is executed again, so its page shows the new record.
2. Every chapter of the table of contents that the cache does not hold is
   executed, unchanged, in parallel (``--workers``, default one process per
   core; or on a Dask cluster with ``--scheduler``), longest first by the
   duration measured last time (``_build/.companion-timings.json``; in a
   fresh clone, the quick times committed in ``results/cost.json``). Each
   executed notebook goes into the execution cache, its claims into the
   claims store: one line per finished chapter.
   Before the chapters, the networks they declare are trained, each as its own task, longest
   first, on the same workers (:mod:`companion.prebuild`); the chapters then only load them.
   ``--dry-run`` lists those networks and stops.
3. ``jupyter-book build`` then finds every chapter cached and executes none
   of them again (only the scorecard, which is forced and reads the claims).

Trained models are cached by content elsewhere (with a lock per entry, so
chapters running at once train a shared model once). ``make book`` and
``make test`` call this; Sphinx warnings and execution errors fail the build
(``-W --keep-going``, ``nb_execution_raise_on_error``), and so does anything a
chapter writes to stderr (Python warnings included): the rendered book should
show none. A chapter that fails stops the build before Sphinx, with its
traceback in ``_build/reports/<chapter>.log``.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from . import cache, chapters, claims, config, parallel, paths, prebuild, records
from .cliargs import Parser, positive  # one-line usage errors, exit 2


def stderr_outputs(build: Path) -> list[str]:
    """``chapter: first line`` for every stderr output in the executed notebooks of a build."""
    found = []
    for nb_path in sorted((build / "jupyter_execute").rglob("*.ipynb")):
        nb = json.loads(nb_path.read_text(encoding="utf-8"))
        for cell in nb.get("cells", []):
            for out in cell.get("outputs", []):
                if out.get("output_type") == "stream" and out.get("name") == "stderr":
                    text = "".join(out.get("text", "")).strip()
                    first = text.splitlines()[0] if text else ""
                    found.append(f"{nb_path.relative_to(build / 'jupyter_execute')}: {first}")
    return found


TIMINGS = ".companion-timings.json"
#: Per chapter, a hash of its recorded `paper` result as last shown: a new record re-executes the chapter.
RECORDS_SEEN = ".companion-records.json"


def record_digest(chapter_id: str) -> str:
    """SHA-256 of the chapter's recorded ``paper`` result ("" when there is none)."""
    import hashlib

    from . import records

    path = records.record_path(chapter_id, "paper")
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""


def registry_digest() -> str:
    """SHA-256 of every claims registry file: a changed rule re-executes the book."""
    import hashlib

    from . import registry

    h = hashlib.sha256()
    for paper in registry.PAPERS:
        for f in sorted(registry.registry_dir(paper).glob("*.yml")):
            h.update(f.name.encode())
            h.update(f.read_bytes())
    return h.hexdigest()


def book_chapters(only: list[str] | None = None) -> list[chapters.Chapter]:
    """The chapters in the table of contents (what ``jupyter-book build`` executes), in book order."""
    in_toc = set(chapters.toc_order())
    found = [c for c in chapters.all_chapters() if f"notebooks/{c.path.parent.name}/{c.path.stem}" in in_toc]
    if only is not None:
        for cid in only:
            chapters.get(cid)  # unknown -> ConfigError (one line)
        found = [c for c in found if c.id in only]
    return found


def open_execution_cache(build: Path):
    """Jupyter Book's execution cache, without records whose notebook file is missing.

    jupyter-cache writes a record before its file; a build interrupted between
    the two would leave a record that matches but cannot be read.
    """
    from jupyter_cache import get_cache
    from jupyter_cache.cache.db import NbCacheRecord

    jc = get_cache(str(build / ".jupyter_cache"))
    broken = [r.pk for r in jc.list_cache_records() if not jc._get_notebook_path_cache(r.hashkey).is_file()]
    if broken:
        NbCacheRecord.remove_records(broken, jc.db)
    return jc


def _with_outputs(source, executed):
    """The source notebook with the executed outputs: the cells hash exactly like the source."""
    merged = copy.deepcopy(source)
    src_cells = [c for c in merged.cells if c.cell_type == "code"]
    run_cells = [c for c in executed.cells if c.cell_type == "code"]
    if len(src_cells) != len(run_cells):
        raise RuntimeError("the executed notebook has other code cells than its source")
    for a, b in zip(src_cells, run_cells):
        a.outputs, a.execution_count = b.outputs, b.execution_count
    merged.metadata.update({k: v for k, v in executed.metadata.items() if k == "language_info"})
    return merged


def chapter_order(ids: list[str], profile: str, build: Path) -> list[str]:
    """Longest first, by the times measured last (this build's, then the model cache's). A fresh
    clone has measured nothing yet: under quick it falls back on the cold-build times committed in
    results/cost.json, so even the first build starts the longest chapters first."""
    committed = {c: v["quick_s"] for c, v in records.load_costs().get("chapters", {}).items()
                 if profile == "quick" and "quick_s" in v}
    timings = {**committed, **parallel.load_timings(parallel.cache_timings_file()).get(profile, {}),
               **parallel.load_timings(build / TIMINGS).get(profile, {})}
    return parallel.longest_first(ids, timings)


def execute_chapters(build: Path, profile: str, workers: int | None = None, scheduler: str | None = None,
                     only: list[str] | None = None, log=print) -> list[dict]:
    """Execute every book chapter the execution cache lacks and add it there; returns the failures."""
    import nbformat
    from jupyter_cache.base import CacheBundleIn
    from jupyter_cache.cache.db import NbCacheRecord

    jc = open_execution_cache(build)
    seen_file = build / RECORDS_SEEN
    seen = json.loads(seen_file.read_text()) if seen_file.is_file() else {}  # {chapter: record digest}
    todo = {}
    for ch in book_chapters(only):
        nb = nbformat.read(ch.path, as_version=4)
        try:
            rec = jc.match_cache_notebook(nb)
        except KeyError:
            todo[ch.id] = (ch, nb)
            continue
        if seen.get(ch.id, "") != record_digest(ch.id):  # a new paper record: show it
            NbCacheRecord.remove_records([rec.pk], jc.db)
            todo[ch.id] = (ch, nb)
    if not todo:
        log(f"bookbuild: all {len(book_chapters(only))} chapters are in the execution cache")
        return []
    order = chapter_order(list(todo), profile, build)
    # Networks as tasks: the networks these chapters declare are trained first, each as its own task,
    # so the notebooks below only load them (companion.prebuild).
    lost = prebuild.prebuild([(cid, profile, None) for cid in order], workers, scheduler, log=log)
    if lost:
        return [network_failure(build, r) for r in lost]
    where = f"on {scheduler}" if scheduler else f"with {workers or os.cpu_count()} workers"
    log(f"bookbuild: executing {len(order)} chapters {where} (profile {profile}), longest first")
    tasks = [dict(chapter_id=cid, profile=profile, source=nbformat.writes(todo[cid][1])) for cid in order]
    failures = []
    book_dir = paths.repo_root() / "book"
    results = parallel.run_tasks(tasks, workers, scheduler, log=log, groups=config.shared_runs())
    for done, r in enumerate(results, 1):
        cid = r["chapter"]
        ch, source = todo[cid]
        if r.get("ok"):
            try:
                merged = _with_outputs(source, nbformat.reads(r["notebook"], as_version=4))
                uri = book_dir / "notebooks" / ch.path.parent.name / ch.path.name
                bundle = CacheBundleIn(merged, str(uri), data={"execution_seconds": r["seconds"]})
                jc.cache_notebook_bundle(bundle, check_validity=False, overwrite=True)
                # The claims store of this machine (the scorecard reads it), also when a cluster ran it.
                store = claims.store_dir(profile) / f"{cid}.json"
                parallel.atomic_write(store, json.dumps(r["claims"], indent=1))
                timings_files = [build / TIMINGS, parallel.cache_timings_file()]
                parallel.record_timing(timings_files, profile, cid, r["seconds"])
                seen[cid] = record_digest(cid)
                parallel.atomic_write(seen_file, json.dumps(seen, indent=1, sort_keys=True))
            except Exception as exc:
                r = {**r, "ok": False, "error": f"{type(exc).__name__}: {exc}", "traceback": ""}
        if not r.get("ok"):
            report = build / "reports" / f"{cid}.log"
            parallel.atomic_write(report, r.get("traceback") or r["error"])
            failures.append({**r, "report": str(report)})
        log(parallel.progress_line(r, done, len(tasks)))
    return failures


def network_failure(build: Path, r: dict) -> dict:
    """A failed network task as a build failure: its traceback in ``_build/reports/network-KEY.log``."""
    key = str(r.get("key"))[:12]
    report = build / "reports" / f"network-{key}.log"
    parallel.atomic_write(report, r.get("traceback") or r["error"])
    return {**r, "chapter": f"network {key} (for {r['chapter']})", "report": str(report)}


def build_parser(prog: str = "python -m companion.bookbuild") -> argparse.ArgumentParser:
    ap = Parser(prog=prog, description="Execute the chapters in parallel, then build the book.")
    add_arguments(ap)
    return ap


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--path-output", default=None, help="folder to hold _build (default: book/)")
    ap.add_argument("--profile", default=None,
                    help="smoke, quick or paper (default: $COMPANION_PROFILE or quick)")
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--workers", type=positive, default=None, metavar="N",
                       help="chapters executed at once on this machine (default: one per core)")
    where.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="execute the chapters on this Dask scheduler, e.g. tcp://10.0.0.5:8786")
    ap.add_argument("--chapters", default=None, metavar="ID,ID",
                    help="execute only these chapters (with --no-sphinx: a partial, cached execution)")
    ap.add_argument("--no-sphinx", action="store_true", help="execute into the cache only; no HTML")
    ap.add_argument("--dry-run", action="store_true",
                    help="list the networks declared (to train or cached, estimated cost), then stop")


def main(argv: list[str] | None = None) -> int:
    return run_build(build_parser().parse_args(argv))


def run_build(args) -> int:
    try:
        profile = config.active_profile(args.profile)
        only = [c.strip() for c in args.chapters.split(",") if c.strip()] if args.chapters else None
        book_chapters(only)
    except config.ConfigError as exc:
        print(f"bookbuild: error: {exc}", file=sys.stderr)
        return 2
    if getattr(args, "dry_run", False):  # every chapter of the build (those already executed too); no writes
        prebuild.prebuild([(c.id, profile, None) for c in book_chapters(only)], dry_run=True)
        return 0
    root = paths.repo_root()
    book = root / "book"
    out = Path(args.path_output).resolve() if args.path_output else book
    build = out / "_build"
    stamp_file = build / ".companion-stamp.json"
    stamp = {"profile": profile, "code": cache.fingerprint(()), "registry": registry_digest()}
    old = json.loads(stamp_file.read_text()) if stamp_file.is_file() else None
    if old != stamp:
        for sub in (".jupyter_cache", "jupyter_execute"):
            shutil.rmtree(build / sub, ignore_errors=True)
        (build / RECORDS_SEEN).unlink(missing_ok=True)
        if old is not None:
            print(f"bookbuild: library or profile changed ({old.get('profile')} -> {profile}); "
                  "cleared the execution cache")
        # What goes into the emptied cache from now on matches this stamp.
        parallel.atomic_write(stamp_file, json.dumps(stamp))
    t0 = time.perf_counter()
    try:
        failures = execute_chapters(build, profile, args.workers, args.scheduler, only,
                                    log=lambda *a: print(*a, flush=True))
    except parallel.ClusterError as exc:
        print(f"bookbuild: error: {exc}", file=sys.stderr)
        return 2
    t_exec = time.perf_counter() - t0
    if failures:
        for f in failures:
            print(f"bookbuild: {f['chapter']} failed: {f['error']} (traceback: {f['report']})",
                  file=sys.stderr)
        print(f"bookbuild: FAILED: {len(failures)} chapters failed after {t_exec:.0f} s", file=sys.stderr)
        return 1
    if args.no_sphinx:
        print(f"bookbuild: executed into {build / '.jupyter_cache'} in {t_exec:.0f} s (profile {profile})")
        return 0
    env = dict(os.environ, COMPANION_PROFILE=profile)
    env.setdefault("TQDM_DISABLE", "1")
    jb = Path(sys.executable).parent / "jupyter-book"
    cmd = [str(jb if jb.exists() else "jupyter-book"), "build", str(book), "--all", "-W", "--keep-going"]
    if args.path_output:
        cmd += ["--path-output", str(out)]
    print("bookbuild:", " ".join(cmd), f"(profile {profile})", flush=True)
    rc = subprocess.call(cmd, env=env, cwd=root)
    dt = time.perf_counter() - t0
    noise = stderr_outputs(build) if rc == 0 else []
    for line in noise:
        print(f"bookbuild: stderr output in {line}", file=sys.stderr)
    if noise:
        rc = 1
    if rc == 0:
        print(f"bookbuild: built {build / 'html' / 'index.html'} in {dt:.0f} s "
              f"(chapters {t_exec:.0f} s; profile {profile})")
    else:
        print(f"bookbuild: FAILED after {dt:.0f} s; execution logs in {build / 'html' / 'reports'}",
              file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
