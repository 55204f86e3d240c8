# offsetlake: `make demo` and `make test` each do all set-up first (idempotent):
#   1. a virtualenv in .venv with the locked Python environment (requirements.lock);
#   2. JVM jars from Maven Central into .jvm/ (Delta, Spark's Kafka source, the Kafka broker).
# A second run re-installs nothing and downloads nothing.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
VENV_STAMP := $(VENV)/.offsetlake-installed
# uv installs the lock: with warm caches the same ~170 pinned packages took 1 min 50 s with pip (it
# unpacks each wheel, pyspark's 400 MB among them, and byte-compiles it), seconds with uv (links from
# its cache). Pinned like the lock.
UV := uv==0.13.9

.PHONY: setup venv jars browser demo test test-fast lint clean

setup: venv jars

venv: $(VENV_STAMP)

$(VENV_STAMP): pyproject.toml requirements.lock
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "offsetlake needs Python >= 3.11 (set PYTHON=...)")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet $(UV)
	$(BIN)/uv pip install --quiet --python $(BIN)/python -r requirements.lock
	$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps -e . --config-settings editable_mode=compat
	@touch $@

jars: venv
	@command -v java >/dev/null || { echo "Java 17 is required (apt-get install openjdk-17-jdk-headless)"; exit 1; }
	@command -v mvn >/dev/null || { echo "Maven is required (apt-get install maven)"; exit 1; }
	$(BIN)/offsetlake jvm resolve

demo: setup
	$(BIN)/offsetlake demo

# Debian's Chromium, for the dashboard's browser test (no browser download by a test tool).
browser:
	@command -v chromium >/dev/null || { apt-get update -q && apt-get install -y -q chromium chromium-driver; }

test: setup browser
	$(BIN)/python -m pytest

# The developer loop: no Kafka broker and no JVM started in a subprocess (the in-process Spark
# session still runs). The marks come from the fixtures each test uses (tests/conftest.py).
# CI runs everything through `make test`.
test-fast: setup
	$(BIN)/python -m pytest -m "not broker and not jvm_process"

lint: venv
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) .jvm .offsetlake warehouse .pytest_cache .hypothesis
