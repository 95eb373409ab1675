"""Choose the benchmark sweep's points and the segment its scans read."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.benchmark import plan_sweep
from cutover_prep.observability import logger, metrics, tracer


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return plan_sweep(event["run"], store=deps.store(),
                      open_driver=deps.bench_opener(context))
