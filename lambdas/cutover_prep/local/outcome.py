"""What a local run ends with: the execution's end as Step Functions describes it, and the run's outcome, which
``execution.json`` holds and ``cutover-prep local`` prints (``cli/local_command.py``)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import BaseModel

from cutover_prep.dal.records.run import RunItem


class ExecutionEnd(BaseModel):
    """What the local run reads of Step Functions' DescribeExecution answer (the rest of it is ignored)."""

    status: str  # RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED
    error: str | None = None
    cause: str | None = None
    output: str | None = None  # the workflow's output, JSON text: a SUCCEEDED run's is Finalize's answer


class UnitCount(BaseModel):
    """The units of Finalize's answer: done, planned in all, failed."""

    done: int = 0
    total: int = 0
    failed: int = 0


class RunOutput(BaseModel):
    """What the command line reads of a run's output (Finalize's answer); ``coverage_pct`` only when it says one
    (``model_fields_set``)."""

    verdict: str | None = None
    coverage_pct: int | float | None = None
    units: UnitCount | None = None


@dataclass(frozen=True)
class LocalRun:
    """A local run's outcome: how its execution ended, its run item, how long it took and where its evidence is."""

    run_id: str
    status: str
    out: str  # the evidence folder
    error: str | None = None
    cause: str | None = None
    output: str | None = None  # ExecutionEnd.output
    run: RunItem | None = None  # the run item as the run left it (None: ValidateInput did not record one)
    seconds: float = 0.0

    @classmethod
    def of(cls, run_id: str, end: ExecutionEnd, run: RunItem | None, *, seconds: float, out: str) -> LocalRun:
        return cls(run_id=run_id, status=end.status, error=end.error, cause=end.cause, output=end.output, run=run,
                   seconds=seconds, out=out)

    def outcome(self) -> RunOutput:
        """The output as the command line reads it (empty when the run has none)."""
        return RunOutput.model_validate_json(self.output) if self.output else RunOutput()

    def document(self) -> str:
        """``execution.json``."""
        return json.dumps({"run_id": self.run_id, "status": self.status, "error": self.error, "cause": self.cause,
                           "output": json.loads(self.output) if self.output else None,
                           "run": self.run.stored() if self.run is not None else None,
                           "seconds": self.seconds, "out": self.out}, indent=1, default=str)
