"""No chapter's prose copies a number of a recorded run by hand.

The recorded runs at the papers' budget (``results/paper/<chapter>.json``) change whenever a chapter is
re-recorded; prose that quotes their numbers goes stale silently. Their numbers reach the reader through
generated output only (the verdict box, the glued "At the papers' budget" summary, the claims tables). This
test reads every markdown cell of every chapter and fails on a decimal number or a percentage that equals
(at the precision written) an estimate, interval end or table value of the chapter's record, unless the same
number is also the paper's value or a rule's threshold (the registry), a value of the library's tables of
the authors' numbers (``<paper>/reference.py``), or a parameter of the chapter (the root ``_config.yml``):
those come from the paper or the budget, not from our runs.
"""

import math
import re

import pytest

from companion import chapters, config, records, registry, stats
from companion.aitken2021 import reference as aitken_reference
from companion.pandey2022 import reference as pandey_reference

NUMBER = re.compile(r"(?<![\w.])[−-]?\d+(?:\.\d+)? ?%|(?<![\w.])[−-]?\d+\.\d+(?![\w.])")


def numbers(obj, out: set) -> set:
    if isinstance(obj, bool) or obj is None:
        return out
    if isinstance(obj, (int, float)):
        if math.isfinite(obj):
            out.add(float(obj))
    elif isinstance(obj, str):
        for m in NUMBER.findall(obj):
            out.add(float(m.rstrip("% ").replace("−", "-")))
    elif isinstance(obj, dict):
        for v in obj.values():
            numbers(v, out)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            numbers(v, out)
    return out


def equals(written: str, values: set) -> bool:
    """Does the written number equal one of ``values`` (or its percentage) at the precision written?"""
    text = written.rstrip("% ").replace("−", "-")
    x = float(text)
    places = len(text.split(".")[1]) if "." in text else 0
    return any(abs(round(v * scale, places) - x) < 1e-9 for v in values for scale in (1, 100))


def copied_numbers(text: str, results: set, known: set) -> list[str]:
    out = []
    for m in NUMBER.finditer(text):
        w = m.group(0)
        if float(w.rstrip("% ").replace("−", "-")) != 0 and equals(w, results) and not equals(w, known):
            out.append(w)
    return out


def test_the_scan_finds_a_copied_number_and_passes_generated_text():
    results, known = {0.9627, 0.8825, 1.0429}, {0.99, 6000.0}
    assert copied_numbers("the diagonal (mean 0.96, interval 0.88 to 1.04)", results, known) == [
        "0.96", "0.88", "1.04"]
    assert copied_numbers("a share of 96.3 %", results, known) == ["96.3 %"]
    assert copied_numbers("the rule asks for 0.99 after 6000 steps", results, known) == []
    assert copied_numbers("```{glue} paper-budget\n```", results, known) == []


@pytest.mark.parametrize("chapter", [c for c in chapters.all_chapters() if records.load(c.id, "paper")],
                         ids=lambda c: c.id)
def test_no_markdown_cell_copies_a_recorded_number(chapter):
    rec = records.load(chapter.id, "paper")
    results = set()
    for row in rec.get("claims", []):
        numbers([row.get(k) for k in ("estimate", "lo", "hi", "observed")], results)
    numbers(rec.get("tables"), results)
    known = {stats.LEVEL * 100}  # the intervals' confidence level is a method setting, not a result
    for e in registry.entries().values():
        numbers([e.rule, e.reference, e.statement, e.paper_value()], known)
    for profile in ("smoke", "quick", "paper"):
        numbers(config.resolve(chapter.id, profile).as_dict(), known)
    for tables in (aitken_reference.REFERENCE, pandey_reference.REFERENCE):  # the authors' numbers
        for frame in tables.values():
            numbers(frame.to_numpy().ravel().tolist(), known)
    nb = chapters.read_notebook(chapter.path)
    found = {i: copied for i, cell in enumerate(nb["cells"]) if cell["cell_type"] == "markdown"
             and (copied := copied_numbers("".join(cell["source"]), results, known))}
    assert not found, (f"{chapter.id}: markdown cells quote numbers of the recorded run by hand "
                       f"(cell: numbers): {found}; show them through the glued summary instead")
