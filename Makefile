# Two commands for a fresh machine:
#   make book   create .venv if missing, install, build the book (profile: $COMPANION_PROFILE or quick),
#               executing the chapters in parallel, one process per core (WORKERS=N to change it)
#   make test   same setup, then lint, unit tests, nbval on every chapter (smoke), a smoke build of the book,
#               and the smoke build checked in headless Chromium (needs the Debian package `chromium`)
PYTHON ?= python3.11
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: book test unit nbval smoke-book smoke-html bench bench-build clean setup

WORKERS ?=

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -e .
	touch $(STAMP)

book: $(STAMP)
	TQDM_DISABLE=1 $(BIN)/python -m companion.bookbuild $(if $(WORKERS),--workers $(WORKERS))

unit: $(STAMP)
	TQDM_DISABLE=1 $(BIN)/python -m pytest tests

nbval: $(STAMP)
	COMPANION_PROFILE=smoke TQDM_DISABLE=1 MPLBACKEND=Agg $(BIN)/python -m pytest -p no:python --nbval-lax --nbval-current-env --nbval-cell-timeout=900 notebooks

smoke-book: $(STAMP)
	TQDM_DISABLE=1 $(BIN)/python -m companion.bookbuild --profile smoke --path-output _build/smoke

test: lint unit nbval smoke-book smoke-html

smoke-html: $(STAMP)
	$(BIN)/python -m companion.checkhtml --build _build/smoke/_build/html

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_pandey_ensemble.py
	$(BIN)/python benchmarks/bench_pandey_blocks.py
	$(BIN)/python benchmarks/bench_aitken_ensemble.py
	$(BIN)/python benchmarks/bench_aitken_bound.py
	$(BIN)/python benchmarks/bench_malloc.py
	$(BIN)/python benchmarks/bench_image_stop.py
	$(BIN)/python benchmarks/bench_sdc_stop.py
	$(BIN)/python benchmarks/bench_build_sim.py
	$(BIN)/python benchmarks/bench_pandey_dtype.py

# Open the built book in headless Chromium: images load, math renders, no console errors, no network
# requests; screenshots at 1280 px and 390 px in $(HTML)/_screenshots. Needs `chromium` (Debian package).
HTML ?= book/_build/html
.PHONY: check-html lint
check-html: $(STAMP)
	$(BIN)/python -m companion.checkhtml --build $(HTML)

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks

# Cold build of a fixed set of chapters (quick) with 1 and 2 workers, side by side, and a 4-seed sweep;
# then the whole cold quick build as a multiple of a probe measured in the same run.
bench-build: $(STAMP)
	$(BIN)/python benchmarks/bench_build.py --sweep f-em1
	$(BIN)/python benchmarks/bench_quick_build.py

clean:
	rm -rf book/_build _build companion-runs
