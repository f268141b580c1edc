"""Networks as tasks: the chapters' declarations, the prebuild phase, --dry-run.

Real components throughout: the chapters' own training functions, real notebooks under the smoke
profile, real worker processes. The Dask side is in test_distributed.py."""

import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from functools import partial
from pathlib import Path

import psutil
import pytest

from companion import cache, chapters, config, networks, parallel, prebuild
from companion.pandey2022 import image_train

#: cheap chapters under smoke that together cover the one-to-one ensembles, the reversed / prev0
#: variants and the non-gated AO (Aitken et al.), an error-mode figure, a (layer, k) table, the trend
#: and alpha figures, the layer / learning-rate, focus-initialisation, width and sparsity tables, and the
#: image and captioning chapters (Pandey et al.)
DRIFT_CHAPTERS = (("fig2", "app-one-to-one"), ("f-em1", "t-d1", "f-trend", "f-alpha"),
                  ("t-layer", "t-init-focus", "t-cplx", "t-cplx-d1"), ("t-a1", "t-a2"),
                  ("t-cifar-ent", "t-cifar-sparse", "t-cifar-ecml", "t-init", "f-coco", "t-coco"))


def _events(log: Path) -> list[tuple[str, str, str, str]]:
    return [tuple(line.split()) for line in log.read_text().splitlines()] if log.is_file() else []


def _declared(chapter_ids, profile="smoke", params=None) -> set[str]:
    return {s.key for c in chapter_ids for s in networks.chapter_specs(c, profile, params)}


def _logged_key(log: Path, fetch) -> str:
    """The cache key the real training code stores (or loads) when ``fetch`` runs."""
    log.unlink(missing_ok=True)
    fetch()
    (event,) = _events(log)
    return event[2]


def test_spec_keys_are_the_keys_the_chapter_code_computes(tmp_path, monkeypatch):
    """Each spec maker's key equals the key its chapter function logs when it trains (pinning the
    configurations written out in the spec makers to the unchanged training code)."""
    from companion.aitken2021 import analysis as A
    from companion.aitken2021 import ensembles, learned
    from companion.aitken2021 import nongated as NG

    log = tmp_path / "events.log"
    monkeypatch.setenv(cache.LOG_ENV, str(log))
    S = config.resolve("tab-accuracy", "smoke", steps=2, ved_steps=2)
    declared = {s.description: s.key for s in networks.chapter_specs("tab-accuracy", "smoke",
                                                                       {"steps": 2, "ved_steps": 2})}
    calls = {
        "VED": lambda: A.one_to_one_ensemble(S, "VED"),
        "AED": lambda: A.one_to_one_ensemble(S, "AED", solving=True),
        "reversed AED": lambda: A.one_to_one_ensemble(S, "AED", reverse=True),
        "prev0 AED": lambda: A.one_to_one_ensemble(S, "AED", rules=("prev0",)),
    }
    for label, call in calls.items():
        (want,) = [k for d, k in declared.items() if d.startswith(f"one-to-one {label} ")]
        assert _logged_key(log, call) == want, label
    S1 = config.resolve("app-one-to-one", "smoke", steps=2)
    (ng,) = [s for s in networks.chapter_specs("app-one-to-one", "smoke", {"steps": 2})
             if s.kind == "aitken2021-nongated"]
    assert _logged_key(log, lambda: NG.nongated_ensemble(S1)) == ng.key
    S5 = config.resolve("tab-accuracy-beyond", "smoke", escan_steps_aed=2, escan_steps_ao=2, enfr_steps=2)
    beyond = {s.description.split(" (")[0]: s.key for s in networks.chapter_specs(
        "tab-accuracy-beyond", "smoke", {"escan_steps_aed": 2, "escan_steps_ao": 2, "enfr_steps": 2})}
    for arch in ensembles.ARCHS:
        escan = partial(ensembles.escan_ensemble, S5, arch)
        assert _logged_key(log, escan) == beyond[f"eSCAN {arch} x1"]
        if not ensembles.enfr_available(S5):
            enfr = partial(ensembles.enfr_ensemble, S5, arch)
            assert _logged_key(log, enfr) == beyond[f"English-French {arch} x1"]
    for chapter, attention in (("app-learned-attention", "qkv"), ("app-multihead", "mh")):
        SL = config.resolve(chapter, "smoke", steps=2)
        (spec,) = networks.chapter_specs(chapter, "smoke", {"steps": 2})
        assert _logged_key(log, partial(learned.learned_ensemble, SL, attention)) == spec.key, chapter


def test_pandey_spec_keys_are_the_keys_the_chapter_code_computes(tmp_path, monkeypatch):
    from companion.pandey2022 import errormodes, studies

    log = tmp_path / "events.log"
    monkeypatch.setenv(cache.LOG_ENV, str(log))
    S = config.resolve("f-em1", "smoke", epochs=1, n_seeds=1)
    (spec,) = networks.chapter_specs("f-em1", "smoke", {"epochs": 1, "n_seeds": 1})
    em = partial(errormodes.run, "dist1", S.seed, S.n_seeds, S.epochs, S.data_seed)
    assert _logged_key(log, em) == spec.key
    small = {"epochs": 1, "n_seeds": 1, "layers": "zeroth", "ks": "0"}
    S = config.resolve("t-d1", "smoke", **small)
    (spec,) = networks.chapter_specs("t-d1", "smoke", small)
    grid = partial(studies.layer_k_grid, "T-D1", "d1", "A_1", S.layers, S.ks, S.n_seeds, S.epochs, S.dtype)
    assert _logged_key(log, grid) == spec.key


def test_collect_dedupes_by_key_and_puts_the_longest_first():
    tasks = prebuild.collect([(c, "quick", None) for c in ("fig2", "fig4", "tab-accuracy", "f-arch")])
    keys = [t.key for t in tasks]
    assert len(keys) == len(set(keys)) == len(_declared(("fig4", "tab-accuracy"), "quick"))
    costs = [t.cost_s for t in tasks]
    assert costs == sorted(costs, reverse=True) and costs[0] > 0
    (aed,) = [t for t in tasks if t.description.startswith("one-to-one AED ")]
    assert aed.chapters == ["fig2", "fig4", "tab-accuracy"]
    assert not any(t.cached for t in tasks)  # an empty cache (conftest)
    assert prebuild.undeclared(["fig2", "no-such-chapter", "no-such-chapter"]) == ["no-such-chapter"]
    # every chapter of both papers declares what it trains (an empty list for those that train nothing)
    assert prebuild.undeclared(c.id for c in chapters.all_chapters()) == []


def test_every_aitken_chapter_is_declared_and_its_specs_resolve():
    aitken = {"fig1", "fig2", "fig3", "fig4", "fig5", "fig6", "fig7", "tab-accuracy", "tab-accuracy-beyond",
              "app-one-to-one", "app-learned-attention", "app-multihead"}
    assert aitken <= set(networks.declarations())
    for c in networks.declarations():
        for profile in ("smoke", "quick", "paper"):
            for s in networks.chapter_specs(c, profile):
                assert len(s.key) == 64 and s.cost_s >= 0 and s.description
    assert networks.chapter_specs("fig7", "paper") == []


@pytest.mark.parametrize("chapter_ids", DRIFT_CHAPTERS, ids=[",".join(c) for c in DRIFT_CHAPTERS])
def test_prebuild_then_chapters_only_load_what_they_declared(chapter_ids, tmp_path, _isolated_cache):
    """The drift test: `companion build` (smoke, local pool) trains each declared network once as a
    task; the notebooks then load every entry they touch, and every entry they touch is declared."""
    log = tmp_path / "events.log"
    env = dict(os.environ, **{cache.LOG_ENV: str(log)})
    out = subprocess.run([sys.executable, "-m", "companion.cli", "build", "--profile", "smoke", "--chapters",
                          ",".join(chapter_ids), "--no-sphinx", "--workers", "2",
                          "--path-output", str(tmp_path / "book")],
                         env=env, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    declared = _declared(chapter_ids)
    assert f"networks: training {len(declared)} declared networks with 2 workers" in out.stdout, out.stdout
    # the initialisation table's pre-trained nets are an entry its program computes and loads inside its
    # own task (not a network of their own)
    events = [e for e in _events(log) if e[1] != image_train.KIND_PRETRAIN]
    computed = [k for ev, _, k, _ in events if ev == "computed"]
    assert sorted(computed) == sorted(declared), "each declared network trained exactly once, by a task"
    task_pids = {pid for ev, _, _, pid in events if ev == "computed"}
    loads = [(k, pid) for ev, _, k, pid in events if ev == "loaded" and pid not in task_pids]
    assert {k for k, _ in loads} == declared, "the notebooks loaded every declared network, nothing else"
    # A second build of the same chapters (after the execution cache is cleared) trains nothing.
    log.unlink()
    subprocess.run(["rm", "-rf", str(tmp_path / "book")], check=True)
    again = subprocess.run([sys.executable, "-m", "companion.cli", "build", "--profile", "smoke",
                            "--chapters", chapter_ids[0], "--no-sphinx", "--workers", "1",
                            "--path-output", str(tmp_path / "book")],
                           env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert again.returncode == 0, again.stderr[-2000:]
    n = len(_declared(chapter_ids[:1]))
    assert f"networks: all {n} declared networks are in the model cache" in again.stdout
    assert {ev for ev, *_ in _events(log)} == {"loaded"}
    assert not list(_isolated_cache.rglob("*.tmp"))


def test_two_processes_needing_one_network_train_it_once(tmp_path, monkeypatch):
    """The same network task on two worker processes at once: one trains, the other waits on the
    entry's lock and loads (the cache lock, exercised through the task path)."""
    log = tmp_path / "events.log"
    monkeypatch.setenv(cache.LOG_ENV, str(log))
    params = {"steps": 150}
    (spec,) = networks.chapter_specs("fig2", "smoke", params)
    kw = dict(chapter_id="fig2", profile="smoke", params=params, net_key=spec.key)
    results = list(parallel.run_tasks([kw, dict(kw)], workers=2, log=lambda *a: None,
                                      fn=prebuild.train_network))
    assert [r["ok"] for r in results] == [True, True], [r.get("error") for r in results]
    assert len({r["pid"] for r in results}) == 2
    events = {ev: pid for ev, _, k, pid in _events(log) if k == spec.key}
    assert Counter(ev for ev, _, k, _ in _events(log) if k == spec.key) == {"computed": 1, "loaded": 1}
    assert events["computed"] != events["loaded"]  # one process trained, the other loaded
    # they ran at once: the loader asked while the trainer held the entry's lock
    first, second = sorted(results, key=lambda r: r["started"])
    assert second["started"] < first["ended"]
    assert spec.is_cached()


def test_a_local_network_task_whose_worker_dies_runs_again(tmp_path, monkeypatch, _isolated_cache):
    log = tmp_path / "events.log"
    monkeypatch.setenv(cache.LOG_ENV, str(log))
    params = {"steps": 400}
    (spec,) = networks.chapter_specs("fig2", "smoke", params)
    lines, result = [], {}

    def run():
        result["failures"] = prebuild.prebuild([("fig2", "smoke", params)], workers=1, log=lines.append)

    t = threading.Thread(target=run)
    t.start()
    me = psutil.Process()
    deadline = time.monotonic() + 120
    workers = []
    while not workers and time.monotonic() < deadline:
        workers = [p for p in me.children(recursive=True) if "spawn_main" in " ".join(p.cmdline())]
        time.sleep(0.2)
    assert workers, "no worker process started"
    victim = workers[0]
    time.sleep(8)  # past its imports, inside the training (about 20 s)
    victim.kill()
    t.join(timeout=600)
    assert not t.is_alive()
    assert result["failures"] == [], result
    assert any("lost its worker" in ln and "will run again" in ln for ln in lines), lines
    assert Counter(ev for ev, _, k, _ in _events(log) if k == spec.key)["computed"] == 1
    assert spec.is_cached()
    assert not list(_isolated_cache.rglob("*.tmp"))


@pytest.mark.parametrize("args", [
    ["build", "--profile", "smoke", "--chapters", "fig2,f-arch", "--no-sphinx", "--dry-run"],
    ["record", "fig2", "--profile", "smoke", "--dry-run"],
    ["sweep", "fig2", "-p", "seed", "1:3", "--profile", "smoke", "--dry-run"],
])
def test_dry_run_lists_the_tasks_and_trains_nothing(args, tmp_path, _isolated_cache):
    where = ["--path-output", str(tmp_path / "o")] if args[0] == "build" else (
        ["--output", str(tmp_path / "o")] if args[0] == "sweep" else [])
    out = subprocess.run([sys.executable, "-m", "companion.cli", *args, *where], capture_output=True,
                         text=True, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    seeds = (1, 2) if args[0] == "sweep" else (None,)
    keys = {s.key for v in seeds for s in networks.chapter_specs("fig2", "smoke", {"seed": v} if v else None)}
    assert f"networks: {len(keys)} to train, 0 already in the model cache" in out.stdout, out.stdout
    for k in keys:
        assert "  train " in out.stdout and k[:12] in out.stdout
    assert "one-to-one AED x1" in out.stdout
    if args[0] == "build":
        assert "train inside their notebooks" not in out.stdout  # f-arch declares that it trains nothing
    assert not _isolated_cache.exists() and not (tmp_path / "o").exists()
    assert not list(Path(tmp_path).rglob("*.ipynb")) and not (tmp_path / "results").exists()


def test_a_record_trains_its_networks_first_and_counts_them(tmp_path, monkeypatch):
    """`companion record` of an Aitken chapter: the network is trained by a task inside the record
    (counted as trained there), the notebook loads it."""
    from companion import recording, records

    monkeypatch.setattr(records, "results_dir", lambda profile: tmp_path / "results" / profile)
    lines = []
    path = recording.record("fig2", {}, profile="smoke", log=lines.append)
    data = json.loads(path.read_text())
    assert data["cache"] == {"trained": 1, "reused": 0}, data["cache"]
    assert any(ln.startswith("networks: training 1 declared networks") for ln in lines), lines
    assert any("] network " in ln and "trained" in ln for ln in lines), lines


def test_the_cost_estimate_prices_a_large_readout_within_a_factor_of_three_of_the_record():
    """English-French reads out 7,543 French words: without the readout term the estimate was 14x low."""
    from companion import prebuild
    from companion.aitken2021 import specs

    model = {"arch": "AED", "hidden": 128, "out_vocab": 7543}
    # known answer: (0.05 + 4e-7 * 256 * 7543) s per step at 20 positions, at 11 positions, 10,000 steps
    assert specs.cost("AED", 10000, 1, {"max_len": 10}, model) == pytest.approx(
        (0.05 + 4e-7 * 256 * 7543) * 10000 * 11 / 20)
    assert specs.cost("AED", 10000, 1, {"max_len": 10}) == pytest.approx(0.05 * 10000 * 11 / 20)
    # a small vocabulary barely moves it: the one-to-one task's estimate stays overhead-dominated
    small = specs.cost("AED", 6000, 1, {"pad_to": 20}, {"arch": "AED", "hidden": 128, "out_vocab": 12})
    assert small == pytest.approx(6000 * 0.05, rel=0.05)
    # the estimates the fig5 declarations give, against what its record measured per network (CPU-s).
    # A factor of three, not two: the record's CPU time comes from one machine, and machines differ by
    # about 2x (the English-French AED network took 2,615 CPU-s on 2026-12-06 against 4,523 estimated)
    record = json.loads((Path(__file__).parents[1] / "results/paper/fig5.json").read_text())
    # (matched by description, which outlives a change of cache key)
    estimate = {t.description: t.cost_s for t in prebuild.collect([("fig5", "paper", record["overrides"])])}
    measured = {r["what"]: r["cpu_s"] for r in record["pretrained"]["runs"]
                if r["what"].startswith("English-French") and r.get("cpu_s")}
    assert len(measured) == 2, "the fig5 record should name its two English-French runs"
    for what, cpu_s in measured.items():
        assert 1 / 3 < estimate[what] / cpu_s < 3.0, (what, estimate[what], cpu_s)
