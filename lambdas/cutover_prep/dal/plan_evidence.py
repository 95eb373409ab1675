"""Where a run's plan keeps its segments and units, and how a step reads them back as streams (issue 32 §8).

Discover writes the segments as their own JSON Lines object (``plan-segments.jsonl``, in plan order; plan.json keeps
a reference, ``segments_ref``) and the units as ``units.json``, a JSON array one unit a line (the Distributed Map's
items). Finalize writes what it found of every segment to ``segments.jsonl`` (findings.json lists at most
``census.LISTED`` of them). A plan written before kept the segments' list in plan.json itself: ``plan_segments``
reads either.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

PLAN_SEGMENTS = "plan-segments.jsonl"
SEGMENT_FINDINGS = "segments.jsonl"
UNITS = "units.json"


def segments_ref(key: str, count: int) -> dict[str, Any]:
    """What plan.json keeps of its segments written to ``key``."""
    return {"key": key, "segments": count, "order": "plan"}


def plan_segments(plan: dict[str, Any], store: Any) -> Iterable[dict[str, Any]]:
    """The plan's segments in plan order: streamed from their object, or the list a plan of before kept."""
    ref = plan.get("segments")
    if isinstance(ref, dict) and "key" in ref:
        return store.json_lines(ref["key"])
    return ref or []


def segment_count(plan: dict[str, Any]) -> int | None:
    """How many segments the plan holds, without reading them (None: a plan of before that lists none)."""
    ref = plan.get("segments")
    if isinstance(ref, dict):
        return int(ref.get("segments") or 0)
    return len(ref) if isinstance(ref, list) else None
