"""Delete comparison instances past their TTL whose comparison is no longer running (hourly schedule)."""

from typing import Any

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.comparison.reaper import run_reaper
from cutover_prep.models.steps import ScheduledEvent
from cutover_prep.observability import json_result, logger, metrics, tracer


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@json_result
@event_parser(model=ScheduledEvent)
def handler(event: ScheduledEvent, context: LambdaContext) -> dict[str, Any]:
    return run_reaper(rds=deps.client("rds"), sfn=deps.client("stepfunctions"), store=deps.store())
