"""attention-companion: the shared library behind the companion book.

Shared machinery lives at the top level; each paper has its own subpackage
(:mod:`companion.aitken2021`, :mod:`companion.pandey2022`). The modules form
layers: a module imports only from its own layer or the layers below it, and
no imports form a cycle (``tests/test_layers.py`` reads the list below and
checks every import, those inside functions included). Claims are data that
know nothing of runs; the record store reads and writes ``results/`` and runs
nothing; the chapter card shows a chapter's live verdicts beside its record;
the runner executes one chapter; parallel execution (chapters, and the
networks they declare: netspec, networks, prebuild) and orchestration
(record, verify, sweep, build) sit above it, and the command line on top.

Layers, from the bottom:

- base: paths, seeding, progress, device, offline, plotting, ensemble, stats, cache, cliargs, sphinxpages
- data: config, chapters, registry, claims, netspec
- record store: records
- papers and views: aitken2021, pandey2022, networks, plan, report, card, gallery, scorecard
- runner: runner
- tasks: parallel, prebuild
- orchestration: recording, sweep, bookbuild, checkhtml
- command line: cli
"""

__version__ = "0.1.0"
