"""RDS's own storage initialization progress (issue 13, section 3): sampling it (botocore Stubber for the
new DescribeDBInstances fields, which moto's own responses lack), the findings section, the verdict's
``require_storage_initialized``, Blue/Green detection and the report's chart or "not reported" line."""

from __future__ import annotations

import copy
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from pydantic import ValidationError

from cutover_prep.dal.records.findings_storage import StorageInitialization
from cutover_prep.dal.store import Store
from cutover_prep.models.thresholds import Thresholds
from cutover_prep.rds.answers import DbInstance
from cutover_prep.rds.instances import describe_instance
from cutover_prep.rds.progress import blue_green_of, progress_sentence, sample_storage_progress, storage_operation
from cutover_prep.report import render_report, summary_markdown
from cutover_prep.report.chart_set import build_charts
from cutover_prep.report.terminal import terminal_lines
from cutover_prep.verdict import NOT_READY, READY
from tests.unit.contexts import run_state, state_json
from tests.unit.stored_sections import coverage_series, initialized_pct_series, storage_initialization
from tests.unit.verdict_of_documents import decide

RUN = {"run_id": "r1", "target": {"db_instance_identifier": "restored-db"}}
TARGET = (RUN["run_id"], RUN["target"]["db_instance_identifier"])  # what sample_storage_progress takes
MIB = 2**20


def rds_client() -> Any:
    return boto3.client("rds", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")


def described(**fields: Any) -> dict[str, Any]:
    instance = {"DBInstanceIdentifier": "restored-db", "DBInstanceStatus": "available", "Engine": "postgres",
                "DBInstanceArn": "arn:aws:rds:us-east-1:123456789012:db:restored-db", **fields}
    return {"DBInstances": [instance]}


def test_the_pinned_botocore_knows_the_storage_progress_fields():
    members = rds_client().meta.service_model.shape_for("DBInstance").members
    assert members["StorageOperationStatus"].type_name == "string"
    assert members["StorageOperationPercentProgress"].type_name == "integer"


def test_a_sample_carries_what_describe_db_instances_said(store: Store):
    rds = rds_client()
    with Stubber(rds) as stub:
        stub.add_response("describe_db_instances", described(StorageOperationStatus="Initializing",
                                                             StorageOperationPercentProgress=40),
                          {"DBInstanceIdentifier": "restored-db"})
        stub.add_response("describe_db_instances", described(), {"DBInstanceIdentifier": "restored-db"})
        first = sample_storage_progress(*TARGET, rds=rds, store=store, step="WarmUnit")
        second = sample_storage_progress(*TARGET, rds=rds, store=store, step="Finalize")
        stub.assert_no_pending_responses()
    assert (first.status, first.percent, second.status, second.percent) == ("Initializing", 40, None, None)
    stored = store.storage_samples("r1")
    assert [(s.step, s.status, s.percent, s.gap) for s in stored] == [
        ("WarmUnit", "Initializing", 40, None), ("Finalize", None, None, None)]


@pytest.mark.parametrize("code", ["Throttling", "AccessDenied"])
def test_a_throttled_or_denied_describe_is_a_gap_not_a_failure(store: Store, code: str):
    rds = rds_client()
    with Stubber(rds) as stub:
        stub.add_client_error("describe_db_instances", service_error_code=code, http_status_code=400)
        sample = sample_storage_progress(*TARGET, rds=rds, store=store, step="CollectMetrics")
    assert sample.gap == code and sample.status is None
    assert store.storage_samples("r1")[0].gap == code


def test_concurrent_units_take_one_sample_per_interval(store: Store):
    rds = rds_client()
    with Stubber(rds) as stub:  # one response queued: a second Describe would fail the stub
        stub.add_response("describe_db_instances", described(StorageOperationStatus="Initializing",
                                                             StorageOperationPercentProgress=7))
        assert sample_storage_progress(*TARGET, rds=rds, store=store, step="WarmUnit", min_interval_seconds=60)
        assert sample_storage_progress(*TARGET, rds=rds, store=store, step="WarmUnit", min_interval_seconds=60) is None
    assert len(store.storage_samples("r1")) == 1
    later = (datetime.now(UTC) + timedelta(seconds=61)).isoformat(timespec="microseconds")
    assert store.claim_storage_sample("r1", later, 60) is True


def test_storage_operation_reads_only_the_documented_types():
    assert storage_operation(DbInstance.model_validate({})) == (None, None)
    assert storage_operation(DbInstance.model_validate({"StorageOperationStatus": "Optimizing",
                                            "StorageOperationPercentProgress": 12})) == (
        "Optimizing", 12)
    assert storage_operation(DbInstance.model_validate({"StorageOperationPercentProgress": True})) == (None, None)


# ---- findings ------------------------------------------------------------------------------------

def at(minute: float) -> str:
    return (datetime(2026, 11, 23, 10, 0, tzinfo=UTC) + timedelta(minutes=minute)).isoformat()


def sample(minute: float, status: str | None = None, percent: int | None = None, gap: str | None = None) -> dict:
    return {"at": at(minute), "step": "WarmUnit", "status": status, "percent": percent, "gap": gap}


def unit(*chunks: tuple[float, int]) -> dict:
    return {"chunks": [[at(m), mib * MIB, 1.0] for m, mib in chunks]}


def test_coverage_series_is_cumulative_and_capped():
    units = [unit((1, 30), (3, 30)), unit((2, 40), (4, 10))]
    assert [p["pct"] for p in coverage_series(units, 100 * MIB)] == [30.0, 70.0, 100.0, 100.0]
    many = [unit(*[(m / 10, 1) for m in range(500)])]
    thinned = coverage_series(many, 500 * MIB, max_points=50)
    assert len(thinned) == 50 and thinned[-1]["pct"] == 100.0 and thinned[0]["pct"] == 0.2
    assert coverage_series([], 10) == [] and coverage_series(units, 0) == []


def said(section: dict) -> str:
    """progress_sentence of a stored section, read as the findings' record."""
    return progress_sentence(StorageInitialization.model_validate(section))


def test_the_section_while_rds_still_initializes():
    samples = [sample(0), sample(1, "Initializing", 10), sample(5, gap="Throttling"), sample(9, "Initializing", 40)]
    section = storage_initialization(samples, [unit((2, 50), (8, 50))], 100 * MIB)
    assert section["reported"] is True and section["initialized_at_end"] is False
    assert section["last"] == {"at": at(9), "step": "WarmUnit", "status": "Initializing", "percent": 40}
    assert [p["pct"] for p in section["rds_initialized_pct"]] == [10.0, 40.0]
    assert [p["pct"] for p in section["blocks_read_pct"]] == [50.0, 100.0]
    assert section["gaps"]["count"] == 1 and "Throttling" in section["gaps"]["note"]
    assert [s.get("gap") for s in section["samples"]] == [None, None, "Throttling", None]
    assert said(section) == "RDS initialization progress: Initializing 40 % at the end of the run"


def test_fields_gone_after_initializing_mean_done_but_never_reported_means_not_reported():
    done = storage_initialization([sample(0, "Initializing", 90), sample(3)], [], 0)
    assert done["initialized_at_end"] is True and done["rds_initialized_pct"][-1]["pct"] == 100.0
    assert said(done).startswith("RDS initialization progress: done")
    silent = storage_initialization([sample(0), sample(3)], [], 0)
    assert silent["reported"] is False and silent["rds_initialized_pct"] == []
    assert said(silent) == "RDS initialization progress: not reported"
    assert initialized_pct_series([sample(0, "Optimizing", 50)]) == []  # a storage change is not initialization
    nothing = storage_initialization([sample(0, gap="AccessDenied")], [], 0)
    assert nothing["last"] is None and nothing["initialized_at_end"] is None
    assert "could not be read: AccessDenied" in said(nothing)
    assert progress_sentence(None) == "RDS initialization progress: not reported"


# ---- verdict -------------------------------------------------------------------------------------

READY_FINDINGS = {"units": {"total": 2, "done": 2, "failed": 0, "in_progress": 0, "not_started": 0},
                  "bytes": {"planned": 10}, "coverage_pct": 100.0}


def with_samples(*samples: dict) -> dict:
    return {**READY_FINDINGS, "storage_initialization": storage_initialization(list(samples), [], 10)}


def judged(findings: dict, **thresholds: Any) -> dict:
    return decide(findings, Thresholds(**thresholds), benchmark_requested=False)


def reason(result: dict, code: str) -> dict | None:
    return next((r for r in result["reasons"] if r["code"] == code), None)


def test_initializing_at_40_pct_is_not_ready_when_required():
    result = judged(with_samples(sample(0, "Initializing", 12), sample(5, "Initializing", 40)),
                    require_storage_initialized=True)
    assert result["verdict"] == NOT_READY
    failing = reason(result, "STORAGE_INITIALIZING")
    assert failing["ok"] is False and "Initializing 40 %" in failing["message"]
    assert "require_storage_initialized" in failing["message"]


def test_initializing_is_only_said_when_not_required():
    result = judged(with_samples(sample(5, "Initializing", 40)))
    assert result["verdict"] == READY and reason(result, "STORAGE_INITIALIZING") is None
    assert result["storage_initialization"] == "RDS initialization progress: Initializing 40 % at the end of the run"
    assert result["thresholds"]["require_storage_initialized"] is False


def test_absent_at_the_end_is_ready_when_required():
    for findings in (with_samples(sample(0, "Initializing", 99), sample(4)), with_samples(sample(4))):
        result = judged(findings, require_storage_initialized=True)
        assert result["verdict"] == READY and reason(result, "STORAGE_INITIALIZING")["ok"] is True


def test_no_answer_from_rds_is_missing_evidence_when_required():
    for findings in (with_samples(sample(1, gap="AccessDenied")), READY_FINDINGS):
        result = judged(findings, require_storage_initialized=True)
        assert result["verdict"] == NOT_READY
        assert "not known" in reason(result, "STORAGE_INITIALIZING")["message"]
    assert judged(READY_FINDINGS)["storage_initialization"] == "RDS initialization progress: not reported"


def test_require_storage_initialized_is_a_strict_bool():
    with pytest.raises(ValidationError):
        Thresholds(require_storage_initialized="yes")


# ---- Blue/Green ----------------------------------------------------------------------------------

def moto_instance(rds: Any, identifier: str) -> dict:
    return rds.create_db_instance(DBInstanceIdentifier=identifier, Engine="postgres", DBInstanceClass="db.m5.large",
                                  AllocatedStorage=20, MasterUsername="admin",
                                  MasterUserPassword="not-used-1")["DBInstance"]


def test_the_green_instance_of_a_blue_green_deployment_is_detected(store: Store):
    rds = boto3.client("rds", region_name="us-east-1")
    blue = moto_instance(rds, "orders")
    moto_instance(rds, "unrelated")
    deployment = rds.create_blue_green_deployment(BlueGreenDeploymentName="orders-upgrade",
                                                  Source=blue["DBInstanceArn"])["BlueGreenDeployment"]
    green = blue_green_of(rds, deployment["Target"])
    assert green["green"] is True and green["deployment_name"] == "orders-upgrade"
    assert green["source"] == blue["DBInstanceArn"]
    assert blue_green_of(rds, blue["DBInstanceArn"]) == {"checked": True, "green": False}
    section = storage_initialization([], [], 0, {"blue_green": green})
    assert "initializes the green storage itself" in section["blue_green"]["note"]


def test_describe_instance_samples_and_says_whether_it_is_green(store: Store):
    rds = boto3.client("rds", region_name="us-east-1")
    blue = moto_instance(rds, "orders")
    target = rds.create_blue_green_deployment(BlueGreenDeploymentName="bg", Source=blue["DBInstanceArn"])[
        "BlueGreenDeployment"]["Target"]
    green_id = target.rsplit(":", 1)[-1]
    run = state_json("r1", green_id, started_at=datetime.now(UTC).isoformat())
    facts = describe_instance(run_state(run), rds, store=store)
    assert facts["ready"] is True and facts["blue_green"]["green"] is True
    assert facts["db_instance_arn"] == target
    assert [(s.step, s.status) for s in store.storage_samples("r1")] == [("DescribeInstance", None)]


def test_blue_green_that_cannot_be_read_is_said_not_guessed():
    rds = rds_client()
    with Stubber(rds) as stub:
        stub.add_client_error("describe_blue_green_deployments", service_error_code="AccessDenied",
                              http_status_code=403)
        found = blue_green_of(rds, "arn:aws:rds:us-east-1:123456789012:db:x")
    assert found == {"checked": False, "error": "AccessDenied"}
    assert "not known (AccessDenied)" in storage_initialization([], [], 0, {"blue_green": found})["blue_green"]["note"]


# ---- report --------------------------------------------------------------------------------------

def report_findings(*samples: dict) -> dict:
    f = copy.deepcopy(READY_FINDINGS)
    f["storage_initialization"] = storage_initialization(list(samples), [unit((1, 4), (6, 6))], 10 * MIB)
    f["verdict"] = decide(f, benchmark_requested=False)
    return f


def test_the_chart_is_drawn_when_rds_reported_progress():
    f = report_findings(sample(0, "Initializing", 5), sample(4, "Initializing", 35), sample(8, "Initializing", 60))
    chart = build_charts(f)["chart-storage-init"]
    assert chart.svg is not None
    svg = str(chart.svg)
    assert "RDS: volume initialized %" in svg and "Cutover Prep: database blocks read %" in svg
    assert "<script" not in svg
    page = render_report(f)
    assert 'id="chart-storage-init"' in page
    assert re.search(r'id="rds-init">RDS initialization progress: Initializing 60 % at the end of the run<', page)
    assert "- RDS initialization progress: Initializing 60 % at the end of the run" in summary_markdown(f)
    assert "  RDS initialization progress: Initializing 60 % at the end of the run" in terminal_lines(f)


def test_not_reported_is_a_line_in_every_rendering_and_no_chart():
    f = report_findings(sample(0), sample(5))
    assert build_charts(f)["chart-storage-init"].svg is None
    page = render_report(f)
    assert 'id="chart-storage-init"' not in page
    assert 'id="rds-init">RDS initialization progress: not reported<' in page
    assert "- RDS initialization progress: not reported" in summary_markdown(f)
    assert "  RDS initialization progress: not reported" in terminal_lines(f)
    old = copy.deepcopy(READY_FINDINGS)  # findings written before the section existed
    assert "RDS initialization progress: not reported" in render_report(old)
