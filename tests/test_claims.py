import json

from companion import claims
from companion.config import Settings


def _settings(overrides=None, profile="smoke"):
    return Settings(chapter="demo", profile=profile, values={"seed": 1}, overrides=overrides or {})


def _record(card, passed=True):
    card.record(
        id="c1",
        figure="F-X",
        statement="accuracy is high",
        expected="0.99",
        observed="0.995",
        criterion=">= 0.99",
        passed=passed,
        source="[TEST]",
    )


def test_default_runs_feed_the_store():
    card = claims.ChapterClaims(_settings())
    _record(card)
    paths = card.save()
    assert paths == [claims.store_dir("smoke") / "demo.json"]
    back = claims.load_store("smoke")
    assert [c.id for c in back] == ["c1"] and back[0].passed is True and back[0].profile == "smoke"


def test_runs_with_overrides_do_not_touch_the_store(tmp_path, monkeypatch):
    out = tmp_path / "run" / "demo.claims.json"
    monkeypatch.setenv(claims.CLAIMS_FILE_ENV, str(out))
    card = claims.ChapterClaims(_settings({"seed": 3}))
    _record(card, passed=False)
    assert card.save() == [out]
    assert claims.load_store("smoke") == []
    row = json.loads(out.read_text())[0]
    assert row["passed"] is False and row["overrides"] == {"seed": 3}


def test_duplicate_ids_are_refused():
    card = claims.ChapterClaims(_settings())
    _record(card)
    try:
        _record(card)
    except ValueError as exc:
        assert "twice" in str(exc)
    else:
        raise AssertionError("a duplicate claim id was accepted")


def test_frame_status_column():
    card = claims.ChapterClaims(_settings())
    _record(card, passed=False)
    frame = card.frame
    assert list(frame["status"]) == ["FAIL"]
    assert "FAIL" in claims.render_html(frame)
