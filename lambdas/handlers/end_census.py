"""After the warm-up: take the census again, read what was created or grew (a bounded catch-up pass); called
with the Catch's ``error`` (RecordEndCensusFailure), record why it did not run instead."""

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.models.steps import EndCensusEvent, EndCensusResult
from cutover_prep.observability import json_result, logger, metrics, tracer
from cutover_prep.settings import get_settings
from cutover_prep.steps.end_census import end_census_step


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@json_result
@event_parser(model=EndCensusEvent)
def handler(event: EndCensusEvent, context: LambdaContext) -> EndCensusResult:
    settings = get_settings()
    return end_census_step(event, store=deps.store(), read_secret=deps.read_secret,
                           read_secret_tags=deps.read_secret_tags,
                           open_engine=deps.engine_opener(context, settings.safety_margin_seconds),
                           remaining_seconds=context.get_remaining_time_in_millis() / 1000,
                           safety_margin_seconds=settings.safety_margin_seconds, attempts=settings.read_attempts)
