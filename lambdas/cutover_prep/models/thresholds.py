"""The run input's ``verdict``: the thresholds the verdict judges by (the rules are verdict.py's)."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    field_validator,
)

from cutover_prep.models.fields import (
    RUN_ID_PATTERN,
)


class Thresholds(BaseModel):
    """The run input's ``verdict`` section."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # Infinity/NaN cannot be a threshold

    min_coverage_pct: float = Field(default=100.0, ge=0, le=100, description="Planned bytes read, at least.")
    require_benchmark: StrictBool = Field(default=True, description="NOT_READY when the probes/sweep were asked for "
                                    "and are missing or failed.")
    max_warm_to_cold_latency: float = Field(
        default=1.25, gt=0, description="Noise allowance: a warm median read above this × the cold one (and more "
        "than latency_noise_ms above it) is slower than cold, which fails WARM_VS_COLD.")
    fast_read_ms: float = Field(
        default=1.0, ge=0, description="A median single-block read at or below this is fast: a cold probe above it "
        "measured a first-touch penalty, a warm probe at or below it shows the penalty gone.")
    min_warm_speedup: float = Field(
        default=2.0, ge=1, description="When the cold probe measured a penalty, a warm median above fast_read_ms "
        "still passes when the cold median is at least this many times the warm one.")
    latency_noise_ms: float = Field(
        default=0.2, ge=0, description="Two medians closer than this are alike whatever their ratio (round-trip "
        "jitter of fast reads).")
    max_warm_p99_ms: float | None = Field(default=None, gt=0, description="Warm probe p99 read latency limit (ms).")
    expected_read_iops: float | None = Field(default=None, gt=0, description="Best random-read IOPS, at least.")
    expected_read_mibps: float | None = Field(default=None, gt=0, description="Best read throughput (MiB/s), at least.")
    tolerance_pct: float = Field(default=10.0, ge=0, le=100, description="Slack for expected values and baselines.")
    baseline_run_id: str | None = Field(default=None, pattern=RUN_ID_PATTERN,
                                        description="Compare with this earlier, finished run's findings.")
    max_unread_bytes: int = Field(
        default=0, ge=0, description="Bytes on the volume (the census of everything the engine can name) the run "
        "may leave unread without a waiver, at most; above it UNREAD_OBJECTS fails. Objects the input's database "
        "or schema selection excludes are waived and do not count.")
    require_storage_initialized: StrictBool = Field(
        default=False, description="NOT_READY while RDS still reports a storage operation (StorageOperationStatus, "
        "e.g. Initializing) at the end of the run, or when its storage progress could not be read.")
    engine_internal: Literal["named", "strict"] = Field(
        default="named", description="The engine's own files that no SQL reads and no application query touches "
        "(InnoDB's system, undo and temporary tablespaces, free extents, the redo log), counted apart from "
        "max_unread_bytes: covered when RDS says the whole volume is initialized (StorageOperationStatus reported, "
        "then gone). named: otherwise named with their bytes, not failing the verdict (a local run: always); "
        "strict: otherwise NOT_READY (ENGINE_INTERNAL).")

    @field_validator("min_coverage_pct")
    @classmethod
    def _a_percent_not_a_fraction(cls, value: float) -> float:
        """0.95 is 0.95 %, almost surely a fraction typed for 95 %: refused, so a run is never judged READY on
        a threshold its author did not mean (0 stays allowed: coverage not judged)."""
        if 0 < value <= 1:
            raise ValueError(f"is a percent from 0 to 100: {value:g} would mean {value:g} %; for "
                             f"{value * 100:g} % write {value * 100:g}")
        return value
