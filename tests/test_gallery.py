"""The intro page's chapter gallery: which image a chapter shows, thumbnails, claim counts, HTML."""

import base64
import io
from collections import Counter
from types import SimpleNamespace

from PIL import Image

from companion import gallery


def _png(colour, size=(40, 20)) -> str:
    buf = io.BytesIO()
    Image.new("RGB", size, colour).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def _cell(png=None, tags=()):
    data = {"image/png": png, "text/plain": "<Figure>"}
    outputs = [{"output_type": "display_data", "data": data}] if png else []
    return {"cell_type": "code", "metadata": {"tags": list(tags)}, "outputs": outputs, "source": ""}


def test_pick_image_prefers_the_gallery_tag_then_the_first_png():
    red, blue = _png((255, 0, 0)), _png((0, 0, 255))
    nb = {"cells": [_cell(), _cell(red), _cell(blue, tags=["gallery"])]}
    assert gallery.pick_image(nb) == base64.b64decode(blue)
    nb = {"cells": [_cell(), _cell(red), _cell(blue)]}
    assert gallery.pick_image(nb) == base64.b64decode(red)
    assert gallery.pick_image({"cells": [_cell(), {"cell_type": "markdown", "source": "x"}]}) is None


def test_thumbnail_has_the_fixed_size(tmp_path):
    raw = base64.b64decode(_png((0, 128, 0), size=(1200, 300)))
    dest = gallery.make_thumbnail(raw, tmp_path / "t.png")
    with Image.open(dest) as img:
        assert img.size == gallery.THUMB_SIZE


def test_status_of_old_and_new_claims():
    assert gallery.status_of(SimpleNamespace(status="pass")) == "pass"
    assert gallery.status_of(SimpleNamespace(status="FAIL")) == "fail"
    assert gallery.status_of(SimpleNamespace(status="undecided")) == "undecided"
    assert gallery.status_of(SimpleNamespace(passed=True)) == "pass"
    assert gallery.status_of(SimpleNamespace(passed=False)) == "fail"
    assert gallery.status_of(SimpleNamespace(status="weird")) == "undecided"


def test_render_links_cards_counts_and_placeholder():
    cards = [gallery.Card("notebooks/a/fig1.html", "Figure 1", "One", thumb="_gallery/a-fig1.png",
                          counts=Counter(passed=0, **{"pass": 2, "fail": 1})),
             gallery.Card("notebooks/a/fig2.html", "Figure 2", "Two <b>")]
    html = gallery.render([("Paper A", cards), ("Paper B", [])])
    assert 'href="notebooks/a/fig1.html"' in html and 'src="_gallery/a-fig1.png"' in html
    assert "2 pass" in html and "1 fail" in html and "0 undecided" in html
    assert "no figure in this build" in html and "no claims recorded" in html
    assert "Two &lt;b&gt;" in html and "Paper B" not in html
    assert "grid-template-columns" in html


def test_image_from_the_execution_cache(tmp_path):
    """Chapters executed by the parallel stage are served from jupyter-cache: their figures live there."""
    import nbformat
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    def chapter():
        cell = nbformat.v4.new_code_cell("plot()", metadata={"tags": ["gallery"]})
        return nbformat.v4.new_notebook(cells=[cell])

    src = chapter()
    path = tmp_path / "chapter.ipynb"
    nbformat.write(src, str(path))
    assert gallery._cached_image(tmp_path / "cache", path) is None  # no cache yet
    executed = chapter()
    png = _png((0, 128, 0))
    executed.cells[0].outputs = [nbformat.v4.new_output("display_data", data={"image/png": png})]
    get_cache(str(tmp_path / "cache")).cache_notebook_bundle(CacheBundleIn(executed, uri=str(path)),
                                                          check_validity=False)
    assert gallery._cached_image(tmp_path / "cache", path) == base64.b64decode(png)
