"""Judge the cutover gate once: the run's verdict, RDS's storage and instance, an AWS DMS task."""

from typing import Any

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.gate.step import evaluate_step
from cutover_prep.models.steps import GateStepEvent
from cutover_prep.observability import json_result, logger, metrics, tracer


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@json_result
@event_parser(model=GateStepEvent)
def handler(event: GateStepEvent, context: LambdaContext) -> dict[str, Any]:
    return evaluate_step(event, store=deps.store(), rds=deps.client("rds"), dms=deps.client("dms"),
                         cloudwatch=deps.client("cloudwatch"), events=deps.client("events"))
