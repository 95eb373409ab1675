"""Collect CloudWatch / Enhanced Monitoring data for the benchmark windows (polled)."""

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.benchmark.results import MetricsPoll
from cutover_prep.models.steps import CollectMetricsEvent
from cutover_prep.observability import json_result, logger, metrics, tracer
from cutover_prep.steps.collect_metrics import collect_step


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@json_result
@event_parser(model=CollectMetricsEvent)
def handler(event: CollectMetricsEvent, context: LambdaContext) -> MetricsPoll:
    return collect_step(event, store=deps.store(), progress_rds=deps.progress_client(),
                        cloudwatch=deps.client("cloudwatch"), logs=deps.client("logs"), rds=deps.client("rds"))
