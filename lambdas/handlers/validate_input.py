"""Validate the execution input, record the run, return the normalised run configuration."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.inputs import check_baseline, parse_run_input
from cutover_prep.observability import logger, metrics, tracer


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    config = parse_run_input(event.get("input"), execution_name=event.get("execution_name"))
    store = deps.store()
    check_baseline(config, store.get_run)
    store.start_run(config)  # the run is visible (RUNNING) from here on, also while a restore runs
    return config
