"""The library's imports point down the layers listed in ``companion/__init__.py`` and form no cycle.

Every import counts: at the top of a module and inside functions (a late import still ties the two
modules together)."""

import ast
import re
from pathlib import Path

import companion

SRC = Path(companion.__file__).parent


def layers(doc: str) -> dict[str, int]:
    """``{top-level module or subpackage: layer index}`` from the ``- layer: a, b`` lines, bottom first."""
    out = {}
    lines = [ln for ln in doc.splitlines() if re.match(r"^- [a-z ]+: ", ln)]
    for i, line in enumerate(lines):
        for name in line.split(":", 1)[1].split(","):
            out[name.strip()] = i
    return out


def modules(src: Path) -> dict[str, Path]:
    out = {}
    for f in sorted(src.rglob("*.py")):
        parts = (src.name, *f.relative_to(src).with_suffix("").parts)
        out[".".join(parts).removesuffix(".__init__")] = f
    return out


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The library modules ``name`` imports, anywhere in its code (the root package itself excluded)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    root = name.split(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(pkg + ([node.module] if node.module else []))
            # `from . import x` imports the module x; `from .m import f` imports the module m
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        found.update(t for t in targets if t in known and t not in (name, root))
    return found


def graph(src: Path) -> dict[str, set[str]]:
    mods = modules(src)
    return {m: imports(m, p, set(mods)) for m, p in mods.items()}


def top(module: str) -> str:
    return module.split(".")[1] if "." in module else ""


def upward(edges: dict[str, set[str]], order: dict[str, int]) -> list[str]:
    """Imports from a module to one in a higher layer."""
    return sorted(f"{m} -> {d}" for m, deps in edges.items() for d in deps
                  if top(m) in order and top(d) in order and order[top(d)] > order[top(m)])


def cycles(edges: dict[str, set[str]]) -> list[str]:
    """One line per import that closes a cycle (depth-first search)."""
    found, state = [], {}  # state: 1 on the current path, 2 done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                found.append(" -> ".join([*path[path.index(nxt):], node, nxt]) if nxt in path
                             else f"{node} -> {nxt}")
            elif nxt not in state:
                visit(nxt, [*path, node])
        state[node] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m, [])
    return found


def test_the_layer_list_reads_bottom_up():
    order = layers(companion.__doc__)
    assert order["stats"] < order["claims"] < order["records"] < order["card"] < order["runner"]
    assert order["runner"] < order["parallel"] < order["recording"] < order["cli"]


def test_every_module_has_a_layer():
    missing = sorted({top(m) for m in modules(SRC)} - {""} - set(layers(companion.__doc__)))
    assert not missing, f"add these to the layer list in companion/__init__.py: {missing}"


def test_imports_only_point_down():
    up = upward(graph(SRC), layers(companion.__doc__))
    assert not up, "imports from a lower layer to a higher one: " + "; ".join(up)


def test_no_import_cycles():
    found = cycles(graph(SRC))
    assert not found, "import cycles: " + "; ".join(found)


def test_the_checks_catch_a_late_import_that_points_up(tmp_path):
    # known answer: `low` imports `high` inside a function, closing a cycle and pointing up
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "low.py").write_text("def f():\n    from . import high\n    return high\n")
    (pkg / "high.py").write_text("from .low import f\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "leaf.py").write_text("from .. import low\nimport pkg.high\n")
    edges = graph(pkg)
    assert edges["pkg.low"] == {"pkg.high"} and edges["pkg.high"] == {"pkg.low"}
    assert edges["pkg.sub.leaf"] == {"pkg.low", "pkg.high"}
    order = layers("- bottom: low\n- middle: sub\n- top: high\n")
    assert upward(edges, order) == ["pkg.low -> pkg.high", "pkg.sub.leaf -> pkg.high"]
    assert cycles(edges) == ["pkg.high -> pkg.low -> pkg.high"]
    assert cycles({"a": {"b"}, "b": set()}) == []
