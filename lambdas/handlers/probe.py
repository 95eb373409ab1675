"""Time reads of a fixed random sample of blocks: cold before the warm-up, warm after."""

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.benchmark.results import ProbeResult
from cutover_prep.benchmark.steps import probe
from cutover_prep.models.steps import ProbeEvent
from cutover_prep.observability import json_result, logger, metrics, tracer


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@json_result
@event_parser(model=ProbeEvent)
def handler(event: ProbeEvent, context: LambdaContext) -> ProbeResult:
    return probe(event.run, event.phase, store=deps.store(),
                 open_driver=deps.bench_opener(context))
