"""Which RDS storage volume each planned Oracle segment's blocks are on (pure; ``cutover_prep.engines.volumes``).

RDS for Oracle may have up to three additional storage volumes; a datafile on one lives under that
volume's path (``volumes.VOLUME_PATH_PREFIX``), every other datafile on the primary volume. DBA_EXTENTS
numbers a segment's files by RELATIVE_FNO, unique within the segment's tablespace (a bigfile tablespace's
one file is always 1024), so a segment's files are found through its tablespace: DBA_DATA_FILES gives
(tablespace, RELATIVE_FNO, FILE_ID, FILE_NAME), DBA_SEGMENTS the tablespace of each segment.

A segment with blocks on an additional volume gets ``file_volumes`` in its locator: ``{file number as in
its extents: volume name}`` (RELATIVE_FNO for a segment, FILE_ID for a datafile of the datafile pass),
only for the files off the primary volume. ``findings.volumes`` reads it from the planned ranges.
A global partitioned index is planned as one segment: the files of all its partitions' tablespaces are
merged; should two of those tablespaces have the same RELATIVE_FNO on different volumes (two bigfile
tablespaces, both 1024), the first volume is kept and ``file_volumes_ambiguous`` says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from cutover_prep.engines.base import Segment
from cutover_prep.engines.locators import OracleLocator
from cutover_prep.engines.volumes import ADDITIONAL_VOLUME_NAMES, PRIMARY_VOLUME, volume_of_path


@dataclass
class DatafileVolumes:
    """The datafiles that are on an additional volume, by (tablespace, RELATIVE_FNO) and by FILE_ID."""

    by_tablespace: dict[tuple[str, int], str] = field(default_factory=dict)
    by_file_id: dict[int, str] = field(default_factory=dict)
    paths: dict[int, str] = field(default_factory=dict)  # FILE_ID -> FILE_NAME of those files

    @property
    def tablespaces(self) -> list[str]:
        return sorted({ts for ts, _ in self.by_tablespace})


def datafile_volumes(rows: Iterable[tuple[Any, ...]],
                     names: tuple[str, ...] = ADDITIONAL_VOLUME_NAMES) -> DatafileVolumes:
    """DATAFILE_PATHS_SQL's rows -> the files off the primary volume (``names``: the volumes RDS lists)."""
    found = DatafileVolumes()
    for tablespace, rfno, file_id, file_name in rows:
        volume = volume_of_path(file_name, names)
        if volume == PRIMARY_VOLUME:
            continue
        found.by_tablespace[(str(tablespace), int(rfno))] = volume
        found.by_file_id[int(file_id)] = volume
        found.paths[int(file_id)] = str(file_name)
    return found


def annotate(segments: list[Segment], files: DatafileVolumes,
             tablespaces_of: dict[tuple[str, str, str | None], set[str]]) -> list[Segment]:
    """``segments`` with ``file_volumes`` in the locator of each one that has a file on an additional
    volume. ``tablespaces_of``: (owner, segment, partition) -> tablespaces (TABLESPACE_SEGMENTS_SQL)."""
    if not files.by_file_id:
        return segments
    by_segment: dict[tuple[str, str], set[str]] = {}  # a merged global index: every partition's tablespace
    for (owner, name, _part), spaces in tablespaces_of.items():
        by_segment.setdefault((owner, name), set()).update(spaces)
    out = []
    for seg in segments:
        mapping: dict[str, str] = {}
        ambiguous = False
        loc = OracleLocator.of(seg.locator)
        if loc.read == "datafile":
            file_id = int(loc.file_id or 0)
            if file_id in files.by_file_id:
                mapping[str(file_id)] = files.by_file_id[file_id]
        else:
            spaces = tablespaces_of.get((seg.schema, seg.name, seg.partition))
            if spaces is None and seg.partition is None:
                spaces = by_segment.get((seg.schema, seg.name))
            rfnos = {e.file_id for e in seg.extents}
            for ts in sorted(spaces or ()):
                for rfno in rfnos:
                    volume = files.by_tablespace.get((ts, rfno))
                    if volume is None:
                        continue
                    if mapping.get(str(rfno), volume) != volume:
                        ambiguous = True
                        continue
                    mapping[str(rfno)] = volume
        if not mapping:
            out.append(seg)
            continue
        locator = loc.with_fields(file_volumes=mapping, **({"file_volumes_ambiguous": True} if ambiguous else {}))
        out.append(replace(seg, locator=locator))
    return out
