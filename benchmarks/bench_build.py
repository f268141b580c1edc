"""Cold build of a fixed set of chapters with 1 worker, then with N (default 2), side by side.

    python benchmarks/bench_build.py                # quick profile, the default chapters, 1 vs 2 workers
    python benchmarks/bench_build.py --profile smoke --chapters f-arch,t-data,f-em1   # a fast trial
    python benchmarks/bench_build.py --sweep f-em1         # also: a 4-seed sweep, 1 vs 2 workers

Each build runs ``python -m companion.bookbuild --no-sphinx`` (the chapter execution stage of
``make book``; the Sphinx stage after it is serial and the same in both) in a fresh build folder
with a fresh model cache, so both builds are cold. The N-worker build starts from the durations
the 1-worker build measured (as a rebuild after a library change would), so it starts the longest
chapters first. Prints both wall times and the ratio. Target on the 2-core machine (quick, the
default set, which takes at least 5 minutes on one worker): ratio >= 1.7; for the sweep, the
2-worker time at most 60 % of the 1-worker time.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Pandey et al.'s synthetic chapters: many mid-sized chapters (quick: well over 5 minutes on one core).
DEFAULT_CHAPTERS = "f-em1,f-em2,f-em3,t-data,t-d1,t-d2a,t-d2b,t-layer,t-cplx,t-a1,t-a2,f-trend,f-alpha"


def _timed(cmd: list[str], env: dict) -> float:
    t0 = time.perf_counter()
    rc = subprocess.call(cmd, env=env)
    dt = time.perf_counter() - t0
    if rc != 0:
        sys.exit(f"bench_build: {' '.join(cmd)} failed with exit status {rc}")
    return dt


def build(workers: int, chapters: str, profile: str, root: Path, timings_from: Path | None) -> float:
    out = root / f"build-{workers}w"
    env = dict(os.environ, COMPANION_CACHE=str(root / f"cache-{workers}w"), TQDM_DISABLE="1")
    if timings_from is not None and timings_from.is_file():
        (out / "_build").mkdir(parents=True, exist_ok=True)
        shutil.copy(timings_from, out / "_build" / ".companion-timings.json")
    print(f"\n== {workers} worker(s): cold execution of {chapters} ({profile})", flush=True)
    return _timed(
        [
            sys.executable,
            "-m",
            "companion.bookbuild",
            "--no-sphinx",
            "--profile",
            profile,
            "--chapters",
            chapters,
            "--workers",
            str(workers),
            "--path-output",
            str(out),
        ],
        env,
    )


def sweep(workers: int, chapter: str, profile: str, root: Path) -> float:
    env = dict(os.environ, COMPANION_CACHE=str(root / f"sweep-cache-{workers}w"), TQDM_DISABLE="1")
    print(f"\n== sweep {chapter} -p seed 0:4 with {workers} worker(s) ({profile})", flush=True)
    return _timed(
        [
            sys.executable,
            "-m",
            "companion.cli",
            "sweep",
            chapter,
            "-p",
            "seed",
            "0:4",
            "--profile",
            profile,
            "--workers",
            str(workers),
            "--output",
            str(root / f"sweep-{workers}w"),
        ],
        env,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chapters", default=DEFAULT_CHAPTERS)
    ap.add_argument("--profile", default="quick")
    ap.add_argument("--workers", type=int, default=2, help="workers of the parallel build (default 2)")
    ap.add_argument("--sweep", metavar="CHAPTER", help="also time a 4-seed sweep of CHAPTER, 1 vs N workers")
    ap.add_argument("--keep", action="store_true", help="keep the build folders and caches")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-build-"))
    try:
        t1 = build(1, args.chapters, args.profile, root, None)
        tn = build(
            args.workers,
            args.chapters,
            args.profile,
            root,
            root / "build-1w" / "_build" / ".companion-timings.json",
        )
        rows = [("build", t1, tn)]
        if args.sweep:
            rows.append(
                (
                    f"sweep {args.sweep} x4",
                    sweep(1, args.sweep, args.profile, root),
                    sweep(args.workers, args.sweep, args.profile, root),
                )
            )
        print(f"\ncpu cores: {os.cpu_count()}, profile {args.profile}, chapters: {args.chapters}")
        print(f"{'':<22}{'1 worker':>12}{f'{args.workers} workers':>12}{'speed-up':>10}{'share':>8}")
        for name, a, b in rows:
            print(f"{name:<22}{a:>10.0f} s{b:>10.0f} s{a / b:>9.2f}x{100 * b / a:>7.0f}%")
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
