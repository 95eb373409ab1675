"""Read one work unit (or the next part of it) within this invocation's time budget."""

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.models.steps import WarmProgress, WarmUnitEvent
from cutover_prep.observability import json_result, logger, metrics, tracer
from cutover_prep.settings import get_settings
from cutover_prep.steps.warm_unit import warm_step
from cutover_prep.warmup.unit import Budget


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@json_result
@event_parser(model=WarmUnitEvent)
def handler(event: WarmUnitEvent, context: LambdaContext) -> WarmProgress:
    settings = get_settings()
    remaining = lambda: context.get_remaining_time_in_millis() / 1000  # noqa: E731
    return warm_step(event, store=deps.store(), rds=deps.progress_client(),
                     engine=lambda: deps.cached_engine(event.run,
                                                       max(1.0, remaining() - settings.safety_margin_seconds / 2)),
                     budget=Budget(remaining, settings.safety_margin_seconds), read_attempts=settings.read_attempts)
