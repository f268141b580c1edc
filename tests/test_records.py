"""Recorded runs: provenance, partial budgets, staleness, and `verify` on a real chapter."""

import json
import math

import pytest

from companion import claims, recording, records, registry
from companion.card import ChapterCard, recorded_html, recorded_table, recorded_tables_html


def _claim(cid="demo/acc", status="pass", est=0.95, digest="d1"):
    return claims.Claim(chapter="demo", paper="pandey2022", figure="F", id=cid, claim="s", expected="e",
                        observed="o", criterion="c", status=status, estimate=est, lo=est - 0.01,
                        hi=est + 0.01, n=3, digest=digest)


def test_compare_reports_verdict_and_value_changes():
    assert records.compare([_claim()], [_claim()]) == []
    assert records.compare([_claim()], [_claim(est=0.95 * (1 + 1e-5))]) == []  # float noise
    diffs = records.compare([_claim()], [_claim(status="fail", est=0.5)])
    assert any("verdict pass -> fail" in d for d in diffs) and any("estimate" in d for d in diffs)
    assert records.compare([_claim()], [_claim("demo/other")]) != []


def test_partial_names_the_cuts():
    cut = records.partial("f-em1", "paper", {"n_seeds": 10, "epochs": 100, "seed": 3})
    assert cut == {"n_seeds": {"ran": 10, "profile": 200}}
    rec = {"profile": "paper", "partial": cut}
    assert records.label(rec) == "paper (partial: n_seeds 10 of 200)"
    assert records.label({"profile": "paper", "partial": {}}) == "paper"


def test_an_explicit_list_in_place_of_the_paper_grid_is_partial():
    cut = records.partial("t-d1", "paper", {"ks": "0,0.02"})
    assert cut == {"ks": {"ran": "0,0.02", "profile": "paper"}}
    assert records.partial("t-d1", "paper", {"ks": "paper"}) == {}


def test_partial_names_rows_left_out_of_a_list_parameter():
    cut = records.partial("t-layer", "paper", {"layers": "zeroth", "d2_layers": "zeroth,first,second"})
    assert cut == {"layers": {"ran": "zeroth", "profile": "zeroth,first,second"}}
    # the full list in another order is not a cut
    assert records.partial("t-layer", "paper", {"layers": "second,first,zeroth"}) == {}


def test_some_rows_in_place_of_all_rows_is_partial():
    cut = records.partial("t-init", "paper", {"rows": "main", "n_seeds": 5})
    assert cut == {"rows": {"ran": "main", "profile": "all"}}
    assert records.partial("t-init", "paper", {"rows": "all", "n_seeds": 5}) == {}
    assert math.isnan(records._cut_factors({"profile": "paper", "partial": cut})["rows"])


def test_differing_verdicts_name_the_budgets_that_differ(monkeypatch):
    rec = {"chapter": "f-em1", "profile": "paper", "commit": "a" * 40, "date": "2026-12-01T00:00:00",
           "wall_s": 60.0, "machine": "m", "partial": {},
           "parameters": {"n_seeds": 200, "seed": 0},
           "claims": [_claim("demo/acc", "pass").as_row(), _claim("demo/b", "pass").as_row()]}
    monkeypatch.setattr(records, "load", lambda chapter, profile="paper": rec)
    monkeypatch.setattr(records, "stale_ids", lambda r: [])
    html = recorded_html("f-em1", "quick", live=[_claim("demo/acc", "undecided"), _claim("demo/b")],
                                live_params={"n_seeds": 40, "seed": 0})
    assert "<code>demo/acc</code> undecided live, pass recorded" in html
    assert "demo/b</code> pass live" not in html
    assert "n_seeds 40→200" in html and "seed 0" not in html
    same = recorded_html("f-em1", "quick", live=[_claim("demo/acc"), _claim("demo/b")],
                                live_params={"n_seeds": 40})
    assert "differ" not in same


def test_stale_when_the_rule_changed(monkeypatch):
    e = registry.Entry(id="demo/acc", paper="pandey2022", chapter="demo", figure="F", statement="s",
                       source="t", statistic="s", rule={"test": "at_least", "threshold": 0.9}, reference={},
                       added="2026-12-01")
    monkeypatch.setattr(registry, "entries", lambda: {e.id: e})
    fresh = {"chapter": "demo", "claims": [_claim(digest=e.digest).as_row()]}
    old = {"chapter": "demo", "claims": [_claim(digest="something-else").as_row()]}
    assert records.stale_ids(fresh) == [] and records.stale_ids(old) == ["demo/acc"]



def test_record_then_verify_a_small_chapter(tmp_path, monkeypatch):
    monkeypatch.setattr(records, "results_dir", lambda profile: tmp_path / "results" / profile)
    chapter = "f-em1"
    path = recording.record(chapter, {"n_seeds": 3, "epochs": 3}, profile="smoke")
    rec = json.loads(path.read_text())
    for key in ("chapter", "profile", "commit", "date", "wall_s", "machine", "parameters", "claims",
                "partial"):
        assert key in rec
    assert rec["parameters"]["n_seeds"] == 3
    assert rec["partial"] == {"n_seeds": {"ran": 3, "profile": 4}, "epochs": {"ran": 3, "profile": 10}}
    assert rec["claims"], "the chapter recorded no claims"
    ok, diffs = recording.verify(chapter, "smoke")
    assert ok, diffs
    assert records.verified_text(rec) == "not verified"
    records.mark_verified(chapter, "smoke", ok, diffs, 1.0)
    stamped = json.loads(path.read_text())
    assert stamped["verified"]["agree"] and stamped["claims"] == rec["claims"]
    assert records.verified_text(stamped).startswith("verified ")
    # a tampered record is caught
    rec["claims"][0]["estimate"] = (rec["claims"][0]["estimate"] or 0) + 1.0
    path.write_text(json.dumps(rec))
    ok, diffs = recording.verify(chapter, "smoke")
    assert not ok and diffs
    records.mark_verified(chapter, "smoke", ok, diffs, 1.0)
    assert "differs" in records.verified_text(json.loads(path.read_text()))


def test_budget_ratio_range(monkeypatch):
    from companion import config

    schema = {
        "n_seeds": config.Param("n_seeds", "int", {"quick": 5, "paper": 10}),
        "epochs": config.Param("epochs", "int", {"quick": 300, "paper": 2000}),
        "seed": config.Param("seed", "int", 0),
        "n_analysis": config.Param("n_analysis", "int", {"quick": 100, "paper": 1000}),
        "layers": config.Param("layers", "str", {"quick": "zeroth", "paper": "zeroth,first,second"},
                               items=("zeroth", "first", "second")),
    }
    monkeypatch.setattr(config, "schema", lambda ch: schema)
    lo, hi, factors = records.budget_ratio("demo")
    assert lo == pytest.approx(2000 / 300) and hi == pytest.approx(2 * 2000 / 300 * 3)
    assert len(factors) == 3  # seeds, epochs, layers; not the showcased seed nor the analysis size
    # separate families of networks (eSCAN, English-French) do not multiply each other
    schema = {
        "escan_seeds": config.Param("escan_seeds", "int", {"quick": 3, "paper": 9}),
        "escan_steps_aed": config.Param("escan_steps_aed", "int", {"quick": 600, "paper": 6000}),
        "escan_steps_ao": config.Param("escan_steps_ao", "int", {"quick": 2000, "paper": 6000}),
        "enfr_steps": config.Param("enfr_steps", "int", {"quick": 800, "paper": 8000}),
    }
    lo, hi, factors = records.budget_ratio("demo")
    assert lo == pytest.approx(10.0) and hi == pytest.approx(3 * 10.0) and len(factors) == 4
    est = records.estimate_costs({"demo": 60.0})
    assert est["chapters"]["demo"]["paper_s_high"] == pytest.approx(60 * hi, abs=0.1)


def test_scorecard_shows_each_claims_recorded_verdict(monkeypatch):
    from companion import scorecard

    rec = {"chapter": "f-em1", "claims": [_claim("demo/acc", "fail").as_row()]}
    monkeypatch.setattr(records, "load", lambda chapter, profile="paper": rec if chapter == "f-em1" else None)
    monkeypatch.setattr(records, "stale_ids", lambda r: ["demo/acc"])
    assert scorecard.recorded_status("f-em1", "demo/acc") == "fail (stale)"
    assert scorecard.recorded_status("f-em1", "demo/other") == "— (not in the record)"
    assert scorecard.recorded_status("f-em2", "demo/acc") == "—"
    frame = claims.to_frame([_claim("demo/acc", "pass")])
    frame["paper (recorded)"] = ["fail (stale)"]
    html = claims.render_html(frame, ["claim", "status", "paper (recorded)"])
    assert "fail (stale)" in html and claims.COLOURS["fail"] in html and claims.COLOURS["pass"] in html


def test_paper_cost_scales_a_partial_record_up(monkeypatch):
    cut = {"n_seeds": {"ran": 5, "profile": 20}, "layers": {"ran": "zeroth", "profile": "zeroth,first"}}
    rec = {"profile": "paper", "wall_s": 600.0, "partial": cut}
    monkeypatch.setattr(records, "load", lambda chapter, profile="paper": rec)
    c = records.paper_cost("t-layer", costs={})
    assert c["low_s"] == c["high_s"] == 600.0 * 4 * 2 and "scaled" in c["how"]
    monkeypatch.setattr(records, "load", lambda chapter, profile="paper": None)
    c = records.paper_cost("t-layer", costs={"t-layer": {"paper_s_low": 10.0, "paper_s_high": 90.0}})
    assert (c["low_s"], c["high_s"], c["how"]) == (10.0, 90.0, "extrapolated from quick")


def test_networks_trained_beforehand_count_in_the_cost_each_by_its_own_cut(monkeypatch):
    cut = {"escan_seeds": {"ran": 3, "profile": 10}, "enfr_seeds": {"ran": 1, "profile": 3}}
    runs = [{"what": "a", "cpu_s": 300.0, "wall_s": 320.0, "scales_with": "escan_seeds"},
            {"what": "b", "cpu_s": None, "wall_s": 100.0, "scales_with": "enfr_seeds"},
            {"what": "c", "cpu_s": 50.0, "wall_s": 60.0, "scales_with": None}]
    rec = {"profile": "paper", "commit": "b" * 40, "date": "2026-12-02T12:00:00", "wall_s": 40.0,
           "cpu_s": 30.0, "machine": "m", "partial": cut, "cache": {"trained": 0, "reused": 3},
           "pretrained": {"how": "h", "runs": runs}}
    monkeypatch.setattr(records, "load", lambda chapter, profile="paper": rec)
    c = records.paper_cost("fig5", costs={"fig5": {"paper_s_low": 1.0, "paper_s_high": 2.0}})
    # 300 x 10/3 + 100 x 3 (no CPU time: the wall time) + 50 + the analysis 30 x 10/3 (largest cut)
    assert c["low_s"] == c["high_s"] == pytest.approx(1000 + 300 + 50 + 100)
    assert "trained beforehand" in c["how"]
    # one run kept no CPU time, so the sum is not all CPU time: the provenance says so
    assert "after 3 training runs beforehand (8 min, wall time where no CPU time was kept)" in \
        records.provenance(rec)
    assert "after 2 training runs beforehand (6 CPU-min)" in records.provenance(
        {**rec, "pretrained": {"how": "h", "runs": [runs[0], runs[2]]}})
    # some networks counted by another chapter: the rest and the analysis here
    rec["pretrained"]["runs"] = [runs[0], runs[1], dict(runs[2], counted_in="fig1")]
    c = records.paper_cost("fig5", costs={})
    assert c["low_s"] == pytest.approx(1000 + 300 + 100)
    assert c["how"].startswith("measured, with its networks trained beforehand (1 of them counted with fig1)")
    # networks another chapter trained and counts: only this record's analysis
    rec["pretrained"]["runs"] = [dict(r, counted_in="fig5") for r in runs]
    c = records.paper_cost("tab-accuracy-beyond", costs={})
    assert c["low_s"] == pytest.approx(100) and "counted with fig5" in c["how"]
    # reused results that the field does not account for: back to the extrapolation
    rec["cache"]["reused"] = 4
    est = {"fig5": {"paper_s_low": 1.0, "paper_s_high": 2.0}}
    assert records.paper_cost("fig5", costs=est)["low_s"] == 1.0


def test_a_deviation_record_is_kept_apart_and_verified(tmp_path, monkeypatch):
    """A record with our settings in place of the authors' goes to deviations/, leaves the chapter's
    record and every count of recorded verdicts alone, and verifies like any record."""
    monkeypatch.setattr(records, "results_dir", lambda profile: tmp_path / "results" / profile)
    chapter = "f-em1"
    main = recording.record(chapter, {"n_seeds": 3, "epochs": 3}, profile="smoke")
    before = main.read_text()
    path = recording.record(chapter, {"n_seeds": 3, "epochs": 3, "data_seed": 5}, profile="smoke",
                            deviation="data-5")
    assert path == tmp_path / "results" / "smoke" / "deviations" / "f-em1.data-5.json"
    assert main.read_text() == before, "the chapter's own record changed"
    rec = records.load(chapter, "smoke", "data-5")
    assert rec["deviation"] == "data-5" and rec["overrides"]["data_seed"] == 5
    changed = "a deviation from the authors' settings (n_seeds 3, epochs 3, data_seed 5)"
    assert changed in records.provenance(rec)
    own = records.recorded_claims(records.load(chapter, "smoke"))
    assert len(records.all_recorded_claims("smoke")) == len(own), "the deviation was counted"
    ok, diffs = recording.verify(chapter, "smoke", "data-5")
    assert ok, diffs
    records.mark_verified(chapter, "smoke", ok, diffs, 1.0, "data-5")
    assert records.load(chapter, "smoke", "data-5")["verified"]["agree"]
    assert "verified" not in records.load(chapter, "smoke")
    with pytest.raises(Exception, match="a deviation name"):
        records.record_path(chapter, "smoke", "../escape")


def test_summary_tables_travel_with_a_record(tmp_path, monkeypatch):
    import pandas as pd

    from companion import config

    card = ChapterCard(config.resolve("t-d1", "smoke"))
    frame = pd.DataFrame({"ours": [99.1, float("nan")], "authors": [98.0, 97.5]},
                         index=pd.Index(["zeroth", "first"], name="layer"))
    assert card.table(frame) is frame
    monkeypatch.setenv(claims.CLAIMS_FILE_ENV, str(tmp_path / "t-d1.claims.json"))
    monkeypatch.setattr(claims, "store_dir", lambda profile: tmp_path / "store")
    card.save()
    saved = json.loads((tmp_path / "t-d1.claims.tables.json").read_text())
    assert saved["ours beside the authors"]["columns"] == ["layer", "ours", "authors"]
    html = recorded_tables_html({"profile": "paper", "tables": saved})
    assert "<details>" in html and "first" in html and "99.1" in html and "—" in html
    assert recorded_tables_html({"profile": "paper"}) == ""


def test_a_recorded_table_is_shown_with_its_provenance_or_how_to_make_it(tmp_path, monkeypatch):
    import pandas as pd

    from companion import config

    monkeypatch.setattr(records, "results_dir", lambda profile: tmp_path / "results" / profile)
    monkeypatch.setenv(claims.CLAIMS_FILE_ENV, str(tmp_path / "t-d1.claims.json"))
    monkeypatch.setattr(claims, "store_dir", lambda profile: tmp_path / "store")
    missing = recorded_table("t-d1", "traps", "At the authors' settings", deviation="l2-1e-4",
                             make="-p l2 1e-4").data
    assert "not recorded yet" in missing
    assert "companion record t-d1 --profile paper -p l2 1e-4 --deviation l2-1e-4" in missing
    # a table kept after the verdicts were shown is still saved with the run
    card = ChapterCard(config.resolve("t-d1", "smoke"))
    card._shown = True
    card.table(pd.DataFrame({"trapped share": [0.25]}, index=pd.Index(["AED"], name="architecture")), "traps")
    saved = json.loads((tmp_path / "t-d1.claims.tables.json").read_text())
    rec = {"chapter": "t-d1", "profile": "paper", "commit": "a" * 40, "date": "2026-12-04T00:00:00",
           "wall_s": 60.0, "machine": "m", "parameters": {}, "overrides": {"l2": 1e-4}, "partial": {},
           "claims": [], "tables": saved, "deviation": "l2-1e-4"}
    records._write(records.record_path("t-d1", "paper", "l2-1e-4"), rec)
    shown = recorded_table("t-d1", "traps", "Our deviation", deviation="l2-1e-4").data
    assert "not live" in shown and "a deviation from the authors' settings (l2 0.0001)" in shown
    assert "AED" in shown and "0.25" in shown and "not verified" in shown


def test_split_parameter_picks_the_first_list_with_two_items():
    from companion import config

    settings = config.resolve("t-d2b", "paper").as_dict()
    assert recording.split_parameter("t-d2b", settings) == ("layers", ["zeroth", "first", "second"])
    with pytest.raises(config.ConfigError, match="fewer than two items"):
        recording.split_parameter("t-d2b", settings, "ks")  # 'paper' names a grid; it does not list it
    with pytest.raises(config.ConfigError, match="no list parameter 'n_seeds'"):
        recording.split_parameter("t-d2b", settings, "n_seeds")


def test_a_record_made_on_two_processes_matches_the_serial_record(tmp_path, monkeypatch):
    """Splitting on layers changes who trains what, not the numbers: same verdicts and estimates."""
    chapter, params = "t-d2b", {"layers": "zeroth,first"}
    monkeypatch.setattr(records, "results_dir", lambda profile: tmp_path / "serial" / profile)
    serial = json.loads(recording.record(chapter, params, profile="smoke").read_text())
    monkeypatch.setenv("COMPANION_CACHE", str(tmp_path / "other-cache"))  # train everything again
    monkeypatch.setattr(records, "results_dir", lambda profile: tmp_path / "split" / profile)
    split = json.loads(recording.record(chapter, params, profile="smoke", workers=2, log=lambda *a: None)
                       .read_text())
    assert split["workers"] == 2 and split["split"]["parameter"] == "layers"
    assert split["cache"]["trained"] > 0 and split["cache"]["reused"] == 0  # a cold cache: all trained here
    assert sorted(r["value"] for r in split["split"]["runs"]) == ["first", "zeroth"]
    assert split["core_s"] >= sum(r["seconds"] for r in split["split"]["runs"])
    assert records.compare(records.recorded_claims(serial), records.recorded_claims(split)) == []
    assert split["tables"] == serial["tables"]
    assert split["cpu_s"] > 0 and serial["cpu_s"] > 0
    assert "on 2 processes" in records.provenance(split) and "CPU-min" in records.provenance(split)
    again = json.loads(recording.record(chapter, params, profile="smoke").read_text())  # same cache: all read
    assert again["cache"]["trained"] == 0 and again["cache"]["reused"] == split["cache"]["trained"]


def test_cpu_seconds_counts_the_children_a_record_waits_for():
    """The kernels and workers are children: their CPU time, not only this process's, is the cost."""
    import subprocess
    import sys

    before = records.cpu_seconds()
    subprocess.run([sys.executable, "-c", "import time\nt = time.process_time()\n"
                    "while time.process_time() - t < 0.6: pass"], check=True)
    assert records.cpu_seconds() - before >= 0.5


def test_cpu_time_is_preferred_to_wall_time_for_the_cost(monkeypatch):
    rec = {"chapter": "f-em1", "wall_s": 1000.0, "cpu_s": 400.0, "partial": None, "cache": {}}
    monkeypatch.setattr(records, "load", lambda chapter, profile="paper": rec)
    assert records.paper_cost("f-em1", costs={})["low_s"] == 400.0
    rec.pop("cpu_s")
    assert records.paper_cost("f-em1", costs={})["low_s"] == 1000.0


def test_cache_reuse_counts_results_read_but_not_computed_here(monkeypatch):
    log = ("computed ens a 1\nloaded ens a 2\nloaded ens b 2\nloaded ens b 3\nloaded data c 1\n")
    assert recording.cache_reuse(log) == {"trained": 1, "reused": 2}
    assert recording.cache_reuse("") == {"trained": 0, "reused": 0}
    rec = {"profile": "paper", "wall_s": 30.0, "partial": {}, "cache": {"trained": 0, "reused": 13}}
    monkeypatch.setattr(records, "load", lambda chapter, profile="paper": rec)
    c = records.paper_cost("t-d1", costs={"t-d1": {"paper_s_low": 1500.0, "paper_s_high": 3000.0}})
    assert (c["low_s"], c["high_s"]) == (1500.0, 3000.0) and "read 13 cached results" in c["how"]


def test_a_record_counts_the_networks_it_read_with_what_they_cost_to_train(_isolated_cache):
    """fig2 reads the AED networks that fig1 (first in the book) also declares: the record lists them with
    the training time their cache manifest kept, says they grow with n_seeds, and leaves them to fig1's
    cost; fig1's own record counts them."""
    from companion import cache, networks, prebuild

    (spec,) = [x for x in networks.chapter_specs("fig2", "smoke") if "AED" in x.description]
    r = prebuild.train_network("fig2", "smoke", {}, spec.key)
    assert r["ok"] and r["trained"], r.get("error")
    log = f"loaded {spec.kind} {spec.key} 1\n"
    pre = recording.pretrained_runs("fig2", "smoke", {}, log)
    (run,) = pre["runs"]
    cost = cache.compute_cost(spec.kind, spec.key)
    assert run["what"] == spec.description and run["cpu_s"] == cost["cpu_s"] > 0
    assert run["scales_with"] == "n_seeds" and run["counted_in"] == "fig1"
    (own,) = recording.pretrained_runs("fig1", "smoke", {}, log)["runs"]
    assert "counted_in" not in own
    # trained during the record itself: not "beforehand"
    here = log + f"computed {spec.kind} {spec.key} 1\n"
    assert recording.pretrained_runs("fig2", "smoke", {}, here) is None
    rec = {"profile": "smoke", "wall_s": 2.0, "cpu_s": 1.0, "partial": {}, "pretrained": {"runs": [own]}}
    assert records._pretrained_cost(rec)["high_s"] == pytest.approx(own["cpu_s"] + 1.0)


# ---- staged records: --until-decided ---------------------------------------------------------------

def _effect(mean, n):
    """n values with exactly this mean and a sample sd of 1 (a simulated effect, no draws)."""
    import numpy as np

    x = np.linspace(-1.0, 1.0, n)
    return mean + (x - x.mean()) / x.std(ddof=1)


def _simulated_stage(effects, calls, levels):
    """A "run one stage" callable: each claim's paired difference is its effect with sd 1."""
    demo = registry.Entry(id="demo/x", paper="pandey2022", chapter="demo", figure="F", statement="s",
                          source="[T]", statistic="st", rule={"test": "greater", "min_n": 3}, reference={},
                          added="2026-12-01")

    def run(n, level):
        calls.append(n)
        levels.append(level)
        out = []
        for cid, effect in effects.items():
            v = registry.decide(demo, a=_effect(effect, n), b=[0.0] * n, level=level)
            out.append(claims.Claim(chapter="demo", paper="pandey2022", figure="F", id=cid, claim="s",
                                    expected="e", observed="o", criterion="c", status=v.status,
                                    estimate=v.estimate, lo=v.lo, hi=v.hi, n=v.n))
        return out

    return run


def test_staged_stops_at_the_second_look_when_the_effect_decides_there():
    # effect 1.2 sd: at n = 5 the per-look (1 - 0.05/3) t interval is 1.2 +- 2.08 (undecided); at n = 10
    # it is 1.2 +- 1.02 (pass). Bonferroni over three looks: each at 1 - 0.05/3.
    calls, levels = [], []
    result = recording.staged(_simulated_stage({"demo/a": 1.2}, calls, levels), [5, 10, 20], log=lambda *a: 0)
    assert calls == [5, 10] and levels == [pytest.approx(1 - 0.05 / 3)] * 2
    (row,) = result["claims"]
    assert row["status"] == "pass" and row["stage"] == 10 and row["n"] == 10
    assert [s["n_seeds"] for s in result["stages"]] == [5, 10] and result["stopped_at"] == 10
    assert result["stages"][0]["claims"][0]["status"] == "undecided"  # every look is kept
    assert "Bonferroni" in result["method"]


def test_staged_runs_to_the_last_look_when_an_effect_never_decides():
    calls, levels = [], []
    result = recording.staged(_simulated_stage({"demo/a": 1.2, "demo/null": 0.0}, calls, levels), [5, 10, 20],
                            log=lambda *a: 0)
    assert calls == [5, 10, 20] and result["stopped_at"] == 20
    rows = {r["id"]: r for r in result["claims"]}
    assert rows["demo/a"]["stage"] == 10 and rows["demo/a"]["n"] == 10     # kept from its deciding look
    assert rows["demo/null"]["stage"] is None and rows["demo/null"]["status"] == "undecided"
    assert rows["demo/null"]["n"] == 20


def test_a_claim_keeps_the_verdict_of_its_first_deciding_look():
    # decides at n = 5, then (a different simulated effect) would read otherwise later: the first stands
    seq = iter(["pass", "undecided", "fail"])

    def run(n, level):
        return [_claim("demo/flip", status="pass"), _claim("demo/slow", status=next(seq))]

    result = recording.staged(run, [5, 10, 20], log=lambda *a: 0)
    rows = {r["id"]: r for r in result["claims"]}
    assert rows["demo/flip"]["stage"] == 5 and rows["demo/slow"]["stage"] == 5
    assert result["stopped_at"] == 5


def test_stage_level_is_bonferroni():
    assert recording.stage_level(4) == pytest.approx(0.9875)
    assert recording.stage_level(1) == pytest.approx(0.95)


def test_until_decided_refuses_a_chapter_without_n_seeds_and_bad_stages():
    from companion.config import ConfigError

    with pytest.raises(ConfigError, match="has no n_seeds parameter"):
        recording.record_until_decided("fig7", {}, "smoke", max_seeds=10)
    with pytest.raises(ConfigError, match="<= --max-seeds 3"):
        recording.record_until_decided("t-d2b", {}, "smoke", max_seeds=3)
    with pytest.raises(ConfigError, match="drop -p n_seeds"):
        recording.record_until_decided("t-d2b", {"n_seeds": "2"}, "smoke", max_seeds=10)
    with pytest.raises(ConfigError, match="increasing"):
        recording.staged(lambda n, level: [], [10, 5], log=lambda *a: 0)


def test_until_decided_keeps_every_stage_in_the_record(tmp_path, monkeypatch):
    # the staged loop around run_record, with the chapter run replaced by a simulated one: the record
    # written holds each look's verdicts and n, and the per-look level reached the run
    monkeypatch.setattr(records, "record_path", lambda ch, prof="paper": tmp_path / f"{ch}.json")
    seen = []

    def fake_run_record(chapter, raw, profile, output_dir=None, workers=1, split=None, log=print):
        import os

        n = int(raw["n_seeds"])
        seen.append((n, os.environ.get("COMPANION_LEVEL")))
        status = "pass" if n >= 10 else "undecided"
        row = _claim("t-d2b/zeroth-ftpt", status=status).as_row()
        row["n"] = n
        return {"chapter": chapter, "profile": profile, "commit": "c", "wall_s": 1.0, "cpu_s": 2.0,
                "parameters": {"n_seeds": n}, "partial": {}, "claims": [row]}

    monkeypatch.setattr(recording, "run_record", fake_run_record)
    path = recording.record_until_decided("t-d2b", {}, "smoke", max_seeds=20, stages=(5, 10, 20, 40),
                                        log=lambda *a: 0)
    data = json.loads(path.read_text())
    assert [s["n_seeds"] for s in data["stages"]] == [5, 10] and data["staged"]["looks"] == [5, 10, 20]
    assert seen == [(5, repr(1 - 0.05 / 3)), (10, repr(1 - 0.05 / 3))]
    assert data["claims"][0]["stage"] == 10 and data["wall_s"] == 2.0 and data["cpu_s"] == 4.0
    assert "staged: looks at n_seeds 5, 10, 20" in records.provenance({**data, "date": "2026-12-03",
                                                                       "machine": "m"})
    import os
    assert "COMPANION_LEVEL" not in os.environ


def test_a_staged_record_counts_the_networks_every_look_read_once():
    # look 1 read a 10-seed network trained before the record; look 2 read a 24-seed one trained before,
    # the 10-seed one again, and one that look 1 had just computed (its cpu_s counts it already)
    how = "read from the model cache"
    run = lambda key, date: {"what": key, "key": key, "cpu_s": 10.0, "wall_s": 11.0, "trained": date}  # noqa: E731
    looks = [{"pretrained": {"how": how, "runs": [run("ten", "2026-12-04T10:00:00+00:00")]}},
             {"pretrained": {"how": how, "runs": [run("twentyfour", "2026-12-04T10:05:00+00:00"),
                                                  run("ten", "2026-12-04T10:00:00+00:00"),
                                                  run("fresh", "2026-12-04T12:30:00+00:00")]}},
             {}]
    merged = recording.merged_pretrained(looks, "2026-12-04T12:00:00+00:00")
    assert [r["key"] for r in merged["runs"]] == ["ten", "twentyfour"] and merged["how"] == how
    assert recording.merged_pretrained([{}, {}], "2026-12-04T12:00:00+00:00") is None


def test_a_staged_record_of_a_small_chapter_decides_at_the_per_look_level(tmp_path, monkeypatch):
    # a real run (two looks of f-em1 at smoke size): the per-look level reaches the chapter's kernel
    monkeypatch.setattr(records, "results_dir", lambda profile: tmp_path / "results" / profile)
    path = recording.record_until_decided("f-em1", {"epochs": 3}, "smoke", max_seeds=3, stages=(2, 3),
                                        log=lambda *a: 0)
    rec = json.loads(path.read_text())
    assert rec["staged"]["level"] == pytest.approx(0.975) and rec["staged"]["looks"] == [2, 3]
    assert rec["stages"][0]["n_seeds"] == 2 and rec["claims"]
    criteria = [c["criterion"] for s in rec["stages"] for c in s["claims"]]
    assert criteria and all(c.startswith("97.5% ") for c in criteria), criteria
    ok, diffs = recording.verify("f-em1", "smoke")  # the last look re-runs at its own level
    assert ok, diffs


def test_provenance_table_has_one_row_per_record():
    from companion import paths

    table = records.provenance_table()
    recorded = sorted(p.stem for p in (paths.repo_root() / "results" / "paper").glob("*.json"))
    rows = {line.split("|")[1].strip(): line for line in table.splitlines()[2:]}
    assert sorted(rows) == recorded
    rec = records.load(recorded[0])
    assert records.provenance(rec) in rows[recorded[0]]


def test_a_kept_table_prints_its_nulls_as_missing():
    kept = {"columns": ["name", "share", "none at all"], "data": [["a", 0.5, None], ["b", None, None]]}
    frame = records.kept_frame(kept)
    assert frame["share"].isna().tolist() == [False, True] and frame["none at all"].isna().all()
    assert frame["name"].tolist() == ["a", "b"]
    html = frame.to_html(na_rep="—")
    assert "None" not in html and html.count("—") == 3
