"""The documentation's generated pages are what the code says now, and the site builds with no broken link."""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

from docs import generate

MKDOCS_ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    # Not --quiet: it drops the warnings that --strict counts, and a broken link passes.
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
                          capture_output=True, text=True, env=MKDOCS_ENV, timeout=120)


def section(page: str, heading: str) -> str:
    """The text of ``page`` from the heading line starting with ``heading`` to the next heading of any level."""
    lines = page.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("#")), len(lines))
    return "\n".join(lines[start:end])


def test_the_committed_pages_are_what_the_code_generates_now() -> None:
    stale = [path for path, page in generate.PAGES.items()
             if not (generate.DOCS / path).exists() or (generate.DOCS / path).read_text(encoding="utf-8") != page()]
    assert not stale, (f"differ from what the code generates now: docs/{', docs/'.join(stale)}; "
                       "run `make docs` and commit the pages")


def test_every_table_spec_in_the_code_has_its_section_in_tables_md_with_all_its_columns() -> None:
    from schemas.table_spec import TableSpec

    specs = {}
    for package in ("schemas", "pipelines.gold"):
        for module in pkgutil.iter_modules(importlib.import_module(package).__path__):
            for value in vars(importlib.import_module(f"{package}.{module.name}")).values():
                if isinstance(value, TableSpec):
                    specs[value.name] = value
    page = generate.tables_page()
    assert {"bronze", "silver", "gold"} <= {spec.layer for spec in specs.values()}
    for spec in specs.values():
        text = section(page, f"### `{spec.name}`")
        for column in spec.schema.fields:
            assert f"| `{column.name}` |" in text, f"{spec.name}.{column.name} is not in tables.md"


def test_every_view_has_its_section_in_tables_md_with_its_question_and_columns() -> None:
    from pipelines.sql_views import load_views

    page = generate.tables_page()
    for view in load_views():
        text = section(page, f"### `{view.name}`")
        assert "- **Question:** " in text and "- **Columns:** `" in text, view.name


def test_every_command_and_nested_command_has_its_section_in_cli_md_with_every_option() -> None:
    from cli.main import build_parser

    page = generate.cli_page()
    found = list(generate.commands(build_parser()))
    assert ("kafka", "start") in [path for path, _, _ in found]
    for path, _, parser in found:
        text = section(page, f"{'#' * (len(path) + 1)} `offsetlake {' '.join(path)}`")
        for action in parser._actions:
            for option in action.option_strings:
                assert option in text or option in ("-h", "--help"), f"offsetlake {' '.join(path)} {option}"


def test_every_settings_key_has_its_section_in_settings_md_with_its_environment_variable() -> None:
    from pydantic import BaseModel

    from conf.settings import Settings

    page = generate.settings_page()
    sections = {name: f.annotation for name, f in Settings.model_fields.items()
                if isinstance(f.annotation, type) and issubclass(f.annotation, BaseModel)}
    keys = [(name, "OFFSETLAKE_" + name.upper()) for name in Settings.model_fields if name not in sections]
    keys += [(f"{section}.{name}", f"OFFSETLAKE_{section.upper()}__{name.upper()}")
             for section, cls in sections.items() for name in cls.model_fields]
    assert len(keys) > 40
    for key, env in keys:
        text = section(page, f"### `{key}`")
        assert f"`{env}`" in text, key
        assert not text.rstrip().endswith("—"), f"{key} has no description"


def test_every_record_type_has_its_section_in_records_md_with_every_value_field() -> None:
    from decoders.layout import BY_TYPE_ID

    page = generate.records_page()
    for type_id, spec in BY_TYPE_ID.items():
        text = section(page, f"## {spec.name}")
        assert f"Type id {type_id};" in text
        for f in spec.value.fields:
            assert f"| `{f.kafka_name}` |" in text, (spec.name, f.kafka_name)


def test_a_settings_field_without_a_comment_takes_the_example_files_comment_on_its_line() -> None:
    comments = generate.example_comments(
        'cluster_name = "x"   # tags every row\n'
        '[kafka]\n'
        '# sasl_mechanism = "PLAIN"  # PLAIN | SCRAM-SHA-256\n'
        'starting_offsets = "earliest"  # where a new ingest starts;\n'
        '                               # ignored once a checkpoint exists\n'
        '[kafka.librdkafka]             # passed unchanged\n'
        '# "client.id" = "offsetlake"\n')
    assert comments == {"cluster_name": "tags every row", "kafka.sasl_mechanism": "PLAIN | SCRAM-SHA-256",
                        "kafka.starting_offsets": "where a new ingest starts; ignored once a checkpoint exists",
                        "kafka.librdkafka": "passed unchanged"}


def test_the_benchmarks_page_shows_the_latest_result_of_each_bench_and_a_dash_for_a_missing_field(
        tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    result = {"bench": "gold", "date": "2026-12-01T10:00:00+00:00", "commit": "abc1234", "cpu_count": 2,
              "load_average_start": [1.5, 1.25, 1.0], "load_average_end": [2.0, 1.5, 1.0],
              "arguments": {"commits": 1000000}, "figures": {"incremental_seconds": 3.2},
              "baseline": {"full_rebuild_seconds": 40.1}, "line": "gold: incremental/full = 8.0% at 1,000,000 commits"}
    (results / "gold.json").write_text(json.dumps(result))
    (results / "gold-older.json").write_text(json.dumps({**result, "date": "2026-11-01T10:00:00+00:00",
                                                         "figures": {"incremental_seconds": 99.0}}))
    (results / "lag.json").write_text(json.dumps({"bench": "lag", "figures": {"seconds": 2}}))
    page = generate.benchmarks_page(results)
    assert ("| `gold` | incremental\\_seconds `3.2` | full\\_rebuild\\_seconds `40.1` | "
            "1.5 1.25 1.0 → 2.0 1.5 1.0 | 2 | `abc1234` | 2026-12-01T10:00:00+00:00 | commits `1000000` | "
            "`gold: incremental/full = 8.0% at 1,000,000 commits` |") in page
    assert "| `lag` | seconds `2` | — | — | — | — | — | — | — |" in page
    assert "99.0" not in page


def test_a_bench_with_no_result_yet_says_so_with_the_command_that_runs_it(tmp_path: Path) -> None:
    page = generate.benchmarks_page(tmp_path)
    assert "No bench has written a result yet." in page
    assert "| `bench/lag.py` | " in page
    assert "no result yet: `.venv/bin/python bench/lag.py`" in section(page, "## The benches")
    assert "writes none" not in page


def test_the_site_builds_with_mkdocs_strict(tmp_path: Path) -> None:
    built = mkdocs_build(generate.ROOT / "mkdocs.yml", tmp_path / "site")
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "site" / "reference" / "tables" / "index.html").exists()


def test_a_link_to_an_anchor_no_page_has_fails_the_strict_build(tmp_path: Path) -> None:
    shutil.copy(generate.ROOT / "mkdocs.yml", tmp_path)
    shutil.copytree(generate.DOCS, tmp_path / "docs", ignore=shutil.ignore_patterns("__pycache__"))
    with (tmp_path / "docs" / "index.md").open("a") as index:
        index.write("\n[no such table](reference/tables.md#gold-no_such_table)\n")
    built = mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert built.returncode != 0 and "gold-no_such_table" in built.stderr
