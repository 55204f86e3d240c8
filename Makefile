# offsetlake: `make demo` and `make test` each do all set-up first (idempotent):
#   1. a virtualenv in .venv with the locked Python environment (requirements.lock);
#   2. JVM jars from Maven Central into .jvm/ (Delta, Spark's Kafka source, the Kafka broker).
# A second run re-installs nothing and downloads nothing.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
VENV_STAMP := $(VENV)/.offsetlake-installed
# uv installs the lock: much faster than pip in a new venv (pip unpacks each wheel, pyspark's 450 MB among
# them, and byte-compiles it; the figures are in CHANGELOG.md). Pinned like the lock.
UV := uv==0.13.9
# pyspark is published as an sdist only. This machine's PyPI mirror answers every cache revalidation
# as "modified", so uv downloaded and built it again at every set-up (34 of its 39 s); the wheel is
# built once per user here (pip wheel, from pip's own cache when it has one) and found by uv first.
WHEELS := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/offsetlake/wheels
# Byte-compiled at install (uv --compile-bytecode) and at each set-up for the project's own packages
# (compileall skips what is up to date): with PYTHONDONTWRITEBYTECODE=1, as on this machine and in many
# CI images and containers, Python never caches what it compiles, so every process (the CLI, Spark's
# Python workers, Airflow's task runner, pytest) compiled each module it imported from source again
# (great_expectations alone takes seconds to compile).
PACKAGES := cli conf history decoders schemas pipelines coordinator broker jvm quality dashboard metrics

.PHONY: setup venv jars browser prometheus demo test test-cluster test-long test-fast docs lint clean

setup: venv jars
	@$(BIN)/python -m compileall -q -j 0 $(PACKAGES) dags >/dev/null

venv: $(VENV_STAMP)

$(VENV_STAMP): pyproject.toml requirements.lock
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "offsetlake needs Python >= 3.11 (set PYTHON=...)")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet $(UV)
	@pin="$$(grep -i '^pyspark==' requirements.lock)"; \
	  ls "$(WHEELS)"/pyspark-$${pin#*==}-*.whl >/dev/null 2>&1 || { tmp="$$(mktemp -d)" && \
	  echo "building $$pin's wheel once into $(WHEELS)" && \
	  $(BIN)/python -m pip wheel --quiet --no-deps "$$pin" -w "$$tmp" && mkdir -p "$(WHEELS)" && \
	  mv "$$tmp"/pyspark-*.whl "$(WHEELS)"/ && rm -rf "$$tmp"; }
	$(BIN)/uv pip install --quiet --python $(BIN)/python --compile-bytecode --find-links "$(WHEELS)" \
	  -r requirements.lock
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

# Debian's Prometheus server and promtool, for the metrics tests: a real server scrapes `serve-metrics` and
# answers PromQL, and promtool checks the alerting rules (tests/metrics/test_prometheus.py).
prometheus:
	@command -v prometheus >/dev/null && command -v promtool >/dev/null || \
	  { apt-get update -q && apt-get install -y -q prometheus; }

test: setup browser prometheus
	$(BIN)/python -m pytest -m "not cluster and not long"

# The warehouse on a real HDFS (NameNode + DataNode from Maven jars, jvm/hdfs.py): tests/cluster/,
# kept out of `make test`'s ten minutes. CI runs it too (.ci/run).
test-cluster: setup
	$(BIN)/python -m pytest -m cluster

# End-to-end runs of 20-120 s each in processes of their own (marked `long`): the ingest
# killed with SIGKILL twice, `offsetlake run` killed while gold's query has a batch in flight, then `run` to
# the end (about 120 s), and the
# data_quality and offsets_ingest DAGs run by Airflow (about 40 s and 72 s, one run of offsets_ingest for
# both DAGs' tests), and `serve-sql`'s server (a JVM for its module); also gold.consumer_lag's two tests on
# the broker, test_refresh's bookkeeping tests (several refreshes of one warehouse), test_increment's check after
# a VACUUM, the simulator against a real broker's records, check's exit-1 verdict, the lag's state-store refreshes
# against a replay of all of silver, and the writer lease's two-runs acceptance test. Kept out of `make test` so
# that it stays within its ten minutes (each of them has a fast counterpart there); CI runs all three targets
# (.ci/run).
test-long: setup
	$(BIN)/python -m pytest -m long

# The developer loop: no Kafka broker and no JVM started in a subprocess (the in-process Spark
# session still runs). The marks come from the fixtures each test uses (tests/conftest.py).
# CI runs everything through `make test`, `make test-cluster` and `make test-long`.
test-fast: setup
	$(BIN)/python -m pytest -m "not broker and not jvm_process and not cluster and not long"

# The documentation site: the reference pages written from the code (docs/generate.py: tables, CLI, settings,
# benchmarks), then the site built into build/site/ (git-ignored) with --strict, so a broken link or anchor fails
# (not with --quiet: it drops the very warnings --strict counts, and the build passes).
# mkdocs and mkdocs-material (pyproject's `docs` extra) are in requirements.lock, which the venv installs whole.
# NO_MKDOCS_2_WARNING: Material's end-of-life notice at every build (pyproject.toml says when).
docs: venv
	$(BIN)/python -m docs.generate
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict -d build/site

lint: venv
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) .jvm .offsetlake warehouse .pytest_cache .hypothesis
