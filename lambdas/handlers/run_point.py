"""Run one benchmark point alone, in its own recorded time window."""

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.benchmark.results import PointResult
from cutover_prep.benchmark.steps import measure_point
from cutover_prep.models.steps import RunPointEvent
from cutover_prep.observability import json_result, logger, metrics, tracer


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@json_result
@event_parser(model=RunPointEvent)
def handler(event: RunPointEvent, context: LambdaContext) -> PointResult:
    return measure_point(event.run, event.point, store=deps.store(),
                         open_driver=deps.bench_opener(context))
