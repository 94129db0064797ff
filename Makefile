# Everything a fresh machine needs: Python 3.11, make and the package registries.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install browser demo test test-fast docs bench bench-models bench-sampled bench-hf bench-corpora fuzz clean

install: $(STAMP)

# torch is pinned and installed first: an unpinned torch would pull a CUDA build.
# pip byte-compiles on one core (half of the install's CPU time); compileall does it on all
# of them afterwards. Like pip, it goes past the few files that are not valid Python 3.11
# (templates and tests some packages ship), hence the `|| true`.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --no-compile torch==2.13.0
	$(BIN)/pip install -q --no-compile "mindspore==2.10.0" "numpy<2"
	$(BIN)/pip install -q --no-compile -e ".[parity,dev]"
	$(BIN)/python -m compileall -qq -j 0 $(VENV)/lib >/dev/null 2>&1 || true
	touch $(STAMP)

demo: install
	$(BIN)/transpile convert samples -o out
	$(BIN)/transpile parity --samples samples --converted out
	$(BIN)/transpile parity --training --converted out

# The HTML report's test (tests/test_report_browser.py) drives Debian's chromium headless
# through Playwright (never `playwright install`: it would download a browser build).
# The package lists are refreshed only when the install fails without it. Without root
# nothing is installed: the test is then skipped, saying why (.ci/run makes that a failure).
browser:
	@if command -v chromium >/dev/null; then :; \
	elif [ "$$(id -u)" != 0 ]; then \
		echo "make browser: chromium is not installed and installing it needs root: tests/test_report_browser.py will be skipped"; \
	else \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver \
		|| (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver); \
	fi

# Every core (pytest-xdist). A worker takes a whole module at a time (--dist loadfile): a
# differential module converts one file for all its cases, parity modules share their
# runs between cases. Modules go out longest first (tests/conftest.py orders them; xdist
# must not reorder). -rs prints why a test was skipped.
PYTEST := $(BIN)/python -m pytest -q -rs -n auto --dist loadfile --no-loadscope-reorder

test: install browser
	$(PYTEST)

# The converter alone, in about a minute: no test that runs torch or MindSpore (marker
# `framework`, checked: see tests/conftest.py), no browser, no slow test.
test-fast: install
	$(PYTEST) -m "not framework and not browser and not slow"

# docs/apis.md is generated from the tables, rewrites/runtime/layouts.json from the run-time
# helpers (a test checks each is current)
docs: install
	$(BIN)/python -m tests.differential.reexports
	$(BIN)/python -m tests.differential.form_coverage
	$(BIN)/transpile apis --format markdown > docs/apis.md
	$(BIN)/python -c "from transpile.rewrites.runtime import registry; registry.write_layouts()"

bench: install
	$(BIN)/python benchmarks/throughput.py

# real models, converted and parity-checked (creates benchmarks/.venv-tv for the torch side)
bench-models: install
	$(BIN)/python benchmarks/models/run.py

# the sampled benchmark (issue 29): packages drawn from the registry list, in draw order;
# the torch side in benchmarks/.venv-sampled; records each new model's first-contact verdict
bench-sampled: install
	$(BIN)/python benchmarks/sampled/run.py

# Hugging Face transformers converted from its own source as a whole (issue 31): six models
# at tiny configs; the torch side in benchmarks/.venv-hf (torch and transformers pinned)
bench-hf: install
	$(BIN)/python benchmarks/hf/run.py

# four real corpora (torch/nn, torchvision, timm, transformers' modeling files), fetched
# into benchmarks/.corpora: crashes, unparsable outputs, second-pass changes, rate
bench-corpora: install
	$(BIN)/python benchmarks/corpora.py

# fuzzing for MINUTES (default 10): generated programs and mutated model files; failing
# inputs (and minimized versions) go to benchmarks/.work/fuzz-failures with their seeds
MINUTES ?= 10
fuzz: install
	$(BIN)/python benchmarks/fuzz.py --minutes $(MINUTES)

clean:
	rm -rf $(VENV) out
