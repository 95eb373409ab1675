"""Record a benchmark step that failed; the run goes on to its findings."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.benchmark import record_benchmark_failure
from cutover_prep.observability import logger, metrics, tracer


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return record_benchmark_failure(event["run_id"], event["error"], store=deps.store())
