# The two commands a fresh machine needs: `make run` and `make test`.
# Each creates the virtual environment first if it is missing or stale.

PY ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EXAMPLES := examples/generated/referral.png examples/generated/discharge.pdf examples/generated/fax.tif
FILES ?= $(EXAMPLES)
PYTEST_ARGS ?=

.PHONY: run test stop venv examples lint typecheck clean system-deps test-deps

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

$(EXAMPLES) &: | $(STAMP)
	$(BIN)/python examples/make_examples.py

examples: $(EXAMPLES)

# Start the embedded stack in the background, submit the examples (or FILES),
# wait for them and print one row each. The stack stays up: `make stop`.
run: $(STAMP) $(EXAMPLES) system-deps
	$(BIN)/custody up --detach
	$(BIN)/custody submit $(FILES) --wait

stop: $(STAMP)
	$(BIN)/custody down

# Tesseract: the OCR engine reads layout and words with it (and the benchmark
# compares against it); libseccomp: the inspection child's syscall filter.
# Fresh machines and CI may start without them.
system-deps:
	@{ command -v tesseract >/dev/null && ldconfig -p | grep -q libseccomp.so.2; } || \
		{ [ "$$(id -u)" = 0 ] && apt-get update -q && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends tesseract-ocr libseccomp2; } || \
		{ echo "missing: apt-get install tesseract-ocr libseccomp2 (as root)" >&2; exit 1; }

# The browser test drives Debian's Chromium (no browser download).
test-deps:
	@command -v chromium >/dev/null || \
		{ [ "$$(id -u)" = 0 ] && apt-get update -q && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends chromium; } || \
		{ echo "missing: apt-get install chromium (as root)" >&2; exit 1; }

test: $(STAMP) system-deps test-deps
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .custody examples/generated
