"""Record the run as FAILED with its cause and name the error for the Fail state."""

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.models.results import RunFailure
from cutover_prep.models.steps import RunFailedEvent
from cutover_prep.observability import json_result, logger, metrics, tracer
from cutover_prep.steps.failures import run_failed


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@json_result
@event_parser(model=RunFailedEvent)
def handler(event: RunFailedEvent, context: LambdaContext) -> RunFailure:
    return run_failed(event, store=deps.store(), events=deps.client("events"))
