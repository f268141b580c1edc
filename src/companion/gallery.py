"""The chapter gallery of the introduction page: one thumbnail per chapter, with its claim counts.

A Sphinx extension (listed under ``extra_extensions`` in ``book/_config.yml``). A page places the
gallery with the directive

    ```{chapter-gallery}
    ```

Chapters are executed while Sphinx reads them, and MyST-NB writes each executed notebook to
``<build>/jupyter_execute/<docname>.ipynb``. The gallery is filled in when its page is written,
after every document has been read, so it always shows this build's outputs:

* the thumbnail is the first image of a cell tagged ``gallery`` in the executed chapter, else its
  first PNG output, scaled into a 320 x 220 box and written to ``<html>/_gallery/``; a chapter
  without an image gets a placeholder;
* the claim counts (pass / fail / undecided) come from the claims store of the build's profile
  (:func:`companion.claims.load_store`).

The helpers (:func:`pick_image`, :func:`make_thumbnail`, :func:`status_of`, :func:`render`) do not
need Sphinx and are tested on their own.
"""

from __future__ import annotations

import base64
import html
import io
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from . import claims, sphinxpages

THUMB_SIZE = (320, 220)
GALLERY_TAG = "gallery"
STATUSES = claims.STATUSES
OUT_DIR = "_gallery"


@dataclass
class Card:
    """One chapter's entry: where it links, its thumbnail (or none) and its claim counts."""

    href: str
    figure: str
    title: str
    thumb: str | None = None
    counts: Counter = field(default_factory=Counter)


def pick_image(nb: dict) -> bytes | None:
    """The PNG bytes of a notebook's gallery image: the first image output of a cell tagged
    ``gallery``, else the first PNG output of any cell; ``None`` when there is none."""
    cells = [c for c in nb.get("cells", []) if c.get("cell_type") == "code"]
    tagged = [c for c in cells if GALLERY_TAG in c.get("metadata", {}).get("tags", [])]
    for group in (tagged, cells):
        for cell in group:
            for out in cell.get("outputs", []):
                data = out.get("data", {}) if isinstance(out, dict) else {}
                png = data.get("image/png")
                if png:
                    if isinstance(png, list):
                        png = "".join(png)
                    return base64.b64decode(png)
    return None


def make_thumbnail(png: bytes, dest: Path, size: tuple[int, int] = THUMB_SIZE) -> Path:
    """Scale an image to fit ``size`` (aspect kept), centred on a white canvas of exactly ``size``."""
    from PIL import Image

    with Image.open(io.BytesIO(png)) as img:
        img = img.convert("RGBA")
        img.thumbnail(size, Image.Resampling.LANCZOS)
        canvas = Image.new("RGBA", size, (255, 255, 255, 255))
        canvas.alpha_composite(img, ((size[0] - img.width) // 2, (size[1] - img.height) // 2))
    dest.parent.mkdir(parents=True, exist_ok=True)
    canvas.convert("RGB").save(dest, format="PNG", optimize=True)
    return dest


def status_of(claim) -> str:
    """``pass``, ``fail`` or ``undecided`` for a stored claim (tolerates older claim records)."""
    status = getattr(claim, "status", None)
    if not isinstance(status, str) or not status:
        status = "pass" if getattr(claim, "passed", False) else "fail"
    status = status.strip().lower()
    return status if status in STATUSES else "undecided"


def claim_counts(profile: str) -> dict[str, Counter]:
    """Counts of findings per chapter id for ``profile`` (empty when the store is empty or unreadable)."""
    from . import claims

    counts: dict[str, Counter] = {}
    try:
        stored = claims.load_store(profile)
    except Exception:  # a half-written or older store must not break the book
        return counts
    for claim in stored:
        if getattr(claim, "tier", "finding") != "finding":  # preconditions gate findings, not counted
            continue
        counts.setdefault(claim.chapter, Counter())[status_of(claim)] += 1
    return counts


STYLE = """<style>
.companion-gallery{display:grid;grid-template-columns:repeat(auto-fill,minmax(160px,1fr));gap:0.9rem;
  margin:0.5rem 0 1.5rem 0}
.companion-card{display:flex;flex-direction:column;border:1px solid #d0d7de;border-radius:6px;
  overflow:hidden;text-decoration:none !important;color:inherit !important;background:#fff}
.companion-card:hover{border-color:#0969da;box-shadow:0 1px 6px rgba(0,0,0,.15)}
.companion-card img{display:block;width:100%;height:auto;aspect-ratio:320/220;margin:0}
.companion-card .cg-placeholder{display:flex;align-items:center;justify-content:center;
  aspect-ratio:320/220;background:#f3f4f6;color:#6b7280;font-size:0.8rem;text-align:center;padding:0.5rem}
.companion-card .cg-title{padding:0.35rem 0.5rem 0 0.5rem;font-size:0.82rem;line-height:1.25;color:#1f2328}
.companion-card .cg-title b{display:block}
.companion-card .cg-claims{padding:0.2rem 0.5rem 0.45rem 0.5rem;font-size:0.75rem;color:#57606a}
.companion-card .cg-pass{color:#1a7f37;font-weight:600}
.companion-card .cg-fail{color:#cf222e;font-weight:600}
.companion-card .cg-undecided{color:#9a6700;font-weight:600}
.companion-gallery-paper{font-weight:600;margin:1rem 0 0.3rem 0}
</style>"""


def _claims_line(counts: Counter) -> str:
    if not sum(counts.values()):
        return "no claims recorded"
    return " · ".join(f'<span class="cg-{s.replace(" ", "-")}">{counts.get(s, 0)} {s}</span>'
                      for s in STATUSES)


def render(groups: list[tuple[str, list[Card]]]) -> str:
    """The gallery's HTML: per paper a caption and a grid of cards (reflows to two columns on a phone)."""
    parts = [STYLE]
    for caption, cards in groups:
        if not cards:
            continue
        parts.append(f'<p class="companion-gallery-paper">{html.escape(caption)}</p>')
        parts.append('<div class="companion-gallery">')
        for card in cards:
            label = f"{card.figure}: {card.title}"
            if card.thumb:
                pic = (f'<img src="{html.escape(card.thumb)}" alt="{html.escape(label)}" '
                       f'width="{THUMB_SIZE[0]}" height="{THUMB_SIZE[1]}">')
            else:
                pic = '<span class="cg-placeholder">no figure in this build</span>'
            parts.append(
                f'<a class="companion-card" href="{html.escape(card.href)}" title="{html.escape(label)}">'
                f'{pic}<span class="cg-title"><b>{html.escape(card.figure)}</b>'
                f'{html.escape(card.title)}</span>'
                f'<span class="cg-claims">{_claims_line(card.counts)}</span></a>'
            )
        parts.append("</div>")
    return "\n".join(parts)


# --------------------------------------------------------------------------------------------
# Sphinx glue

try:  # docutils ships with Sphinx; the helpers above work without it
    from docutils import nodes
    from docutils.parsers.rst import Directive
except ImportError:  # pragma: no cover
    nodes = None
    Directive = object


if nodes is not None:

    class chapter_gallery(nodes.General, nodes.Element):  # noqa: N801 (docutils node naming)
        """Placeholder, replaced by the gallery's HTML when the page is written."""

    class ChapterGalleryDirective(Directive):
        has_content = False

        def run(self):
            sphinxpages.remember(self.state.document.settings.env, "companion_gallery_docs")
            return [chapter_gallery()]


def _cached_image(cache_dir: Path, source: Path) -> bytes | None:
    """The gallery image of ``source`` as executed in Jupyter Book's cache (jupyter-cache), if any."""
    if not cache_dir.is_dir():
        return None
    try:
        import nbformat
        from jupyter_cache import get_cache

        cache = get_cache(str(cache_dir))
        record = cache.match_cache_notebook(nbformat.read(str(source), as_version=4))
        return pick_image(cache.get_cache_bundle(record.pk).nb)
    except Exception:  # no matching entry (KeyError) or an unreadable cache: the placeholder
        return None


def _cards(app, fromdoc: str) -> list[tuple[str, list[Card]]]:
    from . import chapters, config

    try:
        profile = config.active_profile(None)
    except Exception:
        profile = "quick"
    counts = claim_counts(profile)
    execute_dir = Path(app.outdir).parent / "jupyter_execute"
    out_dir = Path(app.outdir) / OUT_DIR
    groups: dict[str, list[Card]] = {}
    for ch in chapters.all_chapters():
        docname = f"notebooks/{ch.path.parent.name}/{ch.path.stem}"
        if docname not in app.env.found_docs:
            continue
        card = Card(href=app.builder.get_relative_uri(fromdoc, docname), figure=ch.figure, title=ch.title,
                    counts=counts.get(ch.id, Counter()))
        executed = execute_dir / f"{docname}.ipynb"
        png = None
        if executed.is_file():
            try:
                png = pick_image(json.loads(executed.read_text(encoding="utf-8")))
            except (ValueError, OSError):
                png = None
        if png is None:  # served from the execution cache: its outputs live there, not in jupyter_execute
            png = _cached_image(Path(app.outdir).parent / ".jupyter_cache", ch.path)
        if png:
            name = f"{ch.paper}-{ch.id}.png"
            try:
                make_thumbnail(png, out_dir / name)
                prefix = app.builder.get_target_uri(fromdoc).count("/")
                card.thumb = "../" * prefix + f"{OUT_DIR}/{name}"
            except Exception:  # an unreadable image gets the placeholder
                card.thumb = None
        groups.setdefault(ch.paper, []).append(card)
    return [(chapters.PAPERS.get(p, p), cards) for p, cards in groups.items()]


def _fill(app, doctree, docname) -> None:
    placeholders = list(doctree.findall(chapter_gallery))
    if not placeholders:
        return
    if app.builder.format == "html":
        markup = render(_cards(app, docname))
        for node in placeholders:
            node.replace_self(nodes.raw("", markup, format="html"))
    else:
        for node in placeholders:
            node.replace_self([])


def setup(app):
    app.add_node(chapter_gallery)
    app.add_directive("chapter-gallery", ChapterGalleryDirective)
    app.connect("doctree-resolved", _fill)
    sphinxpages.reread_always(app, "companion_gallery_docs")
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
