"""Record the run as FAILED with its cause and name the error for the Fail state."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.findings import record_failure
from cutover_prep.observability import logger, metrics, tracer


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return record_failure(event.get("run_id"), event.get("error") or {}, store=deps.store(),
                          events=deps.client("events"), rejected_input=event.get("input"),
                          execution_name=event.get("execution_name"))
