"""Record the run as FAILED with its cause and name the error for the Fail state."""

from typing import Any

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.findings.failures import record_failure
from cutover_prep.models.steps import RunFailedEvent
from cutover_prep.observability import json_result, logger, metrics, tracer


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@json_result
@event_parser(model=RunFailedEvent)
def handler(event: RunFailedEvent, context: LambdaContext) -> dict[str, Any]:
    return record_failure(event.run_id, event.error.model_dump(exclude_none=True), store=deps.store(),
                          events=deps.client("events"), rejected_input=event.input,
                          execution_name=event.execution_name)
