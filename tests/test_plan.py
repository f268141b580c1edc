"""Seeds to decide: the side an undecided finding leans to, the seeds that would decide it (known
answers), their cost, and ``companion plan`` on the command line."""

import dataclasses
import json
import math
import subprocess
import sys

import pytest
from scipy import stats as st

from companion import claims, config, plan, records, registry, stats


def entry(test, paper=None, tier="finding", **rule):
    return registry.Entry(id=f"demo/{test}", paper="pandey2022", chapter="demo", figure="F", statement="s",
                          source="[T]", statistic="st", rule={"test": test, "min_n": 3, **rule},
                          reference=paper or {}, added="2026-12-01", tier=tier)


def t_row(estimate, sd, n, **extra):
    half = st.t.ppf(0.975, n - 1) * sd / math.sqrt(n)
    return {"estimate": estimate, "lo": estimate - half, "hi": estimate + half, "n": n, **extra}


def test_seeds_for_a_difference_known_answer():
    # mean 1, sd 2: the expected t interval excludes 0 once t_{n-1} / sqrt(n) < 1/2:
    # t_{16} / sqrt 17 = 0.514, t_{17} / sqrt 18 = 0.497 -> n = 18
    side, n, how = plan.seeds_to_decide(entry("greater"), t_row(1.0, 2.0, 5))
    assert (side, n) == ("pass", 18) and "t interval" in how and "sd 2.000" in how
    # the same numbers against the paper's direction lean to fail, and decide at the same n
    assert plan.seeds_to_decide(entry("less"), t_row(1.0, 2.0, 5))[:2] == ("fail", 18)


def test_the_spread_is_read_back_from_the_stored_interval():
    assert plan.row_sd(entry("greater"), t_row(3.0, 1.7, 8)) == pytest.approx(1.7)
    welch = entry("greater", paired=False)
    half = st.t.ppf(0.975, 2 * 6 - 2) * 2.5 * math.sqrt(2 / 6)
    assert plan.row_sd(welch, {"estimate": 1, "lo": 1 - half, "hi": 1 + half, "n": 6}) == pytest.approx(2.5)
    assert plan.row_sd(entry("greater"), {"estimate": 1, "lo": None, "hi": None, "n": 1}) is None


def test_seeds_for_a_rate_known_answer():
    # 4 of 5 against "rate >= 0.5": Wilson's lower end at 0.8 first reaches 0.5 at n = 11 (0.4902 at 10)
    e = entry("rate_at_least", threshold=0.5)
    side, n, how = plan.seeds_to_decide(e, {"estimate": 0.8, "lo": 0.376, "hi": 0.964, "n": 5})
    assert (side, n) == ("pass", 11) and "Wilson" in how


def test_leans_and_the_cases_no_number_decides():
    e = entry("at_least", threshold=0.9)
    assert plan.leans(e, 0.85) == "fail" and plan.leans(e, 0.95) == "pass"
    m = entry("matches", paper={"value": 10.0}, margin=2)
    assert plan.leans(m, 11.0) == "pass" and plan.leans(m, 13.0) == "fail"
    assert plan.seeds_to_decide(entry("greater"), t_row(0.0, 1.0, 5))[:2] == ("on the boundary", None)
    side, n, how = plan.seeds_to_decide(entry("greater"), t_row(0.01, 10.0, 5))
    assert (side, n) == ("pass", None) and "not with a feasible number (> 1000)" in how
    side, n, how = plan.seeds_to_decide(entry("greater"), {"estimate": 1.0, "lo": None, "hi": None, "n": 3})
    assert n is None and "no spread" in how
    # a bounded mean with no spread is projected with Wilson: 3 of 3 at 1.0 against >= 0.8 needs
    # 3.84 / (n + 3.84) <= 0.2, n = 16
    b = entry("at_least", threshold=0.8, range=[0, 1])
    assert plan.seeds_to_decide(b, {"estimate": 1.0, "lo": 0.44, "hi": 1.0, "n": 3,
                                    "observed": "mean 1 [0.44, 1] (Wilson (bounded mean), n=3)"})[:2] \
        == ("pass", 16)


def test_a_wilson_fallback_is_projected_at_the_registry_s_assumed_spread():
    # the stored interval is a Wilson fallback (no spread to read back); the registry states sd 0.1,
    # so the projection is the t interval at that sd: 0.95 against >= 0.9 needs t_{n-1} * 0.1 / sqrt n
    # <= 0.05: t_16 / sqrt 17 = 0.514 > 0.5, t_17 / sqrt 18 = 0.497 -> n = 18 (Wilson alone asks for more)
    b = entry("at_least", threshold=0.9, range=[0, 1])
    row = {"estimate": 0.95, "lo": 0.5, "hi": 0.99, "n": 5,
           "observed": "mean 0.95 [0.5, 0.99] (Wilson (bounded mean), n=5)"}
    wilson_only = plan.seeds_to_decide(b, row)
    b = dataclasses.replace(b, assumed={"sd": 0.1, "why": "measured beside the record"})
    side, n, how = plan.seeds_to_decide(b, row)
    assert (side, n) == ("pass", 18) and "assumed sd 0.1" in how and "measured beside the record" in how
    assert wilson_only[1] > n and "no usable spread" in wilson_only[2]


def _claim(cid, status, tier="finding", chapter="t-a2", **kw):
    reg = registry.entries()
    kw.setdefault("digest", reg[cid].digest if cid in reg else "")  # made under the registry's rule
    return claims.Claim(chapter=chapter, paper="pandey2022", figure="F", id=cid, claim="s", expected="e",
                        observed="o", criterion="c", status=status, tier=tier, profile="paper", **kw)


def test_plan_rows_cover_findings_and_cost_the_extra_seeds(monkeypatch):
    e = registry.get("t-a2/softmax-ftpt")
    lo_b, hi_b = e.target()
    mid = (lo_b + hi_b) / 2
    half = st.t.ppf(0.975, 4) * 12.0 / math.sqrt(5)
    rows = plan.plan_rows([
        _claim("t-a2/softmax-ftpt", "undecided", estimate=mid, lo=mid - half, hi=mid + half, n=5,
               test="matches"),
        _claim("t-a2/sparsemax-ftpt", "pass", estimate=1.0, lo=0.5, hi=1.5, n=5),
        _claim("t-a2/some-precondition", "pass", tier="precondition"),
    ])
    assert [r["id"] for r in rows] == ["t-a2/softmax-ftpt", "t-a2/sparsemax-ftpt"]
    undecided, decided = rows
    assert set(undecided) == {"id", "chapter", "status", "n", "stale", "leans", "seeds_to_decide",
                              "extra_seeds", "core_hours", "seeds_needed", "method", "setting"}
    recorded = records.load("t-a2", "paper")["parameters"]["n_seeds"]  # the setting grows from the record's
    assert undecided["setting"] == f"-p n_seeds {recorded + undecided['extra_seeds']}"
    assert not undecided["stale"] and not decided["stale"]
    assert undecided["leans"] == "pass" and undecided["seeds_to_decide"] > 5
    per_seed, how = plan.seed_cost("t-a2", "paper")
    assert per_seed > 0 and how
    # a chapter that declares nothing and whose record lists no training runs: its one-core cost per seed
    # (every chapter declares now, so a recorded chapter with seeds and no listed runs has its declaration
    # set aside here; which one is read from the records, as re-records add runs)
    from companion import networks

    bare = next(ch for ch in sorted(networks.declarations())
                if (r := records.load(ch, "paper")) and not r.get("partial")
                and (r.get("parameters") or {}).get("n_seeds") and plan.seed_parameter(ch) == "n_seeds"
                and not (r.get("pretrained") or {}).get("runs"))
    every = networks.declarations()
    monkeypatch.setattr(networks, "declarations", lambda: {c: d for c, d in every.items() if c != bare})
    n = records.load(bare, "paper")["parameters"]["n_seeds"]
    trend, how = plan.seed_cost(bare, "paper")
    assert trend == pytest.approx(records.paper_cost(bare)["high_s"] / n) and f"n_seeds {n}" in how
    monkeypatch.setattr(networks, "declarations", lambda: every)
    # the whole record at the new setting: a cached program holds all its seeds, so every one retrains
    new_record = (recorded + undecided["extra_seeds"]) * per_seed
    assert undecided["core_hours"] == pytest.approx(round(new_record / 3600, 2))
    assert decided["leans"] is None and decided["seeds_to_decide"] is None


def test_every_undecided_recorded_finding_gets_a_side():
    rows = plan.plan_rows(plan.load_claims("paper"))
    undecided = [r for r in rows if r["status"] == "undecided"]
    # a row recorded under a rule that has changed since is stale: nothing is computed from it
    def planned_or_stale(r):
        if r["stale"]:
            return r["leans"] is None and r["method"].startswith("stale: re-record")
        return r["leans"] in ("pass", "fail", "on the boundary") or "no estimate" in r["method"]

    assert undecided and all(planned_or_stale(r) for r in undecided)
    assert all(r["method"] for r in undecided)
    # nothing is planned from a stale row (recorded under a rule changed since)
    assert all(r["seeds_to_decide"] is None for r in rows if r["stale"])
    # t-a1's raise, re-recorded as a difference of rates (Newcombe): current, planned with its side
    raise_row = next(r for r in rows if r["id"] == "t-a1/sparsemax-raises-ftpt")
    assert not raise_row["stale"] and raise_row["leans"] in ("pass", "fail", "on the boundary")
    reg = registry.entries()
    for r in rows:
        recorded = next(c for c in plan.load_claims("paper", r["chapter"]) if c.id == r["id"])
        assert r["stale"] == (r["id"] not in reg or reg[r["id"]].digest != recorded.digest)


def test_a_stale_row_is_marked_not_planned():
    rows = plan.plan_rows([_claim("t-a2/softmax-ftpt", "undecided", estimate=80.0, lo=70.0, hi=90.0, n=5,
                                  test="matches", digest="0000000000000000"),
                           _claim("t-a2/gone", "undecided", estimate=1.0, lo=0.0, hi=2.0, n=5)])
    assert [r["stale"] for r in rows] == [True, True]
    assert all(r["leans"] is None and r["seeds_to_decide"] is None for r in rows)
    assert "rule changed" in rows[0]["method"] and "no longer in the registry" in rows[1]["method"]
    text = plan.plan_text(rows)
    assert text.count("stale: re-record") == 2 and "leans" not in text
    assert json.loads(plan.as_json(rows))[0]["stale"] is True


def test_a_rate_estimate_outside_its_range_is_a_clear_error():
    # the old record of t-a1's raise: a difference of 5.7 pp, read against a rule on rates
    e = registry.get("t-a1/sparsemax-raises-ftpt")
    with pytest.raises(ValueError, match=r"sparsemax-raises-ftpt: a difference of rates must lie in \[-1"):
        plan.seeds_to_decide(e, {"estimate": 5.7, "lo": -24.0, "hi": 35.4, "n": 10, "observed": ""})
    with pytest.raises(ValueError, match=r"rate in \[0, 1\], got 3.35"):
        stats.wilson(3.35, 10)
    with pytest.raises(ValueError, match="n > 0"):
        stats.wilson(0.5, 0)
    assert stats.wilson(1.0, 40)[0] == pytest.approx(40 / (40 + 1.959964 ** 2), abs=1e-4)


def test_a_declared_need_for_seeds_travels_with_the_row():
    # the registry's number, whatever a dated revision has made it, reaches the plan's row and texts
    e = registry.get("t-d2a/first-raises-ftpt")
    assert e.seeds_needed and e.seeds_needed["n"] > 10
    n = e.seeds_needed["n"]
    row = plan.plan_rows([_claim(e.id, "undecided", chapter="t-d2a", estimate=3.8, n=10, test="greater",
                                 **dict(zip(("lo", "hi"), (-7.5, 15.1))))])[0]
    assert row["seeds_needed"] == n and not row["stale"]
    assert f"needs about {n} seeds" in plan.plan_text([row])
    assert f"Needs about {n} seeds to decide" in e.rule_text()


def test_a_declared_cannot_decide_travels_with_the_row():
    # fig5's AED offset rule: our runs showed no feasible n decides it, and the registry says so
    e = registry.get("fig5/offset-tracks-data-aed")
    assert e.cannot_decide and e.cannot_decide["date"]
    row = plan.plan_rows([_claim(e.id, "undecided", chapter="fig5", estimate=1.22, n=19, test="at_most",
                                 lo=0.56, hi=1.87)])[0]
    assert row["cannot_decide"] == e.cannot_decide["date"]
    said = f"(the registry declares it cannot decide: {e.cannot_decide['date']})"
    assert plan.plan_text([row]).endswith(said)
    assert "marks it as not decidable here" in plan.to_decide(row)
    assert "cannot decide at a feasible number of seeds" in e.rule_text()


def _run(*args, **kw):
    return subprocess.run([sys.executable, "-m", "companion.cli", *args], capture_output=True, text=True,
                          **kw)


def test_cli_plan_json_and_text():
    out = _run("plan", "t-a2", "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert rows and {r["chapter"] for r in rows} == {"t-a2"}
    assert all("stale" in r for r in rows)
    text = _run("plan", "t-a2")
    assert text.returncode == 0
    shown = [r for r in rows if r["status"] == "undecided" or r["stale"]]
    lines = text.stdout.splitlines()[1:]
    assert shown and len(lines) == len(shown)
    for r, line in zip(shown, lines):
        assert line.startswith(r["id"]) and ("stale: re-record" in line if r["stale"] else "leans" in line)


def test_a_finding_no_number_decides_says_why_in_the_text():
    base = {"id": "demo/x", "n": 16, "status": "undecided", "stale": False, "leans": "fail",
            "core_hours": None, "extra_seeds": None, "setting": None, "seeds_needed": None}
    none = dict(base, seeds_to_decide=None,
                method="expected t interval at the observed mean and sd 19.6, 95%, 50 % power; "
                       "not with a feasible number (> 1000)")
    some = dict(base, id="demo/y", seeds_to_decide=40, method="expected t interval, 95%, 50 % power")
    lines = plan.plan_text([none, some]).splitlines()
    assert lines[0].endswith("decides at n=— (not with a feasible number (> 1000))")
    assert lines[1].endswith("decides at n=40") and "(" not in lines[1]


@pytest.mark.parametrize(
    "args, needle",
    [
        (["plan", "no-such-chapter"], "unknown chapter 'no-such-chapter'"),
        (["plan", "--profile", "smoke"], "invalid choice"),
        (["record", "fig7", "--profile", "smoke", "--until-decided", "--max-seeds", "10"],
         "fig7 has no n_seeds parameter"),
        (["record", "t-d2b", "--profile", "smoke", "--until-decided"], "needs --max-seeds"),
        (["record", "t-d2b", "--profile", "smoke", "--max-seeds", "10"], "go with --until-decided"),
        (["record", "t-d2b", "--profile", "smoke", "--until-decided", "--max-seeds", "10", "--stages", "5,2"],
         "increasing whole numbers"),
        (["record", "t-d2b", "--profile", "smoke", "--until-decided", "--max-seeds", "3"],
         "<= --max-seeds 3"),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(args, needle, tmp_path):
    out = _run(*args, cwd=tmp_path)
    assert out.returncode == 2, out
    assert needle in out.stderr and out.stderr.count("\n") == 1, out.stderr


def test_to_decide_says_the_leaning_the_seeds_and_their_cost_only_for_undecided_findings():
    row = {"id": "x/y", "status": "undecided", "leans": "fail", "seeds_to_decide": 23, "extra_seeds": 13,
           "core_hours": 0.5, "stale": False}
    assert plan.to_decide(row) == (
        "leans fail; decides at about n = 23 (+13 seeds, a record of about 0.50 core-hours)")
    assert plan.to_decide({**row, "seeds_to_decide": None}) == (
        "leans fail; not with a feasible number of seeds at this spread")
    assert plan.to_decide({**row, "status": "pass"}) == ""
    assert plan.to_decide({**row, "stale": True}) == "stale: re-record"
    assert plan.to_decide({**row, "setting": "-p n_seeds 23"}) == (
        "leans fail; decides at about n = 23 (+13 seeds, a record of about 0.50 core-hours), recorded with "
        "-p n_seeds 23")


def test_seeds_to_add_count_networks_trained_not_networks_used():
    """A claim on the 5 solving networks of 10 trained asks for two seeds per network it lacks; a claim on
    the 3 variant networks of a chapter that also trains 10 counts the variant seeds."""
    assert plan.claim_seed_parameter("x", 5, {"n_seeds": 10}) == "n_seeds"
    assert plan.claim_seed_parameter("x", 3, {"n_seeds": 10, "variant_seeds": 3}) == "variant_seeds"
    assert plan.claim_seed_parameter("x", 90, {"n_seeds": 10, "variant_seeds": 3}) == "n_seeds"
    # a tie (VED and AED both 10 at the papers' budget) goes to the parameter the claim declares
    assert plan.claim_seed_parameter("x", 10, {"n_seeds": 10, "ved_seeds": 10}, "ved_seeds") == "ved_seeds"
    with pytest.raises(config.ConfigError, match="seeds_parameter"):
        plan.claim_seed_parameter("x", 10, {"n_seeds": 10}, "ved_seeds")
    c = _claim("tab-accuracy/ved-accuracy", "undecided", estimate=0.4, lo=0.17, hi=0.69, n=10)
    c.chapter = "tab-accuracy"
    assert plan._seeds_for(c, 33, "paper")[0] == "ved_seeds"
    seeds = plan.run_seeds("fig2", "paper")["n_seeds"]
    c = _claim("fig2/diagonal", "undecided", estimate=1.0, lo=0.57, hi=1.0, n=seeds // 2)
    c.chapter = "fig2"
    param, extra = plan._seeds_for(c, seeds // 2 + 10, "paper")
    assert (param, extra) == ("n_seeds", 20)
    # pooled cells: n = 9 cells x 10 seeds, 30 more runs of n are about 4 more seeds per cell
    c = _claim("t-cplx/ftpt-high", "undecided", estimate=90.0, lo=80.0, hi=100.0, n=90)
    c.chapter = "t-cplx"
    assert plan._seeds_for(c, 120, "paper") == ("n_seeds", math.ceil(30 * plan.run_seeds("t-cplx", "paper")
                                                                      ["n_seeds"] / 90))


def test_a_chapter_that_reads_cached_networks_is_costed_by_what_they_take_to_train(monkeypatch):
    """A fig2 record that only read networks trained beforehand, without their cost (as records did before
    they listed them): its CPU time is seconds, but a seed costs a one-to-one AED network at the papers'
    budget (its declared cost model). With the runs it read listed, their measured cost counts."""
    real = records.load("fig2", "paper")
    assert real["pretrained"]["runs"], "fig2's record lists the networks it read"
    per_seed, how = plan.seed_cost("fig2", "paper")
    assert "measured" in how and per_seed > 100 * (real["cpu_s"] / real["parameters"]["n_seeds"])
    bare = {k: v for k, v in real.items() if k != "pretrained"}
    monkeypatch.setattr(records, "load", lambda chapter, profile="paper": bare)
    per_seed, how = plan.seed_cost("fig2", "paper")
    own = (bare.get("cpu_s") or bare["wall_s"]) / bare["parameters"]["n_seeds"]
    assert per_seed > 100 * own and "declared networks" in how
    assert plan.declared_seed_cost("fig2", "paper", "n_seeds", 10) == pytest.approx(per_seed - own)
    assert plan.declared_seed_cost("t-data", "paper", "mosaic", 1) is None  # trains nothing


def test_a_record_that_trained_its_networks_itself_is_costed_by_its_own_cpu_time(monkeypatch):
    """Known answer: t-cplx-d1 trained its 3 programs inside a 6-seed record of 600 s of CPU: 100 s a seed
    (the cost model, which ignores early stopping, is not added on top). Not for a record that also read
    cached networks, one cut on another parameter, or a chapter whose networks are stacked from members
    (fig2: a record could have counted only the stacking)."""
    rec = {"parameters": {"n_seeds": 6}, "overrides": {"n_seeds": 6}, "cpu_s": 600.0, "wall_s": 700.0,
           "cache": {"trained": 3, "reused": 0}, "partial": {"n_seeds": {"ran": 6, "profile": 20}}}
    monkeypatch.setattr(records, "load", lambda chapter, profile="paper": rec)
    per_seed, how = plan.seed_cost("t-cplx-d1", "paper")
    assert per_seed == pytest.approx(100.0) and "trained every network itself" in how
    for other in ({**rec, "cache": {"trained": 3, "reused": 1}}, {**rec, "partial": {"cells": {}}}):
        assert not plan._trained_in_record("t-cplx-d1", other, "n_seeds")
    assert not plan._trained_in_record("fig2", {**rec, "overrides": {}}, "n_seeds")


def test_a_setting_beyond_the_parameters_maximum_is_flagged(monkeypatch):
    """The plan gives the -p setting that would decide a claim, and says when _config.yml forbids it."""
    monkeypatch.setattr(plan, "_seeds_for", lambda c, n, prof: ("n_seeds", 100))
    e = registry.get("t-a2/softmax-ftpt")
    mid = sum(e.target()) / 2
    row, = plan.plan_rows([_claim("t-a2/softmax-ftpt", "undecided", estimate=mid, lo=mid - 30, hi=mid + 30,
                                  n=5, test="matches")])
    limit = int(config.schema("t-a2")["n_seeds"].max)
    want = records.load("t-a2", "paper")["parameters"]["n_seeds"] + 100  # the record's seeds + the extra
    assert row["setting"] == f"-p n_seeds {want} (above its maximum {limit} in _config.yml)"
    assert f"[-p n_seeds {want} (above its maximum {limit}" in plan.plan_text([row])


def test_a_record_that_measured_its_training_runs_is_costed_by_them(monkeypatch):
    """Known answer: two runs that grow with n_seeds (100 s and 50 s of CPU) and 10 s of analysis, over
    5 seeds, cost 32 s a seed; the cost model is not consulted. A run with wall time only, a partial
    record, or no runs at all fall back to the other methods."""
    run = {"what": "x", "key": "k", "wall_s": 1.0, "scales_with": "n_seeds"}
    rec = {"parameters": {"n_seeds": 5}, "cpu_s": 10.0, "wall_s": 12.0,
           "pretrained": {"runs": [dict(run, cpu_s=100.0), dict(run, cpu_s=50.0),
                                   dict(run, cpu_s=999.0, scales_with="other")]}}
    monkeypatch.setattr(records, "load", lambda chapter, profile: rec)
    per_seed, how = plan.seed_cost("t-d2a", "paper")
    assert per_seed == pytest.approx(32.0) and "measured" in how and "n_seeds 5" in how
    assert plan._measured_seed_cost("t-d2a", "other") is None  # no seeds parameter of that name recorded
    for broken in ({**rec, "partial": {"n_seeds": {"ran": 5, "profile": 10}}},
                   {**rec, "pretrained": {"runs": [run]}}, {**rec, "pretrained": {}}):
        monkeypatch.setattr(records, "load", lambda chapter, profile, r=broken: r)
        assert plan._measured_seed_cost("t-d2a", "n_seeds") is None


def test_a_finding_gated_by_an_undecided_precondition_is_planned_by_the_precondition():
    # t-d1's zeroth-layer FTPT requires the zeroth-layer networks to fit (band 95.16 to 101.16)
    pre = dict(estimate=97.0, lo=95.5, hi=98.5, n=14, test="matches")
    gated = _claim("t-d1/zeroth-ftpt", "not testable", chapter="t-d1", estimate=74.0, lo=66.0, hi=82.0, n=14,
                   note="rule alone would say pass; precondition not met: t-d1/zeroth-acc")
    row, = plan.plan_rows([_claim("t-d1/zeroth-acc", "undecided", tier="precondition", chapter="t-d1", **pre),
                           gated])
    assert row["id"] == "t-d1/zeroth-ftpt" and row["waits_on"] == "t-d1/zeroth-acc"
    # 97 +- 1.5 at n = 14: the band's lower end 95.16 is cleared once the half-width is below 1.84
    assert row["leans"] == "pass" and 14 < row["seeds_to_decide"] < 40
    assert plan.to_decide(row).startswith("waits on its precondition, which is undecided and leans pass; "
                                          "the precondition decides at about n = ")
    assert "not testable: waits on t-d1/zeroth-acc" in plan.plan_text([row])
    from companion import report
    assert [r["id"] for r in report.plan_for([_claim("t-d1/zeroth-acc", "undecided", tier="precondition",
                                                     chapter="t-d1", **pre), gated])] == ["t-d1/zeroth-ftpt"]
    # a failed precondition: no seeds help, so nothing is planned
    failed = _claim("t-d1/zeroth-acc", "fail", tier="precondition", chapter="t-d1", **pre)
    row, = plan.plan_rows([failed, gated])
    assert "waits_on" not in row and row["method"] == "not testable here" and plan.to_decide(row) == ""


def test_a_finding_gated_by_two_undecided_preconditions_is_planned_by_both(fig4_gated):
    """Figure 4's finding as it required both the VED and the AED networks to solve the task: with both shares
    undecided, the plan names both and the seeds that decide each (deciding one alone would leave the
    finding not testable); with either failed, nothing is planned."""
    rate = dict(test="rate_at_least", n=10)
    ved = _claim("tab-accuracy/ved-accuracy", "undecided", tier="precondition", chapter="tab-accuracy",
                 estimate=0.4, lo=0.168, hi=0.687, **rate)
    aed = _claim("tab-accuracy/aed-accuracy", "undecided", tier="precondition", chapter="tab-accuracy",
                 estimate=0.5, lo=0.237, hi=0.763, **rate)
    gated = _claim("fig4/ved-less-insightful", "not testable", chapter="fig4", estimate=-0.2, lo=-0.24,
                   hi=-0.18, n=4, test="less", note="precondition not met: tab-accuracy/ved-accuracy, "
                   "tab-accuracy/aed-accuracy")
    row, = plan.plan_rows([ved, aed, gated])
    assert row["waits_on"] == "tab-accuracy/ved-accuracy"
    assert [g["id"] for g in row["gates"]] == ["tab-accuracy/ved-accuracy", "tab-accuracy/aed-accuracy"]
    assert [g["n"] for g in row["gates"]] == [10, 10] and all(g["leans"] == "pass" for g in row["gates"])
    # Wilson's lower end at a share of 0.5 clears 0.25 from 12 networks; at 0.4 it needs far more
    assert row["gates"][1]["seeds_to_decide"] == 12 and row["gates"][0]["seeds_to_decide"] > 20
    words = plan.to_decide(row)
    assert words.startswith("waits on its 2 preconditions, which are undecided: tab-accuracy/ved-accuracy "
                            "leans pass; decides at about n = ")
    assert "; tab-accuracy/aed-accuracy leans pass; decides at about n = 12" in words
    text = plan.plan_text([row])
    assert "waits on tab-accuracy/ved-accuracy and tab-accuracy/aed-accuracy" in text
    lines = text.splitlines()
    assert len(lines) == 3 and lines[2].lstrip().startswith("tab-accuracy/aed-accuracy")
    failed = _claim("tab-accuracy/aed-accuracy", "fail", tier="precondition", chapter="tab-accuracy",
                    estimate=0.0, lo=0.0, hi=0.28, **rate)
    row, = plan.plan_rows([ved, failed, gated])
    assert "waits_on" not in row and row["method"] == "not testable here" and plan.to_decide(row) == ""
    # not testable on our data whatever its precondition says: the stand-in digits, not CIFAR-10
    design = _claim("t-cifar-sparse/sparsemax-raises-ftpt", "not testable", chapter="t-cifar-sparse",
                    estimate=-4.0, lo=-12.8, hi=4.8, n=5, note="not testable here: the data are digits")
    keeps = _claim("t-cifar-sparse/sparsemax-keeps-accuracy", "undecided", tier="precondition",
                   chapter="t-cifar-sparse", estimate=0.0, lo=-65.9, hi=65.9, n=5, test="matches")
    row, = plan.plan_rows([keeps, design])
    assert "waits_on" not in row and row["method"] == "not testable here"


# ---- a verdict at another level (two looks) ---------------------------------------------------------

def test_a_bounded_mean_on_wilson_rebuilt_at_two_looks_known_answer():
    # 36 values with mean 0.999 in [0, 1]: Wilson's lower end at 95 % (z 1.960) is 0.9018, at the
    # per-look 97.5 % of two looks (z 2.241) 0.8758, by the score formula worked by hand; threshold 0.9
    e = entry("at_least", threshold=0.9, range=[0, 1])
    row = {"estimate": 0.999, "lo": 0.9018, "hi": 1.0, "n": 36, "status": "pass",
           "observed": "mean 0.999 [0.902, 1] (Wilson (bounded mean), n=36)"}
    assert plan.status_at_level(e, row, 0.95) == "pass"
    assert plan.status_at_level(e, row, 0.975) == "undecided"
    lo = plan.expected_interval(e, 0.999, 0.0, 36, 0.975).lo
    assert lo == pytest.approx(0.8758, abs=1e-4)


def test_a_paired_t_row_rebuilt_at_two_looks_known_answer():
    # the half-width scales by t_{0.9875, n-1} / t_{0.975, n-1}: 2.379 / 2.056 at n = 27
    e = entry("greater")
    row = t_row(19.58, 44.17, 27, status="pass", observed="difference 19.58 (paired t, n=27)")
    assert row["lo"] > 0
    assert plan.status_at_level(e, row, 0.95) == "pass"
    assert plan.status_at_level(e, row, 0.975) == "undecided"
    half = (row["hi"] - row["lo"]) / 2 * st.t.ppf(0.9875, 26) / st.t.ppf(0.975, 26)
    assert 19.58 - half < 0 < 19.58 - half + 3  # just below 0, as the verdict says


def test_two_rates_are_rebuilt_from_their_counts():
    e = entry("rate_lower")
    row = {"estimate": -0.375, "lo": -0.613, "hi": -0.0529, "n": 16, "status": "pass",
           "observed": "8/16 vs 14/16: difference -0.375 [-0.613, -0.0529] (Newcombe)"}
    assert plan.status_at_level(e, row, 0.95) == "pass"
    iv = stats.rate_difference_interval(8, 16, 14, 16, 0.999)
    assert plan.status_at_level(e, row, 0.999) == ("pass" if iv.hi < 0 else "undecided")
    assert plan.status_at_level(e, {**row, "observed": "no counts"}, 0.95) is None


def test_every_recorded_verdict_rebuilds_to_itself_at_95_percent():
    # the rebuilt interval is the rule's own: at the level the records were made it must agree with them
    reg, checked = registry.entries(), 0
    for path in sorted(records.results_dir("paper").glob("*.json")):
        rec = records.load(path.stem, "paper")
        stale = set(records.stale_ids(rec))
        for row in rec.get("claims", []):
            e = reg.get(row.get("id"))
            if e is None or row["id"] in stale or row.get("status") not in ("pass", "fail", "undecided"):
                continue
            again = plan.status_at_level(e, row, stats.LEVEL)
            assert again in (None, row["status"]), (row["id"], row["status"], again)
            checked += again is not None
    assert checked >= 50


def test_close_calls_are_decided_findings_of_raised_records_that_would_not_stand():
    reg = registry.entries()
    for row in plan.close_calls():
        rec = records.load(row["chapter"], "paper")
        assert plan.raised_seeds(row["chapter"], rec) == row["seeds"] and row["seeds"]
        assert reg[row["id"]].tier == "finding"
        assert row["status"] in ("pass", "fail") and row["at_level"] != row["status"]
        assert row["level"] == pytest.approx(0.975)
