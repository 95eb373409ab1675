"""Validate the execution input, record the run, return the normalised run configuration."""

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.models.run_input import AwsPlace
from cutover_prep.models.steps import RunState, ValidateInputEvent
from cutover_prep.observability import json_result, logger, metrics, tracer
from cutover_prep.settings import connection_policy
from cutover_prep.steps import warm_concurrency
from cutover_prep.steps.validate_input import begin_run


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@json_result
@event_parser(model=ValidateInputEvent)
def handler(event: ValidateInputEvent, context: LambdaContext) -> RunState:
    return begin_run(event.input, execution_name=event.execution_name, store=deps.store(),
                     allowed_hosts=connection_policy().allowed_db_hosts,
                     deployment=AwsPlace.of_arn(context.invoked_function_arn),  # this function's own ARN
                     warm_concurrency=warm_concurrency.limit())  # WarmUnit's reserved concurrency (WARM_CONCURRENCY)
