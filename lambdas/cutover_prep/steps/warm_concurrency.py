"""The deployment's bound on ``warmup.max_concurrency``.

The stack reserves concurrency for WarmUnit, the function the WarmUp Map fans out into (CDK context
``warm_concurrency``, 100 by default; docs/deploy.md), so that a warm-up cannot take the account's whole
Lambda concurrency. A run whose Map asked for more readers than that would have its extra WarmUnit calls
throttled until their retries ran out and its units recorded as failed; ValidateInput refuses it up front.
The stack hands ValidateInput the reservation as ``WARM_CONCURRENCY``; without it (the local run, offline
validation, a deployment with no reservation) nothing is checked.

Pure: no boto3; the CDK reads ``ENV`` from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CDK imports this module: no pydantic model at import time
    from cutover_prep.models.warmup import Warmup

ENV = "WARM_CONCURRENCY"


def limit(environ: Mapping[str, str] | None = None) -> int | None:
    """WarmUnit's reserved concurrency from the environment; None when the deployment reserves none."""
    if environ is None:
        from cutover_prep.settings import environment  # at the call: the CDK imports this module

        environ = environment(ENV)
    value = environ.get(ENV, "").strip()
    if not value:
        return None
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"{ENV} must be a whole number (WarmUnit's reserved concurrency), got {value!r}") from None
    return number if number > 0 else None


def check(warmup: Warmup, reserved: int | None) -> None:
    """A run that warms up may not ask for more readers at once than WarmUnit may run."""
    if reserved is None:
        return
    wanted = warmup.max_concurrency
    if warmup.enabled and wanted > reserved:
        from cutover_prep.models.run_input import InvalidInput

        raise InvalidInput(
            f"warmup.max_concurrency: {wanted} is more than this deployment lets the warm-up run at once "
            f"(WarmUnit's reserved concurrency, {reserved}); ask for at most {reserved}, or redeploy with "
            f"-c warm_concurrency={wanted} (docs/deploy.md)"
        )
