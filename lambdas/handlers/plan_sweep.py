"""Choose the benchmark sweep's points and the segment its scans read."""

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.benchmark.results import SweepPlanned
from cutover_prep.benchmark.steps import plan_sweep
from cutover_prep.models.steps import RunStep
from cutover_prep.observability import json_result, logger, metrics, tracer
from cutover_prep.rds.instances import free_storage_bytes


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@json_result
@event_parser(model=RunStep)
def handler(event: RunStep, context: LambdaContext) -> SweepPlanned:
    return plan_sweep(event.run, store=deps.store(), open_driver=deps.bench_opener(context),
                      free_storage=lambda run: free_storage_bytes(deps.client("cloudwatch"),
                                                                  run.target.db_instance_identifier))
