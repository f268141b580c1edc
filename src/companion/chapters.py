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

import yaml

from . import paths
from .config import ConfigError

#: The two papers, in the book's order.
PAPERS = {
    "aitken2021": ("Aitken, Ramasesh, Cao, Maheswaranathan (2021), "
                   "Understanding How Encoder-Decoder Architectures Attend"),
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


def toc_order() -> list[str]:
    """The book's files in reading order (``book/_toc.yml``), e.g. ``notebooks/aitken2021/fig1``."""
    toc = paths.repo_root() / "book" / "_toc.yml"
    if not toc.is_file():
        return []
    data = yaml.safe_load(toc.read_text(encoding="utf-8")) or {}
    files: list[str] = []
    for part in data.get("parts", []):
        for entry in part.get("chapters", []):
            files.append(entry["file"])
            files.extend(sec["file"] for sec in entry.get("sections", []))
    return files


@lru_cache(maxsize=2)
def _scan(root: str, stamp: tuple) -> tuple[Chapter, ...]:
    found = []
    for path in sorted(Path(root).glob("*/*.ipynb")):
        meta = read_notebook(path).get("metadata", {}).get("companion")
        if not meta:
            continue
        found.append(Chapter(meta["id"], meta["paper"], meta["figure"], meta["title"], path))
    # The book's order; chapters missing from the table of contents go last, by path.
    order = {f: i for i, f in enumerate(toc_order())}
    found.sort(key=lambda c: (order.get(f"notebooks/{c.path.parent.name}/{c.path.stem}", len(order)),
                              str(c.path)))
    return tuple(found)


def all_chapters() -> list[Chapter]:
    """Every chapter, in the order of the book."""
    root = paths.notebooks_dir()
    files = sorted(root.glob("*/*.ipynb")) + [paths.repo_root() / "book" / "_toc.yml"]
    stamp = tuple((str(f), f.stat().st_mtime) for f in files if f.exists())
    return list(_scan(str(root), stamp))


def get(chapter_id: str) -> Chapter:
    for ch in all_chapters():
        if ch.id == chapter_id:
            return ch
    allowed = ", ".join(c.id for c in all_chapters()) or "(none)"
    raise ConfigError(f"unknown chapter {chapter_id!r}; allowed: {allowed}")
