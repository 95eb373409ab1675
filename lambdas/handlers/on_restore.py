"""Start a run for an opted-in restored instance: RDS restore events and the scheduled sweep."""

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.models.results import Swept, TriggerOutcome
from cutover_prep.models.steps import TriggerEvent
from cutover_prep.observability import json_result, logger, metrics, tracer
from cutover_prep.settings import get_settings
from cutover_prep.steps.restore import on_restore


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@json_result
@event_parser(model=TriggerEvent)
def handler(event: TriggerEvent, context: LambdaContext) -> TriggerOutcome | Swept:
    settings = get_settings()
    return on_restore(event, clients=deps.client, table=settings.table_name,
                      state_machine_arn=settings.state_machine_arn or "",
                      lookback_hours=settings.restore_lookback_hours,
                      time_left_s=lambda: context.get_remaining_time_in_millis() / 1000, log=logger)
