"""Parallel execution on one machine: the model-cache lock, longest-first, sweeps' values and summary,
the jupyter-cache hand-over, and two chapters sharing a model run at once (trained once)."""

import json
import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from companion import bookbuild, cache, config, parallel, sweep

# t-d1 and f-trend share the D1 zeroth-layer runs (root _config.yml, anchor pandey_d1).
SHARED = ("t-d1", "f-trend")

LOCK_SCRIPT = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from companion import cache

    marker = Path(sys.argv[1])

    def compute():
        with marker.open("a") as fh:
            fh.write("computed\\n")
        time.sleep(2.0)  # long enough that the other process asks while this one computes
        return {"x": 42}

    out = cache.cached("lock-demo", {"n": 1}, compute)
    print(out["x"])
    """
)


def test_two_processes_compute_a_shared_entry_once(tmp_path):
    marker = tmp_path / "marker.txt"
    procs = [
        subprocess.Popen([sys.executable, "-c", LOCK_SCRIPT, str(marker)], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    try:
        outs = [p.communicate(timeout=120)[0].strip() for p in procs]
    finally:
        for p in procs:
            p.kill()
    assert [p.returncode for p in procs] == [0, 0]
    assert outs == ["42", "42"]
    assert marker.read_text().splitlines() == ["computed"]
    assert not list(tmp_path.rglob("*.tmp"))


def test_longest_first_puts_unmeasured_chapters_first():
    order = parallel.longest_first(["a", "b", "c", "d"], {"a": 5.0, "b": 50.0, "d": 20.0})
    assert order == ["c", "b", "d", "a"]


def test_timings_are_kept_per_profile(tmp_path):
    f = tmp_path / "t.json"
    parallel.record_timing([f], "smoke", "f-em1", 3.21)
    parallel.record_timing([f], "quick", "f-em1", 40)
    parallel.record_timing([f], "smoke", "t-d1", 7)
    assert parallel.load_timings(f) == {"smoke": {"f-em1": 3.2, "t-d1": 7.0}, "quick": {"f-em1": 40.0}}


def test_status_of_old_and_new_claims():
    assert parallel.status_of(SimpleNamespace(passed=False)) == "fail"
    assert parallel.status_of(SimpleNamespace(status="FAIL", passed=False)) == "fail"
    assert parallel.status_of(SimpleNamespace(status="undecided", passed=False)) == "undecided"


def test_executed_outputs_keep_the_source_hash():
    """What the build adds to jupyter-cache must match the unexecuted source, as myst-nb looks it up."""
    from jupyter_cache import get_cache  # noqa: F401  (the hashing below is jupyter-cache's)
    from jupyter_cache.cache.main import JupyterCacheBase

    src = nbformat.v4.new_notebook()
    src.cells = [
        nbformat.v4.new_markdown_cell("# t"),
        nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell("print(x)"),
    ]
    src.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    run = nbformat.from_dict(json.loads(nbformat.writes(src)))
    run.cells[2].outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n")]
    run.cells[2].metadata["execution"] = {"iopub.status.busy": "2026-01-01"}  # what timing would add
    run.cells[1].execution_count, run.cells[2].execution_count = 1, 2
    merged = bookbuild._with_outputs(src, run)
    jc = JupyterCacheBase.__new__(JupyterCacheBase)
    assert jc.create_hashed_notebook(merged)[1] == jc.create_hashed_notebook(src)[1]
    assert merged.cells[2].outputs[0]["text"] == "1\n"


@pytest.mark.parametrize(
    "text, values",
    [("0:4", ["0", "1", "2", "3"]), ("1,5,9", ["1", "5", "9"]), (" 7 ", ["7"])],
)
def test_sweep_values(text, values):
    assert sweep.parse_values("f-em1", "seed", text, "smoke") == values


@pytest.mark.parametrize(
    "text, needle",
    [
        ("4:4", "empty range"),
        ("1,,2", "empty value"),
        ("1,1", "repeated value"),
        ("1,-2", "allowed: int >= 0"),
    ],
)
def test_sweep_values_refused(text, needle):
    with pytest.raises(config.ConfigError, match=needle):
        sweep.parse_values("f-em1", "seed", text, "smoke")


def test_sweep_summary_counts_and_spread():
    def c(cid, status, est=None):
        return SimpleNamespace(id=cid, figure="F", status=status, passed=status == "pass", estimate=est)

    runs = [
        {"claim_objects": [c("a", "pass", 1.0), c("b", "fail")]},
        {"claim_objects": [c("a", "fail", 3.0), c("b", "undecided")]},
        {"claim_objects": [c("a", "pass", 2.0), c("b", "fail")]},
    ]
    a, b = sweep.summarize(runs)
    assert (a["id"], a["pass"], a["fail"], a["undecided"], a["runs"]) == ("a", 2, 1, 0, 3)
    assert a["estimate"]["min"] == 1.0 and a["estimate"]["median"] == 2.0 and a["estimate"]["max"] == 3.0
    assert (b["pass"], b["fail"], b["undecided"], b["estimate"]) == (0, 2, 1, None)


@pytest.mark.parametrize(
    "args, needle",
    [
        (["sweep", "no-such", "-p", "seed", "0:2"], "unknown chapter 'no-such'"),
        (["sweep", "f-em1", "-p", "seed", "0:2", "-p", "seed", "3"], "sweep takes one -p NAME VALUES"),
        (["sweep", "f-em1", "-p", "nope", "1,2"], "unknown parameter 'nope'"),
        (["sweep", "f-em1", "-p", "seed", "2:1"], "empty range"),
        (["sweep", "f-em1", "-p", "seed", "0:2", "--workers", "0"], "expected a whole number >= 1"),
        (["build", "--chapters", "no-such", "--no-sphinx"], "unknown chapter 'no-such'"),
        (["build", "--chapters", "fig2,no-such", "--dry-run"], "unknown chapter 'no-such'"),
        (["sweep", "fig2", "-p", "steps", "0,5", "--dry-run"], "steps"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(args, needle, tmp_path, _isolated_cache):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "companion.cli",
            *args,
            *(
                ["--output", str(tmp_path / "o")]
                if args[0] == "sweep"
                else ["--path-output", str(tmp_path / "o")]
            ),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert out.returncode == 2, out.stderr
    assert needle in out.stderr and out.stderr.count("\n") == 1, out.stderr
    assert not (tmp_path / "o").exists()
    assert not _isolated_cache.exists()


def test_shared_model_chapters_at_once_train_it_once(tmp_path, monkeypatch):
    """t-d1 and f-trend (smoke) executed at the same time by two worker processes: every cache
    entry is computed once, and an entry computed by one chapter's kernel is loaded by the other's."""
    log = tmp_path / "cache-events.log"
    monkeypatch.setenv(cache.LOG_ENV, str(log))
    tasks = [dict(chapter_id=c, profile="smoke") for c in SHARED]
    results = list(parallel.run_tasks(tasks, workers=2, log=lambda *a: None))
    assert all(r["ok"] for r in results), [r.get("error") for r in results]
    events = [line.split() for line in log.read_text().splitlines()]
    computed = Counter(k for ev, _, k, _ in events if ev == "computed")
    assert computed and max(computed.values()) == 1, computed
    pids_per_key = {}
    for _ev, _, k, pid in events:
        pids_per_key.setdefault(k, set()).add(pid)
    assert any(len(p) == 2 for p in pids_per_key.values()), "no entry shared by the two chapters"


def test_next_startable_skips_busy_groups():
    tasks = [dict(chapter_id=c) for c in ("fig4", "fig1", "t-d1", "f-em1")]
    groups = {"fig4": "o2o", "fig1": "o2o", "t-d1": "d1"}
    assert parallel.next_startable(tasks, {}, groups)["chapter_id"] == "fig4"
    assert parallel.next_startable(tasks[1:], {"o2o": 1}, groups)["chapter_id"] == "t-d1"
    assert parallel.next_startable(tasks[1:3], {"o2o": 1, "d1": 1}, groups) is None
    assert parallel.next_startable(tasks[1:], {"o2o": 0}, groups)["chapter_id"] == "fig1"


def test_chapters_of_one_group_never_run_at_once(_isolated_cache):
    """Real worker processes: t-d1 and f-trend (one group) run one after the other while the
    ungrouped f-em1 takes the second worker."""
    tasks = [dict(chapter_id=c, profile="smoke") for c in ("t-d1", "f-trend", "f-em1")]
    groups = {"t-d1": "D1 tables", "f-trend": "D1 tables"}
    results = {r["chapter"]: r for r in parallel.run_tasks(tasks, workers=2, log=lambda *a: None,
                                                          groups=groups)}
    assert all(r["ok"] for r in results.values()), [r.get("error") for r in results.values()]
    a, b = results["t-d1"], results["f-trend"]
    assert a["ended"] <= b["started"] or b["ended"] <= a["started"]
    # the ungrouped chapter started while the first grouped one was still running
    assert results["f-em1"]["started"] < a["ended"]


def test_shared_runs_groups_name_real_chapters(tmp_path, monkeypatch):
    from companion import config

    groups = config.shared_runs()
    assert groups["fig1"] == groups["fig4"] and groups["t-d1"] == groups["f-trend"]
    bad = tmp_path / "_config.yml"
    bad.write_text("chapters: {f-em1: {}}\nshared_runs: {g: [f-em1, no-such]}\n")
    monkeypatch.setattr(config.paths, "config_file", lambda: bad)
    with pytest.raises(config.ConfigError, match="no-such"):
        config.shared_runs()


def test_list_shows_last_execution_time_per_profile(_isolated_cache):
    parallel.record_timing([parallel.cache_timings_file()], "smoke", "f-em1", 12.3)
    parallel.record_timing([parallel.cache_timings_file()], "quick", "f-em1", 95)
    cmd = [sys.executable, "-m", "companion.cli", "list"]
    out = subprocess.run([*cmd, "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    row = next(r for r in json.loads(out.stdout) if r["id"] == "f-em1")
    assert row["seconds"] == {"quick": 95.0, "smoke": 12.3}
    text = subprocess.run(cmd, capture_output=True, text=True).stdout
    line = next(x for x in text.splitlines() if x.startswith("f-em1 "))
    assert "95 s" in line  # the compact list shows the last quick time


def test_jupyter_book_uses_the_parallel_executions(tmp_path):
    """A chapter executed by the build's parallel stage is rendered by `jupyter-book build` from the
    execution cache, not executed again (a one-chapter book using the same notebook)."""
    from companion import paths

    build = tmp_path / "_build"
    failures = bookbuild.execute_chapters(build, "smoke", workers=1, only=["f-arch"], log=lambda *a: None)
    assert failures == []
    book = tmp_path / "mini"
    book.mkdir()
    (book / "notebooks").symlink_to(paths.notebooks_dir())
    (book / "_config.yml").write_text("title: t\nonly_build_toc_files: true\nexecute:\n"
                                      "  execute_notebooks: cache\n  timeout: 600\n")
    (book / "_toc.yml").write_text("format: jb-book\nroot: notebooks/pandey2022/f-arch\n")
    out = subprocess.run([str(Path(sys.executable).parent / "jupyter-book"), "build", str(book),
                          "--path-output", str(tmp_path)], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "COMPANION_PROFILE": "smoke"})
    log = out.stdout + out.stderr
    assert "f-arch.ipynb: Using cached notebook" in log, log[-3000:]
    assert "f-arch.ipynb: Executing notebook" not in log


def test_a_kernel_that_dies_at_start_is_started_again_and_other_errors_are_not():
    calls = []

    def flaky():  # the port race: the first kernel exits before its first reply
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError(f"{parallel.KERNEL_START_FAILED}; Address already in use")
        return "ran"

    assert parallel.with_kernel_retry(flaky) == "ran" and len(calls) == 2

    def always_dies():
        calls.append(1)
        raise RuntimeError(parallel.KERNEL_START_FAILED)

    calls.clear()
    with pytest.raises(RuntimeError, match="kernel_info"):
        parallel.with_kernel_retry(always_dies, tries=3)
    assert len(calls) == 3  # gives up after its tries

    def cell_error():  # an error inside the notebook is the chapter's: never run twice
        calls.append(1)
        raise RuntimeError("ZeroDivisionError in cell 4")

    calls.clear()
    with pytest.raises(RuntimeError, match="cell 4"):
        parallel.with_kernel_retry(cell_error)
    assert len(calls) == 1
