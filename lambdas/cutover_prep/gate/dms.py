"""The gate's AWS DMS condition: the task that carries the last writes has caught up.

Open when, all at once (AWS DMS user guide, "Monitoring AWS DMS tasks":
https://docs.aws.amazon.com/dms/latest/userguide/CHAP_Monitoring.html, and the API reference of
DescribeReplicationTasks / DescribeTableStatistics):
- the task is ``running`` (``ReplicationTask.Status``) and, for a task with a full load, the full load is
  complete (``ReplicationTaskStats.FullLoadProgressPercent`` 100, no table loading, queued or errored);
- ``CDCLatencySource`` and ``CDCLatencyTarget`` (CloudWatch ``AWS/DMS``, seconds, dimensions
  ``ReplicationInstanceIdentifier`` and ``ReplicationTaskIdentifier`` — the task's resource id, the last
  field of its ARN) stayed under the threshold for the whole window: every datapoint of the window, and
  datapoints that cover it (a window with no datapoint is unknown, never open);
- with validation required, no table reports failed or suspended records
  (``ValidationFailedRecords``/``ValidationSuspendedRecords``; ``ValidationState`` not Failed/Error/Mismatched).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from pydantic import BaseModel, ConfigDict, Field

from cutover_prep.gate.model import Condition, DmsSpec, aws_problem

LATENCY_METRICS = ("CDCLatencySource", "CDCLatencyTarget")
BAD_VALIDATION_STATES = {"failed", "error", "mismatched records", "suspended records", "table error"}
TABLE_COUNTS = (("TablesLoading", "loading"), ("TablesQueued", "queued"), ("TablesErrored", "errored"))


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class TaskStats(_Answer):
    """``ReplicationTaskStats``: how far the full load is. Its members in the API's order, as botocore gives
    them: the condition's evidence is what DMS said (``evidence``)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    full_load_percent: int | None = Field(None, alias="FullLoadProgressPercent")
    elapsed_ms: int | None = Field(None, alias="ElapsedTimeMillis")
    tables_loaded: int | None = Field(None, alias="TablesLoaded")
    tables_loading: int | None = Field(None, alias="TablesLoading")
    tables_queued: int | None = Field(None, alias="TablesQueued")
    tables_errored: int | None = Field(None, alias="TablesErrored")
    fresh_start: datetime | None = Field(None, alias="FreshStartDate")
    start: datetime | None = Field(None, alias="StartDate")
    stop: datetime | None = Field(None, alias="StopDate")
    full_load_start: datetime | None = Field(None, alias="FullLoadStartDate")
    full_load_finish: datetime | None = Field(None, alias="FullLoadFinishDate")

    def evidence(self) -> dict[str, int | datetime | None]:
        """The members DMS gave, by its names."""
        return self.model_dump(by_alias=True, exclude_unset=True)


class ReplicationTask(_Answer):
    """A DescribeReplicationTasks entry."""

    identifier: str | None = Field(None, alias="ReplicationTaskIdentifier")
    status: str | None = Field(None, alias="Status")
    migration_type: str | None = Field(None, alias="MigrationType")
    instance_arn: str = Field(alias="ReplicationInstanceArn")
    stats: TaskStats = Field(TaskStats(), alias="ReplicationTaskStats")


class TableStatistics(_Answer):
    """A DescribeTableStatistics entry: its validation."""

    schema_name: str | None = Field(None, alias="SchemaName")
    table_name: str | None = Field(None, alias="TableName")
    failed: int | None = Field(None, alias="ValidationFailedRecords")
    suspended: int | None = Field(None, alias="ValidationSuspendedRecords")
    state: str | None = Field(None, alias="ValidationState")


def _task(dms: Any, arn: str) -> ReplicationTask | None:
    tasks = dms.describe_replication_tasks(Filters=[{"Name": "replication-task-arn", "Values": [arn]}],
                                           WithoutSettings=True)["ReplicationTasks"]
    return ReplicationTask.model_validate(tasks[0]) if tasks else None


def _instance_identifier(dms: Any, instance_arn: str) -> str | None:
    found = dms.describe_replication_instances(
        Filters=[{"Name": "replication-instance-arn", "Values": [instance_arn]}])["ReplicationInstances"]
    return found[0]["ReplicationInstanceIdentifier"] if found else None


def load_problems(task: ReplicationTask) -> list[str]:
    """What keeps the task from being a caught-up CDC task, from DescribeReplicationTasks."""
    problems = []
    if task.status != "running":
        problems.append(f"task status {task.status!r} (not running)")
    if task.migration_type == "full-load":
        problems.append("a full-load-only task carries no ongoing changes (MigrationType full-load)")
    stats = task.stats
    if task.migration_type != "cdc":
        pct = stats.full_load_percent
        if pct is not None and pct < 100:
            problems.append(f"full load {pct} % complete")
        counts = (stats.tables_loading, stats.tables_queued, stats.tables_errored)
        left = [(n, what) for n, (_, what) in zip(counts, TABLE_COUNTS, strict=True) if n]
        if left:
            problems.append(", ".join(f"{n} {what}" for n, what in left) + " table(s)")
    return problems


def latency_window(cloudwatch: Any, instance_id: str, task_resource_id: str, *, window_s: int,
                   now: datetime) -> dict[str, list[float]]:
    """Each latency metric's one-minute maxima over the window (oldest first)."""
    out: dict[str, list[float]] = {}
    for metric in LATENCY_METRICS:
        points = cloudwatch.get_metric_statistics(
            Namespace="AWS/DMS", MetricName=metric,
            Dimensions=[{"Name": "ReplicationInstanceIdentifier", "Value": instance_id},
                        {"Name": "ReplicationTaskIdentifier", "Value": task_resource_id}],
            StartTime=now - timedelta(seconds=window_s), EndTime=now, Period=60, Statistics=["Maximum"],
        )["Datapoints"]
        out[metric] = [float(p["Maximum"]) for p in sorted(points, key=lambda p: p["Timestamp"])]
    return out


def latency_problems(latency: dict[str, list[float]], spec: DmsSpec) -> tuple[list[str], list[str]]:
    """(closed reasons, unknown reasons) of the latency over the window."""
    closed, unknown = [], []
    minutes = spec.window_seconds // 60
    for metric, values in latency.items():
        if not values:
            unknown.append(f"{metric}: no datapoint in the last {minutes} min")
        elif (worst := max(values)) > spec.max_latency_seconds:
            closed.append(f"{metric} up to {worst:g} s in the last {minutes} min (threshold "
                          f"{spec.max_latency_seconds:g} s)")
        elif len(values) < max(1, minutes // 2):  # too few points to cover the window
            unknown.append(f"{metric}: {len(values)} datapoint(s) in {minutes} min, too few to cover the window")
    return closed, unknown


def validation_problems(tables: list[TableStatistics]) -> list[str]:
    bad = []
    for t in tables:
        failed, suspended = int(t.failed or 0), int(t.suspended or 0)
        state = str(t.state or "")
        if failed or suspended or state.lower() in BAD_VALIDATION_STATES:
            bad.append(f"{t.schema_name}.{t.table_name}: {state or 'validation'} "
                       f"({failed} failed, {suspended} suspended)")
    return bad


def dms_condition(dms: Any, cloudwatch: Any, spec: DmsSpec, *, now: datetime | None = None) -> Condition:
    now = now or datetime.now(UTC)
    try:
        task = _task(dms, spec.task_arn)
        if task is None:
            return Condition(name="dms", state="unknown", summary=f"DMS task {spec.task_arn} not found")
        instance_id = _instance_identifier(dms, task.instance_arn)
        latency = latency_window(cloudwatch, instance_id or "", spec.task_arn.rsplit(":", 1)[-1],
                                 window_s=spec.window_seconds, now=now)
        tables = [TableStatistics.model_validate(t) for t in dms.describe_table_statistics(
            ReplicationTaskArn=spec.task_arn)["TableStatistics"]] if spec.require_validation else []
    except (ClientError, BotoCoreError) as exc:
        return Condition(name="dms", state="unknown", summary=f"DMS/CloudWatch could not be read: {aws_problem(exc)}")
    closed = load_problems(task)
    late, unknown = latency_problems(latency, spec)
    closed += late
    if spec.require_validation:
        if bad := validation_problems(tables):
            closed.append(f"validation: {len(bad)} table(s) with failed or suspended records: " + "; ".join(bad[:3]))
        elif not tables:
            unknown.append("validation: the task reports no table statistics")
    evidence = {"task": task.identifier, "status": task.status,
                "migration_type": task.migration_type, "stats": task.stats.evidence(),
                "latency_seconds": latency, "window_seconds": spec.window_seconds,
                "max_latency_seconds": spec.max_latency_seconds, "tables": len(tables)}
    name = task.identifier or spec.task_arn
    for state, problems in (("closed", closed), ("unknown", unknown)):
        if problems:
            return Condition(name="dms", state=state, evidence=evidence,
                             summary=f"DMS task {name}: " + "; ".join(problems))
    worst = max((max(v) for v in latency.values() if v), default=0.0)
    return Condition(name="dms", state="open", evidence=evidence,
                     summary=f"DMS task {name} running, full load complete, CDC latency ≤ {worst:g} s for "
                             f"{spec.window_seconds // 60} min"
                             + (", validation clean" if spec.require_validation else ""))
