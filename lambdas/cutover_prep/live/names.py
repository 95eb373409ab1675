"""The one list of the run's custom metrics: namespace, dimensions, names and units (pure data).

Read by the functions that emit (``steps.live_emit``, with Powertools Metrics) and by the CDK dashboard
(``cdk/cutover_prep_cdk/dashboard.py``, through ``catalogue.py``): a metric the dashboard shows is one
this module names, and a test compares what a run emits with both. No boto3, no Powertools here.

Dimensions: every custom metric carries exactly ``service`` (Powertools' default dimension, always
``SERVICE``) and ``run_id``. Nothing finer (no unit, segment or chunk id): CloudWatch bills each
distinct dimension set as a metric, and a run has thousands of units.

- ``BytesRead`` (Bytes, Sum): what WarmUnit read, one value per committed chunk (flushed per chunk, so
  the datapoint has the chunk's time). The dashboard's rate is ``BytesRead / PERIOD``.
- ``ChunksRead`` (Count): chunks committed.
- ``UnitsDone`` / ``UnitsFailed`` (Count): a unit finished (WarmUnit) / recorded as failed (UnitFailed).
- ``BytesRemaining`` (Bytes, gauge): the run's ``bytes_planned - bytes_read`` read from the run item by
  WarmUnit at the end of each invocation (one GetItem a invocation). The dashboard's ETA is
  ``BytesRemaining / rate`` (metric math), not a metric of its own.
- ``StorageOperationPercentProgress`` (Percent, gauge): RDS's own initialization progress of the
  primary volume, each time it is sampled (``restore.progress``: at most once a minute during the warm-up).
- ``StorageInitializationEtaSeconds`` (Seconds, gauge): when RDS's storage initialization of the instance
  will be over (its slowest volume: ``restore.volume_eta``), at each sample; absent while there is no rate.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple

NAMESPACE = "CutoverPrep"
SERVICE = "cutover-prep"
SERVICE_DIMENSION = "service"  # Powertools adds it to every metric (Metrics(service=...))
RUN_DIMENSION = "run_id"
DIMENSIONS = (SERVICE_DIMENSION, RUN_DIMENSION)

# The environment variable the stack sets on every function: the dashboard's name (for the links).
DASHBOARD_ENV = "CUTOVER_PREP_DASHBOARD"
# The stack output that holds the dashboard's console link (``cutover-prep start`` prints it).
DASHBOARD_OUTPUT = "DashboardUrl"
# The dashboard's variables (their ids): the run, and the DB instance of the AWS/RDS widgets.
RUN_VARIABLE = "run"
INSTANCE_VARIABLE = "instance"


class MetricName(NamedTuple):
    name: str
    unit: str  # a CloudWatch unit name, as Powertools' MetricUnit values spell it
    statistic: str  # how the dashboard aggregates it


BYTES_READ = MetricName("BytesRead", "Bytes", "Sum")
CHUNKS_READ = MetricName("ChunksRead", "Count", "Sum")
UNITS_DONE = MetricName("UnitsDone", "Count", "Sum")
UNITS_FAILED = MetricName("UnitsFailed", "Count", "Sum")
BYTES_REMAINING = MetricName("BytesRemaining", "Bytes", "Minimum")  # the freshest of the period: the least
STORAGE_PROGRESS = MetricName("StorageOperationPercentProgress", "Percent", "Maximum")
STORAGE_ETA = MetricName("StorageInitializationEtaSeconds", "Seconds", "Minimum")  # the freshest: the least

METRICS: tuple[MetricName, ...] = (BYTES_READ, CHUNKS_READ, UNITS_DONE, UNITS_FAILED, BYTES_REMAINING,
                                   STORAGE_PROGRESS, STORAGE_ETA)

# What the dashboard shows of the target itself, beside ours (CloudWatch namespace AWS/RDS, 1-minute).
RDS_NAMESPACE = "AWS/RDS"
RDS_DIMENSION = "DBInstanceIdentifier"
RDS_METRICS = ("ReadIOPS", "ReadThroughput", "ReadLatency", "DiskQueueDepth")


def dashboard_url(region: str, dashboard: str) -> str:
    """The console link to the dashboard. The run is chosen in its ``run`` variable: the console has no
    documented URL parameter for a variable's value, so none is guessed here. A dashboard name holds only
    letters, digits, ``-`` and ``_`` (CloudWatch's rule), so nothing needs escaping; the CDK passes tokens."""
    return f"https://console.aws.amazon.com/cloudwatch/home?region={region}#dashboards/dashboard/{dashboard}"


def dashboard_link(env: Mapping[str, str] | None = None) -> str | None:
    """The dashboard's console link in a function (``DASHBOARD_ENV`` and Lambda's ``AWS_REGION``); None
    outside a deployment that has one."""
    if env is None:
        from cutover_prep.settings import environment

        env = environment(DASHBOARD_ENV, "AWS_REGION", "AWS_DEFAULT_REGION")
    name = (env.get(DASHBOARD_ENV) or "").strip()
    region = (env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "").strip()
    return dashboard_url(region, name) if name and region else None


_DASHBOARD_URL = re.compile(r"https://console\.aws\.amazon\.com/cloudwatch/home\?region=[a-z0-9-]+"
                            r"#dashboards/dashboard/[A-Za-z0-9_-]+")


def is_dashboard_url(text: object) -> bool:
    """A link ``dashboard_url`` makes, and nothing else (a report writes it as a link, unescaped)."""
    return isinstance(text, str) and _DASHBOARD_URL.fullmatch(text) is not None
