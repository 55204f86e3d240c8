"""cli/main.py: every misuse of the command line and every bad setting is one line on stderr and a usage exit
status, found before settings are read (for arguments) or anything is started or written (for settings).

In-process runs of ``main([...])`` for the many cases; real processes for what only a process shows (the
traceback that is not there, how long it takes, the environment the docs tell users to set).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import cli.settings_arg
from cli.main import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
SECRET = "hunter2-do-not-print"
SECTIONS = ("spark", "kafka", "lag", "gold", "maintenance", "quality", "sql_endpoint", "storage")


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty working directory, no OFFSETLAKE_* variable but a warehouse inside the directory; the test
    checks that the directory is still empty afterwards (no warehouse, no checkpoint, no broker data)."""
    for name in [n for n in os.environ if n.startswith("OFFSETLAKE_")]:
        monkeypatch.delenv(name)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("OFFSETLAKE_WAREHOUSE", str(work / "warehouse"))
    yield work


@pytest.fixture
def nothing_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if a command gets past parsing: reads its settings (which every subcommand does through
    cli.settings_arg before it starts Spark or a Kafka client), starts a broker or resolves JVM jars. Without
    the fix, ``kafka start --data x`` started a broker as ``--data-dir x``."""
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the command ran: the bad argument was not refused while parsing")

    monkeypatch.setattr(cli.settings_arg, "load_settings", refuse)
    monkeypatch.setattr("broker.embedded.EmbeddedBroker.start", refuse)
    monkeypatch.setattr("jvm.artifacts.resolve", refuse)
    monkeypatch.setattr("jvm.artifacts.build_offset_commit_udf", refuse)


def run_main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def one_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def every_parser() -> Iterator[tuple[list[str], argparse.ArgumentParser]]:
    """(command words, parser) of offsetlake, each subcommand and each action (jvm resolve, kafka start, ...)."""
    def walk(words: list[str], parser: argparse.ArgumentParser) -> Iterator[tuple[list[str], argparse.ArgumentParser]]:
        yield words, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from walk([*words, name], sub)

    yield from walk([], build_parser())


COMMANDS = [words for words, _ in every_parser()]


def test_every_subcommand_and_action_is_walked() -> None:
    # What the walk must find, so that the tests below over every parser cannot pass over none.
    assert {"run", "ingest", "sql", "jvm resolve", "kafka start", "kafka stop", "kafka status"} <= {
        " ".join(words) for words in COMMANDS}


@pytest.mark.parametrize(("words", "parser"), list(every_parser()), ids=lambda p: " ".join(p) if isinstance(
    p, list) else "")
def test_every_parser_refuses_abbreviations(words: list[str], parser: argparse.ArgumentParser) -> None:
    assert parser.allow_abbrev is False, " ".join(words)


@pytest.mark.parametrize("words", COMMANDS, ids=lambda words: " ".join(words) or "offsetlake")
def test_help_works_for_every_subcommand_and_action(words: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(capsys, *words, "--help")
    assert code == 0 and err == ""
    assert out.startswith(f"usage: {' '.join(['offsetlake', *words])}")


@pytest.mark.parametrize(("argv", "named"), [
    (["run", "--onc"], "offsetlake run: error: unrecognized arguments: --onc"),
    (["ingest", "--onc"], "offsetlake ingest: error: unrecognized arguments: --onc"),
    (["run", "--once", "--trigger", "1 second"], "offsetlake run: error: unrecognized arguments: --trigger"),
    (["sql", "--lim", "5", "SELECT 1"], "offsetlake sql: error: unrecognized arguments: --lim"),
    (["jvm", "resolve", "--se", "kafka"], "offsetlake jvm resolve: error: unrecognized arguments: --se kafka"),
    (["kafka", "start", "--data", "x"], "offsetlake kafka start: error: unrecognized arguments: --data x"),
    (["kafka", "stop", "--time", "5"], "offsetlake kafka stop: error: unrecognized arguments: --time 5"),
    (["--conf=x.toml", "sql", "SELECT 1"], "offsetlake: error: unrecognized arguments: --conf=x.toml"),
    (["check", "--no-such-flag"], "offsetlake check: error: unrecognized arguments: --no-such-flag"),
    (["gold", "extra"], "offsetlake gold: error: unrecognized arguments: extra"),
])
def test_an_abbreviated_or_unknown_option_is_a_one_line_usage_error_naming_it(
        argv: list[str], named: str, workdir: Path, nothing_runs: None,
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_main(capsys, *argv)
    assert code == 2 and out == ""
    line = one_line(err)
    assert line.startswith(named), line
    assert line.endswith(f"; see '{named.split(': error')[0]} --help'")
    assert list(workdir.iterdir()) == []


@pytest.mark.parametrize(("argv", "option", "expected"), [
    (["run", "--trigger-interval", "garbage"], "--trigger-interval", "is not a duration such as '30 seconds'"),
    (["ingest", "--trigger-interval", "30"], "--trigger-interval", "is not a duration"),
    (["ingest", "--trigger-interval", "30s"], "--trigger-interval", "is not a duration"),
    (["ingest", "--trigger-interval", "1 month"], "--trigger-interval", "is not a duration"),
    (["run", "--trigger-interval", "-2 seconds"], "--trigger-interval", "is not a duration"),
    (["run", "--snapshot-every", "-1"], "--snapshot-every", "is not a number of seconds >= 0"),
    (["run", "--snapshot-every", "nan"], "--snapshot-every", "is not a number of seconds >= 0"),
    (["run", "--snapshot-every", "soon"], "--snapshot-every", "is not a number of seconds >= 0"),
    (["run", "--max-offsets-per-trigger", "0"], "--max-offsets-per-trigger", "is not a whole number >= 1"),
    (["ingest", "--max-offsets-per-trigger", "lots"], "--max-offsets-per-trigger", "is not a whole number >= 1"),
    (["ingest", "--max-offsets-per-trigger", "1.5"], "--max-offsets-per-trigger", "is not a whole number >= 1"),
    (["snapshot-end-offsets", "--every", "0"], "--every", "is not a positive number of seconds"),
    (["snapshot-end-offsets", "--every", "inf"], "--every", "is not a positive number of seconds"),
    (["snapshot-end-offsets", "--every", "5", "--count", "0"], "--count", "is not a whole number >= 1"),
    (["sql", "--limit", "-1", "SELECT 1"], "--limit", "is not a whole number >= 0"),
    (["sql", "--limit", "ten", "SELECT 1"], "--limit", "is not a whole number >= 0"),
    (["coordinator-partition", "billing", "--partitions", "0"], "--partitions", "is not a whole number >= 1"),
    (["decode", "--topic", "t", "--max-records", "none"], "--max-records", "is not a whole number >= 1"),
    (["decode", "--topic", "t", "--bootstrap-servers", "localhost"], "--bootstrap-servers", "host:port"),
    (["simulate", "s.yaml", "--out", "o", "--bootstrap-servers", "a:1,b"], "--bootstrap-servers", "host:port"),
    (["simulate", "s.yaml", "--out", "o", "--kafka-version", "9.9"], "--kafka-version",
     "is not a Kafka version from 2.3 to 4.3"),
    (["validate", "s.yaml", "--kafka-version", "latest"], "--kafka-version", "is not a Kafka version"),
    (["demo", "--messages", "0"], "--messages", "is not a whole number >= 1"),
    (["kafka", "stop", "--timeout", "-5"], "--timeout", "is not a positive number of seconds"),
    (["serve-sql", "--port", "70000"], "--port", "is not a whole number from 1 to 65535"),
    (["serve-sql", "--port", "http"], "--port", "is not a whole number from 1 to 65535"),
    (["dashboard", "--serve", "--port", "70000"], "--port", "is not a whole number from 0 to 65535"),
    (["dashboard", "--out", "x.html", "--since", "yesterday"], "--since", "is not an ISO 8601 date or time"),
    (["dashboard", "--out", "x.html", "--engine", "duckdb"], "--engine", "invalid choice"),
    (["sql", "--format", "xml", "SELECT 1"], "--format", "invalid choice"),
    (["sql", "--engine", "duckdb", "SELECT 1"], "--engine", "invalid choice"),
    (["jvm", "resolve", "--set", "scala"], "--set", "invalid choice"),
])
def test_a_garbage_argument_value_is_refused_while_parsing_naming_the_value_and_what_is_expected(
        argv: list[str], option: str, expected: str, workdir: Path, nothing_runs: None,
        capsys: pytest.CaptureFixture[str]) -> None:
    value = argv[argv.index(option) + 1]
    code, out, err = run_main(capsys, *argv)
    assert code == 2 and out == ""
    line = one_line(err)
    assert f"argument {option}: " in line and repr(value) in line and expected in line, line
    assert list(workdir.iterdir()) == []


NOVEMBER_FIRST_MS = int(dt.datetime(2026, 11, 1, tzinfo=dt.UTC).timestamp()) * 1000


@pytest.mark.parametrize(("argv", "dest", "value"), [
    (["run"], "trigger_interval", "2 seconds"),
    (["ingest"], "trigger_interval", "30 seconds"),
    (["run", "--trigger-interval", "1 minute 30 seconds"], "trigger_interval", "1 minute 30 seconds"),
    (["ingest", "--trigger-interval", "500 milliseconds"], "trigger_interval", "500 milliseconds"),
    (["ingest", "--trigger-interval", "1.5 seconds"], "trigger_interval", "1.5 seconds"),
    (["run", "--snapshot-every", "0"], "snapshot_every", 0.0),
    (["sql", "--limit", "0", "SELECT 1"], "limit", 0),
    (["dashboard", "--serve", "--port", "0"], "port", 0),
    (["dashboard", "--out", "x.html", "--since", "2026-11-01"], "since", NOVEMBER_FIRST_MS),
    (["dashboard", "--out", "x.html", "--since", "2026-11-01T01:00:00+01:00"], "since", NOVEMBER_FIRST_MS),
    (["decode", "--topic", "t", "--bootstrap-servers", "a:9092,b:9093"], "bootstrap_servers", "a:9092,b:9093"),
    (["simulate", "s.yaml", "--out", "o", "--kafka-version", "3.9"], "kafka_version", "3.9"),
])
def test_good_argument_values_and_the_defaults_pass_the_checks(argv: list[str], dest: str, value: object) -> None:
    assert getattr(build_parser().parse_args(argv), dest) == value


def write_config(workdir: Path, text: str) -> Path:
    path = workdir.parent / "offsetlake.toml"
    path.write_text(text, encoding="utf-8")
    return path


# A command that reads its settings first and needs neither a JVM nor a broker.
SQL = ["sql", "--engine", "delta-rs", "SELECT 1 AS one"]


def test_a_misspelled_section_is_reported_with_the_section_names(workdir: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    config = write_config(workdir, '[sparkk]\nmaster = "local[2]"\n')
    code, out, err = run_main(capsys, "--config", str(config), *SQL)
    assert code == 2 and out == ""
    line = one_line(err)
    assert line.startswith(f"offsetlake: config error: setting sparkk = <hidden> (from {config}) is invalid: "
                           "expected a known section")
    assert all(section in line for section in SECTIONS) and "(did you mean spark?)" in line
    assert "top-level settings are cluster_name, warehouse" in line
    assert list(workdir.iterdir()) == []


@pytest.mark.parametrize(("config", "environ", "key"), [
    ('[kafka]\nsasl_pasword = "{secret}"\n', {}, "kafka.sasl_pasword"),
    ('sasl_password = "{secret}"\n', {}, "sasl_password"),
    ("[kafka]\nsasl_password = 123456789\n", {}, "kafka.sasl_password"),
    ('[kafka]\nlibrdkafka = "sasl.password={secret}"\n', {}, "kafka.librdkafka"),
    ('[kafak]\nsasl_password = "{secret}"\n', {}, "kafak"),
    ("", {"OFFSETLAKE_KAFKA__SASL_PASWORD": SECRET}, "kafka.sasl_pasword"),
    ("", {"OFFSETLAKE_KAFKA__LIBRDKAFKA": f"sasl.password {SECRET}"}, "kafka.librdkafka"),
    ("", {"OFFSETLAKE_SPARK__EXTRA_CONF": f"spark.hadoop.fs.s3a.secret.key:{SECRET}"}, "spark.extra_conf"),
])
def test_a_secret_in_a_bad_setting_is_hidden_from_the_error(config: str, environ: dict[str, str], key: str,
                                                            workdir: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--config", str(write_config(workdir, config.format(secret=SECRET)))] if config else []
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    code, out, err = run_main(capsys, *argv, *SQL)
    assert code == 2 and out == ""
    line = one_line(err)
    assert line.startswith(f"offsetlake: config error: setting {key} = <hidden> ")
    assert SECRET not in err and "123456789" not in err
    assert list(workdir.iterdir()) == []


@pytest.mark.parametrize(("environ", "expected"), [
    ({"OFFSETLAKE_KAFKA__SECURITY_PROTOCOL": "SASL_SSL", "OFFSETLAKE_KAFKA__SASL_MECHANISM": "PLAIN",
      "OFFSETLAKE_KAFKA__SASL_PASSWORD": SECRET},
     "setting kafka.sasl_username = None (from default) is invalid: expected a user name because sasl_mechanism "
     "is PLAIN"),
    ({"OFFSETLAKE_KAFKA__SECURITY_PROTOCOL": "SSL", "OFFSETLAKE_KAFKA__SSL_CA_LOCATION": "/no/such/ca.pem"},
     "setting kafka.ssl_ca_location = '/no/such/ca.pem' (from env OFFSETLAKE_KAFKA__SSL_CA_LOCATION) is invalid: "
     "expected an existing PEM file of CA certificates"),
])
def test_incomplete_sasl_or_ssl_settings_stop_the_command_before_it_starts(
        environ: dict[str, str], expected: str, workdir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    code, out, err = run_main(capsys, *SQL)
    assert code == 2 and out == ""
    assert one_line(err) == f"offsetlake: config error: {expected}"
    assert SECRET not in err
    assert list(workdir.iterdir()) == []


def offsetlake_process(args: list[str], environ: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``offsetlake ARGS`` as a user runs it: a new process, only PATH, HOME and ``environ`` set."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd), "PYTHONPATH": str(ROOT), **environ}
    return subprocess.run([sys.executable, "-m", "cli.main", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=60)


def test_a_garbage_trigger_interval_fails_in_a_real_process_at_once_without_a_traceback(tmp_path: Path) -> None:
    started = time.monotonic()
    result = offsetlake_process(["run", "--trigger-interval", "garbage"],
                                {"OFFSETLAKE_WAREHOUSE": str(tmp_path / "warehouse")}, tmp_path)
    # Seconds at most (Python's start and imports), where starting Spark takes tens of seconds.
    assert time.monotonic() - started < 10
    assert result.returncode == 2 and result.stdout == ""
    assert one_line(result.stderr).startswith(
        "offsetlake run: error: argument --trigger-interval: 'garbage' is not a duration such as '30 seconds'")
    assert list(tmp_path.iterdir()) == []


def test_a_misspelled_password_variable_is_hidden_in_a_real_process(tmp_path: Path) -> None:
    result = offsetlake_process(SQL, {"OFFSETLAKE_WAREHOUSE": str(tmp_path / "warehouse"),
                                      "OFFSETLAKE_KAFKA__SASL_PASWORD": SECRET}, tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert one_line(result.stderr).startswith(
        "offsetlake: config error: setting kafka.sasl_pasword = <hidden> (from env OFFSETLAKE_KAFKA__SASL_PASWORD) "
        "is invalid: expected one of ")
    assert SECRET not in result.stderr
    assert list(tmp_path.iterdir()) == []


def documented_variables(root: Path) -> dict[str, str]:
    """The OFFSETLAKE_* variables that are not settings which the README, the DAGs and set-up tell users to set
    (docs/operations.md "Deploying", dags/offsetlake_commands.py, dags/reference_validation.py, jvm/artifacts.py)."""
    return {
        "OFFSETLAKE_BIN": str(Path(sys.executable).parent / "offsetlake"),
        "OFFSETLAKE_SCENARIOS_DIR": str(ROOT / "conf" / "scenarios"),
        "OFFSETLAKE_VALIDATE_WAREHOUSE": str(root / "scratch"),
        "OFFSETLAKE_JVM_CACHE": str(ROOT / ".jvm"),
        "OFFSETLAKE_MAVEN_REPO": str(root / "m2"),
        "OFFSETLAKE_KAFKA_LIBS": str(root / "kafka-libs"),
    }


def test_the_cli_runs_with_the_variables_the_readme_tells_dag_users_to_set(tmp_path: Path) -> None:
    config = tmp_path / "offsetlake.toml"
    config.write_text(f'warehouse = "{tmp_path / "warehouse"}"\n', encoding="utf-8")
    environ = {**documented_variables(tmp_path), "OFFSETLAKE_CONFIG": str(config)}
    result = offsetlake_process(SQL, environ, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["one", "---", "1"]
    assert "config error" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["offsetlake.toml"]
