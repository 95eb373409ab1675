"""Collect CloudWatch / Enhanced Monitoring data for the benchmark windows (polled)."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.observability import logger, metrics, tracer
from cutover_prep.sweep_evidence import collect_metrics


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return collect_metrics(event["run"], int(event.get("attempt") or 0), store=deps.store(),
                           cloudwatch=deps.client("cloudwatch"), logs=deps.client("logs"), rds=deps.client("rds"))
