"""A content-addressed store for trained models and results.

An entry's key is a SHA-256 of (kind, configuration, a fingerprint of the
library source that produced it). Change a hyperparameter, a seed or a line of
the relevant code and the key changes, so a stale result is never served;
nothing needs invalidating by hand. The fingerprint reads the code, not the
text: it hashes each module's syntax tree with docstrings removed, so editing a
docstring, a comment or the layout keeps the trained networks (hours of them at
the papers' budget) while any change to what runs retrains them.

Layout: ``<cache_root>/<kind>/<key[:2]>/<key>.pt`` plus ``<key>.json`` (the
configuration in clear and the payload's SHA-256). Writes go to a temporary
file in the same folder and are moved into place with ``os.replace`` (atomic on
POSIX), the payload before its manifest: an entry counts only once its manifest
exists and the payload's hash matches it, so an interrupted write or a damaged
file is detected and recomputed. :func:`cached` holds a ``filelock`` lock
(``<key>.lock``) while it computes an entry, so processes that need the same
entry at once train it once: the others wait, then load. Loads use ``torch.load(weights_only=True)``:
payloads hold tensors, numbers, strings and containers of them, never pickled
code.
"""

from __future__ import annotations

import ast
import hashlib
import json
import logging
import os
import socket
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import torch
from filelock import FileLock

from . import paths

log = logging.getLogger(__name__)

#: Shared modules whose code every entry depends on (besides its own scope).
SHARED_MODULES = ("cache.py", "seeding.py")


def _canonical(obj: Any) -> Any:
    """A JSON-ready form of a configuration with a stable key order."""
    if isinstance(obj, Mapping):
        return {str(k): _canonical(v) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))}
    if isinstance(obj, (list, tuple)):
        return [_canonical(v) for v in obj]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        return float(obj)
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, torch.dtype):
        return str(obj)
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise TypeError(f"cache configuration values must be plain data, got {type(obj).__name__}: {obj!r}")


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                # An empty body is not valid Python: keep a placeholder where the docstring was alone.
                node.body = body[1:] or [ast.Pass()]
    return tree


def code_text(source: bytes) -> bytes:
    """What a module's fingerprint hashes: its syntax tree without docstrings, comments or layout.

    A file that does not parse is hashed as it stands (it would fail at import anyway).
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    return ast.dump(_strip_docstrings(tree), include_attributes=False).encode()


@lru_cache(maxsize=32)
def fingerprint(scope: tuple[str, ...] = ()) -> str:
    """SHA-256 of the library source a result depends on.

    ``scope`` names subpackages or modules of ``companion`` (e.g. ``("pandey2022",)``);
    the shared modules in :data:`SHARED_MODULES` are always included. An empty
    scope means the whole package.
    """
    root = paths.PACKAGE_DIR
    targets = [root] if not scope else [root / s for s in (*scope, *SHARED_MODULES)]
    files: list[Path] = []
    for t in targets:
        if t.is_dir():
            files.extend(sorted(t.rglob("*.py")))
        elif t.with_suffix(".py").is_file():
            files.append(t.with_suffix(".py"))
        elif t.is_file():
            files.append(t)
    h = hashlib.sha256()
    for f in sorted(set(files)):
        h.update(str(f.relative_to(root)).encode())
        h.update(code_text(f.read_bytes()))
    return h.hexdigest()


def key(kind: str, config: Mapping, scope: Iterable[str] = ()) -> str:
    blob = json.dumps(
        {"kind": kind, "config": _canonical(config), "code": fingerprint(tuple(scope))},
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def _entry(kind: str, k: str) -> tuple[Path, Path]:
    folder = paths.cache_root() / kind / k[:2]
    return folder / f"{k}.pt", folder / f"{k}.json"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _atomic_write(path: Path, write: Callable[[Any], None], mode: str = "wb") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode) as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load(kind: str, config: Mapping, scope: Iterable[str] = ()) -> dict | None:
    """The stored payload, or None if absent, partial or damaged (a damaged entry is removed)."""
    k = key(kind, config, scope)
    payload, manifest = _entry(kind, k)
    if not manifest.is_file():
        return None
    try:
        meta = json.loads(manifest.read_text())
        if meta.get("sha256") != _sha256(payload):
            raise ValueError("payload hash does not match its manifest")
        return torch.load(payload, map_location="cpu", weights_only=True)
    except Exception as exc:  # any damage means: recompute
        log.warning("cache entry %s/%s is damaged (%s); recomputing", kind, k[:12], exc)
        manifest.unlink(missing_ok=True)
        payload.unlink(missing_ok=True)
        return None


def store(kind: str, config: Mapping, payload: dict, scope: Iterable[str] = (),
          cost: Mapping | None = None) -> Path:
    """Write ``payload`` atomically; returns the payload path. ``cost``: what computing it took
    (:func:`cached` measures it), kept in the manifest so that a run that only reads the entry can
    still say what it cost (:func:`compute_cost`)."""
    if not isinstance(payload, dict):
        raise TypeError("a cache payload must be a dict")
    scope = tuple(scope)
    k = key(kind, config, scope)
    pt, manifest = _entry(kind, k)
    _atomic_write(pt, lambda fh: torch.save(payload, fh))
    meta = {
        "kind": kind,
        "key": k,
        "config": _canonical(config),
        "scope": list(scope),
        "code": fingerprint(scope),
        "sha256": _sha256(pt),
    }
    if cost:
        meta["compute"] = dict(cost)
    _atomic_write(manifest, lambda fh: fh.write(json.dumps(meta, indent=1, sort_keys=True)), mode="w")
    return pt


def compute_cost(kind: str, k: str) -> dict | None:
    """``{wall_s, cpu_s, date, host}`` of computing the entry ``kind``/``k`` (a full key), as its
    manifest recorded it; None for an entry stored without it (or absent)."""
    _, manifest = _entry(kind, k)
    try:
        return json.loads(manifest.read_text()).get("compute")
    except (OSError, ValueError):
        return None


def _cpu_seconds() -> float:
    """User + system CPU time of this process, all its threads."""
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


#: If set, :func:`cached` appends ``computed|loaded KIND KEY PID`` per call to this file
#: (how the tests see that concurrent chapters train a shared entry once).
LOG_ENV = "COMPANION_CACHE_LOG"


def _log_event(event: str, kind: str, k: str) -> None:
    target = os.environ.get(LOG_ENV)
    if target:
        # One short O_APPEND write per line: lines from several processes do not interleave.
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, f"{event} {kind} {k} {os.getpid()}\n".encode())
        finally:
            os.close(fd)


def cached(kind: str, config: Mapping, compute: Callable[[], dict], scope: Iterable[str] = ()) -> dict:
    """Return the stored result for (kind, config, code), computing and storing it if needed."""
    scope = tuple(scope)
    k = key(kind, config, scope)
    hit = load(kind, config, scope)
    if hit is not None:
        _log_event("loaded", kind, k)
        return hit
    # Chapters run in parallel processes (and on cluster workers sharing a cache):
    # one lock per entry, beside it, so a second caller waits for the first to
    # finish training and then loads its result instead of training it again.
    pt, _ = _entry(kind, k)
    lock_path = pt.with_suffix(".lock")
    pt.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(lock_path)):
        try:
            hit = load(kind, config, scope)
            if hit is not None:
                _log_event("loaded", kind, k)
                return hit
            t0, c0 = time.perf_counter(), _cpu_seconds()
            payload = compute()
            cost = {"wall_s": round(time.perf_counter() - t0, 3), "cpu_s": round(_cpu_seconds() - c0, 3),
                    "date": datetime.now(UTC).isoformat(timespec="seconds"), "host": socket.gethostname()}
            store(kind, config, payload, scope, cost)
            _log_event("computed", kind, k)
        finally:
            # Removed while held, after the store: whoever opens a fresh lock file later
            # finds the entry on its check under the lock (a failed compute leaves nothing).
            lock_path.unlink(missing_ok=True)
    # Return what a later load returns (e.g. tensors detached, on the CPU).
    return load(kind, config, scope) or payload


def clear(kind: str | None = None) -> int:
    """Remove entries (of one kind, or all); returns how many files were removed."""
    root = paths.cache_root() if kind is None else paths.cache_root() / kind
    n = 0
    if root.exists():
        for f in root.rglob("*"):
            if f.is_file() and f.suffix in (".pt", ".json", ".tmp", ".lock") and "claims" not in f.parts:
                f.unlink()
                n += 1
    return n
