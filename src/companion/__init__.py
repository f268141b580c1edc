"""attention-companion: the shared library behind the companion book.

Shared machinery lives at the top level (config, cache, claims, chapters,
runner, cli, plotting, seeding, progress, device, ensemble); each paper has
its own subpackage (:mod:`companion.aitken2021`, :mod:`companion.pandey2022`).
"""

__version__ = "0.1.0"
