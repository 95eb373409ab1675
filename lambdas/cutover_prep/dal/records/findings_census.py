"""The census sections of findings.json (``census``: what lives on the volume, what of it was not read)."""

from __future__ import annotations

from pydantic import Field

from cutover_prep.dal.records.census import CatchUp
from cutover_prep.dal.records.section import Json, OpenSection, Section


# -- the census ----------------------------------------------------------------------------------------------------
class CensusDatabase(Section):
    database: str | None = None
    objects: int = 0
    bytes: int = 0
    unread_objects: int = 0
    unread_bytes: int = 0
    waived_bytes: int = 0
    engine_internal_bytes: int = 0  # only where there are some


class CensusObjectRow(Section):
    """A census object as ``census.dropped`` names it (``findings.census.FIELDS``)."""

    key: str
    database: str | None = None
    schema_: str | None = Field(None, alias="schema")
    name: str | None = None
    kind: str | None = None
    bytes: int | None = None
    size_known: bool | None = True  # False: the server would not say its size
    reason: str | None = None
    file: Json = None


class UnreadObject(CensusObjectRow):
    """``census.unread[]`` (and each row of ``census-unread.jsonl``): an object not read, its bytes and why."""

    unread_bytes: int = 0
    waived: bool = False
    engine_internal: bool = False


class EndCensusFailure(OpenSection):
    """Why the end census did not run: its step's error (the run item's, or census-end.json's)."""

    error: Json = None
    cause: Json = None


class UnreadMore(Section):
    objects: int = 0
    bytes: int = 0


class CensusSection(Section):
    """``census``: the objects on the volume and what of them was not read (``findings.census``). A run without a
    census has ``{"taken": false}`` only."""

    taken: bool = False
    end_census: bool = False
    end_census_failure: EndCensusFailure | None = None
    objects: int = 0
    bytes: int = 0
    unread_bytes: int = 0
    waived_bytes: int = 0
    engine_internal_bytes: int = 0
    engine_internal_objects: int = 0
    engine_internal_by_kind: dict[str, int] = {}
    unknown_size: list[str] = []
    unknown_size_objects: int | None = None  # None: a census of before issue 32 (count the list)
    by_database: list[CensusDatabase] = []
    unread: list[UnreadObject] = []
    unread_listed_at_most: int | None = None
    unread_objects: int | None = None
    waived_objects: int | None = None
    unread_more: UnreadMore | None = None
    created: list[str] = []
    created_objects: int | None = None
    dropped: list[CensusObjectRow] = []
    dropped_objects: int | None = None
    catch_up: list[CatchUp] = []  # the end census's catch-up pass, as warmup.end_census writes it
    unread_evidence: str | None = None  # every unread object (census-unread.jsonl)
