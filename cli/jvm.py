"""``offsetlake jvm resolve``: fetch the JVM jars from Maven Central into .jvm/ (idempotent)."""

from __future__ import annotations

import argparse
import sys
import time

from cli.errors import reported_as_command_errors
from jvm.artifacts import ARTIFACT_SETS


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "jvm", help="resolve the JVM artifacts (Delta, Spark's Kafka source, the Kafka broker, HDFS, Kafka Streams)",
        description="Resolve JVM artifacts from Maven Central into the project's .jvm/ cache. "
                    "A second run downloads nothing.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    resolve = actions.add_parser("resolve", help="copy every artifact set's runtime jars into .jvm/")
    resolve.add_argument("--set", choices=list(ARTIFACT_SETS), action="append",
                         help="only this artifact set (repeatable; default: all)")
    resolve.set_defaults(run=run_resolve)


def run_resolve(args: argparse.Namespace) -> int:
    from jvm.artifacts import build_offset_commit_udf, resolve

    with reported_as_command_errors():
        for name in args.set or list(ARTIFACT_SETS):
            started = time.monotonic()
            print(f"jvm: resolving '{name}' ...", file=sys.stderr, flush=True)
            target, ran = resolve(name)
            jars = target.jars()
            what = "resolved" if ran else "already resolved, nothing downloaded"
            print(f"jvm: {name}: {len(jars)} jars in {target.libs_dir} ({what}, {time.monotonic() - started:.1f}s)")
        if not args.set or "spark" in args.set:
            started = time.monotonic()
            print("jvm: building the offset-commit UDF (Kafka's generated classes, shaded) ...", file=sys.stderr,
                  flush=True)
            jar, how = build_offset_commit_udf()
            what = {"built": "built", "copied": "copied from this user's cache of built jars",
                    "current": "up to date, nothing built"}[how]
            print(f"jvm: offset-commit UDF: {jar} ({what}, {time.monotonic() - started:.1f}s)")
    return 0
