"""Aggregate the units into findings.json and close the run."""

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.models.steps import FinalizeEvent
from cutover_prep.observability import json_result, logger, metrics, tracer
from cutover_prep.steps.finalize import Finalized, finalize


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@json_result
@event_parser(model=FinalizeEvent)
def handler(event: FinalizeEvent, context: LambdaContext) -> Finalized:
    return finalize(event.run_id, store=deps.store(), events=deps.client("events"), rds=deps.progress_client())
