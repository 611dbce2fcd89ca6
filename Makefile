# Build the book and run the tests. Both targets set up .venv on first use.
#
#   make book       build the HTML book into _build/html (executes every chapter)
#   make test       run the test suite (library, notebooks under nbval, nbgrader)
#   make pdf        build the book, then print it into one PDF: _build/pdf/book.pdf
#   make lab        open the chapters in JupyterLab as a reader (no nbgrader tools)
#   make course-demo  rehearse README "Running a course" in a temporary directory
#   make clean      remove build output and caches (keeps .venv)
#   make distclean  clean, and remove .venv too

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

# Tools started from the recipes (nbgrader, jupyter, ...) come from the venv.
export PATH := $(abspath $(BIN)):$(PATH)
# Headless everywhere: figures are rendered with the non-interactive backend.
export MPLBACKEND ?= Agg
# Never stop for input (CI has no stdin).
export PIP_NO_INPUT := 1

.PHONY: all book pdf test setup lab browser course-demo clean distclean

all: book

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Re-run only when the pinned requirements or the package metadata change.
# The kernelspec is installed into the venv itself, so notebooks executed by the
# book build, nbval and nbgrader all run in this environment.
$(STAMP): requirements.txt pyproject.toml | $(BIN)/python
	@echo "Installing requirements into $(VENV) (first run takes a minute or two)..."
	$(BIN)/python -m pip install -q -r requirements.txt
	$(BIN)/python -m pip install -q -e .
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 \
		--display-name "Python 3 (collective)" >/dev/null
	@touch $@

setup: $(STAMP)

# axe-core, which tools/browser_check.py runs in every page (pinned in tools/package-lock.json).
TOOLS_JS := tools/node_modules/.installed
$(TOOLS_JS): tools/package.json tools/package-lock.json
	npm ci --prefix tools --no-audit --no-fund --loglevel=error
	@touch $@

# The tests render the built pages in Debian's Chromium (headless, no network).
# On a machine without it, as root: apt-get; otherwise say what to run.
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "Installing Debian's chromium for the browser tests..."; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else \
	    echo "make test renders the book in Chromium; install it first (Debian/Ubuntu: sudo apt-get install -y chromium)" >&2; \
	    exit 1; \
	  fi; }

# -W turns Sphinx warnings (including a notebook cell that raises during
# execution) into errors; --keep-going reports all of them before failing.
book: $(STAMP)
	$(BIN)/jupyter-book build . -W --keep-going

# The whole book in one PDF, printed from the built pages by Chromium (tools/book_pdf.py
# says why not LaTeX).
pdf: book browser
	$(BIN)/python tools/book_pdf.py --site _build/html --out _build/pdf/book.pdf

# Every core (pytest-xdist); the tests of one file share a worker, so an
# assignment's nbgrader round trip (a module-scoped fixture) runs once. (Not
# --dist loadgroup: with pytest 9 it no longer keeps an xdist_group together.)
# Hundreds of the processes the tests start import the package (a checker per
# submission, kernels, nbgrader): its bytecode is compiled once first, which saves each
# about a tenth of a second where Python may not write it (PYTHONDONTWRITEBYTECODE).
test: $(STAMP) $(TOOLS_JS) browser
	$(BIN)/python -m compileall -q collective_lib
	$(BIN)/python -m pytest -q -n auto --dist loadfile --no-loadscope-reorder

# JupyterLab for reading the chapters: jupyter_reader/ switches off nbgrader's
# panels and buttons (Create Assignment, Validate, formgrader, ...), which the
# environment has for the instructor but which mean nothing on a chapter.
lab: $(STAMP)
	JUPYTER_CONFIG_PATH=$(abspath jupyter_reader) $(BIN)/jupyter lab book/

# The README's course commands, run verbatim for three students and three
# assignments in a scratch course under a temporary directory (never exercises/);
# prints the per-question grade table.
course-demo: $(STAMP)
	$(BIN)/python tools/course_demo.py

clean:
	rm -rf _build .pytest_cache .hypothesis .jupyter_cache
	find . -path ./$(VENV) -prune -o \( -name __pycache__ -o -name .ipynb_checkpoints \) \
		-type d -prune -exec rm -rf {} +
	rm -rf *.egg-info

distclean: clean
	rm -rf $(VENV)
