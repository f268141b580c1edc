"""The command line: list, run, scorecard, one-line errors with exit status 2, --version, help with
examples, and quiet output into a closed pipe."""

import json
import os
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
    # a chapter with a complete record shows its measured cost, the costs page's figure
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
        (["run", "t-cifar-ent", "-p", "data_dir", "no-such-folder"], "'data_dir': CIFAR-10 directory not"),
        (["run", "t-coco", "-p", "data_dir", "no-such-folder"], "'data_dir': CIFAR-10 directory not"),
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
        (["--deviation", "L2 small", "-p", "n_seeds", "3"], "a deviation name is lower-case"),
        (["--deviation", "more-seeds"], "a deviation record changes a setting"),
        (["--deviation", "x", "-p", "n_seeds", "3", "--until-decided"], "do not go together"),
    ],
)
def test_record_bad_split_is_one_line_and_exit_2(args, needle, tmp_path, _isolated_cache):
    out = _run("record", "t-d2b", "--profile", "smoke", *args, cwd=tmp_path)
    assert out.returncode == 2
    assert needle in out.stderr and out.stderr.count("\n") == 1, out.stderr
    assert not _isolated_cache.exists() or not any(p.is_file() for p in _isolated_cache.rglob("*"))


def test_record_of_a_missing_cifar_folder_is_one_line_and_exit_2(tmp_path, _isolated_cache):
    """Checked when the chapter's programs are planned as tasks, before any trains or anything is written."""
    out = _run("record", "t-cifar-ecml", "--profile", "smoke", "-p", "data_dir", "no-such-folder",
               cwd=tmp_path)
    assert out.returncode == 2
    assert "CIFAR-10 directory not found" in out.stderr and out.stderr.count("\n") == 1, out.stderr
    assert not _isolated_cache.exists() or not any(_isolated_cache.rglob("*"))


def test_version():
    import companion

    out = _run("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"companion {companion.__version__}"


def test_list_is_one_line_per_chapter_by_default():
    out = _run("list")
    assert out.returncode == 0, out.stderr
    ids = [c.id for c in chapters.all_chapters()]
    lines = [ln for ln in out.stdout.splitlines() if ln.split(" ", 1)[0] in ids]
    assert [ln.split()[0] for ln in lines] == ids  # every chapter once, in book order
    assert len(out.stdout.splitlines()) <= len(ids) + 3  # a header and a hint, no parameters
    # the recorded verdicts: t-cplx has a paper record with decided findings
    row = next(ln for ln in lines if ln.startswith("t-cplx "))
    assert re.search(r"\d+ pass, \d+ fail, \d+ undecided", row), row
    assert "n_seeds" not in out.stdout


def test_list_chapter_and_params_show_the_parameters():
    one = _run("list", CHAPTER)
    assert one.returncode == 0, one.stderr
    assert re.search(r"^\s+n_seeds\s+=", one.stdout, re.M)
    assert sum(ln.startswith(CHAPTER) for ln in one.stdout.splitlines()) == 1
    every = _run("list", "--params", "--profile", "smoke")
    assert every.returncode == 0 and every.stdout.count("n_seeds") > one.stdout.count("n_seeds")
    bad = _run("list", "no-such-chapter")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def test_output_into_a_closed_pipe_ends_quietly():
    # the reader is gone before anything is written: every write fails with EPIPE
    for args in (["list"], ["list", "--params"], ["--help"]):
        p = subprocess.Popen([sys.executable, "-m", "companion.cli", *args], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        p.stdout.close()
        err = p.stderr.read()
        assert p.wait(timeout=120) == 0, (args, err)
        assert err == b"", (args, err)


def test_list_into_head_ends_quietly():
    out = subprocess.run(["bash", "-o", "pipefail", "-c",
                          f"'{sys.executable}' -m companion.cli list --params | head -1"],
                         capture_output=True, text=True)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    assert len(out.stdout.splitlines()) == 1


SUBCOMMANDS = sorted(next(a for a in cli.build_parser()._actions if a.dest == "command").choices)


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_every_subcommand_help_gives_an_example(command):
    out = _run(command, "--help")
    assert out.returncode == 0
    assert re.search(rf"^examples:\n  companion {command}\b", out.stdout, re.M), out.stdout


def test_the_help_test_sees_the_subcommands():
    assert {"list", "run", "sweep", "build", "record", "verify", "scorecard"} <= set(SUBCOMMANDS)


def test_chapter_kernels_get_the_memory_setting_and_the_users_own_wins(monkeypatch, tmp_path):
    """runner.run hands KERNEL_ENV to the kernel through os.environ, keeps a value the user set, and
    leaves os.environ as it found it (papermill's kernel inherits os.environ; recorded here)."""
    import papermill

    from companion import runner

    seen = []
    monkeypatch.setattr(papermill, "execute_notebook",
                        lambda *a, **k: seen.append(os.environ.get("MALLOC_MMAP_THRESHOLD_")))
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    runner.run(CHAPTER, {}, "smoke", tmp_path)
    assert seen == [str(2**20)] and "MALLOC_MMAP_THRESHOLD_" not in os.environ
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "4096")
    runner.run(CHAPTER, {}, "smoke", tmp_path)
    assert seen[-1] == "4096" and os.environ["MALLOC_MMAP_THRESHOLD_"] == "4096"
