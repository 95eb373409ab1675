"""Delete comparison instances past their TTL whose comparison is no longer running (hourly schedule)."""

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.models.steps import ScheduledEvent
from cutover_prep.observability import json_result, logger, metrics, tracer
from cutover_prep.steps.comparison import Reaped, reap_instances


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@json_result
@event_parser(model=ScheduledEvent)
def handler(event: ScheduledEvent, context: LambdaContext) -> Reaped:
    return reap_instances(rds=deps.client("rds"), sfn=deps.client("stepfunctions"), store=deps.store())
