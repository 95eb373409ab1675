"""The base of findings.json's section models: ``Section`` (every field known), ``OpenSection`` (another record's
fields kept), ``Num`` (an int or a float, kept as given) and ``Json`` (a value kept as written)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

Num = int | float  # kept as given: an int stays an int, a float a float (json.dumps writes them differently)
Json = Any  # a value another phase's record holds, kept as written (the plan's summary, the benchmark's analysis)


class Section(BaseModel):
    """A section of a finding whose fields are all known: a misspelt or unknown field fails."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    def stored(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_unset=True, by_alias=True)


class SegmentNames(BaseModel):
    """What names a segment in a record (a plan's segment, a truncated one): its key, database, schema, name and
    kind (``engines.base.Segment``'s)."""

    key: str
    database: str | None = None
    schema_: str | None = Field(None, alias="schema")
    name: str | None = None
    kind: str | None = None


class OpenSection(Section):
    """A section that carries another record's fields, or that a newer writer may extend: unknown fields kept."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
