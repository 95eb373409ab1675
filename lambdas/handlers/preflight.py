"""Prove each grant and read method the plan needs on the target, before anything is warmed."""

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.models.steps import PreflightResult, RunState
from cutover_prep.observability import json_result, logger, metrics, tracer
from cutover_prep.steps.preflight import run_preflight


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@json_result
@event_parser(model=RunState)
def handler(event: RunState, context: LambdaContext) -> PreflightResult:
    return run_preflight(event, store=deps.store(), read_secret=deps.read_secret,
                         read_secret_tags=deps.read_secret_tags)
