"""The headless-Chromium page checker fails on a broken image, a network request, a console error
and raw TeX, and passes a clean page. Skipped when Chromium (or Playwright) is not installed."""

import io

import pytest

from companion import checkhtml

pytest.importorskip("playwright.sync_api")
CHROMIUM = checkhtml.find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")


def _png() -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (8, 6), (200, 30, 30)).save(buf, format="PNG")
    return buf.getvalue()


PAGES = {
    "index.html": '<html><body><main><h1>Fine</h1><p>text</p><img src="pic.png"></main></body></html>',
    "broken-image.html": '<html><body><main><img src="missing.png"></main></body></html>',
    "network.html": '<html><head><link rel="stylesheet" href="https://example.invalid/style.css"></head>'
                    "<body><main><p>remote stylesheet</p></main></body></html>",
    "console.html": '<html><body><main><p>x</p><script>console.error("boom")</script></main></body></html>',
    "exception.html": "<html><body><main><p>x</p><script>undefinedFunction()</script></main></body></html>",
    "raw-math.html": r"<html><body><main><p>The state \(h = \mu + \chi\) was never typeset.</p></main>"
                     "</body></html>",
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    site = tmp_path_factory.mktemp("site")
    (site / "pic.png").write_bytes(_png())
    for name, text in PAGES.items():
        (site / name).write_text(text)
    reps = checkhtml.run(site, list(PAGES), CHROMIUM, shots=None)
    return site, {r.page: r for r in reps}


def test_clean_page_passes_and_is_screenshotted(reports):
    site, reps = reports
    assert reps["index.html"].ok, reps["index.html"].problems
    [rep] = checkhtml.run(site, ["index.html"], CHROMIUM, shots=site / "_screenshots")
    assert rep.ok, rep.problems
    assert any(u.endswith("pic.png") for u in rep.requests)
    assert (site / "_screenshots" / "index-1280.png").is_file()
    assert (site / "_screenshots" / "index-390.png").is_file()


def test_broken_image_fails(reports):
    rep = reports[1]["broken-image.html"]
    assert not rep.ok
    assert rep.broken_images == ["missing.png"]


def test_network_request_fails_and_is_logged(reports):
    rep = reports[1]["network.html"]
    assert not rep.ok
    assert rep.remote == ["https://example.invalid/style.css"]


def test_console_error_and_exception_fail(reports):
    assert any("boom" in c for c in reports[1]["console.html"].console)
    assert not reports[1]["console.html"].ok
    assert not reports[1]["exception.html"].ok


def test_raw_tex_fails(reports):
    rep = reports[1]["raw-math.html"]
    assert not rep.ok
    assert any("raw TeX" in p for p in rep.problems)


def test_static_scan_finds_remote_assets_but_not_links(tmp_path):
    (tmp_path / "a.html").write_text('<a href="https://arxiv.org/abs/1">paper</a><img src="x.png">')
    (tmp_path / "b.html").write_text('<script src="https://cdn.example/x.js"></script>'
                                     '<link rel="stylesheet" href="//fonts.example/f.css">')
    assert checkhtml.scan_static(tmp_path) == {
        "b.html": ["<script> https://cdn.example/x.js", "<link> //fonts.example/f.css"]}


def test_command_line_exit_status(tmp_path):
    site = tmp_path / "html"
    site.mkdir()
    (site / "pic.png").write_bytes(_png())
    for name in ("index.html", "console.html"):
        (site / name).write_text(PAGES[name])
    assert checkhtml.main(["--build", str(site), "--page", "index.html", "--no-screenshots"]) == 0
    assert checkhtml.main(["--build", str(site), "--page", "index.html", "--page", "console.html",
                           "--no-screenshots"]) == 1
    (site / "other.html").write_text(PAGES["network.html"])  # not opened, but its markup is read
    assert checkhtml.main(["--build", str(site), "--page", "index.html", "--no-screenshots"]) == 1
    assert checkhtml.main(["--build", str(tmp_path / "nothing")]) == 2
