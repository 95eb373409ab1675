"""Oracle discovery (``OracleEngine.discover``): what each selected segment is and how it is read (issue 35 §3, §4).

- Owner by owner, page by page: the selection (include/exclude patterns, system schemas) is applied to the
  list of users (``sql.OWNERS_SQL``), and the segment and extent queries (``sql.SEGMENTS_SQL``,
  ``sql.EXTENTS_SQL``) each name one selected owner and one page of its segment names in SQL, so an
  unselected schema's segment headers are never read, on a cold volume each a first touch.
- A page is ``PAGE_NAMES`` segment names (``sql.PAGE_LAST_NAME_SQL``). Each page found is handed to
  ``pages`` (a mapping: page id -> the page's segments as JSON) and taken from it when it is already there,
  so discovery that stopped half way (a lost connection, a Lambda that ran out of time) resumes at the
  first page it has not found instead of starting over (``warmup.discovery`` keeps the pages of a run).
- Extents are keyed by (owner, name, partition, segment type): a table and an index may share a name.
- A LOB segment of a heap table is splittable (``engines.oracle.lobsplit``): each planned piece is read as the
  rows of the matching share of its table's rowid ranges, in one call (``whole_pieces``: the planner's unit-sized
  pieces are not cut into smaller chunks), so no call must read a whole LOB. An IOT's LOB is read whole.
- Not planned (named by the census as read by the datafile pass only, ``census``): CLUSTER, NESTED TABLE
  and LOBINDEX segments, cluster indexes and LOB index partitions (``sql.DATAFILE_ONLY_*``).
"""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import MutableMapping
from typing import Any, TypedDict

from pydantic import JsonValue

from cutover_prep.engines.base import DiscoveryOptions, Extent, Segment
from cutover_prep.engines.locators import OracleLocator
from cutover_prep.engines.oracle import read_sql as rq
from cutover_prep.engines.oracle import sql as q

TABLE_TYPES = {"TABLE", "TABLE PARTITION", "TABLE SUBPARTITION"}
INDEX_TYPES = {"INDEX", "INDEX PARTITION", "INDEX SUBPARTITION"}
LOB_TYPES = {"LOBSEGMENT", "LOB PARTITION", "LOB SUBPARTITION"}
LOB_TABLE_TYPE = {"LOBSEGMENT": "TABLE", "LOB PARTITION": "TABLE PARTITION", "LOB SUBPARTITION": "TABLE SUBPARTITION"}
PAGE_NAMES = 500  # segment names per page (a name has one segment, or one per (sub)partition)
ExtentKey = tuple[Any, Any, Any, Any]  # owner, segment name, partition, segment type


def selected(owner: str, options: DiscoveryOptions, system: set[str]) -> bool:
    if not options.include_system and owner in system:
        return False
    if options.include_schemas and not any(fnmatch.fnmatchcase(owner, p) for p in options.include_schemas):
        return False
    return not any(fnmatch.fnmatchcase(owner, p) for p in options.exclude_schemas)


def page_id(owner: str, after: str | None) -> str:
    """A page's id: its owner and the name it starts after (hashed: any characters, a short store key)."""
    return hashlib.sha256(f"{owner}\x00{after or ''}".encode()).hexdigest()[:32]


class SegmentDoc(TypedDict):
    """A planned segment as a page keeps it (``Segment``'s fields; ``extents`` as ``[file, first block, blocks]``)."""

    schema: str
    name: str
    kind: str
    bytes: int
    block_size: int
    extents: list[list[int]]
    locator: dict[str, JsonValue]  # ``Locator.to_json``
    partition: str | None
    splittable: bool


class PageDoc(TypedDict):
    """One page of an owner's segment names: the last name it holds (None: the owner has no more) and its
    segments."""

    upto: str | None
    segments: list[SegmentDoc]


def segment_json(s: Segment) -> SegmentDoc:
    return {"schema": s.schema, "name": s.name, "kind": s.kind, "bytes": s.bytes, "block_size": s.block_size,
            "extents": [[e.file_id, e.first_block, e.blocks] for e in s.extents], "locator": s.locator.to_json(),
            "partition": s.partition, "splittable": s.splittable}


def segment_of(d: SegmentDoc) -> Segment:
    return Segment(schema=d["schema"], name=d["name"], kind=d["kind"], bytes=int(d["bytes"]),
                   block_size=int(d["block_size"]), extents=tuple(Extent(int(f), int(b), int(n))
                                                                  for f, b, n in d["extents"]),
                   locator=OracleLocator.model_validate(d["locator"]), partition=d["partition"],
                   splittable=bool(d["splittable"]))


def owners(cur: Any, options: DiscoveryOptions, system: set[str]) -> list[str]:
    return [str(u) for (u,) in cur.execute(q.OWNERS_SQL) if u is not None and selected(str(u), options, system)]


def page_segments(cur: Any, owner: str, after: str | None, upto: str) -> list[Segment]:
    """The segments of one page (owner, names in (after, upto]), each with its own extents."""
    binds = {"owner": owner, "after": after, "upto": upto}
    extents: dict[ExtentKey, list[Extent]] = {}
    for own, name, part, seg_type, rfno, block_id, blocks in cur.execute(q.EXTENTS_SQL, **binds):
        extents.setdefault((own, name, part, seg_type), []).append(Extent(int(rfno), int(block_id), int(blocks)))
    found = []
    for row in cur.execute(q.SEGMENTS_SQL, **binds):
        segment = classify(row, extents)
        if segment is not None:
            found.append(segment)
    return found


def discover(cur: Any, options: DiscoveryOptions, system: set[str],
             pages: MutableMapping[str, PageDoc] | None = None) -> list[Segment]:
    """Every selected segment with a read method, a global partitioned index merged into one segment."""
    pages = {} if pages is None else pages
    found: list[Segment] = []
    for owner in owners(cur, options, system):
        after: str | None = None
        while True:
            pid = page_id(owner, after)
            page = pages.get(pid)
            if page is None:
                row = cur.execute(q.PAGE_LAST_NAME_SQL, owner=owner, after=after, page_names=PAGE_NAMES).fetchone()
                upto = row[0] if row else None
                # the windows (after, upto] follow each other in the server's own comparison of names (its
                # NLS_COMP), which Python's need not match: only no next name (NULL) or no progress ends an owner
                if upto is None or str(upto) == after:
                    page = {"upto": None, "segments": []}
                else:
                    page = {"upto": str(upto),
                            "segments": [segment_json(s) for s in page_segments(cur, owner, after, str(upto))]}
                pages[pid] = page
            if page["upto"] is None:
                break
            found += [segment_of(d) for d in page["segments"]]
            after = page["upto"]
    return merge_global_indexes(found)


def merge_global_indexes(segments: list[Segment]) -> list[Segment]:
    """A global (or composite, or IOT) partitioned index is read whole, once: its partitions become one segment."""
    out: list[Segment] = []
    merged: dict[tuple[str, str], int] = {}
    for segment in segments:
        loc = OracleLocator.of(segment.locator)
        if loc.read == "index" and loc.whole_index and segment.partition:
            key = (segment.schema, segment.name)
            if key in merged:
                prev = out[merged[key]]
                out[merged[key]] = Segment(
                    schema=prev.schema, name=prev.name, kind=prev.kind, bytes=prev.bytes + segment.bytes,
                    block_size=prev.block_size, extents=prev.extents + segment.extents,
                    locator=prev.locator, partition=None, splittable=False)
                continue
            merged[key] = len(out)
            segment = Segment(schema=segment.schema, name=segment.name, kind="INDEX", bytes=segment.bytes,
                              block_size=segment.block_size, extents=segment.extents,
                              locator=segment.locator, partition=None, splittable=False)
        out.append(segment)
    return out


def classify(row: tuple, extents: dict[ExtentKey, list[Extent]]) -> Segment | None:
    """One SEGMENTS_SQL row as a planned segment, or None: no extents (dropped since), or no SQL read path
    (a cluster index, a LOB index partition: the census names them, read by the datafile pass only)."""
    (owner, name, part, seg_type, size, _blocks, block_size, objd, lob_table, lob_column, lob_type,
     idx_owner, idx_table, index_type, locality, lob_table_part, bigfile,
     lob_col, iot_type, iot_name, lob_table_subpart, visibility, lob_table_iot) = row
    found = extents.get((owner, name, part, seg_type))
    if not found:
        return None
    locator: dict[str, JsonValue] = {"owner": owner, "segment": name, "partition": part, "segment_type": seg_type}
    splittable = False
    if seg_type in TABLE_TYPES and iot_type == "IOT_OVERFLOW" and iot_name:
        # SYS_IOT_OVER_n cannot be selected from (ORA-25191): its rows are read through their IOT
        locator.update(read="iot_overflow", table=iot_name, overflow=name, split="key_range", whole_pieces=True)
        splittable = True  # in slices of the IOT's key, one unit-sized piece per call (engines.oracle.iotsplit)
    elif seg_type in TABLE_TYPES and objd is not None:
        locator.update(read="rowid_range", table=name, data_object_id=int(objd),
                       subpartition=seg_type == "TABLE SUBPARTITION", bigfile=bigfile == "YES")
        splittable = True
    elif seg_type in INDEX_TYPES and index_type in q.DATAFILE_ONLY_INDEX_TYPES:
        return None  # a cluster index, a LOB index (partition): no table column keys it for an INDEX_FFS
    elif seg_type in INDEX_TYPES and idx_table:
        if index_type and index_type.startswith("IOT"):
            locator.update(read="index", table_owner=idx_owner, table=idx_table, whole_index=True,
                           invisible=visibility == "INVISIBLE")
        else:
            local = locality == "LOCAL" and seg_type == "INDEX PARTITION"
            locator.update(read="index", table_owner=idx_owner, table=idx_table,
                           whole_index=not local and seg_type != "INDEX", invisible=visibility == "INVISIBLE")
    elif seg_type in LOB_TYPES and lob_table and lob_type in rq.LOB_BUFFERS:
        sub = seg_type == "LOB SUBPARTITION"
        locator.update(read="lob", table=lob_table, column=lob_col or lob_column, data_type=lob_type,
                       table_partition=lob_table_subpart if sub else lob_table_part, table_subpartition=sub)
        if lob_table_iot is None:  # a heap table: read by its rowid ranges, one unit-sized piece per call
            locator.update(split="table_rowid", table_segment_type=LOB_TABLE_TYPE[seg_type], whole_pieces=True)
            splittable = True
    elif seg_type in LOB_TYPES and lob_table:  # XMLType, object attribute, or a column not found
        locator.update(read="unsupported", why=f"LOB of column {lob_column} of {lob_table}, type "
                       f"{lob_type or 'not found in DBA_TAB_COLS'}: DBMS_LOB.READ has no buffer for it")
    else:
        locator.update(read="unsupported")  # a type SEGMENTS_SQL gained without a read path: reported by name
    return Segment(schema=owner, name=name, kind=seg_type, bytes=int(size), block_size=int(block_size),
                   extents=tuple(found), locator=OracleLocator.model_validate(locator), partition=part,
                   splittable=splittable)
