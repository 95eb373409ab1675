"""findings.census and the UNREAD_OBJECTS rule (issue 21), on hand-made censuses and reads.

The judge is the arithmetic of the hand-made case: which objects were planned and read, which were
not, and why, written out in each test."""

from __future__ import annotations

from cutover_prep import verdict
from cutover_prep.dal.records.findings import Findings
from cutover_prep.models.thresholds import Thresholds
from tests.unit.stored_sections import census_section


def _unread_reasons(findings: dict, t: Thresholds) -> list[dict]:
    """The verdict's UNREAD_OBJECTS rule on a findings excerpt, its reasons as findings.json holds them."""
    return [r.stored() for r in verdict._unread_reasons(Findings.read(findings), t)]

MIB = 2**20


def obj(key: str, size: int, reason: str | None = None, *, size_known: bool = True) -> dict:
    database, rest = key.split("/", 1)
    schema, name = rest.split("#")[0].split(".", 1) if "." in rest else ("", rest)
    return {"key": key, "database": database, "schema": schema, "name": name, "kind": "table.main",
            "bytes": size, "reason": reason, "size_known": size_known, "file": None}


def read(planned: int, got: int, done: bool) -> dict:
    return {"planned": planned, "read": got, "done": done, "failed": False}


CENSUS = [obj("app/public.t#table.main", 10 * MIB), obj("app/pg_catalog.pg_largeobject#table.main", 46 * MIB,
                                                        "no privilege"),
          obj("app/audit.log#table.main", 5 * MIB, "excluded by input"), obj("app/public.u#table.main", 4 * MIB)]


def test_everything_read_is_ready_and_names_nothing() -> None:
    census = [CENSUS[0]]
    section = census_section(census, {"app/public.t#table.main": read(10 * MIB, 10 * MIB, True)})
    assert section["unread"] == [] and section["unread_bytes"] == 0
    (reason,) = _unread_reasons({"census": section}, Thresholds())
    assert reason["ok"]


def test_unread_objects_are_named_with_bytes_and_reason_and_a_waiver_does_not_count() -> None:
    reads = {"app/public.t#table.main": read(10 * MIB, 10 * MIB, True),
             "app/public.u#table.main": read(4 * MIB, 1 * MIB, False)}  # its unit failed after 1 MiB
    section = census_section(CENSUS, reads)
    got = {u["key"]: (u["unread_bytes"], u["reason"], u["waived"]) for u in section["unread"]}
    assert got == {"app/pg_catalog.pg_largeobject#table.main": (46 * MIB, "no privilege", False),
                   "app/audit.log#table.main": (5 * MIB, "excluded by input", True),
                   "app/public.u#table.main": (3 * MIB, "planned, not read", False)}
    assert (section["unread_bytes"], section["waived_bytes"]) == (49 * MIB, 5 * MIB)
    (reason,) = _unread_reasons({"census": section}, Thresholds())
    assert not reason["ok"] and "pg_largeobject" in reason["message"] and "46.00 MiB" in reason["message"]
    assert _unread_reasons({"census": section}, Thresholds(max_unread_bytes=49 * MIB))[0]["ok"]
    assert not _unread_reasons({"census": section}, Thresholds(max_unread_bytes=49 * MIB - 1))[0]["ok"]


def test_an_object_of_unknown_size_is_not_ready_whatever_the_limit() -> None:
    section = census_section([obj("rdsadmin/rdsadmin", 0, "no privilege", size_known=False)], {})
    (reason,) = _unread_reasons({"census": section}, Thresholds(max_unread_bytes=10**12))
    assert not reason["ok"] and "unknown size" in reason["message"]


def test_the_end_census_names_what_was_created_grew_or_dropped() -> None:
    start = [obj("app/public.t#table.main", 10 * MIB), obj("app/public.gone#table.main", 2 * MIB)]
    end = [obj("app/public.t#table.main", 12 * MIB), obj("app/public.new#table.main", 39 * MIB)]
    reads = {"app/public.t#table.main": read(10 * MIB, 10 * MIB, True),
             "app/public.gone#table.main": read(2 * MIB, 2 * MIB, True)}
    section = census_section(start, reads, end)
    got = {u["key"]: (u["unread_bytes"], u["reason"]) for u in section["unread"]}
    assert got == {"app/public.new#table.main": (39 * MIB, "created after the census"),
                   "app/public.t#table.main": (2 * MIB, "grew after the census")}
    assert [d["key"] for d in section["dropped"]] == ["app/public.gone#table.main"]
    assert section["bytes"] == 51 * MIB  # the dropped table left the denominator


def test_no_census_is_said_not_judged() -> None:
    (reason,) = _unread_reasons({"census": census_section(None, {})}, Thresholds())
    assert reason["ok"] and reason["judged"] is False and "no census" in reason["message"]


def test_the_catch_up_pass_reads_exactly_the_blocks_past_what_was_planned() -> None:
    from cutover_prep.engines import Extent
    from cutover_prep.steps.end_census import catch_up_targets, slices

    # two extents of 10 blocks; 13 were planned: the pass reads blocks 3..9 of the second extent, in 4s
    pieces = slices((Extent(1, 100, 10), Extent(2, 0, 10)), 13, 4)
    assert pieces == [(Extent(2, 3, 4),), (Extent(2, 7, 3),)]
    assert slices((Extent(0, 0, 5),), 5, 4) == []  # nothing grew
    assert slices((Extent(0, 0, 3), Extent(0, 10, 3)), 1, 3) == [(Extent(0, 1, 2), Extent(0, 10, 1)),
                                                                 (Extent(0, 11, 2),)]
    end = [obj("app/public.t#table.main", 12 * MIB), obj("app/public.new#table.main", 3 * MIB),
           obj("app/public.same#table.main", 2 * MIB), obj("app/secret.x#table.main", 9 * MIB, "no privilege")]
    planned = {"app/public.t#table.main": 10 * MIB, "app/public.same#table.main": 2 * MIB}
    assert catch_up_targets(planned, end) == {"app/public.t#table.main": 10 * MIB, "app/public.new#table.main": 0}


def test_a_complete_datafile_pass_reads_the_segments_it_holds() -> None:
    datafile = {**obj("ORCL/SYS.users01#DATAFILE", 100 * MIB), "kind": "DATAFILE"}
    census = [datafile, obj("ORCL/APP.T#table.main", 10 * MIB)]
    reads = {datafile["key"]: read(100 * MIB, 100 * MIB, True)}
    assert census_section(census, reads, datafile_pass_complete=True)["unread"] == []
    unread = census_section(census, reads)["unread"]  # without the pass: the segment was not planned
    assert [(u["key"], u["reason"]) for u in unread] == [("ORCL/APP.T#table.main", "not in the plan")]


def test_a_database_the_input_excludes_stays_waived_when_it_was_created_during_the_run() -> None:
    """Seen in CI: another database appeared on the server while a run that named its own database in
    warmup.databases was warming; the end census called it "created after the census", not waived, and
    the run was NOT_READY for a database the input had excluded. The input's waiver holds whenever the
    object appeared."""
    start = [CENSUS[0]]
    other = {**obj("other/#database", 15 * MIB, "excluded by input"), "kind": "database"}
    section = census_section(start, {"app/public.t#table.main": read(10 * MIB, 10 * MIB, True)},
                             end=[CENSUS[0], other])
    (named,) = section["unread"]
    assert (named["reason"], named["waived"]) == ("excluded by input", True)
    assert section["unread_bytes"] == 0 and section["waived_bytes"] == 15 * MIB
    assert "other/#database" in section["created"]
    (reason,) = _unread_reasons({"census": section}, Thresholds())
    assert reason["ok"]


def test_an_object_dropped_and_created_again_under_its_names_is_a_new_object() -> None:
    """Issue 32: the end census holds the key again but with another engine identity (PostgreSQL's OID and file,
    InnoDB's space id). The warm-up read the old object's blocks: the new one is created after the census,
    the old one dropped, and the catch-up pass reads all of the new one (nothing of it was planned)."""
    from cutover_prep.steps.end_census import catch_up_targets

    key = "app/public.t#table.main"
    start = [{**obj(key, 10 * MIB), "identity": "16390/base/5/16390"}]
    same = [{**obj(key, 10 * MIB), "identity": "16390/base/5/16390"}]
    again = [{**obj(key, 10 * MIB), "identity": "16411/base/5/16411"}]
    reads = {key: read(10 * MIB, 10 * MIB, True)}
    assert census_section(start, reads, same)["unread"] == []
    section = census_section(start, reads, again)
    assert [(u["key"], u["unread_bytes"], u["reason"]) for u in section["unread"]] == [
        (key, 10 * MIB, "created after the census")]
    assert section["created"] == [key] and [d["key"] for d in section["dropped"]] == [key]
    assert catch_up_targets({key: 10 * MIB}, again, start) == {key: 0}
    assert catch_up_targets({key: 10 * MIB}, same, start) == {}
    # ... and once the catch-up pass read it, it is read
    caught = [{"key": key, "bytes": 10 * MIB, "bytes_read": 10 * MIB, "status": "READ"}]
    assert census_section(start, reads, again, caught)["unread"] == []
    # a census of before (no identity) compares by key only, as it did
    assert census_section([obj(key, 10 * MIB)], reads, again)["unread"] == []


def test_blocks_truncated_while_the_run_ran_leave_the_denominator_and_a_regrowth_after_them_is_unread() -> None:
    """Issue 32: 10 MiB planned, 7 MiB of it found gone by the units (a VACUUM truncated the tail). Without an end
    census the object is 3 MiB, all read; with an end census of 5 MiB (it grew again after the truncation) the
    2 MiB past what is left of the plan are unread ("grew after the census"), never counted as read."""
    reads = {"app/public.t#table.main": {**read(10 * MIB, 3 * MIB, True), "gone": 7 * MIB}}
    start = [CENSUS[0]]
    section = census_section(start, reads)
    assert (section["bytes"], section["unread_bytes"], section["unread"]) == (3 * MIB, 0, [])
    section = census_section(start, reads, [obj("app/public.t#table.main", 5 * MIB)])
    assert section["bytes"] == 5 * MIB and section["unread_bytes"] == 2 * MIB
    assert section["unread"][0]["reason"] == "grew after the census"
    assert census_section(start, reads, [obj("app/public.t#table.main", 3 * MIB)])["unread_bytes"] == 0
