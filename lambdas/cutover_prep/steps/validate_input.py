"""ValidateInput: the run input checked, an earlier attempt of the same run id compared (``dal.restart``),
the run recorded."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from cutover_prep.dal.restart import check_restart
from cutover_prep.dal.store import Store
from cutover_prep.models.run_input import AwsPlace, check_baseline, parse_run_input
from cutover_prep.models.steps import RunState
from cutover_prep.models.warmup import Warmup
from cutover_prep.steps.warm_concurrency import check as check_warm_concurrency


def begin_run(raw: Any, *, execution_name: str | None, store: Store,
              allowed_hosts: Collection[str] | None, deployment: AwsPlace | None = None,
              warm_concurrency: int | None = None) -> RunState:
    """ValidateInput: the input as the workflow carries it, checked against the deployment (``deployment``:
    where it runs; ``warm_concurrency``: WarmUnit's reserved concurrency, None if none) and any earlier
    attempt of the same run id, then the run is recorded (RUNNING). The run as every step up to Discover takes
    it (its JSON the config as recorded)."""
    config = parse_run_input(raw, execution_name=execution_name, allowed_hosts=allowed_hosts,
                             deployment=deployment)
    check_warm_concurrency(Warmup.model_validate(config["warmup"]), warm_concurrency)
    check_baseline(config, lambda run_id: (item.stored() if (item := store.get_run(run_id)) else None))
    first = store.get_run(config["run_id"])
    if first is not None:
        check_restart(first, config)
    if config.get("comparison"):  # a comparison's child: its restore is recorded in the comparison's record first
        from cutover_prep.comparison.ownership import claim_restore

        claim_restore(store, config)
    store.start_run(config)  # the run is visible (RUNNING) from here on, also while a restore runs
    return RunState.model_validate(config)
