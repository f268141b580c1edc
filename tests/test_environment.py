"""pyproject.toml and environment.yml list the same packages with the same pins."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _norm(req: str) -> tuple[str, str]:
    m = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*(.*)$", req)
    name = m.group(1).lower().replace("_", "-")
    spec = ",".join(sorted(s.strip() for s in m.group(2).split(",") if s.strip()))
    return name, spec


def test_pyproject_and_environment_agree():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    deps = dict(_norm(d) for d in pyproject["project"]["dependencies"])
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_list = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    env_deps = dict(_norm(d) for d in pip_list if not d.startswith("-e"))
    assert deps == env_deps
    assert "python=3.11" in env["dependencies"]
    assert pyproject["project"]["requires-python"].startswith(">=3.11")


def test_torch_is_pinned_to_the_cpu_build_on_disk():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "torch==2.13.0" in pyproject["project"]["dependencies"]
    assert any(d.startswith("jupyter-book>=1.0.4,<2") for d in pyproject["project"]["dependencies"])
