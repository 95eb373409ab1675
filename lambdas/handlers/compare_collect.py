"""Read each configuration's findings, price it, write comparison.json with the recommendation."""

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.models.steps import CompareCollectEvent
from cutover_prep.observability import json_result, logger, metrics, tracer
from cutover_prep.steps.comparison import ComparisonCollected, collect_results


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@json_result
@event_parser(model=CompareCollectEvent)
def handler(event: CompareCollectEvent, context: LambdaContext) -> ComparisonCollected:
    # the Price List API in its own region (us-east-1), not this one (deps.pricing_client)
    return collect_results(event, store=deps.store(), pricing=deps.pricing_client())
