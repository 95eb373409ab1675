"""Read one work unit (or the next part of it) within this invocation's time budget."""

from typing import Any

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from cutover_prep import deps
from cutover_prep.models.status import WarmStep
from cutover_prep.models.steps import WarmUnitEvent
from cutover_prep.observability import logger, metrics, tracer
from cutover_prep.rds.progress import SAMPLE_INTERVAL_SECONDS, sample_storage_progress
from cutover_prep.settings import get_settings
from cutover_prep.steps import live_emit as live
from cutover_prep.warmup.unit import Budget, step_result, warm_unit


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(raise_on_empty_metrics=False)
@event_parser(model=WarmUnitEvent)
def handler(event: WarmUnitEvent, context: LambdaContext) -> dict[str, Any]:
    settings = get_settings()
    remaining = lambda: context.get_remaining_time_in_millis() / 1000  # noqa: E731
    run = event.run
    run_id = run.run_id
    sample = sample_storage_progress(run_id, run.target.db_instance_identifier, rds=deps.progress_client(),
                                     store=deps.store(), step="WarmUnit", min_interval_seconds=SAMPLE_INTERVAL_SECONDS)
    live.storage_progress(run_id, sample)
    live.storage_eta(run_id, sample, deps.store())  # the dashboard's ETA of RDS's own initialization
    progress = warm_unit(
        event, store=deps.store(),
        engine=lambda: deps.cached_engine(run, max(1.0, remaining() - settings.safety_margin_seconds / 2)),
        budget=Budget(remaining, settings.safety_margin_seconds), read_attempts=settings.read_attempts,
        on_chunk=lambda bytes_read: live.chunk_read(run_id, bytes_read),
    )
    if progress.status == WarmStep.DONE:
        live.unit_done(run_id)
    live.bytes_remaining(run_id, deps.store())  # the dashboard's ETA: what is left over the rate
    return step_result(event, progress)
