"""The headless-Chromium page checker fails on a broken image, a network request, a console error,
raw TeX or ASCII math, a truncated DataFrame, a path as alt text, a machine path and a page wider than a
phone, and passes a clean page. The markup and text checks are tested on their own; the browser tests
are skipped when Chromium (or Playwright) is not installed."""

import io

import pytest

from companion import checkhtml

try:
    import playwright.sync_api  # noqa: F401

    CHROMIUM = checkhtml.find_chromium()
except ImportError:
    CHROMIUM = None
browser = pytest.mark.skipif(CHROMIUM is None, reason="chromium or playwright is not installed")

FRAME = ('<table border="1" class="dataframe"><thead><tr><th></th><th>a</th><th>{mid}</th><th>z</th></tr>'
         '</thead><tbody><tr><th>0</th><td>1</td><td>{mid}</td><td>2</td></tr></tbody></table>')


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
    "ascii-math.html": "<html><body><main><p>the product mu^E_s . mu^D_t is largest</p></main></body></html>",
    "truncated.html": "<html><body><main>" + FRAME.format(mid="…") + "</main></body></html>",
    "alt-path.html": '<html><body><main><img src="pic.png" alt="_images/abc123.png"></main></body></html>',
    "machine-path.html": "<html><body><main><pre>saved to /tmp/tmpab12/fig.png</pre></main></body></html>",
    "wide.html": '<html><head><meta name="viewport" content="width=device-width"></head><body><main>'
                 '<div style="width:900px">a wide block</div></main></body></html>',
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    site = tmp_path_factory.mktemp("site")
    (site / "pic.png").write_bytes(_png())
    for name, text in PAGES.items():
        (site / name).write_text(text)
    reps = checkhtml.run(site, list(PAGES), CHROMIUM, shots=None)
    return site, {r.page: r for r in reps}


@browser
def test_clean_page_passes_and_is_screenshotted(reports):
    site, reps = reports
    assert reps["index.html"].ok, reps["index.html"].problems
    [rep] = checkhtml.run(site, ["index.html"], CHROMIUM, shots=site / "_screenshots")
    assert rep.ok, rep.problems
    assert any(u.endswith("pic.png") for u in rep.requests)
    assert (site / "_screenshots" / "index-1280.png").is_file()
    assert (site / "_screenshots" / "index-390.png").is_file()


@browser
def test_broken_image_fails(reports):
    rep = reports[1]["broken-image.html"]
    assert not rep.ok
    assert rep.broken_images == ["missing.png"]


@browser
def test_network_request_fails_and_is_logged(reports):
    rep = reports[1]["network.html"]
    assert not rep.ok
    assert rep.remote == ["https://example.invalid/style.css"]


@browser
def test_console_error_and_exception_fail(reports):
    assert any("boom" in c for c in reports[1]["console.html"].console)
    assert not reports[1]["console.html"].ok
    assert not reports[1]["exception.html"].ok


@browser
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


@browser
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


@browser
def test_new_checks_fail_their_pages_in_the_browser(reports):
    reps = reports[1]
    assert any("ASCII math" in p for p in reps["ascii-math.html"].problems)
    assert any("truncated table" in p for p in reps["truncated.html"].problems)
    assert any("alt text" in p for p in reps["alt-path.html"].problems)
    assert any("machine path" in p for p in reps["machine-path.html"].problems)
    assert reps["wide.html"].ok  # wide only at 390 px, measured with the screenshots (below)


@browser
def test_page_wider_than_a_phone_fails(reports):
    site, _ = reports
    [rep] = checkhtml.run(site, ["wide.html"], CHROMIUM, shots=site / "_shots-wide")
    assert any("at 390 px the page is" in p for p in rep.problems)


def test_truncated_dataframe_is_found_and_a_full_one_is_not():
    assert checkhtml.markup_problems(FRAME.format(mid="…"))
    assert checkhtml.markup_problems(FRAME.format(mid="..."))
    assert checkhtml.markup_problems(FRAME.format(mid="b")) == []
    # an ellipsis inside a sentence of a cell, or in a table that is not a DataFrame, is no truncation
    assert checkhtml.markup_problems(FRAME.format(mid="and so on …")) == []
    assert checkhtml.markup_problems("<table><tr><td>…</td></tr></table>") == []


def test_alt_text_that_is_a_path():
    assert checkhtml.is_path("_images/0a1b2c3d.png")
    assert checkhtml.is_path("../_build/fig.png")
    assert checkhtml.is_path("figure.png")
    assert not checkhtml.is_path("")
    assert not checkhtml.is_path("Figure 2: attention of AED on one-to-one translation")
    [problem] = checkhtml.markup_problems('<img src="a.png" alt="/work/x/a.png"><img alt="A bar chart">')
    assert "1 image(s)" in problem


def test_raw_tex_ascii_math_and_machine_paths_in_text():
    assert checkhtml.text_problems("plain words, 0.5 < x", "plain words") == []
    [p] = checkhtml.text_problems(r"the state \mu^E is", "")
    assert "raw TeX" in p
    assert checkhtml.text_problems("mu^E_s . mu^D_t", "")
    assert checkhtml.text_problems("much, mu and chi", "") == []
    [p] = checkhtml.text_problems("", "written to /tmp/tmpx/out.json and /home/u/.cache/x")
    assert "/tmp/tmpx/out.json" in p
    assert checkhtml.text_problems("", "see _build/html/index.html or results/paper/x.json") == []
    assert checkhtml.text_problems("", "from /work/main/.venv/lib/python3.11/site-packages/x.py")
