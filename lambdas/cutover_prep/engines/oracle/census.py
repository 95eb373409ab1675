"""The census of an Oracle volume (issue 21), pure: rows in, ``CensusObject`` out
(``OracleEngine.census`` asks the database).

- Every segment in DBA_SEGMENTS (``sql.CENSUS_SEGMENTS_SQL``), of every type. Its ``key`` is the
  key discovery gives its segment (``OWNER.NAME[:PARTITION]#TYPE``); the partitions of an index
  discovery reads whole (global, composite or IOT partitioned) are one object
  ``OWNER.NAME#INDEX`` with their bytes summed, as discovery merges them. Why one is not
  readable: ``excluded by input`` (an explicit schema pattern of the input), ``not readable by
  SQL`` (the recycle bin's ``BIN$`` segments, undo, temporary and the other types discovery does
  not plan), ``no privilege`` (its table, index, LOB, LOB index or cluster is not in the run user's ALL_
  views), ``read by the datafile pass only`` (a CLUSTER, NESTED TABLE or LOBINDEX segment, a cluster
  index, a LOB index partition: no SQL statement reads it by a documented path, discovery does not plan
  it, and a complete datafile pass reads it: ``findings.census``). A system schema left out only because
  ``include_system`` is off is not waived.
- Every datafile in DBA_DATA_FILES (``sql.CENSUS_DATAFILES_SQL``), kind ``DATAFILE``, with the key
  of the datafile pass's segment (``TABLESPACE.file_N#DATAFILE``, ``datafiles.datafile_segment``)
  and its file name. A datafile *contains* segments: the two kinds are two views of the same
  bytes (the datafile pass is weighed against the segments), never to be added together. An
  offline or unavailable datafile is ``not readable by SQL``.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable

from cutover_prep.engines import keys
from cutover_prep.engines.base import CensusObject, DiscoveryOptions
from cutover_prep.engines.oracle.datafiles import KIND as DATAFILE
from cutover_prep.engines.oracle.sql import (
    DATAFILE_ONLY_INDEX_TYPES,
    DATAFILE_ONLY_SEGMENT_TYPES,
    PLANNED_SEGMENT_TYPES,
)

NO_PRIVILEGE, NOT_SQL, EXCLUDED = "no privilege", "not readable by SQL", "excluded by input"
DATAFILE_ONLY = "read by the datafile pass only"  # findings.census.DATAFILE_ONLY
INDEX_PARTS = {"INDEX PARTITION", "INDEX SUBPARTITION"}


def excluded(owner: str, options: DiscoveryOptions) -> bool:
    """Left out by an explicit pattern of the input (not by the default that skips system schemas)."""
    if options.include_schemas and not any(fnmatch.fnmatchcase(owner, p) for p in options.include_schemas):
        return True
    return any(fnmatch.fnmatchcase(owner, p) for p in options.exclude_schemas)


def planned_whole(seg_type: str, index_type: str | None, locality: str | None) -> bool:
    """Discovery's rule (``OracleEngine._segment``): an index partition is read with its whole index
    unless it is a partition of a LOCAL index (a subpartition always is)."""
    if seg_type not in INDEX_PARTS or index_type is None or index_type in DATAFILE_ONLY_INDEX_TYPES:
        return False
    return str(index_type).startswith("IOT") or not (locality == "LOCAL" and seg_type == "INDEX PARTITION")


def datafile_only(seg_type: str, index_type: str | None) -> bool:
    """No SQL statement reads it by a documented path (``sql.DATAFILE_ONLY_SEGMENT_TYPES``): the datafile pass does."""
    return seg_type in DATAFILE_ONLY_SEGMENT_TYPES or (seg_type.startswith("INDEX")
                                                       and index_type in DATAFILE_ONLY_INDEX_TYPES)


def segment_key(owner: str, name: str, partition: str | None, seg_type: str) -> str:
    """``Segment.key`` of discovery's segment: ``OWNER.NAME[:PARTITION]#TYPE``, names quoted where needed."""
    return keys.object_key((owner, name), seg_type, partition=partition)


def segment_objects(rows: Iterable[tuple], accessible: set[tuple[str, str]],
                    options: DiscoveryOptions) -> list[CensusObject]:
    """DBA_SEGMENTS rows (owner, name, partition, type, bytes, tablespace, index_type, locality)."""
    merged: dict[str, CensusObject] = {}
    out: list[CensusObject] = []
    for owner, name, part, seg_type, nbytes, _tablespace, index_type, locality in rows:
        owner, name, seg_type = str(owner), str(name), str(seg_type)
        if excluded(owner, options):
            reason: str | None = EXCLUDED
        elif name.startswith("BIN$") or seg_type not in PLANNED_SEGMENT_TYPES | DATAFILE_ONLY_SEGMENT_TYPES:
            reason = NOT_SQL
        elif (owner, name) not in accessible:
            reason = NO_PRIVILEGE
        elif datafile_only(seg_type, index_type):
            reason = DATAFILE_ONLY
        else:
            reason = None
        if planned_whole(seg_type, index_type, locality):
            key = segment_key(owner, name, None, "INDEX")
            prev = merged.get(key)
            size = int(nbytes or 0) + (prev.bytes if prev else 0)
            merged[key] = CensusObject(None, owner, name, "INDEX", size, key, reason is None, reason, None)
            continue
        out.append(CensusObject(None, owner, name, seg_type, int(nbytes or 0),
                                segment_key(owner, name, part, seg_type), reason is None, reason, None))
    return out + list(merged.values())


def datafile_objects(rows: Iterable[tuple]) -> list[CensusObject]:
    """DBA_DATA_FILES rows (file_id, tablespace, file_name, blocks, block_size, status, online_status)."""
    out = []
    for file_id, tablespace, file_name, blocks, block_size, status, online in rows:
        readable = status == "AVAILABLE" and online in ("ONLINE", "SYSTEM")
        name = f"file_{int(file_id)}"
        out.append(CensusObject(None, str(tablespace), name, DATAFILE, int(blocks or 0) * int(block_size or 0),
                                keys.object_key((str(tablespace), name), DATAFILE), readable,
                                None if readable else NOT_SQL, str(file_name) if file_name else None))
    return out
