"""Validate a comparison input, record the comparison, plan one child run per configuration."""

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.models.steps import CompareStartEvent
from cutover_prep.observability import json_result, logger, metrics, tracer
from cutover_prep.steps.comparison import ComparisonPlanned, start_comparison


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@json_result
@event_parser(model=CompareStartEvent)
def handler(event: CompareStartEvent, context: LambdaContext) -> ComparisonPlanned:
    return start_comparison(event, store=deps.store())
