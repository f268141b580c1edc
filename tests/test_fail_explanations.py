"""Every fail says why: the registry's ``if_fails`` key is checked, kept out of the digest, and shown
beside a fail (never beside a pass) in the chapter's verdict box, its claims table, the report page and
the scorecard."""

import json
from pathlib import Path

import pytest

from companion import card, records, registry, report, scorecard
from companion import claims as C
from companion.config import ConfigError

WHY = {"kind": "setup", "why": "Our sequences are a third as long as the paper's. More words here.",
       "evidence": "the recorded run at ten networks."}
BASE = {"figure": "F", "statement": "s", "source": "[T]", "statistic": "st", "added": "2026-12-03",
        "rule": {"test": "at_least", "threshold": 5.0}}


def entry(cid="t-a1/demo", if_fails=None):
    return registry.Entry(id=cid, paper="pandey2022", chapter=cid.split("/")[0], figure="F",
                          statement="the demo statement", source="[T]", statistic="st",
                          rule={"test": "at_least", "threshold": 5.0}, reference={"value": 10.0},
                          added="2026-12-03", if_fails=if_fails)


def claim(cid, status, profile="quick"):
    return C.Claim(chapter=cid.split("/")[0], paper="pandey2022", figure="F", id=cid,
                   claim="the demo statement", expected="10", observed="mean 3 [2, 4]", criterion="rule",
                   status=status, profile=profile)


@pytest.fixture
def reg(monkeypatch):
    """A registry of two claims: one with an explanation, one without."""
    fake = {"t-a1/demo": entry(if_fails=WHY), "t-a1/plain": entry("t-a1/plain")}
    monkeypatch.setattr(registry, "entries", lambda: fake)
    monkeypatch.setattr(report, "stale_ids", lambda recorded: set())
    return fake


def test_the_explanation_is_validated_in_one_line():
    registry._check_entry("demo/x", "demo", {**BASE, "if_fails": WHY}, "demo.yml")
    for bad, needle in [({**WHY, "kind": "unknown"}, "if_fails.kind must be one of disagreement, setup, "
                                                      "stand-in, got 'unknown'"),
                        ({"kind": "setup", "why": "w"}, "if_fails must be"),
                        ({**WHY, "evidence": " "}, "if_fails must be"),
                        ("setup", "if_fails must be")]:
        with pytest.raises(ConfigError) as err:
            registry._check_entry("demo/x", "demo", {**BASE, "if_fails": bad}, "demo.yml")
        assert needle in str(err.value) and "\n" not in str(err.value)


def test_the_explanation_is_not_part_of_the_digest():
    explained = entry(if_fails=WHY)
    assert explained.digest == entry().digest
    moved = registry.Entry(**{**explained.__dict__, "rule": {"test": "at_least", "threshold": 6.0}})
    assert moved.digest != explained.digest  # while the rule itself is in it


def test_short_and_full_texts():
    e = entry(if_fails=WHY)
    assert e.fail_short() == "our setup: Our sequences are a third as long as the paper's"
    assert e.fail_text() == ("Our setup: a choice of ours that the papers do not state or do not make. Our "
                             "sequences are a third as long as the paper's. More words here. Evidence: the "
                             "recorded run at ten networks.")
    long = entry(if_fails={**WHY, "kind": "stand-in", "why": "word " * 60})
    assert long.fail_short().startswith("the stand-in data: word word") and long.fail_short().endswith("…")
    assert len(long.fail_short()) <= len("the stand-in data: ") + 140
    assert entry().fail_short() == entry().fail_text() == ""


def test_a_fail_shows_its_explanation_and_a_pass_does_not(reg):
    why = "why: our setup: Our sequences are a third as long"
    box = report.verdict_box_html("t-a1", [claim("t-a1/demo", "fail")], "quick", [])
    assert why in box
    assert "why:" not in report.verdict_box_html("t-a1", [claim("t-a1/demo", "pass")], "quick", [])
    # the recorded column of the box too
    box = report.verdict_box_html("t-a1", [claim("t-a1/demo", "undecided")], "quick",
                                  [claim("t-a1/demo", "fail", "paper")])
    assert box.count("why:") == 1
    # a fail with no explanation registered shows none (the registry test demands one for every fail)
    assert "why:" not in report.verdict_box_html("t-a1", [claim("t-a1/plain", "fail")], "quick", [])


def test_the_report_page_gives_the_reason_of_a_failing_finding(reg, monkeypatch):
    monkeypatch.setattr(report, "MAIN_FINDINGS", {"pandey2022": [("the demo finding", ["t-a1/*"])]})
    rows = report.finding_rows("pandey2022", [claim("t-a1/demo", "fail")], [], ["t-a1"])
    assert rows[0].reason == ("Fails in this build: the demo statement (why: our setup: Our "
                              "sequences are a third as long as the paper's)")
    rows = report.finding_rows("pandey2022", [claim("t-a1/demo", "pass")], [], ["t-a1"])
    assert "why" not in rows[0].reason


def test_the_scorecard_table_gives_the_reason_beside_both_verdicts(reg, monkeypatch):
    monkeypatch.setattr(scorecard, "recorded_status", lambda chapter, cid, profile="paper": "fail (stale)")
    html = scorecard.claims_table([claim("t-a1/demo", "fail")], "quick", {}, {})
    assert html.count("why: our setup: Our sequences") == 2
    html = scorecard.claims_table([claim("t-a1/demo", "pass")], "quick", {}, {})
    assert html.count("why:") == 1  # the recorded fail only
    monkeypatch.setattr(scorecard, "recorded_status", lambda chapter, cid, profile="paper": "pass")
    assert "why:" not in scorecard.claims_table([claim("t-a1/demo", "pass")], "quick", {}, {})


def test_the_chapter_lists_every_fail_in_full_live_and_recorded(reg, monkeypatch):
    rec = {"chapter": "t-a1", "claims": [claim("t-a1/demo", "fail", "paper").as_row(),
                                         claim("t-a1/plain", "pass", "paper").as_row()]}
    monkeypatch.setattr(records, "load", lambda chapter, profile="paper": rec)
    out = card.fails_html("t-a1", [claim("t-a1/demo", "pass")])
    assert "fails in the recorded run at the papers' budget" in out
    assert "Evidence: the recorded run at ten networks." in out and "plain" not in out
    out = card.fails_html("t-a1", [claim("t-a1/demo", "fail")])
    assert "fails in this run and in the recorded run at the papers' budget" in out
    monkeypatch.setattr(records, "load", lambda chapter, profile="paper": None)
    assert card.fails_html("t-a1", [claim("t-a1/demo", "pass")]) == ""
    # a fail with no explanation is named as such, never hidden
    assert "no explanation registered yet" in card.fails_html("t-a1", [claim("t-a1/plain", "fail")])



def test_every_recorded_fail_whose_rule_is_registered_is_explained():
    """Each fail in a recorded run (a stale row included, while its claim is registered) has its
    explanation. The quick build's fails are not committed; the chapters list any unexplained one."""
    reg = registry.entries()
    root = Path(__file__).resolve().parents[1]
    rows = [r for f in sorted((root / "results" / "paper").glob("*.json"))
            for r in json.loads(f.read_text())["claims"]]
    missing = sorted({r["id"] for r in rows if r["status"] == "fail" and r["id"] in reg
                      and not reg[r["id"]].if_fails})
    assert not missing, f"recorded fails with no if_fails explanation in the registry: {missing}"


def test_the_scorecard_json_carries_the_explanation_of_a_fail(reg, monkeypatch, capsys):
    import argparse

    from companion import cli

    found = [claim("t-a1/demo", "fail"), claim("t-a1/plain", "fail"), claim("t-a1/demo", "pass")]
    monkeypatch.setattr(cli.claims, "scorecard_claims", lambda profile: (found, []))
    assert cli._scorecard(argparse.Namespace(profile="quick", json=True)) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["if_fails"] for r in rows] == [WHY, None, None]


def test_the_chapter_claims_table_has_a_why_column_only_when_a_claim_fails(reg, monkeypatch, tmp_path):
    import IPython.display

    from companion.config import Settings

    monkeypatch.setenv("COMPANION_CACHE", str(tmp_path))
    monkeypatch.setattr(records, "load", lambda chapter, profile="paper": None)
    monkeypatch.setattr(report, "glue_verdict", lambda *a, **k: None)
    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj, raw=False, **k: shown.append(obj))

    def table(demo_values):
        c = card.ChapterCard(Settings(chapter="t-a1", profile="smoke", values={}, overrides={"n_seeds": 5}))
        c.check("t-a1/demo", values=demo_values)
        c.check("t-a1/plain", values=[9.0, 9.2, 8.9, 9.1, 9.0])
        c.show()
        return [x.status for x in c.claims], shown[-1]["text/html"]

    statuses, html = table([1.0, 1.2, 0.9, 1.1, 1.0])
    assert statuses == ["fail", "pass"]
    assert "why it fails" in html and html.count("our setup: Our sequences are a third as long") == 1
    assert "Why the fails fail" in html and "Evidence: the recorded run at ten networks." in html
    statuses, html = table([9.0, 9.2, 8.9, 9.1, 9.0])
    assert statuses == ["pass", "pass"]
    assert "why it fails" not in html and "Why the fails fail" not in html and "Evidence" not in html
