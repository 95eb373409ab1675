"""CollectMetrics: sample RDS's storage progress for the live view, then poll CloudWatch / Enhanced Monitoring for
the benchmark's windows (``benchmark.evidence.collect_metrics``)."""

from __future__ import annotations

from typing import Any

from cutover_prep.benchmark.evidence import collect_metrics
from cutover_prep.benchmark.results import MetricsPoll
from cutover_prep.dal.store import Store
from cutover_prep.models.steps import CollectMetricsEvent
from cutover_prep.rds.progress import SAMPLE_INTERVAL_SECONDS, sample_storage_progress
from cutover_prep.steps import live_emit as live


def collect_step(event: CollectMetricsEvent, *, store: Store, progress_rds: Any, cloudwatch: Any, logs: Any,
                 rds: Any) -> MetricsPoll:
    """``progress_rds``: the client that samples the storage progress (one attempt, short timeouts); ``rds``: the
    one the metrics' collection describes the instance with."""
    run = event.run
    sample = sample_storage_progress(run.run_id, run.target.db_instance_identifier, rds=progress_rds, store=store,
                                     step="CollectMetrics", min_interval_seconds=SAMPLE_INTERVAL_SECONDS)
    live.storage_progress(run.run_id, sample)
    return collect_metrics(run, event.attempt, store=store, cloudwatch=cloudwatch, logs=logs, rds=rds)
