"""The base of every stored record: a version on the record, and reading an older one.

A record is written with its class's ``SCHEMA_VERSION``. Reading (``Record.read``) takes a stored mapping
of any version up to the current one: a version below the current passes through the class's
``UPGRADES`` in order (version n -> n + 1, each a pure function of the mapping), a mapping without a
``schema_version`` is version 1 (every record before versions were kept), and a version above the
current one is refused by name (``NewerRecord``): a report or a restarted run of an older deployment
must not misread what a newer one wrote.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict

Upgrade = Callable[[dict[str, Any]], dict[str, Any]]


class NewerRecord(ValueError):
    """A stored record written by a newer version of the schema than this code reads."""


class Record(BaseModel):
    """A stored record: unknown fields are kept (a newer writer's additions survive a read and a write)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    SCHEMA_VERSION: ClassVar[int] = 1
    UPGRADES: ClassVar[Mapping[int, Upgrade]] = {}

    schema_version: int = 1

    @classmethod
    def read(cls, stored: Mapping[str, Any]) -> Self:
        """The record of a stored mapping of any version up to ``SCHEMA_VERSION`` (see the module)."""
        doc = dict(stored)
        version = int(doc.get("schema_version", 1))
        if version > cls.SCHEMA_VERSION:
            raise NewerRecord(
                f"{cls.__name__} schema_version {version} is newer than this code reads ({cls.SCHEMA_VERSION}):"
                " upgrade cutover-prep to read it"
            )
        while version < cls.SCHEMA_VERSION:
            doc = cls.UPGRADES[version](doc)
            version += 1
        doc["schema_version"] = version
        return cls.model_validate(doc)

    @classmethod
    def new(cls, **fields: Any) -> Self:
        """A record written now: the current ``SCHEMA_VERSION`` (a rewrite's ``schema_version`` is this code's, not
        the one read)."""
        return cls(**{**fields, "schema_version": cls.SCHEMA_VERSION})

    def stored(self) -> dict[str, Any]:
        """The mapping to store (JSON types; ``None`` fields left out)."""
        return self.model_dump(mode="json", exclude_none=True, by_alias=True)
