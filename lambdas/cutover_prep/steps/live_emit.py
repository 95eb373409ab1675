"""The Lambda side of the live view: the run's custom metrics through Powertools Metrics (EMF on stdout).

Every function here is a no-op when Powertools metrics are disabled (``POWERTOOLS_METRICS_DISABLED``,
as ``make test`` sets it): no EMF, and no DynamoDB read for ``BytesRemaining``. Each datapoint is its own EMF
document (Powertools' ``single_metric``: its own metric set, printed at once), with the ``service`` and
``run_id`` dimensions: the shared ``Metrics`` object keeps one metric and dimension set for the whole process,
so threads that read units side by side (a local run) mixed one another's dimensions into a document
(``run_id`` declared, its value cleared by another thread's flush). In Lambda a process runs one invocation;
the document of each datapoint also carries that datapoint's own time.
Names, units and dimensions come from ``live.names``; the dashboard reads the same module.
"""

from __future__ import annotations

import logging
from typing import Any

from aws_lambda_powertools.metrics import single_metric
from aws_lambda_powertools.metrics.functions import is_metrics_disabled
from botocore.exceptions import BotoCoreError, ClientError

from cutover_prep.dal.records.run import StorageSample
from cutover_prep.live.names import (
    BYTES_READ,
    BYTES_REMAINING,
    CHUNKS_READ,
    NAMESPACE,
    RUN_DIMENSION,
    SERVICE,
    SERVICE_DIMENSION,
    STORAGE_ETA,
    STORAGE_PROGRESS,
    UNITS_DONE,
    UNITS_FAILED,
    MetricName,
)

logger = logging.getLogger(__name__)


def enabled() -> bool:
    return not is_metrics_disabled()


def _add(run_id: str, metric: MetricName, value: float) -> None:
    with single_metric(name=metric.name, unit=metric.unit, value=value, namespace=NAMESPACE,
                       default_dimensions={SERVICE_DIMENSION: SERVICE, RUN_DIMENSION: run_id}):
        pass


def chunk_read(run_id: str, bytes_read: int) -> None:
    """One committed chunk: its bytes and a count, printed now so that the datapoint has the chunk's time
    (an invocation reads for up to 15 minutes; one flush at its end would pile them into one minute)."""
    if not enabled():
        return
    _add(run_id, BYTES_READ, bytes_read)
    _add(run_id, CHUNKS_READ, 1)


def unit_done(run_id: str) -> None:
    if enabled():
        _add(run_id, UNITS_DONE, 1)


def unit_failed(run_id: str) -> None:
    if enabled():
        _add(run_id, UNITS_FAILED, 1)


def bytes_remaining(run_id: str, store: Any) -> None:
    """The run's bytes still to read (``bytes_planned - bytes_read - bytes_gone`` of the run item: gone bytes were
    truncated while the run ran, nothing reads them): the numerator of the dashboard's ETA. Best effort: a read
    that fails is logged and the gauge skipped."""
    if not enabled():
        return
    try:
        run = store.get_run(run_id)
    except (ClientError, BotoCoreError) as exc:
        logger.warning("BytesRemaining not emitted: the run item could not be read (%s)", type(exc).__name__)
        return
    if run is None or run.bytes_planned is None:
        return  # no plan yet: nothing honest to say
    _add(run_id, BYTES_REMAINING, max(0, run.bytes_planned - (run.bytes_read or 0) - (run.bytes_gone or 0)))


def storage_progress(run_id: str, sample: StorageSample | None) -> None:
    """RDS's StorageOperationPercentProgress of a sample ``restore.progress`` just took (None: not sampled now,
    or RDS reported no figure)."""
    if not enabled() or sample is None or sample.percent is None:
        return
    _add(run_id, STORAGE_PROGRESS, float(sample.percent))


def storage_eta(run_id: str, sample: StorageSample | None, store: Any) -> None:
    """The instance's storage initialization ETA (``restore.volume_eta``) from the run's samples, after a sample
    that reported an operation (one Query a minute at most). Best effort, as ``bytes_remaining``."""
    if not enabled() or sample is None or not sample.status:
        return
    from cutover_prep.findings.storage_init import etas_of_samples

    try:
        samples = store.storage_samples(run_id)
    except (ClientError, BotoCoreError) as exc:
        logger.warning("StorageInitializationEtaSeconds not emitted: samples not read (%s)", type(exc).__name__)
        return
    found = etas_of_samples(samples)["instance_eta_s"]
    if found is not None:
        _add(run_id, STORAGE_ETA, float(found))
