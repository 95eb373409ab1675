"""Record a benchmark step, or one sweep point, that failed; the run goes on to its findings."""

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.benchmark.results import BenchmarkFailureRecorded, PointFailureRecorded
from cutover_prep.benchmark.steps import record_failed
from cutover_prep.models.steps import BenchmarkFailedEvent
from cutover_prep.observability import json_result, logger, metrics, tracer


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@json_result
@event_parser(model=BenchmarkFailedEvent)
def handler(event: BenchmarkFailedEvent, context: LambdaContext) -> PointFailureRecorded | BenchmarkFailureRecorded:
    return record_failed(event, store=deps.store())
