"""WarmUnit: sample RDS's storage progress for the live view, read one work unit (or the next part of it) within
the invocation's time budget (``warmup.unit``), and emit the unit's live metrics (``steps.live_emit``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cutover_prep.dal.store import Store
from cutover_prep.engines import Engine
from cutover_prep.models.status import WarmStep
from cutover_prep.models.steps import WarmProgress, WarmUnitEvent
from cutover_prep.rds.progress import SAMPLE_INTERVAL_SECONDS, sample_storage_progress
from cutover_prep.steps import live_emit as live
from cutover_prep.warmup.unit import Budget, step_result, warm_unit


def warm_step(event: WarmUnitEvent, *, store: Store, rds: Any, engine: Callable[[], Engine], budget: Budget,
              read_attempts: int) -> WarmProgress:
    """``rds``: the client that samples the storage progress (a throttled answer is a gap, not a failure)."""
    run = event.run
    run_id = run.run_id
    sample = sample_storage_progress(run_id, run.target.db_instance_identifier, rds=rds, store=store,
                                     step="WarmUnit", min_interval_seconds=SAMPLE_INTERVAL_SECONDS)
    live.storage_progress(run_id, sample)
    live.storage_eta(run_id, sample, store)  # the dashboard's ETA of RDS's own initialization
    progress = warm_unit(event, store=store, engine=engine, budget=budget, read_attempts=read_attempts,
                         on_chunk=lambda bytes_read: live.chunk_read(run_id, bytes_read))
    if progress.status == WarmStep.DONE:
        live.unit_done(run_id)
    live.bytes_remaining(run_id, store)  # the dashboard's ETA: what is left over the rate
    return step_result(event, progress)
