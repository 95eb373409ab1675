"""The gate's first condition: the run's own verdict.

It reads either a run's findings (``findings.json``: ``verdict.verdict`` and its failing reasons) or the
deployed run's item (``verdict``, ``verdict_reasons``, ``status``, written by Finalize). A run that has not
finished is closed (no verdict yet), a run that is not found is unknown."""

from __future__ import annotations

from typing import Any

from cutover_prep.gate.model import Condition


def _verdict_of(record: dict[str, Any]) -> tuple[str | None, list[str]]:
    verdict = record.get("verdict")
    if isinstance(verdict, dict):  # findings.json
        failing = [str(r.get("message") or r.get("code")) for r in verdict.get("reasons") or [] if not r.get("ok")]
        return verdict.get("verdict"), failing
    return (verdict if isinstance(verdict, str) else None), [str(r) for r in record.get("verdict_reasons") or []]


def _hot_set_warm(record: dict[str, Any]) -> Condition | None:
    hot = record.get("hot_set")
    if not isinstance(hot, dict):  # the run item: its hot set is known from findings only
        return None
    if hot.get("warm_at"):
        return Condition(name="verdict", state="open",
                         summary=f"the hot set is warm ({hot.get('units_done')} of {hot.get('units')} units, "
                                 f"warm at {hot['warm_at']}); the input accepts a warm hot set",
                         evidence={"hot_set_warm_at": hot["warm_at"], "units": hot.get("units")})
    return Condition(name="verdict", state="closed",
                     summary=f"the hot set is not warm yet ({hot.get('units_done')} of {hot.get('units')} units)",
                     evidence={"units_done": hot.get("units_done"), "units": hot.get("units")})


def verdict_condition(record: dict[str, Any] | None, *, run_id: str | None, accept: str = "ready") -> Condition:
    """``accept``: ``ready`` (the verdict READY) or ``hot_set_warm`` (READY, or the run's hot set warm)."""
    name = f"run {run_id}" if run_id else "the run"
    if record is None:
        return Condition(name="verdict", state="unknown", summary=f"{name} was not found: no verdict to check")
    verdict, failing = _verdict_of(record)
    evidence = {"run_id": run_id or record.get("run_id"), "verdict": verdict, "status": record.get("status")}
    if verdict == "READY":
        return Condition(name="verdict", state="open", summary=f"{name} is READY", evidence=evidence)
    if accept == "hot_set_warm" and (hot := _hot_set_warm(record)) is not None:
        if hot.state == "open" or verdict is None:
            return hot
    if verdict is None:
        return Condition(name="verdict", state="closed", evidence=evidence,
                         summary=f"{name} has no verdict yet (status {record.get('status') or 'unknown'})")
    shown = "; ".join(failing[:5]) + (f"; and {len(failing) - 5} more" if len(failing) > 5 else "")
    return Condition(name="verdict", state="closed", evidence={**evidence, "reasons": failing},
                     summary=f"{name} is {verdict}" + (f": {shown}" if shown else ""))
