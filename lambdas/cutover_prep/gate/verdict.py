"""The gate's first condition: the run's own verdict.

It reads either a run's findings (``findings.json``: ``verdict.verdict`` and its failing reasons) or the
deployed run's item (``verdict``, ``verdict_reasons``, ``status``, written by Finalize). A run that has not
finished is closed (no verdict yet), a run that is not found is unknown."""

from __future__ import annotations

from dataclasses import dataclass

from cutover_prep.dal.records.findings import Findings, HotSet
from cutover_prep.dal.records.run import RunItem
from cutover_prep.gate.model import Condition


@dataclass(frozen=True)
class RunVerdict:
    """What the condition reads of a run: from its findings or from its run item."""

    verdict: str | None
    failing: list[str]
    status: str | None
    run_id: str | None
    hot_set: HotSet | None = None  # findings only: the run item does not know the hot set

    @classmethod
    def of(cls, record: RunItem | Findings) -> RunVerdict:
        if isinstance(record, RunItem):
            return cls(record.verdict, [str(r) for r in record.verdict_reasons or []], record.status, record.run_id)
        section = record.verdict
        if section is None:  # not finished: no verdict yet
            return cls(None, [], record.status, record.run_id, record.hot_set)
        failing = [str(r.message or r.code) for r in section.reasons if not r.ok]
        return cls(section.verdict, failing, record.status, record.run_id, record.hot_set)


def _hot_set_warm(run: RunVerdict) -> Condition | None:
    hot = run.hot_set
    if hot is None:  # the run item: its hot set is known from findings only
        return None
    if hot.warm_at:
        return Condition(name="verdict", state="open",
                         summary=f"the hot set is warm ({hot.units_done} of {hot.units} units, "
                                 f"warm at {hot.warm_at}); the input accepts a warm hot set",
                         evidence={"hot_set_warm_at": hot.warm_at, "units": hot.units})
    return Condition(name="verdict", state="closed",
                     summary=f"the hot set is not warm yet ({hot.units_done} of {hot.units} units)",
                     evidence={"units_done": hot.units_done, "units": hot.units})


def verdict_condition(record: RunItem | Findings | None, *, run_id: str | None,
                      accept: str = "ready") -> Condition:
    """``record``: the run's findings or its run item. ``accept``: ``ready`` (the verdict READY) or
    ``hot_set_warm`` (READY, or the run's hot set warm)."""
    name = f"run {run_id}" if run_id else "the run"
    if record is None:
        return Condition(name="verdict", state="unknown", summary=f"{name} was not found: no verdict to check")
    run = RunVerdict.of(record)
    verdict, failing = run.verdict, run.failing
    evidence = {"run_id": run_id or run.run_id, "verdict": verdict, "status": run.status}
    if verdict == "READY":
        return Condition(name="verdict", state="open", summary=f"{name} is READY", evidence=evidence)
    if accept == "hot_set_warm" and (hot := _hot_set_warm(run)) is not None:
        if hot.state == "open" or verdict is None:
            return hot
    if verdict is None:
        return Condition(name="verdict", state="closed", evidence=evidence,
                         summary=f"{name} has no verdict yet (status {run.status or 'unknown'})")
    shown = "; ".join(failing[:5]) + (f"; and {len(failing) - 5} more" if len(failing) > 5 else "")
    return Condition(name="verdict", state="closed", evidence={**evidence, "reasons": failing},
                     summary=f"{name} is {verdict}" + (f": {shown}" if shown else ""))
