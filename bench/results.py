"""Each bench's result as JSON under ``bench/results/<bench>.json``: its figures beside the baseline measured in the
same run, the load average, the commit and the date (figures live there and in CHANGELOG.md, never in code)."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def write_result(bench: str, figures: dict[str, Any], arguments: dict[str, Any]) -> Path:
    """Write ``figures`` (and the run's ``arguments``) as ``bench/results/<bench>.json``; return its path."""
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=RESULTS.parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = None
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{bench}.json"
    path.write_text(json.dumps({
        "bench": bench, "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "commit": commit,
        "load_average": [round(x, 2) for x in os.getloadavg()], "arguments": arguments, "figures": figures,
    }, indent=2, sort_keys=True) + "\n")
    return path
