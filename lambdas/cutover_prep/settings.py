"""Environment variables of the Lambda functions, as a pydantic model."""

from __future__ import annotations

import os
from functools import lru_cache

from pydantic import BaseModel, Field


class Settings(BaseModel):
    table_name: str = Field(alias="TABLE_NAME", min_length=3)
    bucket_name: str = Field(alias="BUCKET_NAME", min_length=3)
    service_name: str = Field(alias="POWERTOOLS_SERVICE_NAME", default="cutover-prep")
    safety_margin_seconds: float = Field(alias="SAFETY_MARGIN_SECONDS", default=30.0, ge=1)
    read_attempts: int = Field(alias="READ_ATTEMPTS", default=3, ge=1, le=10)
    state_machine_arn: str | None = Field(alias="STATE_MACHINE_ARN", default=None)
    restore_lookback_hours: float = Field(alias="RESTORE_LOOKBACK_HOURS", default=24, gt=0, le=24 * 14)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings.model_validate(dict(os.environ))
