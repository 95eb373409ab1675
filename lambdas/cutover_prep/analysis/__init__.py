"""IO analysis: expected RDS limits (instance class and storage) and the analysis of benchmark points.

Pure code, no AWS calls. The offline command line (``cutover-prep analyze``) is in
``cutover_prep.cli.analyze``; it is not imported here because click is not in the Lambda layer.
"""

from __future__ import annotations

from cutover_prep.analysis.io import analyze
from cutover_prep.analysis.limits import (
    INSTANCE_CLASSES,
    InvalidStorage,
    LimitsError,
    UnknownInstanceClass,
    expected_limits,
    instance_caps,
    known_instance_classes,
    storage_caps,
)

__all__ = [
    "INSTANCE_CLASSES",
    "InvalidStorage",
    "LimitsError",
    "UnknownInstanceClass",
    "analyze",
    "expected_limits",
    "instance_caps",
    "known_instance_classes",
    "storage_caps",
]
