# The two commands a fresh machine needs: `make run` and `make test`.
# Both install from the lock: uv.lock, exported with a hash for every file to
# requirements/*.txt (`make lock` writes them, `make lock-check` proves them current).
# `make run` installs only what running needs (requirements/run.txt, then Custody
# itself, editable); `make test` adds the test tools, the benchmarks and EasyOCR
# (requirements/ci.txt: .[test,bench,easyocr]). Each has its own stamp, so
# `make test` after `make run` only adds what is missing.
#
# The installer is uv (requirements/uv.txt, hash-checked by pip): it checks the
# same hashes pip would, and it reuses its cache (~/.cache/uv) across clones.
# uv reads no pip configuration; point it at a mirror with UV_INDEX_URL.

SHELL := /bin/bash
PY ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
UV := $(BIN)/uv
TOOLS_STAMP := $(VENV)/.installed-tools
RUN_STAMP := $(VENV)/.installed-run
TEST_STAMP := $(VENV)/.installed-test
CHECKOV_VENV := .venv-checkov
CHECKOV_STAMP := $(CHECKOV_VENV)/.installed
# Every locked file is in the requirements file with its hash; nothing else is fetched.
INSTALL = $(UV) pip install --quiet --require-hashes --no-deps --python
EXAMPLES := examples/generated/referral.png examples/generated/discharge.pdf examples/generated/fax.tif
FILES ?= $(EXAMPLES)
PYTEST_ARGS ?=
# What `make test` leaves out: the long forms (`slow`) and the slow chaos scenarios (`chaos`);
# `make test-long` runs exactly those, and CI runs both (pyproject.toml's markers say why).
TEST_MARKS ?= not slow and not chaos
# `make test` runs on this many pytest-xdist workers, a test file to a worker (each worker
# starts its own Temporal dev server and publishes its own session store); 0 runs in-process.
TEST_WORKERS ?= 2

# The lock's exports: requirements/NAME.txt from `uv export` with these arguments.
EXPORT := $(UV) export --frozen --quiet --format requirements-txt --no-emit-project
EXPORTS := run ci gpu
EXPORT_run :=
EXPORT_ci := --extra test --extra bench --extra easyocr
# onnxruntime-gpu installs the same module as onnxruntime: the GPU image has only the former.
EXPORT_gpu := --extra gpu --extra easyocr --no-emit-package onnxruntime
# Small pins compiled on their own: the installer, the build backend, checkov.
COMPILED := uv build checkov
COMPILE := $(UV) pip compile --quiet --generate-hashes --python-version 3.11 \
	--python-platform x86_64-manylinux_2_28

.PHONY: run test test-long stop venv test-venv examples lint typecheck clean system-deps test-deps \
	lock lock-check

# No pip seeded into the venv (that alone took 35 s of a 55 s install on a busy box):
# pip bootstraps uv, hash-checked, from outside when the system's pip can (23+),
# else from the venv's own; uv then adds pip and the build backend, hash-checked too.
$(BIN)/python:
	$(PY) -m venv --without-pip $(VENV)

$(TOOLS_STAMP): requirements/uv.txt requirements/build.txt | $(BIN)/python
	if $(PY) -c 'import pip, sys; sys.exit(int(pip.__version__.split(".")[0]) < 23)' 2>/dev/null; \
	then pip="$(PY) -m pip --python $(BIN)/python"; \
	else $(BIN)/python -m ensurepip -q && pip="$(BIN)/python -m pip"; fi; \
	$$pip install -q --require-hashes --no-deps -r requirements/uv.txt
	$(INSTALL) $(BIN)/python -r requirements/build.txt
	touch $@

$(RUN_STAMP): requirements/run.txt pyproject.toml | $(TOOLS_STAMP)
	$(INSTALL) $(BIN)/python -r requirements/run.txt
	$(UV) pip install --quiet --python $(BIN)/python --no-deps --no-build-isolation -e .
	touch $@

$(TEST_STAMP): requirements/ci.txt $(RUN_STAMP)
	$(INSTALL) $(BIN)/python -r requirements/ci.txt
	touch $@

venv: $(RUN_STAMP)

test-venv: $(TEST_STAMP)

$(EXAMPLES) &: | $(RUN_STAMP)
	$(BIN)/python examples/make_examples.py

examples: $(EXAMPLES)

# Start the embedded stack in the background, submit the examples (or FILES),
# wait for them and print one row each. The stack stays up: `make stop`.
run: $(RUN_STAMP) $(EXAMPLES) system-deps
	$(BIN)/custody up --detach
	$(BIN)/custody submit $(FILES) --wait

stop: $(RUN_STAMP)
	$(BIN)/custody down

# Tesseract: the OCR engine reads layout and words with it (and the benchmark
# compares against it); libseccomp: the inspection child's syscall filter.
# Fresh machines and CI may start without them.
system-deps:
	@{ command -v tesseract >/dev/null && ldconfig -p | grep -q libseccomp.so.2; } || \
		{ [ "$$(id -u)" = 0 ] && apt-get update -q && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends tesseract-ocr libseccomp2; } || \
		{ echo "missing: apt-get install tesseract-ocr libseccomp2 (as root)" >&2; exit 1; }

# checkov pins older boto3, packaging and networkx than Custody: its own virtualenv,
# from its own hashed pins, kept between runs (tests/deploy/test_checkov.py uses it).
# Compiled to bytecode once here: checkov imports some 2,000 modules per run, and where
# Python may not write bytecode (PYTHONDONTWRITEBYTECODE) it would compile them every time
# (about a third of each run's CPU, and minutes of wall time on a busy box).
$(CHECKOV_STAMP): requirements/checkov.txt | $(TOOLS_STAMP)
	test -x $(CHECKOV_VENV)/bin/python || $(PY) -m venv $(CHECKOV_VENV)
	$(INSTALL) $(CHECKOV_VENV)/bin/python --compile-bytecode -r requirements/checkov.txt
	touch $@

# The browser test drives Debian's Chromium (no browser download); the searchable PDF's
# text layer is read back by poppler's pdftotext and MuPDF's mutool; checkov as above.
test-deps: $(CHECKOV_STAMP)
	@{ command -v chromium && command -v pdftotext && command -v mutool; } >/dev/null || \
		{ [ "$$(id -u)" = 0 ] && apt-get update -q && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends chromium poppler-utils mupdf-tools; } || \
		{ echo "missing: apt-get install chromium poppler-utils mupdf-tools (as root)" >&2; exit 1; }

test: $(TEST_STAMP) system-deps test-deps
	$(BIN)/python -m pytest -m "$(TEST_MARKS)" -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)

test-long: $(TEST_STAMP) system-deps test-deps
	$(BIN)/python -m pytest -m "slow or chaos" $(PYTEST_ARGS)

lint: $(TEST_STAMP)
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

typecheck: $(TEST_STAMP)
	$(BIN)/mypy

# After editing pyproject.toml's dependencies: lock again and export every install path.
lock: | $(TOOLS_STAMP)
	$(UV) lock
	$(foreach e,$(EXPORTS),$(EXPORT) $(EXPORT_$(e)) -o requirements/$(e).txt &&) true
	$(foreach c,$(COMPILED),$(COMPILE) requirements/$(c).in -o requirements/$(c).txt &&) true

# CI: the lock matches pyproject.toml, and each export matches the lock (the
# export's first lines name the command that wrote it, so they are left out).
lock-check: | $(TOOLS_STAMP)
	$(UV) lock --check
	$(foreach e,$(EXPORTS),diff -u <(grep -v '^#' requirements/$(e).txt) \
		<($(EXPORT) $(EXPORT_$(e)) | grep -v '^#') &&) true

clean:
	rm -rf $(VENV) $(CHECKOV_VENV) .custody examples/generated
