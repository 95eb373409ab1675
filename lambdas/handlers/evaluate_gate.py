"""Judge the cutover gate once: the run's verdict, RDS's storage and instance, an AWS DMS task."""

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.models.steps import GateStepEvent
from cutover_prep.observability import json_result, logger, metrics, tracer
from cutover_prep.steps.gate import GateChecked, evaluate_gate


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@json_result
@event_parser(model=GateStepEvent)
def handler(event: GateStepEvent, context: LambdaContext) -> GateChecked:
    return evaluate_gate(event, store=deps.store(), rds=deps.client("rds"), dms=deps.client("dms"),
                         cloudwatch=deps.client("cloudwatch"), events=deps.client("events"))
