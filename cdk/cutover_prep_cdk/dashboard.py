"""The live view: one CloudWatch dashboard per stack, the run and the DB instance chosen in it.

Our metrics (namespace, names, dimensions: ``lambdas/cutover_prep/live/names.py``, read through the
catalogue; the functions emit them with Powertools Metrics) and the target's own AWS/RDS metrics side
by side. Two dashboard variables (property variables: they replace a dimension's value in every
widget): ``run`` (dimension ``run_id``, its choices from a metric search on ``BytesRead``) and
``instance`` (``DBInstanceIdentifier``, from a search on AWS/RDS ``ReadIOPS``). A run is not a
dashboard of its own.

- Bytes read: ``BytesRead`` (Sum a minute); chunks beside it.
- Read rate: metric math ``BytesRead / PERIOD(BytesRead)`` in MiB/s, with RDS's ``ReadThroughput``.
- ETA: metric math ``FILL(BytesRemaining, REPEAT) / rate``: what the last WarmUnit invocation found left
  to read over the rate of the last 5 minutes, in minutes. No ETA metric is emitted (no function holds
  the run's progress samples while it runs); this is the measured rate of the moment, not a forecast.
- Units done / failed, RDS's ``StorageOperationPercentProgress`` (our sampler's, 0-100).
- AWS/RDS ReadIOPS, ReadThroughput, ReadLatency, DiskQueueDepth of the chosen instance.

Limits: the dashboard exists before any run, so the storage's ceilings come from CDK context naming the
target's class and storage (``Config.dashboard_target``), computed by ``analysis/limits.py`` at synth
time and drawn as horizontal annotations (the peak and, when it differs, the sustained ceiling) on
ReadIOPS and on the rate. Without that context there are no annotations, and the text widget says so.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Aws, Duration, Fn
from aws_cdk import aws_cloudwatch as cw
from constructs import Construct

from .catalogue import live_metrics as names
from .config import ConfigError, DashboardTarget

MIB = 1024 * 1024
RUN_PLACEHOLDER = "RUN_ID"  # replaced by the run variable's value
INSTANCE_PLACEHOLDER = "DB_INSTANCE"  # replaced by the instance variable's value
ONE_MINUTE, FIVE_MINUTES = Duration.minutes(1), Duration.minutes(5)
PEAK_COLOR, SUSTAINED_COLOR = "#d62728", "#ff7f0e"


def dashboard_name() -> str:
    """``<stack name>-live-<region>``: dashboards are named per account, not per region."""
    return Fn.join("-", [Aws.STACK_NAME, "live", Aws.REGION])


def target_limits(target: DashboardTarget | None) -> dict[str, Any] | None:
    """``expected_limits`` of the target named in context (None without one); a bad name fails the synth."""
    if target is None:
        return None
    from cutover_prep.analysis.limits import DEFAULT_ENGINE, LimitsError, expected_limits

    try:
        return expected_limits(target.instance_class, target.storage_type, target.allocated_gb, iops=target.iops,
                               throughput_mbps=target.throughput_mbps, engine=target.engine or DEFAULT_ENGINE)
    except LimitsError as exc:
        raise ConfigError(f"context dashboard_*: {exc}") from None


def annotations(limits: dict[str, Any] | None, kind: str) -> list[cw.HorizontalAnnotation]:
    """The ceilings of ``kind`` (``iops``, or ``throughput`` in MiB/s): the peak, and the sustained one when
    the storage or the class bursts."""
    if not limits:
        return []
    effective = limits["effective"]
    levels = [("peak", effective["peak"], PEAK_COLOR)]
    if effective["has_burst"]:
        levels.append(("sustained", effective["sustained"], SUSTAINED_COLOR))
    found = []
    for level, caps, color in levels:
        if kind == "iops" and caps["iops"]:
            found.append(cw.HorizontalAnnotation(
                value=float(caps["iops"]), color=color,
                label=f"{level} ceiling {caps['iops']:,.0f} IOPS: {caps['iops_label']}"))
        if kind == "throughput" and caps["throughput_mb_s"]:
            found.append(cw.HorizontalAnnotation(
                value=float(caps["throughput_mb_s"]), color=color,
                label=f"{level} ceiling {caps['throughput_mb_s']:,.1f} MiB/s: {caps['throughput_label']}"))
    return found


def ours(metric: Any, label: str, period: Duration = ONE_MINUTE) -> cw.Metric:
    return cw.Metric(namespace=names.NAMESPACE, metric_name=metric.name, statistic=metric.statistic, period=period,
                     label=label, dimensions_map={names.SERVICE_DIMENSION: names.SERVICE,
                                                  names.RUN_DIMENSION: RUN_PLACEHOLDER})


def rds(metric_name: str, label: str, statistic: str = "Average") -> cw.Metric:
    return cw.Metric(namespace=names.RDS_NAMESPACE, metric_name=metric_name, statistic=statistic, period=ONE_MINUTE,
                     label=label, dimensions_map={names.RDS_DIMENSION: INSTANCE_PLACEHOLDER})


class Dashboard(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, target: DashboardTarget | None = None) -> None:
        super().__init__(scope, construct_id)
        limits = target_limits(target)
        self.name = dashboard_name()
        self.url = names.dashboard_url(Aws.REGION, self.name)

        bytes_read = ours(names.BYTES_READ, "bytes read")
        rate = cw.MathExpression(expression=f"bytes / PERIOD(bytes) / {MIB}", using_metrics={"bytes": bytes_read},
                                 label="read rate (MiB/s, ours)", period=ONE_MINUTE)
        rds_throughput = cw.MathExpression(
            expression=f"tput / {MIB}", label="RDS ReadThroughput (MiB/s)", period=ONE_MINUTE,
            using_metrics={"tput": rds("ReadThroughput", "ReadThroughput (bytes/s)")})
        eta = cw.MathExpression(
            expression="FILL(left, REPEAT) / (bytes5 / PERIOD(bytes5)) / 60",
            using_metrics={"left": ours(names.BYTES_REMAINING, "bytes remaining", FIVE_MINUTES),
                           "bytes5": ours(names.BYTES_READ, "bytes read (5 min)", FIVE_MINUTES)},
            label="ETA (minutes) at the last 5 minutes' rate", period=FIVE_MINUTES)
        remaining = cw.MathExpression(
            expression="left_gib / 1073741824",
            using_metrics={"left_gib": ours(names.BYTES_REMAINING, "bytes remaining", FIVE_MINUTES)},
            label="left to read (GiB)", period=FIVE_MINUTES)
        latency = cw.MathExpression(expression="lat * 1000", label="ReadLatency (ms)", period=ONE_MINUTE,
                                    using_metrics={"lat": rds("ReadLatency", "ReadLatency (s)")})

        limits_text = (f"Ceilings drawn for **{limits['instance_class']}**, {limits['storage_type']} "
                       f"{limits['allocated_gb']:g} GiB (CDK context `dashboard_*`)." if limits else
                       "No ceilings drawn: deploy with `-c dashboard_instance_class=... -c dashboard_storage_type=... "
                       "-c dashboard_allocated_gb=...` to draw the target's IOPS and throughput limits.")
        intro = cw.TextWidget(width=24, height=3, markdown=(
            "## Cutover Prep: one run's warm-up\n"
            f"Choose the **run** (dimension `{names.RUN_DIMENSION}`) and the DB **instance** above. Our metrics: "
            f"namespace `{names.NAMESPACE}`, dimensions `{names.SERVICE_DIMENSION}`, `{names.RUN_DIMENSION}`. "
            "The ETA is what is left over the rate of the last 5 minutes (metric math), not a forecast. "
            + limits_text))

        widgets: list[list[cw.IWidget]] = [
            [intro],
            [
                cw.GraphWidget(title="Bytes read (per minute)", width=8, height=6, left=[bytes_read],
                               right=[ours(names.CHUNKS_READ, "chunks read")]),
                cw.GraphWidget(title="Read rate (MiB/s): ours and RDS ReadThroughput", width=8, height=6,
                               left=[rate, rds_throughput], left_annotations=annotations(limits, "throughput"),
                               left_y_axis=cw.YAxisProps(min=0)),
                cw.GraphWidget(title="ETA (minutes)", width=8, height=6, left=[eta], right=[remaining],
                               left_y_axis=cw.YAxisProps(min=0), right_y_axis=cw.YAxisProps(min=0)),
            ],
            [
                cw.GraphWidget(title="Units done / failed", width=8, height=6,
                               left=[ours(names.UNITS_DONE, "units done"), ours(names.UNITS_FAILED, "units failed")]),
                cw.GraphWidget(title="RDS storage initialization (StorageOperationPercentProgress)", width=8,
                               height=6, left=[ours(names.STORAGE_PROGRESS, "initialized (%)")],
                               left_y_axis=cw.YAxisProps(min=0, max=100),
                               # its ETA (slowest volume, rds/volume_eta.py) on the right axis
                               right=[ours(names.STORAGE_ETA, "ETA of the slowest volume (s)")],
                               right_y_axis=cw.YAxisProps(min=0)),
                cw.GraphWidget(title="RDS ReadIOPS", width=8, height=6, left=[rds("ReadIOPS", "ReadIOPS")],
                               left_annotations=annotations(limits, "iops"), left_y_axis=cw.YAxisProps(min=0)),
            ],
            [
                cw.GraphWidget(title="RDS ReadLatency (ms)", width=12, height=6, left=[latency],
                               left_y_axis=cw.YAxisProps(min=0)),
                cw.GraphWidget(title="RDS DiskQueueDepth", width=12, height=6,
                               left=[rds("DiskQueueDepth", "DiskQueueDepth")], left_y_axis=cw.YAxisProps(min=0)),
            ],
        ]
        variables = [
            cw.DashboardVariable(
                id=names.RUN_VARIABLE, type=cw.VariableType.PROPERTY, value=names.RUN_DIMENSION, label="Run",
                input_type=cw.VariableInputType.SELECT, default_value=cw.DefaultValue.FIRST,
                values=cw.Values.from_search_components(
                    namespace=names.NAMESPACE, dimensions=list(names.DIMENSIONS),
                    metric_name=names.BYTES_READ.name, populate_from=names.RUN_DIMENSION)),
            cw.DashboardVariable(
                id=names.INSTANCE_VARIABLE, type=cw.VariableType.PROPERTY, value=names.RDS_DIMENSION,
                label="DB instance", input_type=cw.VariableInputType.SELECT, default_value=cw.DefaultValue.FIRST,
                values=cw.Values.from_search_components(
                    namespace=names.RDS_NAMESPACE, dimensions=[names.RDS_DIMENSION], metric_name="ReadIOPS",
                    populate_from=names.RDS_DIMENSION)),
        ]
        self.dashboard = cw.Dashboard(self, "Dashboard", dashboard_name=self.name, default_interval=Duration.hours(3),
                                      variables=variables, widgets=widgets)
