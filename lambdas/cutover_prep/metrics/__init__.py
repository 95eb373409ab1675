"""What AWS recorded during each benchmark window: CloudWatch ``AWS/RDS`` and Enhanced Monitoring.

Pure boto3 client code; the clients are passed in. ``cloudwatch.collect_windows`` is polled
by the workflow until every window's datapoints have arrived (absent ones are recorded as
missing, never invented); ``enhanced.collect_enhanced`` reads the OS samples once.
"""

from __future__ import annotations

from cutover_prep.metrics.cloudwatch import (
    OPTIONAL_METRICS,
    RDS_METRICS,
    REQUIRED_METRICS,
    MetricsAccessDenied,
    MetricSpec,
    align_note,
    collect_windows,
    expected_periods,
    fetch_series,
)
from cutover_prep.metrics.enhanced import collect_enhanced, fetch_records, parse_record, summarise_window

__all__ = [
    "OPTIONAL_METRICS",
    "RDS_METRICS",
    "REQUIRED_METRICS",
    "MetricSpec",
    "MetricsAccessDenied",
    "align_note",
    "collect_enhanced",
    "collect_windows",
    "expected_periods",
    "fetch_records",
    "fetch_series",
    "parse_record",
    "summarise_window",
]
