"""Report the DB instance's state; fail with RestoreFailed / RestoreTimeout."""

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.models.results import InstanceDescribed
from cutover_prep.models.steps import RunState
from cutover_prep.observability import json_result, logger, metrics, tracer
from cutover_prep.steps.restore import describe


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@json_result
@event_parser(model=RunState)
def handler(event: RunState, context: LambdaContext) -> InstanceDescribed:
    return describe(event, rds=deps.client("rds"), store=deps.store())
