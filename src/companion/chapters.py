"""The chapter registry, read from the notebooks' own metadata.

Each chapter notebook carries ``metadata.companion = {id, paper, figure,
title}``. That block is the one place naming a chapter: the command line, the
scorecard and the tests all read it here, so nothing drifts apart.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from . import paths
from .config import ConfigError

PAPERS = {
    "aitken2021": "Aitken, Ramasesh, Cao, Maheswaranathan (2021), Understanding How Encoder-Decoder Architectures Attend",
    "pandey2022": "Pandey, Vashisht, Ramaswamy (2022), On the Interpretability of Attention Networks",
}


@dataclass(frozen=True)
class Chapter:
    id: str
    paper: str
    figure: str
    title: str
    path: Path


def read_notebook(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def parameters_cell(nb: dict) -> dict | None:
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            return cell
    return None


@lru_cache(maxsize=2)
def _scan(root: str, stamp: tuple) -> tuple[Chapter, ...]:
    found = []
    for path in sorted(Path(root).glob("*/*.ipynb")):
        meta = read_notebook(path).get("metadata", {}).get("companion")
        if not meta:
            continue
        found.append(Chapter(meta["id"], meta["paper"], meta["figure"], meta["title"], path))
    order = {p: i for i, p in enumerate(PAPERS)}
    found.sort(key=lambda c: (order.get(c.paper, 99), str(c.path)))
    return tuple(found)


def all_chapters() -> list[Chapter]:
    root = paths.notebooks_dir()
    files = sorted(root.glob("*/*.ipynb"))
    stamp = tuple((str(f), f.stat().st_mtime) for f in files)
    return list(_scan(str(root), stamp))


def get(chapter_id: str) -> Chapter:
    for ch in all_chapters():
        if ch.id == chapter_id:
            return ch
    allowed = ", ".join(c.id for c in all_chapters()) or "(none)"
    raise ConfigError(f"unknown chapter {chapter_id!r}; allowed: {allowed}")
