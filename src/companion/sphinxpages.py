"""Pages whose content Sphinx cannot see change: re-read them on every build.

The gallery and the report draw on other pages' outputs (the claims store, the records), which Sphinx
does not track. A directive that renders such content calls :func:`remember` for its page, and the
extension's ``setup`` calls :func:`reread_always` once for the same attribute name.
"""

from __future__ import annotations


def remember(env, attr: str) -> None:
    """Note the page being read (``env.docname``) under ``env.<attr>``."""
    docs = getattr(env, attr, set())
    docs.add(env.docname)
    setattr(env, attr, docs)


def reread_always(app, attr: str) -> None:
    """Mark the pages noted under ``env.<attr>`` outdated on every build, and keep the note consistent
    when pages are removed or read in parallel."""

    def outdated(app, env, added, changed, removed):
        return sorted(getattr(env, attr, set()) - set(removed))

    def purge(app, env, docname):
        getattr(env, attr, set()).discard(docname)

    def merge(app, env, docnames, other):
        setattr(env, attr, getattr(env, attr, set()) | (getattr(other, attr, set()) & set(docnames)))

    app.connect("env-get-outdated", outdated)
    app.connect("env-purge-doc", purge)
    app.connect("env-merge-info", merge)
