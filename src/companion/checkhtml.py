"""Open the built book in headless Chromium and check what a reader sees.

    python -m companion.checkhtml --build book/_build/html [--page intro.html ...] [--chromium PATH]

For each page (by default: every page of the table of contents, the root first) it checks that

* every ``<img>`` has loaded (``naturalWidth > 0``);
* math is rendered: MathJax ran and every math element holds its output, and no raw ``\\(``,
  ``\\[`` or ``$$`` is left in the visible text (code blocks excluded);
* the browser console shows no error and the page raises no JavaScript exception;
* the page requests nothing outside ``file://`` (``data:``, ``blob:`` and ``about:`` are local):
  every request is logged, remote ones are blocked and reported;
* no rendered DataFrame is truncated (a "…" column or row), no image has a file path as its alt
  text, no TeX command or ASCII math (``\\mu``, ``mu^E_s``) is left in the text, no machine path
  (``/tmp/…``, ``/home/…``) is shown anywhere on the page, code and outputs included;
* at 390 px the page is no wider than the viewport (nothing scrolls the whole page sideways);

and saves full-page screenshots at 1280 px and 390 px wide into ``<html>/_screenshots/``. It also
reads the markup of every page of the build and fails if any would load a script, stylesheet, image
or frame from the network.
Exit status 0 when every page passes, 1 otherwise, 2 when the build or Chromium is missing.

Chromium is driven through Playwright's Python API with the system's ``chromium`` (Debian
package ``chromium``); Playwright never downloads a browser here. ``$CHROMIUM`` overrides the path.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path


def default_pages() -> list[str]:
    """Every page of the book's table of contents, the root first."""
    import yaml

    from . import chapters, paths

    toc = yaml.safe_load((paths.repo_root() / "book" / "_toc.yml").read_text(encoding="utf-8")) or {}
    files = [toc.get("root", "intro"), *chapters.toc_order()]
    return [f"{f}.html" for f in dict.fromkeys(files)]


# --- checks on a page's markup and text (no browser needed; unit-tested on small fixtures) ---

ELLIPSIS = {"…", "...", "⋯"}
IMAGE_EXT = (".png", ".jpg", ".jpeg", ".svg", ".gif", ".webp")
#: TeX commands and ASCII stand-ins for the papers' symbols that should have been rendered as math.
TEX_LEFTOVER = re.compile(r"\\(?:mu|chi|alpha|beta|delta|frac|mathrm|mathbf|cdot|sum|text|hat|operatorname)\b"
                          r"|\b(?:mu|chi)\^[A-Z]|\$\$|\\\(|\\\[")
MACHINE_PATH = re.compile(r"(?<![\w.])(?:/tmp/|/home/|/work/|/root/|/Users/|/private/var/|/var/folders/"
                          r"|[A-Z]:\\Users\\)\S*|\S*site-packages/\S*")


class _PageMarkup(HTMLParser):
    """Truncated DataFrames (a cell holding only an ellipsis) and images whose alt text is a path."""

    def __init__(self) -> None:
        super().__init__()
        self.tables = 0
        self.in_frame = 0
        self.cell: list[str] | None = None
        self.truncated = 0
        self.truncated_now = False
        self.bad_alts: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            if self.in_frame or "dataframe" in (a.get("class") or "").split():
                self.in_frame += 1
        elif tag in ("td", "th") and self.in_frame:
            self.cell = []
        elif tag == "img":
            alt = (a.get("alt") or "").strip()
            if is_path(alt):
                self.bad_alts.append(alt)

    def handle_endtag(self, tag):
        if tag == "table" and self.in_frame:
            self.in_frame -= 1
            if not self.in_frame and self.truncated_now:
                self.truncated += 1
                self.truncated_now = False
        elif tag in ("td", "th") and self.cell is not None:
            if "".join(self.cell).strip() in ELLIPSIS:
                self.truncated_now = True
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def is_path(alt: str) -> bool:
    """An alt text that is a file name or path rather than a description (empty alt is decorative)."""
    if not alt:
        return False
    low = alt.lower()
    return (" " not in alt and ("/" in alt or "\\" in alt or low.endswith(IMAGE_EXT))) or \
        low.startswith(("_images/", "../", "./", "/")) or bool(re.fullmatch(r"[0-9a-f]{16,}\S*", low))


def markup_problems(html: str) -> list[str]:
    """Problems found in a page's HTML: truncated DataFrames, images with a path as alt text."""
    parser = _PageMarkup()
    parser.feed(html)
    out = []
    if parser.truncated:
        out.append(f"{parser.truncated} truncated table(s): a DataFrame shown with a '…' column or row")
    if parser.bad_alts:
        out.append(f"{len(parser.bad_alts)} image(s) with a file path as alt text, "
                   f"e.g. {parser.bad_alts[0]!r}")
    return out


def text_problems(prose: str, everything: str) -> list[str]:
    """Problems in a page's text: ``prose`` is the visible text without code, math and outputs' code
    blocks; ``everything`` is the whole visible text, code and outputs included."""
    out = []
    tex = sorted({m.group(0) for m in TEX_LEFTOVER.finditer(prose)})
    if tex:
        i = TEX_LEFTOVER.search(prose).start()
        out.append(f"raw TeX or ASCII math in the text: {tex[:4]} (e.g. "
                   f"{' '.join(prose[max(0, i - 30): i + 30].split())!r})")
    paths_ = sorted({m.group(0) for m in MACHINE_PATH.finditer(everything)})
    if paths_:
        out.append(f"machine path(s) on the page: {paths_[:3]}")
    return out
WIDTHS = {"1280": (1280, 900), "390": (390, 844)}
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:", "chrome-error:")
MATH_TIMEOUT_MS = 20000

# Runs in the page: images, math and leftover TeX delimiters.
PAGE_PROBE = r"""
async () => {
  const out = {broken: [], mathjax: false, math: 0, unrendered: [], raw: []};
  document.querySelectorAll('img[loading="lazy"]').forEach(i => { i.loading = 'eager'; });
  await Promise.all(Array.from(document.images).map(i => i.complete ? null :
      new Promise(r => {
        i.addEventListener('load', r); i.addEventListener('error', r); setTimeout(r, 5000);
      })));
  for (const img of document.images) {
    if (!img.complete || img.naturalWidth === 0) out.broken.push(img.getAttribute('src'));
  }
  const mathEls = Array.from(document.querySelectorAll('.math'));
  out.math = mathEls.length;
  out.images = document.images.length;
  if (mathEls.length) {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
      await MathJax.startup.promise;
      out.mathjax = true;
    }
    for (const el of mathEls) {
      if (!el.querySelector('mjx-container') && el.tagName.toLowerCase() !== 'mjx-container')
        out.unrendered.push(el.textContent.trim().slice(0, 60));
    }
  }
  const main = (document.querySelector('main') || document.body).cloneNode(true);
  main.querySelectorAll('pre, code, script, style, mjx-container, .highlight, textarea')
      .forEach(e => e.remove());
  const text = main.textContent;
  out.prose = text;
  const all = (document.querySelector('main') || document.body).cloneNode(true);
  all.querySelectorAll('script, style, mjx-container').forEach(e => e.remove());
  out.everything = all.textContent;
  return out;
}
"""


@dataclass
class PageReport:
    page: str
    requests: list[str] = field(default_factory=list)
    remote: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    images: int = 0
    broken_images: list[str] = field(default_factory=list)
    math: str = ""
    screenshots: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def find_chromium(explicit: str | None = None) -> str | None:
    for cand in (explicit, os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if not cand:
            continue
        path = shutil.which(cand) or (cand if Path(cand).is_file() else None)
        if path:
            return path
    return None


def resolve_html(build: Path) -> Path | None:
    """The folder holding ``index.html``: ``build`` itself, ``build/html`` or ``build/_build/html``."""
    for cand in (build, build / "html", build / "_build" / "html"):
        if (cand / "index.html").is_file():
            return cand
    return None


class _RemoteRefs(HTMLParser):
    """Collects the addresses a page would load by itself (not links a reader may follow)."""

    LOADS = {"script": "src", "img": "src", "iframe": "src", "source": "src", "video": "src",
             "audio": "src", "embed": "src", "object": "data"}
    LINK_RELS = {"stylesheet", "preload", "modulepreload", "prefetch", "icon", "manifest"}

    def __init__(self) -> None:
        super().__init__()
        self.remote: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        url = None
        if tag in self.LOADS:
            url = a.get(self.LOADS[tag])
        elif tag == "link" and set((a.get("rel") or "").lower().split()) & self.LINK_RELS:
            url = a.get("href")
        if url and url.strip().lower().startswith(("http:", "https:", "//")):
            self.remote.append(f"<{tag}> {url}")


def scan_static(html_dir: Path) -> dict[str, list[str]]:
    """Every page of the build whose markup would load something from the network, and what."""
    found = {}
    for page in sorted(html_dir.rglob("*.html")):
        if "_screenshots" in page.parts:
            continue
        parser = _RemoteRefs()
        parser.feed(page.read_text(encoding="utf-8", errors="ignore"))
        if parser.remote:
            found[str(page.relative_to(html_dir))] = parser.remote
    return found


def _is_local(url: str) -> bool:
    return url.startswith(LOCAL_SCHEMES)


def check_page(browser, html_dir: Path, page: str, shots: Path | None) -> PageReport:
    rep = PageReport(page)
    path = html_dir / page
    if not path.is_file():
        rep.problems.append(f"page not found: {path}")
        return rep
    # The phone-width pass only takes the screenshot and measures sideways overflow.
    widths = WIDTHS if shots is not None else {"1280": WIDTHS["1280"]}
    for label, (w, h) in widths.items():
        ctx = browser.new_context(viewport={"width": w, "height": h}, device_scale_factor=1,
                                  service_workers="block")
        pg = ctx.new_page()
        first = label == "1280"

        def on_route(route, request, rep=rep, first=first):
            url = request.url
            if first:
                rep.requests.append(url)
            if _is_local(url):
                route.continue_()
            else:
                if first:
                    rep.remote.append(url)
                route.abort()

        ctx.route("**/*", on_route)
        if first:
            pg.on("requestfailed", lambda r: rep.failed.append(f"{r.url} ({r.failure})")
                  if _is_local(r.url) else None)
            pg.on("console", lambda m: rep.console.append(f"{m.type}: {m.text}")
                  if m.type == "error" else None)
            pg.on("pageerror", lambda e: rep.console.append(f"exception: {e}"))
        pg.goto(path.resolve().as_uri(), wait_until="load")
        if first:
            if pg.locator(".math").count():
                try:
                    pg.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise",
                                         timeout=MATH_TIMEOUT_MS)
                except Exception:
                    rep.problems.append("math on the page but MathJax did not load")
            probe = pg.evaluate(PAGE_PROBE)
            rep.broken_images = probe["broken"]
            rep.images = probe["images"]
            if probe["math"]:
                rep.math = (f"{probe['math'] - len(probe['unrendered'])} of {probe['math']} math elements "
                            f"rendered by MathJax" if probe["mathjax"] else "MathJax did not run")
            if probe["math"] and not probe["mathjax"]:
                rep.problems.append("MathJax did not run")
            if probe["unrendered"]:
                rep.problems.append(f"{len(probe['unrendered'])} math element(s) not rendered, e.g. "
                                    f"{probe['unrendered'][0]!r}")
            rep.problems.extend(text_problems(probe["prose"], probe["everything"]))
            rep.problems.extend(markup_problems(path.read_text(encoding="utf-8", errors="ignore")))
        else:
            pg.evaluate(PAGE_PROBE)  # wait for images and math before the screenshot
            wide = pg.evaluate("() => document.documentElement.scrollWidth")
            if wide > w:
                rep.problems.append(f"at {w} px the page is {wide} px wide (scrolls sideways)")
        pg.wait_for_timeout(200)
        if shots is not None:
            shots.mkdir(parents=True, exist_ok=True)
            name = page.replace("/", "__").removesuffix(".html") + f"-{label}.png"
            pg.screenshot(path=str(shots / name), full_page=True)
            rep.screenshots.append(str(shots / name))
        ctx.close()
    if rep.broken_images:
        rep.problems.append(f"{len(rep.broken_images)} image(s) did not load: {rep.broken_images[:3]}")
    if rep.remote:
        rep.problems.append(f"{len(rep.remote)} request(s) outside file://: {rep.remote[:3]}")
    if rep.failed:
        rep.problems.append(f"{len(rep.failed)} local request(s) failed: {rep.failed[:3]}")
    if rep.console:
        rep.problems.append(f"{len(rep.console)} console error(s): {rep.console[:3]}")
    return rep


def run(html_dir: Path, pages: list[str], chromium: str, shots: Path | None) -> list[PageReport]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            return [check_page(browser, html_dir, page, shots) for page in pages]
        finally:
            browser.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m companion.checkhtml", description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True,
                    help="the built book: its html folder, or a _build folder or book folder above it")
    ap.add_argument("--page", action="append", default=None,
                    help="a page to check, relative to the html folder (repeatable; default: every page "
                         "of the table of contents)")
    ap.add_argument("--chromium", default=None,
                    help="path of the Chromium binary (default: $CHROMIUM or chromium)")
    ap.add_argument("--no-screenshots", action="store_true")
    ap.add_argument("--log", default=None, help="write every page's report, requests included, as JSON here "
                                                "(default: <html>/_screenshots/checkhtml.json)")
    args = ap.parse_args(argv)
    html_dir = resolve_html(Path(args.build))
    if html_dir is None:
        print(f"checkhtml: error: no index.html in {args.build} (or its html/ or _build/html/)",
              file=sys.stderr)
        return 2
    chromium = find_chromium(args.chromium)
    if chromium is None:
        print("checkhtml: error: Chromium not found (apt-get install -y chromium, or set $CHROMIUM)",
              file=sys.stderr)
        return 2
    shots = None if args.no_screenshots else html_dir / "_screenshots"
    reports = run(html_dir, args.page or default_pages(), chromium, shots)
    log = Path(args.log) if args.log else (shots / "checkhtml.json" if shots else None)
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(json.dumps([r.__dict__ for r in reports], indent=1))
    for r in reports:
        print(f"checkhtml: {'ok  ' if r.ok else 'FAIL'} {r.page}: {len(r.requests)} requests "
              f"({len(r.remote)} remote), {r.images - len(r.broken_images)} of {r.images} images loaded, "
              f"{r.math or 'no math'}, {len(r.console)} console errors")
        for url in r.requests:
            print(f"    request {url}")
        for problem in r.problems:
            print(f"    problem: {problem}")
        for note in r.notes:
            print(f"    note: {note}")
    if shots is not None:
        print(f"checkhtml: screenshots (1280 px and 390 px) in {shots}")
    bad = [r.page for r in reports if not r.ok]
    failing = f"; failing: {', '.join(bad)}" if bad else ""
    print(f"checkhtml: {len(reports) - len(bad)} of {len(reports)} pages pass{failing}")
    static = scan_static(html_dir)
    n_pages = sum(1 for p in html_dir.rglob("*.html") if "_screenshots" not in p.parts)
    print(f"checkhtml: markup of all {n_pages} pages: {len(static)} would load something from the network")
    for page, refs in static.items():
        print(f"    problem: {page}: {refs[:3]}")
    return 1 if bad or static else 0


if __name__ == "__main__":
    sys.exit(main())
