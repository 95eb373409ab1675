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
it leaves the denominator and is listed under ``dropped``. One the end census holds under the same key but
another engine identity (``CensusObject.identity``: PostgreSQL's OID and file, InnoDB's space id) was
dropped and created again, or rewritten: the old one is ``dropped``, the new one ``created`` (what the
warm-up read was the old one's blocks). An object that grew counts the growth as
unread unless it was read after the growth. Planned blocks the units found gone (``coverage.segment_reads``
``gone``: truncated while the run ran) left the object: the end census no longer counts them; without an end
census they leave the start census's size.
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


def gone_bytes(obj: dict[str, Any], reads: dict[str, dict[str, Any]], end_census: bool) -> int:
    """Bytes of a start-census object the units found gone (0 with an end census: it measured what is left)."""
    return 0 if end_census else int((reads.get(obj["key"]) or {}).get("gone") or 0)


def _unread_of(obj: dict[str, Any], reads: dict[str, dict[str, Any]], by_datafiles: bool = False,
               end_census: bool = False) -> tuple[int, str | None]:
    """Unread bytes of one object and why (0, None: read). ``by_datafiles``: a complete datafile pass read
    every block of every datafile, so a readable segment it holds was read even though not planned."""
    read = reads.get(obj["key"])
    size = int(obj.get("bytes") or 0) - gone_bytes(obj, reads, end_census)
    if read is not None:
        planned = read["planned"] - int(read.get("gone") or 0)  # what exists of the plan
        if read["done"] and planned >= size:
            return 0, None
        if read["done"]:  # read, but it grew since it was planned (or since it was truncated)
            return size - planned, "grew after the census"
        return max(0, size - int(read["read"])), "planned, not read"
    if obj.get("reason"):
        return size, obj["reason"]
    if by_datafiles and obj.get("kind") != DATAFILE:
        return 0, None
    return size, "not in the plan"


def recreated(start: Iterable[dict[str, Any]], end: Iterable[dict[str, Any]]) -> set[str]:
    """Keys both censuses hold for objects of different engine identities (``CensusObject.identity``: dropped and
    created again under the same names, or rewritten): a new object, whose blocks the warm-up did not read."""
    before = {o["key"]: o.get("identity") for o in start}
    return {o["key"] for o in end
            if o.get("identity") and before.get(o["key"]) and before[o["key"]] != o["identity"]}


def catch_up_reads(catch_up: list[dict[str, Any]] | None) -> dict[str, dict[str, Any]]:
    """What the end census's catch-up pass read (``warmup.end_census``), as ``coverage.segment_reads`` says it."""
    return {c["key"]: {"planned": int(c["bytes"]), "read": int(c["bytes_read"]), "done": c["status"] == "READ",
                       "failed": False} for c in catch_up or [] if c["status"] == "READ"}


def census_section(start: list[dict[str, Any]] | None, reads: dict[str, dict[str, Any]],
                   end: list[dict[str, Any]] | None = None,
                   catch_up: list[dict[str, Any]] | None = None, *,
                   datafile_pass_complete: bool = False, end_failure: dict[str, Any] | None = None) -> dict[str, Any]:
    """``census``: the objects on the volume, what was read, and every unread object named with its bytes
    and reason, grouped per database. ``reads`` is ``coverage.segment_reads`` of the run; ``catch_up`` what
    the end census's catch-up pass read; ``end_failure`` why the end census did not run (its step's error),
    kept only when there is no end census (the verdict's END_CENSUS names it)."""
    if start is None:
        return {"taken": False}
    objects = {o["key"]: o for o in start}
    dropped: list[dict[str, Any]] = []
    created: set[str] = set()
    if end is not None:
        now = {o["key"]: o for o in end}
        again = recreated(start, end)  # the warm-up read the object that was there before: not this one
        dropped = [{f: objects[k].get(f) for f in FIELDS} for k in objects if k not in now or k in again]
        created = {k for k in now if k not in objects} | again
        reads = {k: r for k, r in reads.items() if k not in again}
        objects = now
    reads = {**reads, **catch_up_reads(catch_up)}
    unread, by_db = [], {}
    for key, obj in objects.items():
        size = int(obj.get("bytes") or 0) - gone_bytes(obj, reads, end is not None)
        missing, reason = _unread_of(obj, reads, datafile_pass_complete, end is not None)
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
        **({"end_census_failure": end_failure} if end is None and end_failure else {}),
        "objects": len(objects),
        "bytes": sum(int(o.get("bytes") or 0) - gone_bytes(o, reads, end is not None) for o in objects.values()),
        "unread_bytes": sum(u["unread_bytes"] for u in counted),
        "waived_bytes": sum(u["unread_bytes"] for u in unread if u["waived"]),
        "unknown_size": [u["key"] for u in counted if not u["size_known"]],
        "by_database": sorted(by_db.values(), key=lambda d: (-d["unread_bytes"], -d["bytes"], str(d["database"]))),
        "unread": unread,
        "created": sorted(created),
        "dropped": dropped,
        "catch_up": catch_up or [],
    }
