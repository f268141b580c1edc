"""Every source tag used by a chapter or the library is explained, with an anchor, on its paper's
sources page (book/sources-<paper>.md), and the glossary has the anchors chapters link to."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAPERS = ["aitken2021", "pandey2022"]
SOURCE_PREFIXES = ("PAPER", "SUM", "CODE", "REC", "UNVERIFIED", "REPO", "INFERRED")
TAG = re.compile(r"\[([A-Z][A-Za-z0-9 _./-]*)\]")


def label(paper: str, tag: str) -> str:
    return f"src-{paper}-" + re.sub(r"[^a-z0-9]+", "-", tag.lower()).strip("-")


def anchors(path: Path, prefix: str) -> set[str]:
    return set(re.findall(rf"^\(({prefix}[a-z0-9-]*)\)=", path.read_text(encoding="utf-8"), re.M))


@pytest.mark.parametrize("paper", PAPERS)
def test_every_source_tag_has_an_anchor(paper):
    have = anchors(ROOT / "book" / f"sources-{paper}.md", f"src-{paper}-")
    files = sorted((ROOT / "notebooks" / paper).glob("*.ipynb")) + sorted(
        (ROOT / "src" / "companion" / paper).rglob("*.py"))
    missing = set()
    for f in files:
        for tag in TAG.findall(f.read_text(encoding="utf-8", errors="ignore")):
            if not tag.startswith(SOURCE_PREFIXES):
                continue  # code such as [S], [PAD] or type hints
            base = tag.split(" ")[0]  # "CODE cell 58" is explained under [CODE] at least
            if label(paper, tag) not in have and label(paper, base) not in have:
                missing.add(f"[{tag}] ({f.relative_to(ROOT)})")
    assert not missing, f"source tags without an anchor on book/sources-{paper}.md: {sorted(missing)}"


def test_links_from_the_book_resolve_to_anchors():
    have = set()
    for paper in PAPERS:
        have |= anchors(ROOT / "book" / f"sources-{paper}.md", "src-")
    have |= anchors(ROOT / "book" / "glossary.md", "gloss-")
    used = set()
    for f in list((ROOT / "notebooks").glob("*/*.ipynb")) + list((ROOT / "book").rglob("*.md")):
        if "_build" in f.parts:
            continue
        text = f.read_text(encoding="utf-8", errors="ignore")
        link = r"[(<`](src-(?:aitken2021|pandey2022)-[a-z0-9-]+|gloss-[a-z0-9-]+)[)>`]"
        used |= set(re.findall(link, text))
    assert not used - have, f"links to anchors that do not exist: {sorted(used - have)}"
