"""The Dask engine for real: a `dask scheduler` and two `dask worker` processes on 127.0.0.1.

Every process is bounded in time and killed at teardown (with the kernels it started).
The chapters are smoke chapters that take seconds.
"""

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from companion import parallel

BIN = Path(sys.executable).parent
CHAPTERS = ("f-em1", "f-trend")  # smoke chapters with claims, seconds each


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _kill_tree(pid: int) -> None:
    try:
        root = psutil.Process(pid)
        procs = root.children(recursive=True) + [root]
    except psutil.NoSuchProcess:
        return
    for p in procs:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(procs, timeout=10)


#: Hard bound on every cluster process, even if pytest itself is killed (coreutils `timeout`).
LIFETIME_S = 900


def _start(args: list, env: dict, log: Path) -> subprocess.Popen:
    with open(log, "w") as out:
        return subprocess.Popen(["timeout", str(LIFETIME_S), *map(str, args)], env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)


@pytest.fixture
def cluster(tmp_path, _isolated_cache):
    """(address, env): a scheduler and two single-thread workers sharing the test's model cache (and
    a cache event log, ``env["COMPANION_CACHE_LOG"]``)."""
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    # Every process of the cluster and its clients logs its model-cache events to one file.
    env = dict(os.environ, COMPANION_CACHE=str(_isolated_cache), TQDM_DISABLE="1", MPLBACKEND="Agg",
               COMPANION_CACHE_LOG=str(tmp_path / "cache-events.log"))
    logs = tmp_path / "cluster-logs"
    logs.mkdir()
    procs = []
    try:
        procs.append(_start([BIN / "dask", "scheduler", "--host", "127.0.0.1", "--port", port,
                             "--dashboard-address", f"127.0.0.1:{_free_port()}", "--idle-timeout", "300s"],
                            env, logs / "scheduler.log"))
        for i in (1, 2):
            procs.append(_start([BIN / "dask", "worker", address, "--nthreads", "1", "--nworkers", "1",
                                 "--host", "127.0.0.1", "--no-dashboard", "--name", f"w{i}",
                                 "--death-timeout", "120"], env, logs / f"w{i}.log"))
        from distributed import Client

        with Client(address, timeout=120) as client:
            client.wait_for_workers(2, timeout=180)
        yield address, env
    finally:
        for p in procs:
            _kill_tree(p.pid)


def _claims_key(rows):
    return sorted((r["id"], str(r.get("status", r.get("passed"))), r["observed"]) for r in rows)


def _local_claims(chapter_ids, cache_dir, monkeypatch):
    """The same chapters executed on this machine, with their own model cache (they train themselves)."""
    monkeypatch.setenv("COMPANION_CACHE", str(cache_dir))
    results = list(
        parallel.run_tasks(
            [dict(chapter_id=c, profile="smoke") for c in chapter_ids], workers=2, log=lambda *a: None
        )
    )
    assert all(r["ok"] for r in results), [r.get("traceback") for r in results]
    return {r["chapter"]: _claims_key(r["claims"]) for r in results}


def _no_half_written(*roots):
    for root in roots:
        leftovers = [p for p in Path(root).rglob("*") if p.name.endswith(".tmp")]
        assert not leftovers, leftovers
        for pt in Path(root).rglob("*.pt"):
            assert pt.with_suffix(".json").is_file(), f"payload without manifest: {pt}"



def _cluster_build(address: str, chapters: str, out) -> list:
    """`companion build` of smoke chapters on the cluster, execution stage only."""
    return [BIN / "companion", "build", "--scheduler", address, "--profile", "smoke",
            "--chapters", chapters, "--no-sphinx", "--path-output", str(out)]


def test_cluster_build_equals_local_run(cluster, tmp_path, _isolated_cache, monkeypatch):
    address, env = cluster
    out = subprocess.run(
        _cluster_build(address, ",".join(CHAPTERS), tmp_path / "book"),
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert "dashboard: http://127.0.0.1:" in out.stdout
    for cid in CHAPTERS:
        assert re.search(rf"\] {re.escape(cid)}\s+\d+ s  pass \d+  fail \d+  undecided \d+", out.stdout), (
            out.stdout
        )
    # The claims came back to the client's store, the notebooks to Jupyter Book's execution cache.
    from jupyter_cache import get_cache

    assert len(get_cache(str(tmp_path / "book" / "_build" / ".jupyter_cache")).list_cache_records()) == 2
    store = _isolated_cache / "claims" / "smoke"
    import json

    local = _local_claims(CHAPTERS, tmp_path / "local-cache", monkeypatch)
    for cid in CHAPTERS:
        assert _claims_key(json.loads((store / f"{cid}.json").read_text())) == local[cid]
    # companion run --scheduler lands where a local run does.
    run = subprocess.run(
        [
            BIN / "companion",
            "run",
            "f-arch",
            "--profile",
            "smoke",
            "-p",
            "seed",
            "2",
            "--scheduler",
            address,
            "--output",
            str(tmp_path / "runs"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert (tmp_path / "runs" / "f-arch.ipynb").is_file() and (
        tmp_path / "runs" / "f-arch.claims.json"
    ).is_file()
    _no_half_written(_isolated_cache, tmp_path / "book", tmp_path / "runs")


def test_killed_worker_task_runs_again_elsewhere(cluster, tmp_path, _isolated_cache, monkeypatch):
    address, env = cluster
    chapter = "f-em1"
    expected = _local_claims([chapter], tmp_path / "local-cache", monkeypatch)[chapter]
    build = subprocess.Popen(
        _cluster_build(address, chapter, tmp_path / "book"),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        from distributed import Client

        with Client(address, timeout=60) as client:
            deadline = time.monotonic() + 300
            busy = []
            while not busy and time.monotonic() < deadline:  # the chapter's task, not its network's
                busy = [w for w, keys in client.processing().items()
                        if any(str(k).startswith(f"{chapter}-") for k in keys)]
                time.sleep(0.2)
            assert busy, "the chapter never started on a worker"
            pid = client.run(os.getpid, workers=busy[:1])[busy[0]]
            # Let the kernel start and the chapter get going, then lose the worker (and its kernel).
            time.sleep(3)
            _kill_tree(pid)
        stdout, _ = build.communicate(timeout=600)
    finally:
        if build.poll() is None:
            os.killpg(build.pid, signal.SIGKILL)
    assert build.returncode == 0, stdout[-3000:]
    line = next(ln for ln in stdout.splitlines() if f"] {chapter}" in ln)
    assert f":{pid})" not in line, "the result came from the killed worker"
    import json

    rows = json.loads((_isolated_cache / "claims" / "smoke" / f"{chapter}.json").read_text())
    assert _claims_key(rows) == expected
    _no_half_written(_isolated_cache, tmp_path / "book")


def _events(env) -> list[list[str]]:
    log = Path(env["COMPANION_CACHE_LOG"])
    return [line.split() for line in log.read_text().splitlines()] if log.is_file() else []


def _network_pid(stdout: str) -> str:
    """The worker pid of the first finished network task in a build's or sweep's log."""
    line = next(ln for ln in stdout.splitlines() if re.search(r"\] network [0-9a-f]{12} ", ln))
    assert "trained" in line, line
    return re.search(r":(\d+)\)$", line).group(1)


def test_cluster_build_trains_declared_networks_as_tasks(cluster, tmp_path, _isolated_cache):
    """An Aitken chapter on the cluster: its declared network is trained as its own task on a worker,
    then the chapter (another task) only loads it."""
    from companion import networks

    address, env = cluster
    out = subprocess.run(_cluster_build(address, "fig2", tmp_path / "book"), env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert f"networks: training 1 declared networks on {address}" in out.stdout, out.stdout
    (spec,) = networks.chapter_specs("fig2", "smoke")
    pid = _network_pid(out.stdout)
    events = [e for e in _events(env) if e[2] == spec.key]
    assert [e[0] for e in events] == ["computed", "loaded"], events
    assert events[0][3] == pid and events[1][3] != pid  # trained by the task, loaded by the chapter
    assert re.search(r"\] fig2\s+\d+ s  pass", out.stdout), out.stdout
    _no_half_written(_isolated_cache, tmp_path / "book")


def test_killed_worker_network_task_runs_again_elsewhere(cluster, tmp_path, _isolated_cache):
    """A worker dies while it trains a network: Dask runs the task again on the other worker, the
    network is stored once, whole, and the sweep's chapter run then loads it."""
    address, env = cluster
    sweep = subprocess.Popen(
        [BIN / "companion", "sweep", "fig2", "-p", "steps", "600", "--profile", "smoke",
         "--scheduler", address, "--output", str(tmp_path / "sweep")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        from distributed import Client

        with Client(address, timeout=60) as client:
            deadline = time.monotonic() + 300
            busy = []
            while not busy and time.monotonic() < deadline:
                busy = [w for w, keys in client.processing().items()
                        if any(str(k).startswith("network-fig2-") for k in keys)]
                time.sleep(0.2)
            assert busy, "the network task never started on a worker"
            pid = client.run(os.getpid, workers=busy[:1])[busy[0]]
            time.sleep(3)  # inside the training (600 steps: tens of seconds)
            _kill_tree(pid)
        stdout, _ = sweep.communicate(timeout=600)
    finally:
        if sweep.poll() is None:
            os.killpg(sweep.pid, signal.SIGKILL)
    assert sweep.returncode == 0, stdout[-3000:]
    assert _network_pid(stdout) != str(pid), "the network came from the killed worker"
    computed = [e for e in _events(env) if e[0] == "computed"]
    assert len(computed) == 1 and computed[0][3] != str(pid), computed
    assert (tmp_path / "sweep" / "steps=600" / "fig2.ipynb").is_file()
    _no_half_written(_isolated_cache, tmp_path / "sweep")
