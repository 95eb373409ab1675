"""`cutover-prep validate --input FILE|-`: the workflow's own input check, offline; and the loose inputs
of issue 11 (finding 7) through the command line: exit 2, one line per field, never a traceback."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cutover_prep.cli.main import main

ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbC123"
ROOT = Path(__file__).resolve().parents[2]


def minimal(**sections: Any) -> dict[str, Any]:
    return {"target": {"db_instance_identifier": "prod-db-1", "secret_arn": ARN}, **sections}


def validate(tmp_path: Path, capsys: Any, data: Any) -> tuple[int, str, str]:
    path = tmp_path / "input.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    code = main(["validate", "--input", str(path)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_line_error(err: str) -> str:
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err[:2000]
    assert lines[0].startswith("cutover-prep: ")
    return lines[0]


def deep(levels: int) -> str:
    return '{"target": ' + "[" * levels + "]" * levels + "}"


LOOSE = [
    ({"benchmark": {"write_test": "yes"}}, "benchmark.write_test"),
    ({"benchmark": {"write_test": 1}}, "benchmark.write_test"),
    ({"warmup": {"create_extension": "on"}}, "warmup.create_extension"),
    ({"warmup": {"max_concurrency": True}}, "warmup.max_concurrency"),
    ({"warmup": {"include_schemas": ["s*"] * 20_000}}, "warmup.include_schemas"),
    ({"benchmark": {"sessions": [1] * 5000}}, "benchmark.sessions"),
    ({"restore": {"snapshot_identifier": ""}}, "restore.snapshot_identifier"),
    ({"restore": {"snapshot_identifier": "s", "tags": {f"k{i}": "v" for i in range(200)}}}, "restore.tags"),
    ({"restore": {"snapshot_identifier": "s", "tags": {"aws:x": "v"}}}, "restore.tags"),
    ({"run_id": "../../x"}, "run_id"),
]


@pytest.mark.parametrize(("extra", "field"), LOOSE, ids=[f for _, f in LOOSE])
def test_each_loose_input_is_one_line_naming_the_field(extra, field, tmp_path, capsys):
    code, out, err = validate(tmp_path, capsys, minimal(**extra))
    assert code == 2 and out == ""
    assert one_line_error(err).startswith(f"cutover-prep: {field}")


def test_a_huge_database_name_and_a_nul_byte_name_the_field(tmp_path, capsys):
    raw = minimal()
    raw["target"]["database"] = "d" * 100_000
    code, _, err = validate(tmp_path, capsys, raw)
    assert code == 2 and one_line_error(err).startswith("cutover-prep: target.database: ")
    assert len(err) < 300
    raw["target"]["database"] = "orders\x00; DROP"
    code, _, err = validate(tmp_path, capsys, raw)
    assert code == 2 and "target.database" in one_line_error(err) and "\x00" not in err


def test_one_line_per_wrong_field(tmp_path, capsys):
    raw = minimal(warmup={"max_concurrency": True, "create_extension": "on"}, benchmark={"write_test": 1})
    code, out, err = validate(tmp_path, capsys, raw)
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and "Traceback" not in err
    assert sorted(line.split(":")[1].strip() for line in lines) == [
        "benchmark.write_test", "warmup.create_extension", "warmup.max_concurrency"]
    assert all(line.startswith("cutover-prep: ") for line in lines)


@pytest.mark.parametrize("levels", [50, 100_000])
def test_deep_json_is_one_line(levels, tmp_path, capsys):
    code, _, err = validate(tmp_path, capsys, deep(levels))
    assert code == 2 and "nested" in one_line_error(err)


def test_not_json_and_no_file_are_one_line(tmp_path, capsys):
    code, _, err = validate(tmp_path, capsys, "{nope")
    assert code == 2 and "not JSON" in one_line_error(err)
    assert main(["validate", "--input", str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in one_line_error(capsys.readouterr().err)
    assert main(["validate"]) == 2  # --input is required
    assert "--input" in one_line_error(capsys.readouterr().err)


def test_a_good_input_is_exit_0_with_a_one_line_summary(tmp_path, capsys):
    raw = minimal(run_id="cut-1", warmup={"max_concurrency": 16}, benchmark={"write_test": True},
                  restore={"snapshot_identifier": "rds:prod-db-2026-11-20-03-10", "db_instance_class": "db.r6i.large"})
    raw["target"]["engine"] = "postgres"
    code, out, err = validate(tmp_path, capsys, raw)
    assert code == 0, err
    assert err == "" and len(out.strip().splitlines()) == 1
    for needle in ("prod-db-1", "engine postgres", "restore from snapshot rds:prod-db-2026-11-20-03-10",
                   "db.r6i.large", "max_concurrency 16", "benchmark on", "write test on", "run id cut-1"):
        assert needle in out, (needle, out)


def test_the_summary_of_a_minimal_input_and_what_is_not_checked_offline(tmp_path, capsys):
    code, out, _ = validate(tmp_path, capsys, minimal(benchmark={"enabled": False}))
    assert code == 0
    for needle in ("no restore", "max_concurrency 8", "benchmark off", "run id"):
        assert needle in out, (needle, out)
    assert "not checked" not in out
    raw = minimal(verdict={"baseline_run_id": "before"})
    raw["target"]["host"] = "proxy.internal"
    code, out, _ = validate(tmp_path, capsys, raw)
    assert code == 0 and len(out.strip().splitlines()) == 1
    assert "not checked offline" in out and "verdict.baseline_run_id" in out and "target.host" in out
    assert "allowed_db_hosts" in out


def test_stdin(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(minimal())))
    assert main(["validate", "--input", "-"]) == 0
    assert "prod-db-1" in capsys.readouterr().out
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(minimal(benchmark={"write_test": "yes"}))))
    assert main(["validate", "--input", "-"]) == 2
    assert one_line_error(capsys.readouterr().err).startswith("cutover-prep: benchmark.write_test: ")


def test_start_validates_before_any_aws_call(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "x")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    path = tmp_path / "in.json"
    path.write_text(json.dumps(minimal(benchmark={"write_test": "yes"})))
    assert main(["start", "--input", str(path)]) == 2
    assert "benchmark.write_test" in one_line_error(capsys.readouterr().err)
    path.write_text(deep(100_000))
    assert main(["start", "--input", str(path)]) == 2
    assert "nested" in one_line_error(capsys.readouterr().err)
    path.write_text(json.dumps(minimal()))
    assert main(["start", "--input", str(path), "--set", "warmup.priority=" + "[" * 100_000 + "]" * 100_000]) == 2
    assert "nested" in one_line_error(capsys.readouterr().err)


def test_validate_as_a_process_prints_no_traceback(tmp_path):
    path = tmp_path / "in.json"
    path.write_text(deep(200_000))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "lambdas")}
    proc = subprocess.run([sys.executable, "-m", "cutover_prep.cli.main", "validate", "--input", str(path)],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "nested" in one_line_error(proc.stderr)
    path.write_text(json.dumps(minimal()))
    proc = subprocess.run([sys.executable, "-m", "cutover_prep.cli.main", "validate", "--input", str(path)],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 0 and proc.stdout.startswith("valid:"), proc.stderr
