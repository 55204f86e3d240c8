"""``offsetlake validate SCENARIO ...``: check gold against the reference coordinator's timeline."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cli import argument_types
from cli.errors import CommandError, first_line, reported_as_command_errors
from cli.settings_arg import settings_from
from cli.writer_lease import writer_lease_held


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "validate", help="run reference-coordinator scenarios through the pipeline and compare gold with them",
        description=(
            "Run each scenario (YAML, see conf/scenarios/) through the reference group coordinator, produce "
            "all their records to one new topic (named --topic-prefix plus a run id; the scenarios' group names "
            "must be distinct), ingest that topic once into bronze and silver, refresh gold, and compare "
            "gold.group_generations, gold.group_membership, gold.partition_assignments, gold.group_state_history "
            "and gold.committed_offsets with each scenario's expected timeline (narrowed to what the records can "
            "show; see pipelines/validation.py). Differences are appended to gold.validation_diffs. Prints the "
            "number of differences per scenario and table; exits 1 if there is any difference, 0 otherwise. "
            "Kafka and the warehouse come from the settings; use a scratch warehouse, since the scenarios' "
            "groups are written into its tables."
        ),
    )
    parser.add_argument("scenarios", nargs="+", metavar="SCENARIO", help="scenario YAML file(s)")
    parser.add_argument("--topic-prefix", default="offsetlake-validate", metavar="P",
                        help="prefix of the topic the records are produced to (default offsetlake-validate)")
    parser.add_argument("--kafka-version", default="4.2", type=argument_types.kafka_version,
                        help="broker version whose record versions to write (default 4.2)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from coordinator import ScenarioError

    for scenario in args.scenarios:
        if not Path(scenario).is_file():
            raise CommandError(f"scenario file {scenario} does not exist")
    settings = settings_from(args)
    from pipelines.spark_session import build_spark_session
    from pipelines.validation import validate

    with writer_lease_held(settings, "validate"):
        spark = build_spark_session(settings)
        try:
            with reported_as_command_errors():
                report = validate(spark, settings, args.scenarios, topic_prefix=args.topic_prefix,
                                  kafka_version=args.kafka_version)
        except ScenarioError as exc:
            raise CommandError(f"invalid scenario: {exc}") from exc
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        except CommandError:
            raise
        except Exception as exc:  # noqa: BLE001 - Spark/Delta failures become one line
            raise CommandError(f"validation failed: {first_line(exc)}") from exc
        finally:
            spark.stop()
    return report_exit_code(report)


def report_exit_code(report) -> int:  # type: ignore[no-untyped-def]
    """Print the differences per scenario and table; 1 if there are any, else 0."""
    for (scenario, table), n in report.counts().items():
        print(f"{scenario}\t{table}\t{n}")
    total = len(report.diffs)
    verdict = "OK" if report.ok else f"{total} differences, see gold.validation_diffs run_id={report.run_id}"
    print(f"validate: {len(report.scenarios)} scenarios via topic {report.topic}: {verdict}", file=sys.stderr)
    return 0 if report.ok else 1
