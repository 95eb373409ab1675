"""The workflow catalogue of the Lambda package (``lambdas/cutover_prep/workflows.py``): which
workflows exist, their ASL files, the functions they call and their settings, the table's key
schema. The CDK reads it from there, as the local harness and the tests do; it imports nothing
heavy (no boto3, no database driver), so the synth does not need the Lambda dependencies.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_LAMBDA_DIR = Path(__file__).resolve().parents[2] / "lambdas"
if importlib.util.find_spec("cutover_prep") is None:  # not installed in this Python: use the source tree
    sys.path.append(str(_LAMBDA_DIR))

from cutover_prep.live import names as live_metrics  # noqa: E402  (the dashboard's metric names)
from cutover_prep.settings import DEPLOYMENT_ID_ENV  # noqa: E402
from cutover_prep.steps.warm_concurrency import ENV as WARM_CONCURRENCY_ENV  # noqa: E402
from cutover_prep.workflows import (  # noqa: E402
    ALLOW_UNBOUND_SECRETS_ENV,
    ALLOWED_DB_HOSTS_ENV,
    BUCKET_SUBSTITUTION,
    COMPARISON_INSTANCE_PREFIX,
    COMPARISON_TAG,
    DEPLOYMENT_TAG,
    FUNCTIONS,
    REAPER_FUNCTION,
    TABLE_KEYS,
    TABLE_TTL_ATTRIBUTE,
    TRIGGER_FUNCTION,
    TRIGGERED_WORKFLOW,
    TTL_TAG,
    WORKFLOWS,
    Function,
    Workflow,
)

__all__ = [
    "ALLOW_UNBOUND_SECRETS_ENV",
    "ALLOWED_DB_HOSTS_ENV",
    "BUCKET_SUBSTITUTION",
    "COMPARISON_INSTANCE_PREFIX",
    "COMPARISON_TAG",
    "DEPLOYMENT_ID_ENV",
    "DEPLOYMENT_TAG",
    "FUNCTIONS",
    "REAPER_FUNCTION",
    "TABLE_KEYS",
    "TABLE_TTL_ATTRIBUTE",
    "TRIGGERED_WORKFLOW",
    "TRIGGER_FUNCTION",
    "TTL_TAG",
    "WARM_CONCURRENCY_ENV",
    "WORKFLOWS",
    "Function",
    "live_metrics",
    "Workflow",
]
