"""The workflow's Preflight state (right after Discover): ``cutover-prep preflight`` on the run's target.

The connection is the run's own (``connection.connection_spec``: the secret's binding, the endpoint or an
allow-listed host, the deployment's TLS mode); the checks are ``runner.run``'s on what the run selects
(``warmup.databases``, ``include_schemas``, ``exclude_schemas``, ``include_system``: what it will read), with
the datafile pass's checks when ``warmup.mode`` asks for the pass.
The report is evidence ``preflight.json`` (the findings' ``preflight`` section), a short summary goes on
the run record, and with ``preflight.on_failure`` ``fail`` (the default) a failed check is
``PreflightFailed``, naming each failed check in one line: the run ends FAILED before any unit is read.

A restarted run (its plan reused) runs the preflight again: a restart after a failed preflight is how the
DBA's new grant is proven, and the grants may have changed since the first attempt.
Nothing here holds the password: the report's target is host, port, database and user.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cutover_prep.access.connection import SecretReader, connection_spec
from cutover_prep.access.secret_binding import TagReader
from cutover_prep.access.selection import resolved_warmup
from cutover_prep.dal.store import Store, evidence_key
from cutover_prep.engines.preflight import FAIL, Context, Report
from cutover_prep.models.steps import PreflightResult
from cutover_prep.models.warmup import Warmup
from cutover_prep.warmup import modes

if TYPE_CHECKING:
    from cutover_prep.models.steps import RunState

EVIDENCE = "preflight.json"
TIMEOUT_SECONDS = 60.0  # the whole preflight; the function's own timeout leaves room to write the evidence
DETAIL_CHARS = 240  # of each failed check in the error's message
NAMED_FAILURES = 8  # failed checks the message names with their detail; the rest are counted (all in preflight.json)
Runner = Callable[[Any, Context], Report]


class PreflightFailed(Exception):
    """A check of the preflight failed on the run's target (a grant, a read method, the read-only session)."""


def context_of(warmup: Warmup, timeout_seconds: float = TIMEOUT_SECONDS) -> Context:
    """The run's whole selection (issue 32: with ``databases`` alone, a least-privilege user with the catalogues
    waived by ``exclude_schemas`` failed on catalogues the run does not read)."""
    return Context(databases=tuple(warmup.databases), include_schemas=tuple(warmup.include_schemas),
                   exclude_schemas=tuple(warmup.exclude_schemas), include_system=warmup.include_system,
                   datafiles=modes.reads_datafiles(warmup.mode), timeout_seconds=timeout_seconds)


def failure_message(report: Report) -> str:
    """One line: each failed check with its detail (the server's words, the grant to give), never a secret."""
    failed = [c for c in report.ordered() if c.status == FAIL]  # connection, grants, methods, then the census
    parts = []
    for check in failed[:NAMED_FAILURES]:
        detail = " ".join(check.detail.split())
        if len(detail) > DETAIL_CHARS:
            detail = detail[:DETAIL_CHARS - 3] + "..."
        parts.append(f"{check.kind} {check.name}: {detail}")
    if len(failed) > NAMED_FAILURES:
        parts.append(f"and {len(failed) - NAMED_FAILURES} more")
    target = report.target
    return (f"preflight of {report.engine} {target.get('host')}:{target.get('port')}/{target.get('database')} as "
            f"{target.get('user')}: {len(failed)} check(s) failed: " + "; ".join(parts)
            + f" (evidence {EVIDENCE}; fix them, or set preflight.on_failure to warn)")


def summary_of(report: Report, on_failure: str, key: str) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for check in report.checks:
        counts[check.status] = counts.get(check.status, 0) + 1
    return {"enabled": True, "ok": report.ok, "failed": report.failed, "seconds": round(report.seconds, 3),
            "checks": counts, "on_failure": on_failure, "evidence_key": key}


def run_preflight(run: RunState, *, store: Store, read_secret: SecretReader,
                  read_secret_tags: TagReader | None = None, preflight: Runner | None = None,
                  timeout_seconds: float = TIMEOUT_SECONDS) -> PreflightResult:
    """Run the preflight on the run's target; ``PreflightFailed`` when a check failed and the input says fail.
    A state made before the ``preflight`` section has the model's defaults (``RunState``)."""
    run_id, options = run.run_id, run.preflight
    if not options.enabled:
        store.update_run(run_id, step="preflight_skipped", preflight={"enabled": False})
        return PreflightResult(enabled=False, ok=None)
    if preflight is None:
        from cutover_prep.preflight.runner import run as preflight
    # SecretNotBound: before connecting
    spec = connection_spec(run.target, run.instance, read_secret, read_tags=read_secret_tags)
    # the databases the run reads (issue 33 §1: the one target.database names, unless the input names others)
    report = preflight(spec, context_of(resolved_warmup(run.warmup, run.target, spec.engine), timeout_seconds))
    key = store.put_json(evidence_key(run_id, EVIDENCE), {"run_id": run_id, "on_failure": options.on_failure,
                                                          **report.to_json()})
    summary = summary_of(report, options.on_failure, key)
    store.update_run(run_id, step="preflight_passed" if report.ok else "preflight_failed", preflight=summary)
    if not report.ok and options.on_failure == "fail":
        raise PreflightFailed(failure_message(report))
    return PreflightResult.model_validate({k: summary[k] for k in ("enabled", "ok", "failed", "seconds",
                                                                   "evidence_key")})
