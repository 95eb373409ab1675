"""dal.records.base.Record: a version on every stored record, and reading an older or a newer one."""

from typing import Any, ClassVar

import pytest

from cutover_prep.dal.records.base import NewerRecord, Record


def _rename_size(doc: dict[str, Any]) -> dict[str, Any]:
    doc = dict(doc)
    doc["size_bytes"] = doc.pop("size")
    return doc


class _Thing(Record):
    SCHEMA_VERSION: ClassVar[int] = 2
    UPGRADES: ClassVar = {1: _rename_size}

    name: str
    size_bytes: int


def test_a_record_without_a_version_is_version_one_and_is_upgraded() -> None:
    thing = _Thing.read({"name": "t", "size": 8192})
    assert (thing.size_bytes, thing.schema_version) == (8192, 2)


def test_a_new_record_is_written_with_the_current_version_and_keeps_unknown_fields() -> None:
    stored = _Thing.new(name="t", size_bytes=1).stored()
    assert stored == {"schema_version": 2, "name": "t", "size_bytes": 1}
    again = _Thing.read({**stored, "added_by_a_newer_writer": True})
    assert again.stored()["added_by_a_newer_writer"] is True


def test_a_newer_record_is_refused_by_name() -> None:
    with pytest.raises(NewerRecord, match="schema_version 3 is newer"):
        _Thing.read({"schema_version": 3, "name": "t", "size_bytes": 1})
