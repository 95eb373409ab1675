"""The run input's sections as the run item keeps them (``records.run.RunItem``): ``target``, ``restore`` and,
under ``input``, ``warmup``, ``benchmark`` and ``verdict``.

``warmup``, ``benchmark`` and ``verdict`` are the input's own models (``models.warmup.Warmup``,
``models.benchmark.Benchmark``, ``models.thresholds.Thresholds``): a field a record leaves out has the model's
default when it is read, and stays out when the record is written back (the run item dumps ``exclude_unset``).

``target`` and ``restore`` are read, not checked again: ``RecordedTarget`` and ``RecordedRestore`` name the
fields of ``models.target.Target`` and ``models.restore.Restore`` without their rules (a record keeps what the
input gave, as it gave it: an older record written before a rule was added still reads), and keep any field a
newer writer added (``extra="allow"``). A field never written stays absent, one written as NULL stays NULL.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from cutover_prep.models.benchmark import Benchmark
from cutover_prep.models.thresholds import Thresholds
from cutover_prep.models.warmup import Warmup


class RecordedTarget(BaseModel):
    """The run input's ``target`` as the run item records it (``models.target.Target``'s fields)."""

    model_config = ConfigDict(extra="allow")

    db_instance_identifier: str | None = None
    secret_arn: str | None = None
    engine: str | None = None
    database: str | None = None
    databases: list[str] | str | None = None  # a list of names, or "all"
    host: str | None = None
    port: int | None = None


class RecordedRestore(BaseModel):
    """The run input's ``restore`` as the run item records it (``models.restore.Restore``'s fields)."""

    model_config = ConfigDict(extra="allow")

    snapshot_identifier: str | None = None
    db_instance_class: str | None = None
    storage_type: str | None = None
    iops: int | None = None
    storage_throughput: int | None = None
    allocated_gb: int | None = None
    db_subnet_group_name: str | None = None
    vpc_security_group_ids: list[str] | None = None
    db_parameter_group_name: str | None = None
    option_group_name: str | None = None
    multi_az: bool | None = None
    tags: dict[str, str] | None = None
    poll_seconds: int | None = None
    max_wait_minutes: int | None = None


class InputSections(BaseModel):
    """The run item's ``input``: the run input's ``warmup``, ``benchmark`` and ``verdict`` in its own names
    (decision 52; ``records.run.RecordedInput`` reads a run item of before it)."""

    model_config = ConfigDict(extra="allow")

    warmup: Warmup | None = None
    benchmark: Benchmark | None = None
    verdict: Thresholds | None = None
