"""Collect CloudWatch / Enhanced Monitoring data for the benchmark windows (polled)."""

from typing import Any

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.benchmark.evidence import collect_metrics
from cutover_prep.models.steps import CollectMetricsEvent
from cutover_prep.observability import logger, metrics, tracer
from cutover_prep.rds.progress import SAMPLE_INTERVAL_SECONDS, sample_storage_progress
from cutover_prep.steps import live_emit as live


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@event_parser(model=CollectMetricsEvent)
def handler(event: CollectMetricsEvent, context: LambdaContext) -> dict[str, Any]:
    run = event.run
    sample = sample_storage_progress(run.run_id, run.target.db_instance_identifier, rds=deps.progress_client(),
                                     store=deps.store(), step="CollectMetrics",
                                     min_interval_seconds=SAMPLE_INTERVAL_SECONDS)
    live.storage_progress(run.run_id, sample)
    return collect_metrics(run, event.attempt, store=deps.store(), cloudwatch=deps.client("cloudwatch"),
                           logs=deps.client("logs"), rds=deps.client("rds")).to_json()
