"""Admission control of the warm-up: a unit asks for a slot before it reads and gives it back after."""

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.models.steps import SlotAnswer, SlotReleased, WarmSlotEvent
from cutover_prep.observability import json_result, logger, metrics, tracer
from cutover_prep.steps.warm_slot import slot_step


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@json_result
@event_parser(model=WarmSlotEvent)
def handler(event: WarmSlotEvent, context: LambdaContext) -> SlotAnswer | SlotReleased:
    return slot_step(event, store=deps.store(), activity=deps.activity_reader)
