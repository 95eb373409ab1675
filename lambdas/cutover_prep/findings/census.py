"""What lives on the volume and what of it was not read (issue 21), pure.

The census (``engines.base.CensusObject``, taken by the engine at discovery and, when the workflow
takes it, again after the warm-up) is the denominator: every object the engine can name, including
what the run's user may not read. Each object is either read (its key is a planned segment whose
units all finished) or *unread*, with its bytes and why:

- ``no privilege`` / ``not readable by SQL``: the census said so (the object was not planned);
- ``excluded by input``: the input's database or schema selection left it out, an explicit waiver;
- ``planned, not read``: planned, but a unit holding it failed, was cut off or never started;
- ``not in the plan``: readable and selected, yet not planned (the plan is older than the census);
- ``created after the census``: in the end census only, and not read; ``grew after the census``: read as
  planned, but larger at the end census (the growth is unread).

An object of the start census that the end census no longer holds was dropped while the run ran:
it leaves the denominator and is listed under ``dropped``. An object that grew counts the growth as
unread unless it was read after the growth.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict
from typing import Any

WAIVER = "excluded by input"
DATAFILE = "DATAFILE"  # the kind of a datafile in a census (engines with the datafile pass)
FIELDS = ("key", "database", "schema", "name", "kind", "bytes", "size_known", "reason", "file")


def census_json(objects: Iterable[Any]) -> list[dict[str, Any]]:
    """The census as plan.json keeps it (``CensusObject`` as dicts)."""
    return [asdict(o) for o in objects]


def _unread_of(obj: dict[str, Any], reads: dict[str, dict[str, Any]], by_datafiles: bool = False
               ) -> tuple[int, str | None]:
    """Unread bytes of one object and why (0, None: read). ``by_datafiles``: a complete datafile pass read
    every block of every datafile, so a readable segment it holds was read even though not planned."""
    read = reads.get(obj["key"])
    size = int(obj.get("bytes") or 0)
    if read is not None:
        if read["done"] and read["planned"] >= size:
            return 0, None
        if read["done"]:  # read, but it grew since it was planned
            return size - read["planned"], "grew after the census"
        return max(0, size - int(read["read"])), "planned, not read"
    if obj.get("reason"):
        return size, obj["reason"]
    if by_datafiles and obj.get("kind") != DATAFILE:
        return 0, None
    return size, "not in the plan"


def catch_up_reads(catch_up: list[dict[str, Any]] | None) -> dict[str, dict[str, Any]]:
    """What the end census's catch-up pass read (``warmup.end_census``), as ``coverage.segment_reads`` says it."""
    return {c["key"]: {"planned": int(c["bytes"]), "read": int(c["bytes_read"]), "done": c["status"] == "READ",
                       "failed": False} for c in catch_up or [] if c["status"] == "READ"}


def census_section(start: list[dict[str, Any]] | None, reads: dict[str, dict[str, Any]],
                   end: list[dict[str, Any]] | None = None,
                   catch_up: list[dict[str, Any]] | None = None, *,
                   datafile_pass_complete: bool = False, end_error: dict[str, Any] | None = None) -> dict[str, Any]:
    """``census``: the objects on the volume, what was read, and every unread object named with its bytes
    and reason, grouped per database. ``reads`` is ``coverage.segment_reads`` of the run; ``catch_up`` what
    the end census's catch-up pass read."""
    if start is None:
        return {"taken": False}
    reads = {**reads, **catch_up_reads(catch_up)}
    objects = {o["key"]: o for o in start}
    dropped: list[dict[str, Any]] = []
    created: set[str] = set()
    if end is not None:
        now = {o["key"]: o for o in end}
        dropped = [{f: objects[k].get(f) for f in FIELDS} for k in objects if k not in now]
        created = {k for k in now if k not in objects}
        objects = now
    unread, by_db = [], {}
    for key, obj in objects.items():
        size = int(obj.get("bytes") or 0)
        missing, reason = _unread_of(obj, reads, datafile_pass_complete)
        if reason and reason != WAIVER and key in created and key not in reads:  # the input's waiver holds
            reason = "created after the census"
        db = by_db.setdefault(obj.get("database"), {"database": obj.get("database"), "objects": 0, "bytes": 0,
                                                    "unread_objects": 0, "unread_bytes": 0, "waived_bytes": 0})
        db["objects"] += 1
        db["bytes"] += size
        if reason is None:
            continue
        waived = reason == WAIVER
        db["unread_objects"] += 1
        db["waived_bytes" if waived else "unread_bytes"] += missing
        unread.append({**{k: obj.get(k) for k in FIELDS}, "bytes": size, "unread_bytes": missing,
                       "size_known": obj.get("size_known", True), "reason": reason, "waived": waived})
    unread.sort(key=lambda u: (u["waived"], -u["unread_bytes"], str(u["database"]), str(u["key"])))
    counted = [u for u in unread if not u["waived"]]
    return {
        "taken": True, "end_census": end is not None,
        "objects": len(objects), "bytes": sum(int(o.get("bytes") or 0) for o in objects.values()),
        "unread_bytes": sum(u["unread_bytes"] for u in counted),
        "waived_bytes": sum(u["unread_bytes"] for u in unread if u["waived"]),
        "unknown_size": [u["key"] for u in counted if not u["size_known"]],
        "by_database": sorted(by_db.values(), key=lambda d: (-d["unread_bytes"], -d["bytes"], str(d["database"]))),
        "unread": unread,
        "created": sorted(created),
        "dropped": dropped,
        "catch_up": catch_up or [],
        **({"end_census_error": end_error} if end_error else {}),  # why the end census was not taken
    }
