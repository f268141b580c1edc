"""Build the book, clearing Jupyter Book's execution cache when it would be stale.

Jupyter Book's cache (jupyter-cache) keys an executed notebook on its code
cells only: an edit of the library, or another profile, would otherwise be
served old outputs (ecosystem note, JB pitfall 5). This wrapper keeps a stamp
of (profile, library fingerprint) next to the build and clears the execution
cache when it changes. Trained models are cached by content elsewhere, so
re-executing a chapter whose models are unchanged is fast.

    python -m companion.bookbuild [--path-output DIR] [--profile P]

``make book`` and ``make test`` call this; Sphinx warnings and execution errors
fail the build (``-W --keep-going``, ``nb_execution_raise_on_error``), and so
does anything a chapter writes to stderr (Python warnings included): the
rendered book should show none.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from . import cache, config, paths


def stderr_outputs(build: Path) -> list[str]:
    """``chapter: first line`` for every stderr output in the executed notebooks of a build."""
    found = []
    for nb_path in sorted((build / "jupyter_execute").rglob("*.ipynb")):
        nb = json.loads(nb_path.read_text(encoding="utf-8"))
        for cell in nb.get("cells", []):
            for out in cell.get("outputs", []):
                if out.get("output_type") == "stream" and out.get("name") == "stderr":
                    text = "".join(out.get("text", "")).strip()
                    found.append(f"{nb_path.relative_to(build / 'jupyter_execute')}: {text.splitlines()[0] if text else ''}")
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m companion.bookbuild")
    ap.add_argument("--path-output", default=None, help="folder to hold _build (default: book/)")
    ap.add_argument("--profile", default=None, help="smoke, quick or paper (default: $COMPANION_PROFILE or quick)")
    args = ap.parse_args(argv)
    try:
        profile = config.active_profile(args.profile)
    except config.ConfigError as exc:
        print(f"bookbuild: error: {exc}", file=sys.stderr)
        return 2
    root = paths.repo_root()
    book = root / "book"
    out = Path(args.path_output).resolve() if args.path_output else book
    build = out / "_build"
    stamp_file = build / ".companion-stamp.json"
    stamp = {"profile": profile, "code": cache.fingerprint(())}
    old = json.loads(stamp_file.read_text()) if stamp_file.is_file() else None
    if old != stamp:
        for sub in (".jupyter_cache", "jupyter_execute"):
            shutil.rmtree(build / sub, ignore_errors=True)
        if old is not None:
            print(f"bookbuild: library or profile changed ({old.get('profile')} -> {profile}); "
                  "cleared the execution cache")
    env = dict(os.environ, COMPANION_PROFILE=profile)
    env.setdefault("TQDM_DISABLE", "1")
    jb = Path(sys.executable).parent / "jupyter-book"
    cmd = [str(jb if jb.exists() else "jupyter-book"), "build", str(book), "--all", "-W", "--keep-going"]
    if args.path_output:
        cmd += ["--path-output", str(out)]
    t0 = time.perf_counter()
    print("bookbuild:", " ".join(cmd), f"(profile {profile})", flush=True)
    rc = subprocess.call(cmd, env=env, cwd=root)
    dt = time.perf_counter() - t0
    noise = stderr_outputs(build) if rc == 0 else []
    for line in noise:
        print(f"bookbuild: stderr output in {line}", file=sys.stderr)
    if noise:
        rc = 1
    if rc == 0:
        build.mkdir(parents=True, exist_ok=True)
        stamp_file.write_text(json.dumps(stamp))
        print(f"bookbuild: built {build / 'html' / 'index.html'} in {dt:.0f} s (profile {profile})")
    else:
        print(f"bookbuild: FAILED after {dt:.0f} s; execution logs in {build / 'html' / 'reports'}",
              file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
