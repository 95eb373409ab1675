"""IO analysis: expected RDS limits (instance class and storage) and the analysis of benchmark points.

Pure code, no AWS calls. The offline command line (``cutover-prep analyze``) is in
``cutover_prep.cli.analyze``; it is not imported here because click is not in the Lambda layer.

The names below are imported on first use (PEP 562), not with the package: importing one submodule
(``cutover_prep.analysis.limits``, e.g. by the emulated volume's daemon) must not pull in the analysis of
points and its findings records.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_WHERE = {
    "analyze": "cutover_prep.analysis.io",
    **{name: "cutover_prep.analysis.limits" for name in (
        "INSTANCE_CLASSES", "InvalidStorage", "LimitsError", "UnknownInstanceClass", "expected_limits",
        "instance_caps", "known_instance_classes", "storage_caps")},
}

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


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once: the next lookup is an ordinary one
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
