"""The run input's ``benchmark`` (probes and the sweep) and ``preflight`` (the checks before anything is
read)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    Field,
)

from cutover_prep.models.fields import (
    _Strict,
)


class Benchmark(_Strict):
    """Probes before and after the warm-up, then the sweep; each point runs alone."""

    enabled: bool = Field(default=True, description="Run the probes and the benchmark sweep after the warm-up.")
    probe_blocks: Annotated[int, Field(ge=0, le=100_000)] = Field(
        default=500, description="Blocks in the cold/warm probe sample (0: no probes).")
    probe_max_seconds: Annotated[float, Field(gt=0, le=600)] = 60
    seconds_per_point: Annotated[float, Field(ge=1, le=600)] = Field(
        default=20, description="Duration of each sweep point; use 60+ to read CloudWatch per point.")
    mbrc_values: list[Annotated[int, Field(ge=1, le=1024)]] = Field(
        default_factory=lambda: [1, 2, 4, 8, 16, 32, 64, 128], max_length=16,
        description="Oracle: db_file_multiblock_read_count values of the IO-size sweep.")
    io_combine_kb_values: list[Annotated[int, Field(ge=8, le=1024)]] = Field(
        default_factory=lambda: [8, 16, 32, 64, 128, 256], max_length=16,
        description="PostgreSQL 17+: io_combine_limit values (kB) of the IO-size sweep.")
    sessions: list[Annotated[int, Field(ge=1, le=64)]] = Field(
        default_factory=lambda: [1, 2, 4, 8], max_length=16,
        description="Sessions of the random single-block read points.")
    write_test: bool = Field(default=False, description="Opt-in write points in a scratch schema, dropped after.")
    write_max_mib: Annotated[int, Field(ge=1, le=102_400)] = Field(
        default=256, description="Cap on what the opt-in write points write, MiB")
    write_max_free_storage_pct: Annotated[float, Field(gt=0, le=50)] = Field(
        default=5, description="The opt-in write points write never more than this share of the free storage "
        "RDS reports (percent)")
    metrics_wait_minutes: Annotated[int, Field(ge=0, le=60)] = Field(
        default=10, description="How long to wait for CloudWatch datapoints before recording them missing.")
    metrics_poll_seconds: Annotated[int, Field(ge=10, le=600)] = 60
    compare_limits: bool = Field(
        default=True, description="Compare with the published limits of the instance class and storage "
        "(false when the database read is not that RDS instance, e.g. the local run).")


class Preflight(_Strict):
    """The preflight state right after Discover (``cutover-prep preflight`` on the run's target)."""

    enabled: bool = Field(
        default=True, description="Prove each grant and read method the plan needs on the target (about a "
        "minute, read-only) before anything is warmed; the report is evidence preflight.json and a findings section.")
    on_failure: Literal["fail", "warn"] = Field(
        default="fail", description="fail: a failed check ends the run FAILED (PreflightFailed, naming each "
        "failed check) before any unit is read; warn: the failed checks are recorded and the run goes on.")
