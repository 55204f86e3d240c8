"""Run every suite of ``quality/`` over the warehouse with Great Expectations, record and document the results.

One ephemeral GX context per run (nothing of GX's is kept but the data docs): a Spark data source,
one dataframe asset and expectation suite per (suite, table), each validated against the table as
it is now; a rule the table holds as a Delta CHECK constraint is reported from that, without a scan
(and without a GX expectation). Results go to ``audit.data_quality_results`` (one row per expectation,
skipped ones included) and GX data docs (HTML) are built into ``quality.docs_dir`` (default
``<warehouse>/_quality/data_docs``).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conf.settings import Settings, user_cache_dir
from pipelines.delta_tables import (
    ensure_table,
    idempotent_append,
    read_table,
    read_version,
    table_exists,
    table_path,
)
from quality import (
    committed_offsets,
    consumer_lag,
    cross_table,
    group_generations,
    group_members,
    offset_commits,
    partition_assignments,
    quarantine,
    streams_task_assignments,
)
from quality.suite import Rule, Scope, Suite, view_name
from schemas import data_quality_results
from schemas.catalog import TABLES

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from quality.increment import Increment

SUITES: tuple[Suite, ...] = (
    offset_commits.SUITE, group_members.SUITE, group_generations.SUITE, partition_assignments.SUITE,
    committed_offsets.SUITE, consumer_lag.SUITE, quarantine.SUITE, cross_table.SUITE, streams_task_assignments.SUITE,
)
RESULTS = data_quality_results.TABLE
DOCS_SITE = "offsetlake"


@dataclass(frozen=True)
class ExpectationResult:
    """The outcome of one rule in one run (a row of audit.data_quality_results)."""

    suite: str
    table: str
    expectation: str
    severity: str
    status: str  # passed | failed | skipped | error
    expectation_type: str | None = None
    observed_value: Any = None
    unexpected_count: int | None = None
    unexpected_sample: tuple[Any, ...] = ()
    details: str | None = None

    @property
    def success(self) -> bool | None:
        return {"passed": True, "failed": False}.get(self.status)

    @property
    def fails_run(self) -> bool:
        """A critical expectation that failed, or could not be evaluated, fails the run."""
        return self.severity == "critical" and self.status in ("failed", "error")


@dataclass(frozen=True)
class CheckReport:
    run_id: str
    run_at: dt.datetime
    results: tuple[ExpectationResult, ...]
    docs_index: Path | None
    #: What the run read: "whole tables (why)" or "the increment since the last check: ..." (``quality.increment``).
    read: str = "whole tables"

    @property
    def ok(self) -> bool:
        return not any(r.fails_run for r in self.results)

    def result(self, suite: str, expectation: str) -> ExpectationResult:
        return next(r for r in self.results if r.suite == suite and r.expectation == expectation)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.results:
            out[r.status] = out.get(r.status, 0) + 1
        return out

    def critical_failing(self) -> list[str]:
        """``suite.expectation`` of every result that fails the run, in the suites' order."""
        return [f"{r.suite}.{r.expectation}" for r in self.results if r.fails_run]

    def as_json(self) -> dict[str, Any]:
        """The report as ``offsetlake check --json`` writes it: what a scheduler needs to decide, and every result.

        Observed values and unexpected rows are as GX gave them (JSON types, anything else as text),
        not shortened as in the printed table.
        """
        def plain(value: Any) -> Any:
            return json.loads(json.dumps(value, default=str))

        return {
            "run_id": self.run_id, "run_at": self.run_at.isoformat(), "ok": self.ok, "read": self.read,
            "critical_failing": self.critical_failing(), "counts": self.counts(),
            "docs_index": None if self.docs_index is None else str(self.docs_index),
            "results": [{"suite": r.suite, "table": r.table, "expectation": r.expectation, "severity": r.severity,
                         "status": r.status, "fails_run": r.fails_run, "expectation_type": r.expectation_type,
                         "observed_value": plain(r.observed_value), "unexpected_count": r.unexpected_count,
                         "unexpected_sample": plain(list(r.unexpected_sample)), "details": r.details}
                        for r in self.results],
        }


def select_suites(names: Sequence[str] | None) -> tuple[Suite, ...]:
    """The suites to run: all, or narrowed to ``names``: whole suites by name, or the rules checking a table."""
    if not names:
        return SUITES
    known = {s.name for s in SUITES} | {t for s in SUITES for t in s.tables()}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown table or suite {', '.join(unknown)}; expected one of {', '.join(sorted(known))}")
    chosen = []
    for suite in SUITES:
        rules = tuple(r for r in suite.rules if suite.name in names or (r.table or suite.table) in names)
        if rules:
            chosen.append(dataclasses.replace(suite, rules=rules))
    return tuple(chosen)


def docs_directory(settings: Settings, docs_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where GX writes its data docs (HTML): ``docs_dir``, ``quality.docs_dir``, else beside a local warehouse
    (``<warehouse>/_quality/data_docs``) or, for a remote one, in the user's cache (GX's site builder
    writes local files)."""
    chosen = docs_dir or settings.quality.docs_dir
    if chosen:
        return Path(chosen).expanduser().resolve()
    if settings.warehouse_is_local:
        return settings.warehouse_path / "_quality" / "data_docs"
    return user_cache_dir() / "data_docs" / settings.cluster_name


def run_checks(spark: SparkSession, settings: Settings, *, tables: Sequence[str] | None = None,
               frames: Mapping[str, DataFrame] | None = None, docs_dir: str | os.PathLike[str] | None = None,
               write_results: bool = True, full: bool = False) -> CheckReport:
    """Run the suites (all, or those of ``tables``) and return what every expectation found.

    ``frames`` replaces tables by name (``silver.offset_commits``, or ``silver.offset_commits@gold``
    for silver as gold last saw it): how tests feed tampered data. A table that does not exist (and is
    not in ``frames``) skips the rules that read it.

    A run over the warehouse's own tables reads only the increment since the last run of every suite
    (``quality.increment``: each rule the rows its scope needs), unless ``full``; a run of every suite records
    what it read with its results (a run of some suites does not: the next run of all reads from the last run of
    all). A run with ``frames`` reads them and the tables whole and records nothing.
    """
    from quality.increment import find_increment

    suites = select_suites(tables)
    check_severity_overrides(settings)
    run_id = uuid.uuid4().hex
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    run_at = now.replace(microsecond=now.microsecond // 1000 * 1000)
    increment = None
    if not frames:
        needed = sorted({t.removesuffix("@gold") for s in suites for r in s.rules for t in ((r.table or s.table),
                                                                                            *r.needs)})
        increment = find_increment(spark, settings, [t for t in needed if table_exists(settings, TABLES[t])], full)
    available = _load_tables(spark, settings, suites, frames or {},
                             None if increment is None else increment.checked.versions,
                             None if increment is None else increment.checked.gold_reflected)
    scoped = _Scoped(spark, settings, available, increment)
    docs = docs_directory(settings, docs_dir)
    context = _gx_context(docs)
    source = context.data_sources.add_spark(name="warehouse", persist=False)
    results: list[ExpectationResult] = []
    for suite in suites:
        for table in sorted(suite.tables()):
            rules = [r for r in suite.rules if (r.table or suite.table) == table]
            runnable = []
            for rule in rules:
                missing = sorted(t for t in (table, *rule.needs) if t not in available)
                if missing:
                    results.append(ExpectationResult(
                        suite.name, table, rule.name, _severity(settings, suite, rule), "skipped",
                        details=_missing(missing)))
                else:
                    runnable.append(rule)
            enforced = _enforced(spark, settings, table, runnable) if table not in (frames or {}) else []
            results.extend(ExpectationResult(
                suite.name, table, rule.name, _severity(settings, suite, rule), "passed", ENFORCED,
                observed_value=0, unexpected_count=0,
                details=f"enforced at every write by the table's Delta CHECK constraint {rule.constraint.name}")
                for rule in enforced if rule.constraint is not None)
            runnable = [rule for rule in runnable if rule not in enforced]
            by_scope: dict[Scope, list[Rule]] = {}
            for rule in runnable:
                by_scope.setdefault(scoped.scope_of(rule), []).append(rule)
            for scope, rules_in_scope in by_scope.items():
                # A row's rule that also reads another table needs that table's rows of the row's group, not its new
                # rows only (no rule does yet).
                needs_scope = Scope.GROUP if scope is Scope.ROW else scope
                for name in {t for rule in rules_in_scope for t in rule.needs}:
                    scoped.frame(name, needs_scope).createOrReplaceTempView(view_name(name))
                results.extend(_validate(context, source, settings, suite, table, rules_in_scope,
                                         scoped.frame(table, scope), run=(run_id, run_at),
                                         part=scope.value if len(by_scope) > 1 else None))
    scoped.release()
    read = "whole tables" if increment is None else increment.describe()
    report = CheckReport(run_id, run_at, tuple(results), None, read)
    if write_results:
        write_report(spark, settings, report, None if increment is None or tables else
                     increment.checked.user_metadata(settings.cluster_name))
    context.build_data_docs(site_names=[DOCS_SITE])
    index = docs / "index.html"
    return CheckReport(run_id, run_at, tuple(results), index if index.is_file() else None, read)


class _Scoped:
    """Each table's rows a rule of a given scope reads: whole tables, or the increment (``quality.increment``)."""

    def __init__(self, spark: SparkSession, settings: Settings, available: Mapping[str, DataFrame],
                 increment: Increment | None) -> None:
        self.spark, self.settings, self.available, self.increment = spark, settings, available, increment
        self._groups: DataFrame | None = None
        self._cache: dict[tuple[str, Scope], DataFrame] = {}

    def scope_of(self, rule: Rule) -> Scope:
        return Scope.TABLE if self.increment is None or self.increment.whole_because is not None else rule.scope

    def frame(self, name: str, scope: Scope) -> DataFrame:
        """``name``'s rows for rules of ``scope``; a group-scoped frame is cached when first read: several rules
        read the same groups' rows (three read silver.offset_commits', which is partitioned by day, not grouped:
        each read scans it, for seconds on bench/gold.py's warehouse)."""
        key = (name, scope)
        if key not in self._cache:
            frame = self._frame(name, scope)
            self._cache[key] = frame.cache() if scope is Scope.GROUP and self.increment is not None else frame
        return self._cache[key]

    def release(self) -> None:
        for frame in self._cache.values():
            frame.unpersist()

    def _frame(self, name: str, scope: Scope) -> DataFrame:
        from quality.increment import LAG_TABLE, changes_between, group_column, has_change_feed, new_lag_rows

        whole = self.available[name]
        if scope is Scope.TABLE:
            return whole
        assert self.increment is not None and self.increment.previous is not None
        base = name.removesuffix("@gold")
        spec = TABLES[base]
        now, previous = self.increment.checked, self.increment.previous
        if scope is Scope.ROW and base == name and has_change_feed(spec):
            if now.versions[name] <= previous.versions[name]:
                return whole.limit(0)
            changes = changes_between(self.spark, self.settings, spec, previous.versions[name], now.versions[name])
            return changes.filter("_change_type = 'insert'").select(*spec.schema.fieldNames())
        if scope is Scope.ROW and name == LAG_TABLE:
            return new_lag_rows(self.spark, self.settings, now, previous)
        return self.of_touched_groups(whole, group_column(spec))

    def of_touched_groups(self, rows: DataFrame, column: str) -> DataFrame:
        """``rows`` of the groups touched since the last check: a literal predicate, which Delta checks against each
        file's statistics (the group tables are clustered by group) and Spark plans as no scan at all for no group;
        beyond ``LITERAL_GROUPS`` groups a semi-join with them."""
        from pyspark.sql import functions as F

        from pipelines.gold.refresh import groups_predicate

        assert self.increment is not None
        groups = list(self.increment.groups)
        if not groups:
            return rows.filter(F.lit(False))
        if len(groups) <= LITERAL_GROUPS:
            return rows.filter(groups_predicate(groups, column))
        if self._groups is None:
            self._groups = self.spark.createDataFrame(groups, "cluster_name string, `group` string")
        return rows.join(F.broadcast(self._groups.withColumnRenamed("group", column)), ["cluster_name", column],
                         "left_semi")


#: Touched groups up to which a check of the increment filters by a literal predicate (see ``_Scoped``).
LITERAL_GROUPS = 2_000


ENFORCED = "delta_check_constraint"
"""``expectation_type`` of a rule reported from the table's CHECK constraint, without a scan."""


def _enforced(spark: SparkSession, settings: Settings, table: str, rules: Sequence[Rule]) -> list[Rule]:
    """The ``rules`` that ``table`` holds as Delta CHECK constraints, the same expression (no row can violate
    them: Delta checked the rows there when it added the constraint, and checks every write since)."""
    if table not in TABLES or not any(rule.constraint for rule in rules):
        return []
    from delta.tables import DeltaTable

    properties = DeltaTable.forPath(spark, table_path(settings, TABLES[table])).detail().head()["properties"]
    return [rule for rule in rules if rule.constraint and rule.constraint.held_in(properties)]


def _missing(tables: Sequence[str]) -> str:
    gold_views = [t.removesuffix("@gold") for t in tables if t.endswith("@gold")]
    plain = [t for t in tables if not t.endswith("@gold")]
    parts = [f"table {', '.join(plain)} does not exist yet"] if plain else []
    if gold_views:
        parts.append(f"gold has not been refreshed from {', '.join(gold_views)} yet")
    return "; ".join(parts)


def check_severity_overrides(settings: Settings) -> None:
    """Refuse a ``quality.severity`` key that names no expectation (a typo would silently change nothing)."""
    known = {f"{s.name}.{r.name}" for s in SUITES for r in s.rules}
    unknown = sorted(set(settings.quality.severity) - known)
    if unknown:
        raise ValueError(f"quality.severity names unknown expectations {', '.join(unknown)}; keys are "
                         "'suite.expectation', e.g. offset_commits.offsets_never_decrease_within_a_generation")


def _severity(settings: Settings, suite: Suite, rule: Rule) -> str:
    return settings.quality.severity.get(f"{suite.name}.{rule.name}", rule.severity)


def _load_tables(spark: SparkSession, settings: Settings, suites: Sequence[Suite],
                 frames: Mapping[str, DataFrame], versions: Mapping[str, int] | None = None,
                 reflected: Mapping[str, int] | None = None) -> dict[str, DataFrame]:
    """Every table the suites read, by name (``frames`` first); at ``versions`` where given (the versions an
    increment was found at), else as they are now; silver as gold saw it at ``reflected`` where given (the silver
    versions gold reflected when the increment was found), else as gold's commits now record it."""
    needed = {t for s in suites for r in s.rules for t in ((r.table or s.table), *r.needs)}
    gold_versions: Mapping[str, int] | None = reflected
    out: dict[str, DataFrame] = {}
    for name in sorted(needed):
        if name in frames:
            out[name] = frames[name]
            continue
        base = name.removesuffix("@gold")
        spec = TABLES[base]
        if not table_exists(settings, spec):
            continue
        if base == name:
            out[name] = (read_table(spark, settings, spec) if not versions or name not in versions else
                         read_version(spark, settings, spec, versions[name]))
            continue
        if gold_versions is None:
            gold_versions = _gold_versions(spark, settings)
        if base in gold_versions:
            out[name] = read_version(spark, settings, spec, gold_versions[base])
    return out


def _gold_versions(spark: SparkSession, settings: Settings) -> dict[str, int]:
    """The silver versions gold reflects (recorded by gold's refresh commits), empty before the first refresh."""
    from pipelines.gold.refresh import reflected_silver_versions

    return reflected_silver_versions(spark, settings)


def _gx_context(docs: Path):  # type: ignore[no-untyped-def]
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    import great_expectations as gx
    from great_expectations.data_context.types.base import (
        DataContextConfig,
        InMemoryStoreBackendDefaults,
        ProgressBarsConfig,
    )

    site = {
        "class_name": "SiteBuilder", "show_how_to_buttons": False,
        "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": str(docs)},
        "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
    }
    config = DataContextConfig(store_backend_defaults=InMemoryStoreBackendDefaults(init_temp_docs_sites=False),
                               progress_bars=ProgressBarsConfig(globally=False, metric_calculations=False),
                               data_docs_sites={DOCS_SITE: site}, analytics_enabled=False)
    return gx.get_context(project_config=config, mode="ephemeral")


def _validate(context, source, settings: Settings, suite: Suite, table: str,  # type: ignore[no-untyped-def]
              rules: Sequence[Rule], frame: DataFrame, run: tuple[str, dt.datetime],
              part: str | None = None) -> list[ExpectationResult]:
    """``part``: which of the table's rules these are, when they read different rows (scopes of an increment)."""
    import great_expectations as gx
    from great_expectations.core.run_identifier import RunIdentifier

    name = suite.name if table == suite.table else f"{suite.name}.{view_name(table)}"
    if part is not None:
        name = f"{name}.{part}"
    batch = source.add_dataframe_asset(name=name).add_batch_definition_whole_dataframe("whole table")
    gx_suite = context.suites.add(gx.ExpectationSuite(name=name, meta={"table": table}))
    for rule in rules:
        expectation = rule.expectation(settings.quality)
        expectation.severity = _severity(settings, suite, rule)
        expectation.notes = rule.reason
        expectation.meta = {"offsetlake_rule": rule.name, "table": table}
        gx_suite.add_expectation(expectation)
    definition = context.validation_definitions.add(gx.ValidationDefinition(name=name, data=batch, suite=gx_suite))
    # The run name is offsetlake's run id, so data docs pages and audit rows can be matched.
    outcome = definition.run(batch_parameters={"dataframe": frame}, result_format={"result_format": "COMPLETE"},
                             run_id=RunIdentifier(run_name=run[0], run_time=run[1].replace(tzinfo=dt.UTC)))
    by_rule = {r.expectation_config.meta["offsetlake_rule"]: r for r in outcome.results}
    return [_result(settings, suite, table, rule, by_rule[rule.name]) for rule in rules]


def _result(settings: Settings, suite: Suite, table: str, rule: Rule, outcome) -> ExpectationResult:  # type: ignore[no-untyped-def]
    limit = settings.quality.sample_rows
    info = outcome.exception_info or {}
    severity = _severity(settings, suite, rule)
    kind = outcome.expectation_config.type
    if info.get("raised_exception"):
        message = str(info.get("exception_message") or "").strip().splitlines()
        return ExpectationResult(suite.name, table, rule.name, severity, "error", kind,
                                 details=message[0] if message else "the expectation raised")
    result = outcome.result or {}
    details = result.get("details") or {}
    if "unexpected_rows" in details:
        sample = details["unexpected_rows"]
        count = result.get("observed_value")
    else:
        sample = result.get("partial_unexpected_list") or result.get("unexpected_list") or []
        count = result.get("unexpected_count")
    return ExpectationResult(
        suite.name, table, rule.name, severity, "passed" if outcome.success else "failed", kind,
        observed_value=result.get("observed_value", count), unexpected_count=count,
        unexpected_sample=tuple(sample[:limit]), details=rule.reason)


def write_report(spark: SparkSession, settings: Settings, report: CheckReport, user_metadata: str | None = None
                 ) -> None:
    """Append the run's rows to audit.data_quality_results, once; ``user_metadata``: what the run read
    (``quality.increment.Checked``), in the Delta commit.

    The Delta txnVersion is the run's start in ms (txnAppId per cluster), so a retried write of the
    same run is skipped by Delta instead of duplicating its rows.
    """
    ensure_table(spark, settings, RESULTS)
    rows = [(settings.cluster_name, report.run_id, report.run_at, r.suite, r.table, r.expectation, r.expectation_type,
             r.severity, r.status, r.success, _json(r.observed_value) if r.observed_value is not None else None,
             r.unexpected_count, _json(list(r.unexpected_sample)), r.details) for r in report.results]
    frame = spark.createDataFrame(rows, RESULTS.schema)
    version = int(report.run_at.replace(tzinfo=dt.UTC).timestamp() * 1000)
    idempotent_append(frame, settings, RESULTS, app_id=f"offsetlake-check:{settings.cluster_name}", version=version,
                      user_metadata=user_metadata)


def _json(value: Any) -> str:
    return json.dumps(value, default=str, sort_keys=True)


def violations(spark: SparkSession, rule: Rule, table: str, frames: Mapping[str, DataFrame],
               settings: Settings) -> DataFrame:
    """The rows an unexpected-rows rule selects, run directly in Spark without GX.

    For digging into a failure and for testing a rule's query on hand-built frames: ``frames``
    gives ``table`` and every table the rule needs, by name.
    """
    for name, frame in frames.items():
        frame.createOrReplaceTempView(view_name(name))
    query = rule.expectation(settings.quality).unexpected_rows_query
    return spark.sql(query.replace("{batch}", view_name(table)))
