"""The census of the volume (issue 21) as the run keeps it: each object a row of a JSON Lines object in key order
(``census-start.jsonl``, ``census-end.jsonl``), referenced from ``plan.json`` and ``census-end.json``
(``CensusRef``); ``census-end.json`` (``EndCensus``: written by ``warmup.end_census``, read by Finalize) with the
catch-up pass's reads or the error that stopped it.

A row (``CensusRow``) is ``engines.base.CensusObject`` as JSON (``findings.census.census_json``). The findings read a
census of a million rows as a stream of mappings, one at a time (issue 32 §8): the rows are not validated one by one
there; ``CensusRow`` says what a row holds and reads one where one is needed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict
from typing import Any, NamedTuple, NotRequired, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from cutover_prep.dal.records.base import Record


class CensusRow(BaseModel):
    """One object of a census (``CensusObject``'s fields, in its order)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    database: str | None = None
    schema_: str | None = Field(None, alias="schema")
    name: str | None = None
    kind: str | None = None
    bytes: int = 0
    key: str
    readable: bool = True
    reason: str | None = None
    file: str | None = None
    size_known: bool = True
    identity: str | None = None


class CensusObjectJson(TypedDict, total=False):
    """A census row as the findings stream it (``CensusRow``'s fields as a mapping: a million of them are read one at a
    time, not validated one by one)."""

    database: str | None
    schema: str | None
    name: str | None
    kind: str | None
    bytes: int
    key: str
    readable: bool
    reason: str | None
    file: str | None
    size_known: bool
    identity: str | None


class CensusEntry(NamedTuple):
    """A census row as the findings read it, one at a time (``CensusObjectJson``'s fields; a field a row of an older
    census does not hold: its default)."""

    key: str
    database: str | None = None
    schema: str | None = None
    name: str | None = None
    kind: str | None = None
    bytes: int = 0
    readable: bool = True
    reason: str | None = None
    file: str | None = None
    size_known: bool | None = None  # None: a row of before it was kept
    identity: str | None = None

    @classmethod
    def of(cls, row: CensusObjectJson) -> CensusEntry:
        return cls(*(row.get(name, default) for name, default in _ENTRY_DEFAULTS))  # type: ignore[misc]


class SegmentRead(TypedDict):
    """What the units read of one planned segment (``findings.coverage.segment_reads``): planned bytes, bytes read,
    planned bytes found gone, whether every unit holding it is done, whether any failed, and why bytes were gone."""

    planned: int
    read: int
    gone: NotRequired[int]
    done: bool
    failed: bool
    gone_reason: NotRequired[str]


_ENTRY_DEFAULTS = tuple((name, CensusEntry._field_defaults.get(name)) for name in CensusEntry._fields)


class CensusRef(BaseModel):
    """What plan.json and census-end.json keep of a census written to its own object (``findings.census.census_ref``);
    a plan of before issue 32 kept the list of rows itself."""

    model_config = ConfigDict(extra="forbid")

    key: str
    objects: int
    order: str = "key"


class CatchUp(BaseModel):
    """One object the end census's catch-up pass was to read: bytes planned before, its size now, what was read.
    (Unknown fields kept: a census-end.json of another version is read by a restarted run's Finalize.)"""

    model_config = ConfigDict(extra="allow")

    key: str
    planned_bytes: int = 0
    bytes: int = 0
    bytes_read: int = 0
    status: str  # READ / NOT_READ
    cause: str | None = None


class CensusError(BaseModel):
    """Why a census did not run: the error's name and cause."""

    model_config = ConfigDict(extra="allow")

    error: str | None = None
    cause: str | None = None


class EndCensusSummary(BaseModel):
    """What EndCensus returns (and keeps in census-end.json): taken, or why not."""

    model_config = ConfigDict(extra="allow")

    taken: bool = False
    objects: int | None = None
    caught_up: int | None = None
    not_caught_up: int | None = None
    bytes_caught_up: int | None = None
    error: str | None = None
    cause: str | None = None


class EndCensus(Record):
    """``census-end.json``: the census taken after the warm-up (``census``: its reference, or the list of rows a run
    of before issue 32 kept, or None when a transient error stopped it, ``error`` saying which), the catch-up pass's
    reads and the step's summary. No ``schema_version`` is written: the document is as before (version 1)."""

    taken_at: str | None = None
    census: CensusRef | list[dict[str, Any]] | None = None
    catch_up: list[CatchUp] = []
    error: CensusError | None = None
    summary: EndCensusSummary | None = None

    def stored(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_unset=True, exclude={"schema_version"})


# the run's evidence (dal.store's JSON Lines objects, each row a census object, in key order)
CENSUS_START, CENSUS_END, CENSUS_UNREAD = "census-start.jsonl", "census-end.jsonl", "census-unread.jsonl"


def census_json(objects: Iterable[Any]) -> list[CensusObjectJson]:
    """The census as the run's evidence keeps it (``CensusObject`` as dicts), in key order: the order in which
    ``census_section`` reads two censuses side by side without holding either."""
    return sorted((asdict(o) for o in objects), key=lambda o: str(o["key"]))


def census_ref(key: str, objects: list[CensusObjectJson]) -> dict[str, Any]:
    """What plan.json and census-end.json keep of a census written to ``key`` (JSON Lines, ``census_json``'s order);
    a plan written before issue 32 kept the list itself."""
    return {"key": key, "objects": len(objects), "order": "key"}


def census_rows(ref: CensusRef | list[CensusObjectJson] | dict[str, Any] | None,
                store: Any) -> Iterable[CensusObjectJson] | None:
    """The census a plan or census-end.json names: streamed from its JSON Lines object, or the list an older run
    kept in the document itself (None: no census)."""
    if isinstance(ref, CensusRef):
        return store.json_lines(ref.key)
    if isinstance(ref, dict) and "key" in ref:
        return store.json_lines(ref["key"])
    return ref
