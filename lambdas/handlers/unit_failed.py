"""Record a work unit that kept failing, with its error, so it is counted."""

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.models.results import UnitFailureRecorded
from cutover_prep.models.steps import UnitFailedEvent
from cutover_prep.observability import json_result, logger, metrics, tracer
from cutover_prep.steps.failures import unit_failed


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@json_result
@event_parser(model=UnitFailedEvent)
def handler(event: UnitFailedEvent, context: LambdaContext) -> UnitFailureRecorded:
    return unit_failed(event, store=deps.store())
