"""Delete every instance the comparison proves its own (comparison/ownership.py); record deleted/left/not ours."""

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.models.steps import CompareCleanupEvent
from cutover_prep.observability import json_result, logger, metrics, tracer
from cutover_prep.steps.comparison import ComparisonFinished, clean_up_comparison


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@json_result
@event_parser(model=CompareCleanupEvent)
def handler(event: CompareCleanupEvent, context: LambdaContext) -> ComparisonFinished:
    return clean_up_comparison(event, rds=deps.client("rds"), store=deps.store())
