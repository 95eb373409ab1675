"""Analyse the probes and the benchmark sweep into plain conclusions."""

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.benchmark.evidence import analyze_run
from cutover_prep.benchmark.results import Analyzed
from cutover_prep.models.steps import RunStep
from cutover_prep.observability import json_result, logger, metrics, tracer


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@json_result
@event_parser(model=RunStep)
def handler(event: RunStep, context: LambdaContext) -> Analyzed:
    return analyze_run(event.run, store=deps.store())
