"""Admission control of the warm-up: a unit asks for a slot before it reads and gives it back after."""

from typing import Any

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.models.steps import WarmSlotEvent
from cutover_prep.observability import logger, metrics, tracer
from cutover_prep.warmup.slots import acquire, release


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@event_parser(model=WarmSlotEvent)
def handler(event: WarmSlotEvent, context: LambdaContext) -> dict[str, Any]:
    if event.action == "acquire":
        return acquire(event.run, event.unit_id, store=deps.store(),
                       activity=deps.activity_reader(event.run)).to_json()
    return release(event.run, event.unit_id, store=deps.store()).to_json()
