"""bench/results.py: what a bench writes is what the benchmarks page reads, from a real (short) run of a bench."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from docs import generate

ROOT = Path(__file__).resolve().parents[2]


def test_a_short_run_of_a_bench_writes_its_figures_baseline_load_commit_date_and_last_line_which_the_page_shows(
        tmp_path: Path) -> None:
    # group_records is the bench without Spark or a broker: a real run in a few seconds with a small time budget.
    ran = subprocess.run([sys.executable, str(ROOT / "bench" / "group_records.py"), "--seconds", "0.05",
                          "--results", str(tmp_path)], capture_output=True, text=True, timeout=300, check=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    last_line = ran.stdout.strip().splitlines()[-1]
    result = json.loads((tmp_path / "group_records.json").read_text(encoding="utf-8"))

    assert result["bench"] == "group_records"
    assert result["line"] == last_line and last_line.startswith("group records: generated/table-driven speed-up")
    assert result["arguments"] == {"seconds": 0.05}
    assert set(result["figures"]["speed_up"]) == set(result["baseline"]["table_driven_us_per_record"]) \
        == {"small", "big", "kip848"}
    for case, speed_up in result["figures"]["speed_up"].items():
        generated_us = result["figures"]["generated_us_per_record"][case]
        table_us = result["baseline"]["table_driven_us_per_record"][case]
        assert abs(table_us / generated_us - speed_up) < 0.01 * speed_up + 0.01, case
    assert result["cpu_count"] == os.cpu_count()
    assert len(result["load_average_start"]) == len(result["load_average_end"]) == 3
    assert result["started"] <= result["date"] and result["date"].endswith("+00:00")
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT,
                          check=True).stdout.strip()
    assert result["commit"] == head

    page = generate.benchmarks_page(tmp_path)
    row = next(line for line in page.splitlines() if line.startswith("| `group_records` |"))
    assert f"`{last_line}`" in row and f"`{head}`" in row and f"| {os.cpu_count()} |" in row
    assert f"speed\\_up `{json.dumps(result['figures']['speed_up'])}`" in row
    assert " → ".join(" ".join(str(x) for x in result[k]) for k in ("load_average_start", "load_average_end")) in row
    listed = next(line for line in page.split("## The benches")[1].splitlines()
                  if line.startswith("| `bench/group_records.py` |"))
    assert listed.endswith(f"| above, {result['date']} |")
