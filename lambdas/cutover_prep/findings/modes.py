"""The findings of the warm-up's mode (pure): ``warmup_mode``, the datafile pass and the oversized segments, each
READ or NOT_READ, from the plan and the units' statuses."""

from __future__ import annotations

from typing import NamedTuple

from cutover_prep.dal.records.findings import DatafilePass, OversizedSegment
from cutover_prep.dal.records.plan import BY_DATAFILES, Plan, UnitSummary
from cutover_prep.engines.registry import SEGMENTS
from cutover_prep.models.status import UnitStatus


class ModeFindings(NamedTuple):
    """``warmup_mode``, ``datafile_pass`` (None: the plan has none) and ``oversized_segments``."""

    warmup_mode: str
    datafile_pass: DatafilePass | None
    oversized_segments: list[OversizedSegment]


def findings_fields(plan: Plan, units: list[UnitSummary], status_of: dict[str, str],
                    segment_done: dict[str, bool]) -> ModeFindings:
    """``warmup_mode``, ``datafile_pass`` (when there is one) and ``oversized_segments`` with READ / NOT_READ."""
    ids = set(plan.datafile_units)
    pass_done, datafile_pass = False, None
    if ids:
        mine = [u for u in units if u.unit_id in ids]
        done = [u for u in mine if status_of.get(u.unit_id) == UnitStatus.DONE]
        pass_done = len(done) == len(mine)
        datafile_pass = DatafilePass(units=len(mine), done=len(done), bytes=sum(u.bytes for u in mine),
                                     bytes_done=sum(u.bytes for u in done), complete=pass_done)
    rows = []
    for seg in plan.oversized_segments:
        read = pass_done if seg.read_by == BY_DATAFILES else segment_done.get(seg.key, False)
        rows.append(OversizedSegment.model_validate({**seg.model_dump(exclude_unset=True),
                                                     "status": "READ" if read else "NOT_READ"}))
    return ModeFindings(plan.mode or SEGMENTS, datafile_pass, rows)
