"""``cutover-prep analyze``: a good CSV gives the analysis; bad input is one line and exit code 2."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import cutover_prep.cli.main as cli_module
from cutover_prep.cli.analyze import analyze, read_points

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SEED000 = EXAMPLES / "points-seed000.csv"
IO1_ARGS = ["--instance-class", "db.m4.4xlarge", "--storage", "io1", "--allocated-gb", "100", "--iops", "1000",
            "--engine", "oracle"]


def run(args: list[str]):
    return CliRunner().invoke(analyze, args)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "points.csv"
    path.write_text(text)
    return path


def one_line_error(result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("cutover-prep: ")
    assert "Traceback" not in result.stderr and result.stdout == ""
    return lines[0]


def test_seed000_example_as_json():
    result = run(["--points", str(SEED000), *IO1_ARGS, "--json"])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert [p["bound"] for p in doc["points"]] == ["iops"] * 3 + ["throughput"] * 5
    assert [p["io_size_kb"] for p in doc["points"]][:4] == [8, 16, 32, 64]
    assert [p["effective_io_kb"] for p in doc["points"]][-1] == 128.0  # 1 MB requested, 128 KB physical
    assert doc["crossover_kb"] == 64
    assert doc["crossover_theoretical_kb"] == 256.0
    assert doc["limits"]["instance_class"] == "db.m4.4xlarge"
    assert doc["limits"]["effective"]["throughput_kbps"] == 256000.0
    assert "250 MiB/s (db.m4.4xlarge)" in doc["conclusions"][0]
    for key in ("measured", "burst", "cold_warm", "crossover", "rules"):
        assert key in doc


def test_text_output_has_table_and_conclusions():
    result = run(["--points", str(SEED000), *IO1_ARGS])
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "mbrc-128" in out and "throughput" in out
    assert "crossover: 64 KiB measured, 256 KiB from the limits" in out
    assert "conclusions:" in out and "  - Reads of 64 KiB and larger" in out
    # issue 16: KiB/MiB, as the values are (the CSV's kbps are KiB/s); no bare KB or MB in the terminal
    assert "req KiB" in out and "MiB/s" in out
    assert not re.search(r"\b(KB|MB)\b", out), out


def test_without_limits_judges_the_shape():
    result = run(["--points", str(SEED000), "--json"])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["limits"] is None and doc["crossover_kb"] == 64
    assert {p["bound_basis"] for p in doc["points"]} == {"shape"}


def test_optional_columns_and_empty_cells(tmp_path):
    path = write(tmp_path, "\ufeffio_size_kb,iops,throughput_kbps,kind,sessions,latency_p99_us,burst_balance\n"
                           "8,2950,23600,random,16,9000,62\n8,2900,23200,random,8,,\n")
    points = read_points(path)
    assert points[0] == {"io_size_kb": 8.0, "iops": 2950.0, "throughput_kbps": 23600.0, "kind": "random",
                         "sessions": 16, "latency_p99_us": 9000.0, "burst_balance": 62.0}
    assert "latency_p99_us" not in points[1]
    result = run(["--points", str(path), "--instance-class", "db.m5.xlarge", "--storage", "gp2",
                  "--allocated-gb", "200", "--json"])
    doc = json.loads(result.stdout)
    assert doc["points"][0]["latency_us"] == {"p99": 9000.0}
    assert doc["conclusions"][0].startswith("Single-block reads reach 2,950 IOPS, 98 % of the gp2 burst limit")


@pytest.mark.parametrize(("text", "words"), [
    ("", "the file is empty"),
    ("io_size_kb,iops\n8,100\n", "missing column(s) throughput_kbps"),
    ("io_size_kb,iops,throughput_kbps\n", "no data rows"),
    ("io_size_kb,iops,throughput_kbps\n8,abc,800\n", "line 2, column iops: 'abc' is not a number"),
    ("io_size_kb,iops,throughput_kbps\n8,100,800\n8,-5,800\n", "line 3, column iops: -5 must be greater than 0"),
    ("io_size_kb,iops,throughput_kbps\n8,,800\n", "line 2, column iops: the value is empty"),
    ("io_size_kb,iops,throughput_kbps,burst_balance\n8,100,800,120\n", "burst_balance: 120 is a percentage"),
    ("io_size_kb,iops,throughput_kbps,kind\n8,100,800,scan\n", "column kind: 'scan' is not one of"),
    ("io_size_kb,iops,throughput_kb\n8,100,800\n", "missing column(s) throughput_kbps"),
    ("io_size_kb,iops,throughput_kbps,colour\n8,100,800,red\n", "unknown column(s) colour"),
    ("io_size_kb,iops,throughput_kbps\n8,100\n", "line 2 has 2 value(s) for 3 column(s)"),
    ("io_size_kb,iops,throughput_kbps,sessions\n8,100,800,1.5\n", "sessions: 1.5 must be a whole number"),
    ("io_size_kb,iops,throughput_kbps\n8,nan,800\n", "'nan' is not a finite number"),
])
def test_bad_csv_is_one_line_and_exit_2(tmp_path, text, words):
    path = write(tmp_path, text)
    line = one_line_error(run(["--points", str(path)]))
    assert str(path) in line
    assert words in line


def test_missing_file_is_one_line(tmp_path):
    line = one_line_error(run(["--points", str(tmp_path / "nope.csv")]))
    assert "nope.csv: cannot be read" in line


def test_unknown_instance_class_is_one_line():
    line = one_line_error(run(["--points", str(SEED000), "--instance-class", "db.m4.xlarg", "--storage", "gp2",
                               "--allocated-gb", "100"]))
    assert "unknown DB instance class 'db.m4.xlarg'" in line and "did you mean db.m4.xlarge" in line


@pytest.mark.parametrize(("args", "words"), [
    (["--instance-class", "db.m5.large"], "--storage, --allocated-gb missing"),
    (["--iops", "1000"], "--iops and --throughput need"),
    (["--instance-class", "db.m5.large", "--storage", "io1", "--allocated-gb", "100"], "IOPS is required"),
    # issue 16: gp2 has no provisioned IOPS; RDS sets StorageThroughput on gp3 only
    (["--instance-class", "db.m5.large", "--storage", "gp2", "--allocated-gb", "100", "--iops", "3000"],
     "--iops: gp2 storage has no provisioned IOPS"),
    (["--instance-class", "db.m5.large", "--storage", "io1", "--allocated-gb", "100", "--iops", "3000",
      "--throughput", "300"], "--throughput: io1 storage has no provisioned throughput"),
])
def test_incomplete_limits_options_are_one_line(args, words):
    assert words in one_line_error(run(["--points", str(SEED000), *args]))


def test_through_the_cutover_prep_entry_point(monkeypatch, capsys):
    group = click.Group("cutover-prep")
    group.add_command(analyze)
    monkeypatch.setattr(cli_module, "app", group)
    assert cli_module.main(["analyze", "--points", str(SEED000), "--allocated-gb", "many"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cutover-prep: ") and "--allocated-gb" in err[0]
    assert cli_module.main(["analyze", "--points", str(SEED000), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["crossover_kb"] == 64


def test_seed000_gp2_example_switches_at_32_kb():
    result = run(["--points", str(EXAMPLES / "points-seed000-gp2.csv"), "--instance-class", "db.m4.4xlarge",
                  "--storage", "gp2", "--allocated-gb", "100", "--engine", "oracle", "--json"])
    doc = json.loads(result.stdout)
    assert [p["bound"] for p in doc["points"]] == ["iops", "iops", "throughput", "throughput", "throughput"]
    assert doc["crossover_kb"] == 32 and doc["crossover_theoretical_kb"] == 256.0
    assert "gp2 throughput of 75 MiB/s" in doc["conclusions"][0]


@pytest.mark.parametrize("engine", ["oracle-ee", "oracle-se2-cdb", "ORACLE"])
def test_engine_takes_the_names_rds_reports(engine):
    """`--engine oracle-ee` was refused; DescribeDBInstances reports oracle-ee, not oracle."""
    args = ["--points", str(SEED000), "--instance-class", "db.m4.4xlarge", "--storage", "gp3",
            "--allocated-gb", "300", "--json"]
    as_family = json.loads(run([*args, "--engine", "oracle"]).stdout)
    result = run([*args, "--engine", engine])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["limits"] == as_family["limits"]


def test_an_unknown_engine_is_one_line_naming_the_accepted_ones(capsys):
    assert cli_module.main(["analyze", "--points", str(SEED000), "--engine", "db2"]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "unknown engine 'db2'" in line and "oracle-se2-cdb" in line and "mariadb" in line


def test_version(capsys):
    assert cli_module.main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("cutover-prep ")


def test_a_semicolon_delimited_csv_is_read_as_such(tmp_path):
    """issue 16: a spreadsheet's semicolon CSV was reported as 'missing column(s)'; now it is read."""
    comma = read_points(SEED000)
    semi = write(tmp_path, SEED000.read_text().replace(",", ";"))
    assert read_points(semi) == comma
    tabbed = write(tmp_path, SEED000.read_text().replace(",", "\t"))
    assert read_points(tabbed) == comma
    result = run(["--points", str(semi), *IO1_ARGS, "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["crossover_kb"] == 64


@pytest.mark.parametrize(("text", "words"), [
    ("io_size_kb;iops\n8;100\n", "missing column(s) throughput_kbps"),  # a real missing column, semicolons
    ("io_size_kb;iops;throughput_kbps\n8;100,5;800\n", "'100,5' has a decimal comma; write 100.5"),
])
def test_semicolon_csv_problems_are_named(tmp_path, text, words):
    assert words in one_line_error(run(["--points", str(write(tmp_path, text))]))


def test_point_ids_are_not_cut_short(tmp_path):
    long_id = "seq-mbrc-128-sessions-16-direct-path"
    path = write(tmp_path, f"io_size_kb,iops,throughput_kbps,point_id\n8,100,800,{long_id}\n16,100,1600,b\n")
    result = run(["--points", str(path)])
    assert result.exit_code == 0 and f"{long_id} " in result.stdout
