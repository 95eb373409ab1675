"""Start restoring the target DB instance from a snapshot."""

from typing import Any

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.models.steps import RunState
from cutover_prep.observability import json_result, logger, metrics, tracer
from cutover_prep.rds.instances import start_restore


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@json_result
@event_parser(model=RunState)
def handler(event: RunState, context: LambdaContext) -> dict[str, Any]:
    return start_restore(event, deps.client("rds"))
