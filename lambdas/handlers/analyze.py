"""Analyse the probes and the benchmark sweep into plain conclusions."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.observability import logger, metrics, tracer
from cutover_prep.sweep_evidence import analyze_run


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return analyze_run(event["run"], store=deps.store())
