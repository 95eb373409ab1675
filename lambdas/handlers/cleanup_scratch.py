"""Remove the scratch objects the run's opt-in write test created (every path after the sweep)."""

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.benchmark.steps import ScratchSummary, cleanup_scratch
from cutover_prep.models.steps import RunStep
from cutover_prep.observability import json_result, logger, metrics, tracer


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@json_result
@event_parser(model=RunStep)
def handler(event: RunStep, context: LambdaContext) -> ScratchSummary:
    return cleanup_scratch(event.run, store=deps.store(), open_driver=deps.bench_opener(context))
