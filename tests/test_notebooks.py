"""Every chapter follows the convention of notebooks/README.md."""

import ast
from pathlib import Path

import pytest

from companion import chapters, config

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*/*.ipynb"))
BOOK_PAGES = sorted((ROOT / "book").glob("*.ipynb"))


def test_there_are_chapters():
    assert NOTEBOOKS, "no chapter notebooks found"


@pytest.mark.parametrize("path", NOTEBOOKS + BOOK_PAGES, ids=lambda p: p.name)
def test_committed_without_outputs(path):
    nb = chapters.read_notebook(path)
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert not cell.get("outputs") and cell.get("execution_count") is None, path
    assert nb["metadata"]["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("path", NOTEBOOKS + BOOK_PAGES, ids=lambda p: p.name)
def test_valid_nbformat_with_cell_ids(path):
    # nbformat 4.5 wants an id on every cell; without one, every execution warns (and will fail later)
    import json

    import nbformat

    raw = json.loads(path.read_text())
    assert all("id" in c for c in raw["cells"]), f"{path.name}: cells without an id"
    nbformat.validate(nbformat.reads(path.read_text(), as_version=4))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_chapter_convention(path):
    nb = chapters.read_notebook(path)
    meta = nb["metadata"]["companion"]
    assert set(meta) >= {"id", "paper", "figure", "title"}
    assert meta["id"] == path.stem and meta["paper"] == path.parent.name
    assert meta["paper"] in chapters.PAPERS
    first = "".join(nb["cells"][0]["source"])
    assert first.startswith("# ") and "Sources" in "".join(
        "".join(c["source"]) for c in nb["cells"][:3] if c["cell_type"] == "markdown"
    ), "title cell and a Sources note come first"
    params = chapters.parameters_cell(nb)
    assert params is not None, "a code cell tagged `parameters`"
    names = {t.id for node in ast.parse("".join(params["source"])).body
             if isinstance(node, ast.Assign) for t in node.targets}
    assert "profile" in names
    # papermill must understand every line (a comment holding "=" trips its line parser)
    from papermill.translators import PythonTranslator

    lines = [ln for ln in "".join(params["source"]).splitlines()
             if ln.strip() and not ln.lstrip().startswith("#")]
    assert len(PythonTranslator.inspect({"source": "".join(params["source"])})) == len(lines)
    assert names - {"profile"} == set(config.schema(meta["id"])), "parameters cell matches _config.yml"
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            tree = ast.parse("".join(line for line in cell["source"]
                                     if not line.lstrip().startswith(("%", "!"))))
            assert not any(isinstance(n, (ast.FunctionDef, ast.ClassDef)) for n in ast.walk(tree)), (
                f"{path.name}: library code belongs in src/companion, not in a notebook"
            )
    assert any("card.show()" in "".join(c["source"]) for c in nb["cells"]), "ends with a claims table"


def test_every_chapter_is_in_the_book_and_configured():
    toc = set(chapters.toc_order())
    ids = {p.stem for p in NOTEBOOKS}
    for path in NOTEBOOKS:
        rel = f"notebooks/{path.parent.name}/{path.stem}"
        assert rel in toc, f"{rel} missing from book/_toc.yml"
    assert ids == set(config.chapter_ids()), "chapters in _config.yml and notebooks/ differ"
    for f in chapters.toc_order():
        assert (ROOT / "book" / f).with_suffix(".ipynb").exists() or (ROOT / "book" / f).with_suffix(
            ".md"
        ).exists(), f"toc entry {f} has no file"


def test_chapter_ids_are_unique():
    ids = [c.id for c in chapters.all_chapters()]
    assert len(ids) == len(set(ids))


def test_scorecard_is_read_after_the_chapters():
    """Sphinx reads documents in sorted order; the scorecard must come after every chapter."""
    assert all("scorecard" > f"notebooks/{p.parent.name}/{p.stem}" for p in NOTEBOOKS)
    nb = chapters.read_notebook(ROOT / "book" / "scorecard.ipynb")
    assert nb["metadata"]["mystnb"]["execution_mode"] == "force"


def test_book_reaches_the_notebooks():
    link = ROOT / "book" / "notebooks"
    assert link.is_symlink() and link.resolve() == (ROOT / "notebooks").resolve()
