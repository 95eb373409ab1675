"""Run the target engine's preflight hook (``registry.EngineFamily.preflight``) and make the report."""

from __future__ import annotations

import time
from typing import Any

from cutover_prep.engines.preflight import CONNECTION, FAIL, Check, Context, Report


def run(spec: Any, ctx: Context) -> Report:
    """Every check of ``spec``'s engine, within ``ctx.timeout_seconds`` (a check not reached fails as such).
    The report never holds the password: ``target`` is engine, host, port, database and user."""
    from cutover_prep.engines.registry import family

    fam = family(spec.engine)
    target = {"host": spec.host, "port": spec.port, "database": spec.database, "user": spec.user}
    if fam.preflight is None:
        checks = [Check(CONNECTION, "preflight", FAIL, f"no preflight for {fam.label} yet")]
    else:
        checks = fam.preflight(spec, ctx)
    return Report(engine=fam.name, target=target, checks=checks, seconds=time.monotonic() - ctx.started)
