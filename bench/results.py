"""Each bench's result as JSON under ``bench/results/<bench>.json``: its figures beside the baseline measured in the
same run, the load average at its start and at its end, the machine's CPU count, the commit, the date (UTC) and the
line the bench ends with (figures live there and in CHANGELOG.md, never in code).

A bench calls ``start`` before it measures anything (the load average then is the machine it started on) and
``write_result`` once it has its figures, then prints the result's ``line`` as its last line."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def _load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Run:
    """A bench's run as it started: its name, its arguments, the load average, the time (UTC) and the commit then
    (the code it measures: a commit made while it runs is not that), and where its result goes."""

    bench: str
    arguments: dict[str, Any]
    load_average_start: list[float]
    started: str
    commit: str | None
    results: Path


def add_results_argument(parser: argparse.ArgumentParser) -> None:
    """``--results DIR``: where the bench writes its JSON (a tiny run that must not replace a real result)."""
    parser.add_argument("--results", type=Path, default=RESULTS,
                        help="directory the result's JSON is written to (default bench/results)")


def start(bench: str, args: argparse.Namespace) -> Run:
    """The run of ``bench`` with ``args`` (``--results`` is where it writes, not an argument of the measure)."""
    arguments = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if k != "results"}
    return Run(bench, arguments, _load_average(), _now(), _commit(Path(__file__).parent),
               getattr(args, "results", None) or RESULTS)


def _commit(at: Path) -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=at,
                              check=True).stdout.strip() or None
    except (OSError, subprocess.CalledProcessError):
        return None


def write_result(run: Run, figures: dict[str, Any], baseline: dict[str, Any] | None, line: str) -> Path:
    """Write ``run``'s ``figures``, its ``baseline`` (measured in the same run; None when the bench compares
    with none) and its last ``line`` as ``<results>/<bench>.json``; return its path."""
    run.results.mkdir(parents=True, exist_ok=True)
    path = run.results / f"{run.bench}.json"
    path.write_text(json.dumps({
        "bench": run.bench, "date": _now(), "started": run.started, "commit": run.commit,
        "cpu_count": os.cpu_count(), "load_average_start": run.load_average_start,
        "load_average_end": _load_average(), "arguments": run.arguments, "figures": figures, "baseline": baseline,
        "line": line,
    }, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path
