"""Keep the built book offline: drop the page scripts that would point at a CDN.

A Sphinx extension (listed under ``extra_extensions`` in ``book/_config.yml``). Jupyter Book 1
always loads ``sphinx_thebe``, which writes the address of its JavaScript bundle on a CDN into
every page (it is fetched only when a reader starts a live kernel, which this book does not
offer). This extension removes thebe's scripts, stylesheet and inline configuration from every
page, and any other script or stylesheet whose address is remote, so that nothing in a page can
reach the network. Math is served from the book's own ``_static/mathjax`` by
``sphinx-mathjax-offline``. It also sets the theme's default colour mode (light), without which the
theme logs a console error on a first visit.
"""

from __future__ import annotations

REMOTE = ("http://", "https://", "//")


def _remote_or_thebe(asset) -> bool:
    name = str(getattr(asset, "filename", asset) or "")
    body = str(getattr(asset, "attributes", {}).get("body", "") if hasattr(asset, "attributes") else "")
    return name.startswith(REMOTE) or "thebe" in name or "unpkg.com" in body or "THEBE_JS_URL" in body


def _strip(app, pagename, templatename, context, doctree) -> None:
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [a for a in context[key] if not _remote_or_thebe(a)]
    # pydata-sphinx-theme logs a console error on a first visit when no default colour mode is set.
    if not context.get("default_mode"):
        context["default_mode"] = "light"


def _drop_thebe_config(app, doctree, docname) -> None:
    # sphinx-thebe also writes an inert <script type="text/x-thebe-config"> block naming a Binder
    # repository into each page; without a live kernel it is noise.
    from docutils import nodes

    for node in list(doctree.findall(nodes.raw)):
        if "x-thebe-config" in node.astext():
            node.parent.remove(node)


def setup(app):
    app.connect("html-page-context", _strip, priority=900)
    app.connect("doctree-resolved", _drop_thebe_config, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
