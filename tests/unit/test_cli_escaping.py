"""Issue 20, finding 4: what the CLI prints of a run (its reasons, a failure's cause, summary.md, a
database's error message) reaches the terminal with its control characters shown, never sent.

The judge is the output's bytes: no C0 control but the line feeds between our lines, no DEL, no C1
control, no Unicode format or separator character; and the lines are the ones the CLI writes (a line
feed inside a reason does not start a line of its own). AWS is replaced by fakes that answer as
Step Functions and S3 would (``describe_execution``'s fields, ``get_object``'s body).
"""

from __future__ import annotations

import io
import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from cutover_prep.cli import deployed, remote
from cutover_prep.cli import main as cli

FAKE_VERDICT = "z\n  verdict: READY\x1b[8m"
DB_ERROR = 'relation "z\x1b[2J\x1b]0;owned\x07\u202e\x9b8m" does not exist\nverdict: READY'
SM_ARN = "arn:aws:states:eu-west-1:123456789012:stateMachine:CutoverPrep"
EXEC_ARN = "arn:aws:states:eu-west-1:123456789012:execution:CutoverPrep:r1"


def assert_terminal_safe(text: str) -> None:
    assert not [c for c in text if c != "\n" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Cs")], text


class FakeSfn:
    def __init__(self, desc: dict[str, Any]) -> None:
        self.desc = desc

    def describe_execution(self, executionArn: str) -> dict[str, Any]:  # noqa: N803 - boto's name
        return {"executionArn": executionArn, **self.desc}

    def start_execution(self, **_: Any) -> dict[str, Any]:
        return {"executionArn": EXEC_ARN}


class FakeS3:
    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files

    def get_object(self, Bucket: str, Key: str) -> dict[str, Any]:  # noqa: N803 - boto's names
        return {"Body": io.BytesIO(self.files[Key.rsplit("/", 1)[1]])}


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    clients: dict[str, Any] = {}

    class FakeAws:
        def __init__(self, region: str | None) -> None:
            pass

        def client(self, name: str) -> Any:
            return clients[name]

        def deployment(self, stack: str, state_machine_arn: str | None) -> remote.Deployment:
            return remote.Deployment(SM_ARN, "evidence-bucket", None)

        def run_reader(self, deployment: remote.Deployment) -> None:
            return None

    monkeypatch.setattr(deployed, "Aws", FakeAws)
    return clients


def test_status_shows_a_reason_with_a_line_feed_and_escapes_inside_its_own_line(aws, capsys) -> None:
    reasons = [f"segment {FAKE_VERDICT} not read", f"benchmark FAILED: {DB_ERROR}"]
    aws["stepfunctions"] = FakeSfn({"status": "SUCCEEDED",
                                    "output": json.dumps({"verdict": "NOT_READY", "reasons": reasons})})
    assert cli.main(["status", "r1"]) == 1
    out = capsys.readouterr().out
    assert_terminal_safe(out)
    lines = out.rstrip("\n").split("\n")
    assert lines[0] == "run r1: NOT_READY" and len(lines) == 1 + len(reasons)
    assert lines[1] == "  - segment z\\n  verdict: READY\\x1b[8m not read"


def test_status_of_a_failed_run_is_one_line_whatever_its_cause_holds(aws, capsys) -> None:
    aws["stepfunctions"] = FakeSfn({"status": "FAILED", "error": "DiscoveryFailed", "cause": DB_ERROR})
    assert cli.main(["status", "r1"]) == 3
    out = capsys.readouterr().out
    assert_terminal_safe(out)
    assert out.count("\n") == 1 and out.startswith("run r1: FAILED: DiscoveryFailed: relation \"z\\x1b[2J")


def test_report_prints_summary_md_without_its_control_characters(aws, capsys, tmp_path: Path) -> None:
    """summary.md as an older deployment wrote it: raw names in it."""
    summary = f"# Cutover Prep: NOT_READY — db\n\n- unit u1: {DB_ERROR}\n- {FAKE_VERDICT}\n".encode()
    aws["stepfunctions"] = FakeSfn({"status": "SUCCEEDED", "output": json.dumps({"verdict": "NOT_READY"})})
    aws["s3"] = FakeS3({"summary.md": summary, "findings.json": b"{}", "report.html": b"<html></html>"})
    assert cli.main(["report", "r1", "--out", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert_terminal_safe(out)
    assert_terminal_safe(err)
    assert "\\x1b[2J" in out and "\\u202e" in out


def test_a_local_run_that_fails_quotes_the_databases_error_in_one_safe_line(monkeypatch, capsys) -> None:
    from cutover_prep.local import runner

    def unreachable(_: Any) -> None:
        raise runner.TargetUnreachable(f"cannot read the catalogue: {DB_ERROR}")

    monkeypatch.setattr(runner, "run_local", unreachable)
    assert cli.main(["local", "--no-progress"]) == 3
    err = capsys.readouterr().err
    assert_terminal_safe(err)
    assert err.count("\n") == 1 and err.startswith("cutover-prep: cannot read the catalogue: relation")


def test_a_comparison_that_failed_is_one_safe_line(monkeypatch, capsys, tmp_path: Path) -> None:
    import boto3

    class Session:
        def __init__(self, **_: Any) -> None:
            pass

        def client(self, name: str) -> Any:
            assert name == "stepfunctions"
            return FakeSfn({"status": "FAILED", "error": "States.TaskFailed", "cause": DB_ERROR})

    monkeypatch.setattr(boto3, "Session", Session)
    path = tmp_path / "compare.json"  # the example input of docs/compare.md
    docs = (Path(__file__).resolve().parents[2] / "docs" / "compare.md").read_text()
    path.write_text(docs.split("An example", 1)[1].split("```json", 1)[1].split("```", 1)[0])
    code = cli.main(["compare", "--input", str(path), "--wait", "--poll", "0.1", "--state-machine-arn",
                     SM_ARN.replace("CutoverPrep", "CutoverPrepCompare")])
    out, err = capsys.readouterr()
    assert code == 3, err
    assert_terminal_safe(out)
    assert out.count("\n") == 1 and "States.TaskFailed: relation" in out, out


def test_the_local_comparisons_summary_escapes_a_runs_failure() -> None:
    from cutover_prep.comparison.model import Cleanup, ComparisonResult, ConfigurationResult, Recommendation
    from cutover_prep.local.compare import summary

    document = ComparisonResult.model_construct(  # the prices and the cost: not what the summary says
        comparison_id="cmp1", cleanup=Cleanup(),
        configurations=[ConfigurationResult(name="a", status="FAILED", why=f"the run failed: {DB_ERROR}")],
        recommendation=Recommendation(name=None, why=f"none measured: {FAKE_VERDICT}"))
    text = summary(document, Path("out"))
    assert_terminal_safe(text)
    assert len(text.split("\n")) == 5  # the comparison, one configuration, the recommendation, cleanup, evidence


def test_analyze_shows_a_points_files_ids_inside_their_own_lines(tmp_path: Path, capsys) -> None:
    """The same fault in a file the user hands over: a points CSV (perhaps exported from the database)."""
    path = tmp_path / "points.csv"
    path.write_text(f'io_size_kb,iops,throughput_kbps,point_id\n8,1000,8000,"a\x1b]0;owned\x07\u202eb"\n'
                    f'64,500,32000,"{FAKE_VERDICT}"\n')
    assert cli.main(["analyze", "--points", str(path)]) == 0
    out = capsys.readouterr().out  # not a terminal: click itself strips CSI sequences (ESC [), not OSC or bidi
    assert_terminal_safe(out)
    rows = [line for line in out.split("\n") if line.startswith(("a\\x1b]0;owned\\x07\\u202eb ",
                                                                   "z\\n  verdict: READY\\x1b[8m "))]
    assert len(rows) == 2 and not [line for line in out.split("\n") if line.lstrip().startswith("verdict:")]
