"""The command line: list, run, scorecard, and one-line errors with exit status 2."""

import json
import re
import subprocess
import sys

import pytest

from companion import chapters, cli

CHAPTER = "f-em1"  # the foundation's showcase chapter


def _run(*args, **kw):
    return subprocess.run([sys.executable, "-m", "companion.cli", *args], capture_output=True, text=True,
                          **kw)


def test_list_json_has_the_documented_fields():
    out = _run("list", "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert {r["id"] for r in rows} == {c.id for c in chapters.all_chapters()}
    for r in rows:
        assert set(r) >= {"id", "paper", "figure", "title", "parameters"}
        assert r["paper"] in ("aitken2021", "pandey2022")
        assert isinstance(r["parameters"], dict)
        assert set(r["paper_cost"]) == {"low_s", "high_s", "how"}
    # a chapter with a complete record shows its measured cost, the README table's figure
    cplx = next(r for r in rows if r["id"] == "t-cplx")
    assert cplx["paper_cost"]["how"].startswith("measured") and cplx["paper_cost"]["low_s"] > 0


@pytest.mark.parametrize(
    "args, needle",
    [
        (["run", "no-such-chapter"], "unknown chapter 'no-such-chapter'; allowed:"),
        (["run", CHAPTER, "-p", "seed", "-3"], "parameter 'seed' got -3; allowed: int >= 0"),
        (["run", CHAPTER, "-p", "seed", "three"], "parameter 'seed' got 'three'"),
        (["run", CHAPTER, "-p", "no_such_param", "1"], "unknown parameter 'no_such_param'"),
        (["run", CHAPTER, "--profile", "fast"], "allowed: smoke, quick, paper"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, needle, tmp_path, _isolated_cache):
    out = _run(*args, "--output", str(tmp_path / "runs"), cwd=tmp_path)
    assert out.returncode == 2
    assert needle in out.stderr and out.stderr.count("\n") == 1, out.stderr
    assert not (tmp_path / "runs").exists(), "nothing written on bad input"
    assert not _isolated_cache.exists() or not any(p.is_file() for p in _isolated_cache.rglob("*"))


def test_scorecard_json_fields(monkeypatch):
    from companion import claims
    from companion.card import ChapterCard
    from companion.config import Settings

    card = ChapterCard(Settings(chapter=CHAPTER, profile="smoke", values={}, overrides={}))
    card.claims.append(claims.Claim(chapter=CHAPTER, paper="pandey2022", figure="F-EM1", id=f"{CHAPTER}/x",
                                    claim="s", expected="e", observed="o", criterion="c", status="pass"))
    card.save()
    out = _run("scorecard", "--json", "--profile", "smoke")
    rows = json.loads(out.stdout)
    assert rows and set(rows[0]) >= {"chapter", "paper", "figure", "claim", "expected", "observed",
                                     "passed", "status", "profile"}
    assert rows[0]["passed"] is True and rows[0]["status"] == "pass" and rows[0]["paper"] == "pandey2022"


def test_run_executes_with_papermill_and_prints_claims(tmp_path):
    """End to end: the showcase chapter under the smoke profile with another seed."""
    out = _run("run", CHAPTER, "--profile", "smoke", "-p", "seed", "3", "--output", str(tmp_path / "runs"),
               cwd=tmp_path, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert re.search(r"\d+ pass, \d+ fail, \d+ undecided", out.stdout), out.stdout
    assert (tmp_path / "runs" / f"{CHAPTER}.ipynb").is_file()
    rows = json.loads((tmp_path / "runs" / f"{CHAPTER}.claims.json").read_text())
    assert rows and all(r["overrides"] == {"seed": 3} for r in rows)


def test_parser_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["frobnicate"])
    assert exc.value.code == 2


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--workers", "2", "--split", "n_seeds"], "t-d2b has no list parameter 'n_seeds'"),
        (["--workers", "2", "--split", "ks"], "fewer than two items"),
        (["--workers", "0"], "--workers must be at least 1"),
    ],
)
def test_record_bad_split_is_one_line_and_exit_2(args, needle, tmp_path, _isolated_cache):
    out = _run("record", "t-d2b", "--profile", "smoke", *args, cwd=tmp_path)
    assert out.returncode == 2
    assert needle in out.stderr and out.stderr.count("\n") == 1, out.stderr
    assert not _isolated_cache.exists() or not any(p.is_file() for p in _isolated_cache.rglob("*"))
