"""The findings of the warm-up's mode (pure): ``warmup_mode``, the datafile pass and the oversized segments, each
READ or NOT_READ, from the plan and the units' statuses."""

from __future__ import annotations

from typing import Any

from cutover_prep.dal.records.plan import BY_DATAFILES
from cutover_prep.engines.registry import SEGMENTS
from cutover_prep.models.status import UnitStatus


def findings_fields(plan: dict[str, Any], units: list[dict[str, Any]], status_of: dict[str, str],
                    segment_done: dict[str, bool]) -> dict[str, Any]:
    """``warmup_mode``, ``datafile_pass`` (when there is one) and ``oversized_segments`` with READ / NOT_READ."""
    mode = plan.get("mode") or SEGMENTS
    out: dict[str, Any] = {"warmup_mode": mode}
    ids = set(plan.get("datafile_units") or [])
    pass_done = False
    if ids:
        mine = [u for u in units if u["unit_id"] in ids]
        done = [u for u in mine if status_of.get(u["unit_id"]) == UnitStatus.DONE]
        pass_done = len(done) == len(mine)
        out["datafile_pass"] = {"units": len(mine), "done": len(done), "bytes": sum(u["bytes"] for u in mine),
                                "bytes_done": sum(u["bytes"] for u in done), "complete": pass_done}
    rows = []
    for seg in plan.get("oversized_segments") or []:
        read = pass_done if seg.get("read_by") == BY_DATAFILES else segment_done.get(seg["key"], False)
        rows.append({**seg, "status": "READ" if read else "NOT_READ"})
    out["oversized_segments"] = rows
    return out
