"""Discover the segments to read, plan work units, write the plan to S3."""

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.models.steps import DiscoverResult, RunState
from cutover_prep.observability import json_result, logger, metrics, tracer
from cutover_prep.settings import get_settings
from cutover_prep.steps.discover import discover_and_plan


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@json_result
@event_parser(model=RunState)
def handler(event: RunState, context: LambdaContext) -> DiscoverResult:
    return discover_and_plan(event, store=deps.store(), read_secret=deps.read_secret,
                             read_secret_tags=deps.read_secret_tags, say=logger.info,
                             open_engine=deps.engine_opener(context, get_settings().safety_margin_seconds))
