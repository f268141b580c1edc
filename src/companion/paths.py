"""Where things live: the repository root, the root ``_config.yml``, the cache.

Paths are resolved from the installed package, never from the working
directory, because the book executes chapters through a symlink and papermill
executes them from wherever it is called.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def repo_root() -> Path:
    """The checkout that holds ``_config.yml`` (an editable install is assumed).

    ``COMPANION_ROOT`` overrides the guess, for installs that are not editable.
    """
    env = os.environ.get("COMPANION_ROOT")
    if env:
        return Path(env).expanduser().resolve()
    for parent in PACKAGE_DIR.parents:
        if (parent / "_config.yml").is_file() and (parent / "notebooks").is_dir():
            return parent
    raise FileNotFoundError(
        "cannot find the repository root (a folder holding _config.yml and notebooks/) above "
        f"{PACKAGE_DIR}; install with `pip install -e .` or set COMPANION_ROOT"
    )


def config_file() -> Path:
    return repo_root() / "_config.yml"


def notebooks_dir() -> Path:
    return repo_root() / "notebooks"


def shared_data_dir() -> Path:
    """Where the project's data files live, first match wins.

    1. ``$COMPANION_DATA``;
    2. ``../shared/data`` beside the checkout (the project's shared data folder);
    3. ``data/`` in the repository: a verbatim copy of the shared files (with
       their SOURCE.md and checksums), so that a clone elsewhere is complete.
    """
    env = os.environ.get("COMPANION_DATA")
    if env:
        return Path(env).expanduser().resolve()
    shared = repo_root().parent / "shared" / "data"
    return shared if shared.is_dir() else repo_root() / "data"


def cache_root() -> Path:
    """The cache folder: ``COMPANION_CACHE``, else ``$XDG_CACHE_HOME/attention-companion``.

    It lives outside the repository by default so that a fresh clone or a
    ``git clean`` never throws away hours of training.
    """
    env = os.environ.get("COMPANION_CACHE")
    if env:
        return Path(env).expanduser().resolve()
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "attention-companion"
