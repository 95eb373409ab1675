"""Oracle's full datafile pass (warmup.mode datafiles | both): the SQL, RMAN's output parsed, the
continue/resume loop across a time limit, mode validation, oversized segments in the findings and
the verdict. Against a fake connection that plays rdsadmin + DBMS_OUTPUT (there is no Oracle here;
see tests/integration/test_oracle_live.py for the live tests)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import oracledb
import pytest

from cutover_prep.dal.plan_evidence import plan_segments
from cutover_prep.dal.store import Store
from cutover_prep.engines.base import (
    DiscoveryOptions,
    Extent,
    PermanentReadError,
    ReadRange,
    Segment,
    ShortRead,
    TransientDatabaseError,
)
from cutover_prep.engines.oracle import datafiles as d
from cutover_prep.engines.oracle import sql as q
from cutover_prep.engines.oracle.engine import OracleEngine
from cutover_prep.engines.registry import UnsupportedWarmupMode, check_warmup_mode, family
from cutover_prep.models.run_input import InvalidInput, parse_run_input
from cutover_prep.models.steps import RunState
from cutover_prep.steps.discover import discover_and_plan
from cutover_prep.warmup import modes
from cutover_prep.warmup.planning import MIB, PlanOptions, plan_units
from cutover_prep.warmup.unit import Budget
from tests.unit.contexts import run_state, warm_json
from tests.unit.stored_sections import build_findings
from tests.unit.verdict_of_documents import decide

BS = 8192
NOW = dt.datetime(2026, 1, 1, 12, 0, 0)


def rman_output(file_id: int, first: int, last: int, *, corrupt: int = 0, examined: int | None = None) -> list[str]:
    """What RMAN prints for VALIDATE DATAFILE n BLOCK a TO b (shape of its 'List of Datafiles' table)."""
    n = (last - first + 1) if examined is None else examined
    return [
        "Starting validate at 01-JAN-26",
        "using target database control file instead of recovery catalog",
        "channel ORA_DISK_1: SID=33 device type=DISK",
        "channel ORA_DISK_1: starting validation of datafile",
        f"input datafile file number={file_id:05d} name=/rdsdbdata/db/ORCL_A/datafile/o1_mf_users.dbf",
        "channel ORA_DISK_1: validation complete, elapsed time: 00:00:03",
        "List of Datafiles",
        "=================",
        "File Status Marked Corrupt Empty Blocks Blocks Examined High SCN",
        "---- ------ -------------- ------------ --------------- ----------",
        f"{file_id}    {'FAILED' if corrupt else 'OK'}     {corrupt}              12           {n}         4474162",
        "  File Name: /rdsdbdata/db/ORCL_A/datafile/o1_mf_users.dbf",
        "  Block Type Blocks Failing Blocks Processed",
        "  ---------- -------------- ----------------",
        f"  Data       0              {n}",
        "Finished validate at 01-JAN-26",
    ]


class Var:
    def __init__(self, value: Any = None) -> None:
        self.value = value

    def setvalue(self, _pos: int, value: Any) -> None:
        self.value = value

    def getvalue(self) -> Any:
        return self.value


class FakeOracle:
    """The database side: datafiles, RMAN (as rdsadmin runs it), DBMS_OUTPUT, V$RMAN_STATUS."""

    def __init__(self, *, output=rman_output, status: tuple | None = None, fail: Exception | None = None) -> None:
        self.output, self.status, self.fail = output, status, fail
        self.executed: list[tuple[str, dict]] = []
        self.buffer: list[str] = []
        self.validated: list[tuple[int, int, int]] = []
        self.sessions: list[tuple[int, int]] = [(1, 1)]  # the RMAN sessions V$RMAN_STATUS/V$RMAN_OUTPUT show
        self.datafiles = [(1, "SYSTEM", 1000, BS), (4, "USERS", 300_000, BS), (5, "EMPTY", 0, BS)]
        self.call_timeout, self.module, self.action = 0, None, None

    def cursor(self) -> FakeCursor:
        return FakeCursor(self)

    def rollback(self) -> None:
        self.executed.append(("ROLLBACK", {}))

    def close(self) -> None:
        pass


class FakeCursor:
    def __init__(self, db: FakeOracle) -> None:
        self.db, self.rows, self.arraysize = db, [], 100

    def __enter__(self) -> FakeCursor:
        return self

    def __exit__(self, *exc: Any) -> bool:
        return False

    def __iter__(self):
        return iter(self.rows)

    def arrayvar(self, _type: Any, size: int) -> Var:
        return Var([None] * size)

    def var(self, _type: Any) -> Var:
        return Var()

    def fetchone(self) -> Any:
        return self.rows[0] if self.rows else None

    def execute(self, sql: str, **binds: Any) -> FakeCursor:
        db = self.db
        db.executed.append((sql, binds))
        self.rows = []
        if sql == d.VALIDATE_DATAFILE_SQL:
            if db.fail:
                raise db.fail
            fid, lo, hi = int(binds["datafile"]), binds["from_block"], binds["to_block"]
            db.validated.append((fid, lo, hi))
            db.buffer.extend(db.output(fid, lo, hi))
        elif sql == d.DBMS_OUTPUT_GET_LINES_SQL:
            want = binds["numlines"].getvalue()
            got, db.buffer = db.buffer[:want], db.buffer[want:]
            binds["lines"].value = got + [None] * (want - len(got))
            binds["numlines"].value = len(got)
        elif sql == d.DB_TIME_SQL:
            self.rows = [(NOW,)]
        elif sql == d.RMAN_STATUS_SQL:
            self.rows = [db.status] if db.status else []
        elif sql == getattr(d, "RMAN_SESSIONS_SQL", None):
            self.rows = list(db.sessions)
        elif sql == d.DATAFILES_SQL:
            self.rows = list(db.datafiles)
        return self


def datafile_range(file_id: int = 4, first: int = 1, blocks: int = 300_000) -> ReadRange:
    seg = d.datafile_segment(file_id, "USERS", blocks, BS)
    return ReadRange(seg.key, seg.locator, (Extent(file_id, first, blocks),), BS, True)


# -- SQL --------------------------------------------------------------------------------------

def test_the_validate_call_is_rdsadmins_validate_datafile_with_block_binds_and_output_to_this_session():
    sql = d.VALIDATE_DATAFILE_SQL
    assert sql.startswith("BEGIN rdsadmin.rdsadmin_rman_util.validate_datafile(")
    assert "p_datafile => :datafile" in sql and "p_from_block => :from_block" in sql
    assert "p_to_block => :to_block" in sql and "p_rman_to_dbms_output => TRUE" in sql
    assert "p_validation_type => 'PHYSICAL'" in sql and "validate_database" not in sql
    assert "FROM v$rman_status" in d.RMAN_STATUS_SQL and "operation = 'VALIDATE'" in d.RMAN_STATUS_SQL
    assert ":session_recid" in d.RMAN_STATUS_SQL  # the unit's own RMAN session (test_oracle_rman_session.py)
    assert "FROM dba_data_files f" in d.DATAFILES_SQL and "online_status IN ('ONLINE', 'SYSTEM')" in d.DATAFILES_SQL
    assert d.DBMS_OUTPUT_GET_LINES_SQL == "BEGIN DBMS_OUTPUT.GET_LINES(:lines, :numlines); END;"
    assert not hasattr(q, "validate_database_block")  # the unbounded whole-database call is gone


# -- RMAN's output ------------------------------------------------------------------------------

def test_the_output_gives_our_files_examined_blocks_and_ignores_other_files():
    lines = rman_output(4, 1, 1000)
    lines += ["File Status Marked Corrupt Empty Blocks Blocks Examined High SCN",
              "---- ------ -------------- ------------ --------------- ----------",
              "7    OK     0              0            555             1"]
    report = d.parse_validate_output(lines, 4)
    assert (report.examined, report.empty, report.corrupt, report.status, report.errors) == (1000, 12, 0, "OK", [])


def test_corrupt_blocks_and_rman_errors_are_read_from_the_output():
    assert d.parse_validate_output(rman_output(4, 1, 10, corrupt=2), 4).corrupt == 2
    failed = d.parse_validate_output(["RMAN-03009: failure of validate command on ORA_DISK_1 channel",
                                      "ORA-01110: data file 4: '/rdsdbdata/x.dbf'"], 4)
    assert failed.examined is None and failed.errors[0].startswith("RMAN-03009")
    assert d.parse_validate_output([], 4).examined is None


# -- discovery and reading ------------------------------------------------------------------------

def test_datafiles_are_discovered_as_splittable_segments_of_blocks_1_to_n_in_a_read_only_transaction():
    db = FakeOracle()
    found = OracleEngine(db).discover_datafiles()
    assert [(s.key, s.extents, s.bytes, s.splittable) for s in found] == [
        ("SYSTEM.file_1#DATAFILE", (Extent(1, 1, 1000),), 1000 * BS, True),
        ("USERS.file_4#DATAFILE", (Extent(4, 1, 300_000),), 300_000 * BS, True)]  # the empty file is left out
    assert found[1].locator.to_json() == {
        "read": "datafile", "file_id": 4, "tablespace": "USERS", "chunk_bytes": d.CHUNK_BYTES}
    statements = [s for s, _ in db.executed]
    assert statements.index(q.SET_TRANSACTION_READ_ONLY_SQL) < statements.index(d.DATAFILES_SQL)
    assert statements[-1] == "ROLLBACK"


def test_a_range_is_validated_with_its_block_binds_and_rmans_count_confirms_it():
    db = FakeOracle()
    rng = ReadRange("USERS.file_4#DATAFILE", datafile_range().locator, (Extent(4, 101, 50), Extent(4, 900, 10)), BS)
    result = OracleEngine(db).read_range(rng)
    assert db.validated == [(4, 101, 150), (4, 900, 909)]
    binds = [b for s, b in db.executed if s == d.VALIDATE_DATAFILE_SQL]
    assert binds[0] == {"datafile": "4", "from_block": 101, "to_block": 150}  # p_datafile is a varchar2
    assert (result.blocks, result.bytes, result.method) == (60, 60 * BS, d.METHOD)
    assert result.details["sources"] == ["rman_output", "rman_output"]
    statements = [s for s, _ in db.executed]
    assert q.SET_TRANSACTION_READ_ONLY_SQL not in statements  # RMAN runs outside the read-only transaction
    assert statements[0] == "ROLLBACK" and statements[-1] == "ROLLBACK"


def test_fewer_blocks_examined_than_asked_is_what_the_engine_reports():
    db = FakeOracle(output=lambda f, lo, hi: rman_output(f, lo, hi, examined=(hi - lo + 1) // 2))
    result = OracleEngine(db).read_range(datafile_range(blocks=100))
    assert result.blocks == 50  # warm_unit turns this into ShortRead: the unit is not DONE


def test_without_output_v_rman_status_confirms_or_refuses():
    silent = lambda f, lo, hi: []  # noqa: E731
    confirmed = FakeOracle(output=silent, status=("COMPLETED", 0.8, 819200))
    ok = OracleEngine(confirmed).read_range(datafile_range(blocks=100))
    assert ok.blocks == 100 and ok.details["sources"] == ["v$rman_status"]
    assert OracleEngine(FakeOracle(output=silent)).read_range(datafile_range(blocks=100)).blocks == 0
    with pytest.raises(PermanentReadError, match="RMAN validate ended FAILED"):
        OracleEngine(FakeOracle(output=silent, status=("FAILED", 0, 0))).read_range(datafile_range(blocks=100))


def test_corruption_and_rman_errors_fail_the_read_by_name():
    corrupt = FakeOracle(output=lambda f, lo, hi: rman_output(f, lo, hi, corrupt=3))
    with pytest.raises(PermanentReadError, match="RMAN found 3 corrupt blocks"):
        OracleEngine(corrupt).read_range(datafile_range(blocks=100))
    broken = FakeOracle(output=lambda f, lo, hi: ["RMAN-06054: media recovery requesting unknown archived log"])
    with pytest.raises(PermanentReadError, match="RMAN-06054"):
        OracleEngine(broken).read_range(datafile_range(blocks=100))


def test_database_errors_of_the_call_are_mapped():
    denied = oracledb.DatabaseError(type("E", (), {"code": 6550, "full_code": "ORA-06550",
                                                   "message": "ORA-06550: RDSADMIN_RMAN_UTIL must be declared"})())
    with pytest.raises(PermanentReadError, match="validating USERS.file_4#DATAFILE: ORA-06550"):
        OracleEngine(FakeOracle(fail=denied)).read_range(datafile_range(blocks=100))
    lost = oracledb.DatabaseError(type("E", (), {"code": 3113, "full_code": "ORA-03113",
                                                 "message": "ORA-03113: end-of-file on communication channel"})())
    with pytest.raises(TransientDatabaseError):
        OracleEngine(FakeOracle(fail=lost)).read_range(datafile_range(blocks=100))


# -- the continue/resume loop --------------------------------------------------------------------

RUN_ID = "run-df"


def test_a_datafile_unit_continues_at_the_time_limit_and_resumes_reading_each_block_once(
        store: Store, monkeypatch: pytest.MonkeyPatch):
    store.start_run({"run_id": RUN_ID, "target": {"db_instance_identifier": "db1"},
                     "started_at": "2026-01-01T00:00:00+00:00", "warmup": {}})
    rng = datafile_range(blocks=300_000)  # 2,343.75 MiB: three RMAN calls of 1 GiB (131,072 blocks)
    unit = {"unit_id": "u000001", "priority": 0, "bytes": rng.bytes, "blocks": rng.blocks, "ranges": [rng.to_json()]}
    event = {"run": {"run_id": RUN_ID, "warmup": {"assumed_cold_mib_per_s": 8.0, "chunk_mb": 64}}, "unit": unit}
    clock = [0.0]  # RMAN reads at 8 MiB/s on this fake clock: a 1 GiB call takes 128 s
    monkeypatch.setattr(d, "time", type("T", (), {"monotonic": staticmethod(lambda: clock[0])}))
    db = FakeOracle()
    plain = db.output

    def slow(f: int, lo: int, hi: int) -> list[str]:
        clock[0] += (hi - lo + 1) * BS / (8 * MIB)
        return plain(f, lo, hi)

    db.output = slow
    statuses = []
    for _ in range(5):
        began = clock[0]  # each invocation has 300 s; 30 s safety margin
        budget = Budget(lambda began=began: 300.0 - (clock[0] - began), 30.0)
        out = warm_json(event, store=store, engine=lambda: OracleEngine(db), budget=budget, sleep=lambda s: None)
        statuses.append(out["status"])
        if out["status"] == "DONE":
            break
        assert out["status"] == "CONTINUE" and out["cursor"]["offset"] == 131_072 * len(db.validated)
    # after one 1 GiB call (128 s) 142 s are left: the next 1 GiB is estimated at 256 s (half the rate seen),
    # so the first invocation stops; the second reads 1 GiB, then the last 296 MiB (estimated 74 s)
    assert statuses == ["CONTINUE", "DONE"]
    assert db.validated == [(4, 1, 131_072), (4, 131_073, 262_144), (4, 262_145, 300_000)]
    item = store.get_unit(RUN_ID, "u000001").stored()
    assert item["status"] == "DONE" and item["blocks_read"] == 300_000 and item["bytes_read"] == rng.bytes
    assert item["method"] == d.METHOD
    again = warm_json(event, store=store, engine=lambda: OracleEngine(db), budget=Budget(lambda: 10_000.0),
                      sleep=lambda s: None)
    assert again["status"] == "ALREADY_DONE" and len(db.validated) == 3


def test_a_short_rman_count_leaves_the_unit_not_done(store: Store):
    store.start_run({"run_id": RUN_ID, "target": {"db_instance_identifier": "db1"},
                     "started_at": "2026-01-01T00:00:00+00:00", "warmup": {}})
    rng = datafile_range(blocks=1000)
    unit = {"unit_id": "u000002", "priority": 0, "bytes": rng.bytes, "blocks": rng.blocks, "ranges": [rng.to_json()]}
    event = {"run": {"run_id": RUN_ID, "warmup": {"assumed_cold_mib_per_s": 8.0, "chunk_mb": 64}}, "unit": unit}
    db = FakeOracle(output=lambda f, lo, hi: rman_output(f, lo, hi, examined=10))
    with pytest.raises(ShortRead, match="read 10 of 1000 planned blocks"):
        warm_json(event, store=store, engine=lambda: OracleEngine(db), budget=Budget(lambda: 10_000.0))
    assert getattr(store.get_unit(RUN_ID, "u000002"), "status", None) != "DONE"


# -- modes ---------------------------------------------------------------------------------------

TARGET = {"db_instance_identifier": "db1", "secret_arn": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:db"}


@pytest.mark.parametrize("mode", ["segments", "datafiles", "both"])
def test_warmup_mode_is_accepted(mode):
    assert parse_run_input({"target": TARGET, "warmup": {"mode": mode}})["warmup"]["mode"] == mode


def test_warmup_mode_defaults_to_segments_and_a_bad_one_is_one_line():
    assert parse_run_input({"target": TARGET})["warmup"]["mode"] == "segments"
    with pytest.raises(InvalidInput) as exc:
        parse_run_input({"target": TARGET, "warmup": {"mode": "datafile"}})
    assert str(exc.value) == "warmup.mode: Input should be 'segments', 'datafiles' or 'both'"


def test_the_registry_says_which_engines_offer_the_datafile_pass():
    check_warmup_mode("oracle-ee-cdb", "both")
    check_warmup_mode("postgres", "segments")
    assert "datafiles" in family("oracle").warmup_modes and family("postgres").warmup_modes == ("segments",)
    with pytest.raises(UnsupportedWarmupMode) as exc:
        check_warmup_mode("postgres", "datafiles")
    assert str(exc.value) == "warmup.mode 'datafiles' is not offered for PostgreSQL; use one of: segments"
    assert "\n" not in str(exc.value)


def seg(name: str, kind: str, blocks: int, splittable: bool) -> Segment:
    return Segment("APP", name, kind, blocks * BS, BS, (Extent(4, 100, blocks),), {"read": "x"},
                   splittable=splittable)


FOUND = [seg("ORDERS", "TABLE", 1000, True), seg("ORDERS_PK", "INDEX", 900, False),
         seg("SMALL_IDX", "INDEX", 10, False), seg("DOCS_LOB", "LOBSEGMENT", 700, False)]
UNIT = 500 * BS


def test_segments_mode_plans_oversized_segments_in_their_own_unit_and_names_them():
    sel = modes.select("segments", FOUND, UNIT)
    assert [s.name for s in sel.segments] == ["ORDERS", "ORDERS_PK", "SMALL_IDX", "DOCS_LOB"]
    assert [(o.key, o.read_by) for o in sel.oversized] == [
        ("APP.ORDERS_PK#INDEX", "own_unit"), ("APP.DOCS_LOB#LOBSEGMENT", "own_unit")]


def test_both_mode_leaves_oversized_segments_to_the_datafile_pass():
    files = [d.datafile_segment(4, "USERS", 3000, BS)]
    sel = modes.select("both", FOUND + files, UNIT)
    assert [s.name for s in sel.segments] == ["ORDERS", "SMALL_IDX", "file_4"]
    assert {o.read_by for o in sel.oversized} == {"datafile_pass"}
    plan = plan_units(sel.segments, PlanOptions(unit_bytes=UNIT))
    fields = modes.plan_fields(sel, plan.units)
    datafile_units = [u for u in plan.units if u.unit_id in fields.datafile_units]
    assert sum(r.blocks for u in datafile_units for r in u.ranges) == 3000  # split by unit size, every block once
    assert all(u.bytes <= UNIT for u in datafile_units) and len(datafile_units) == 6


class ModeEngine:
    def __init__(self) -> None:
        self.asked: list[str] = []

    def discover(self, options: DiscoveryOptions) -> list[Segment]:
        self.asked.append("segments")
        return list(FOUND)

    def discover_datafiles(self) -> list[Segment]:
        self.asked.append("datafiles")
        return [d.datafile_segment(4, "USERS", 3000, BS)]

    def close(self) -> None:
        pass


def run_doc(engine: str, mode: str) -> RunState:
    warmup = parse_run_input({"target": TARGET, "warmup": {"mode": mode, "unit_mb": 4}})["warmup"]
    return run_state({"run_id": f"r-{engine}-{mode}", "target": {**TARGET, "engine": engine}, "warmup": warmup,
                      "instance": {"address": "db.example.com"}, "started_at": "2026-11-25T00:00:00+00:00"})


def secret(_arn: str) -> str:
    return '{"username": "u", "password": "p", "dbInstanceIdentifier": "db1"}'


@pytest.mark.parametrize(("mode", "asked", "planned_kinds"), [
    ("segments", ["segments"], {"TABLE", "INDEX", "LOBSEGMENT"}),
    ("datafiles", ["datafiles"], {"DATAFILE"}),
    ("both", ["segments", "datafiles"], {"TABLE", "INDEX", "DATAFILE"}),
])
def test_discovery_follows_the_mode(store: Store, mode, asked, planned_kinds):
    eng = ModeEngine()
    run = run_doc("oracle", mode)
    out = discover_and_plan(run, store=store, read_secret=secret, open_engine=lambda spec, w: eng).to_json()
    plan = store.get_json(out["plan_key"])
    assert eng.asked == asked and plan["mode"] == mode and plan["summary"]["mode"] == mode
    assert {s["kind"] for s in plan_segments(plan, store)} == planned_kinds


def test_a_mode_the_engine_lacks_is_refused_before_connecting(store: Store):
    opened = []
    with pytest.raises(UnsupportedWarmupMode, match="not offered for PostgreSQL"):
        discover_and_plan(run_doc("postgres", "both"), store=store, read_secret=secret,
                          open_engine=lambda spec, w: opened.append(spec)).to_json()
    assert opened == []


# -- findings and verdict ------------------------------------------------------------------------

def findings_for(mode: str, done: set[str]) -> dict[str, Any]:
    found = (FOUND if modes.reads_segments(mode) else []) + (
        [d.datafile_segment(4, "USERS", 3000, BS)] if modes.reads_datafiles(mode) else [])
    sel = modes.select(mode, found, UNIT)
    plan_obj = plan_units(sel.segments, PlanOptions(unit_bytes=UNIT))
    units = [u.to_json() for u in plan_obj.units]
    plan = {"engine": "x", "summary": {}, **modes.plan_fields(sel, plan_obj.units)._asdict(),
            "segments": [{"key": s.key, "database": None, "schema": s.schema, "name": s.name, "kind": s.kind,
                          "bytes": s.bytes, "blocks": s.blocks, "units": []} for s in sel.segments]}
    pick = {"all": {u["unit_id"] for u in units},
            "not_datafiles": {u["unit_id"] for u in units if u["unit_id"] not in plan["datafile_units"]},
            "none": set()}
    items = {uid: {"status": "DONE", "bytes_read": 1, "blocks_read": 1} for uid in pick[next(iter(done))]}
    run_item = {"run_id": "r", "target": TARGET, "started_at": "2026-01-01T00:00:00+00:00"}
    return build_findings(run_item, plan, units, items)


def oversized_reason(findings: dict[str, Any]) -> dict[str, Any]:
    return next(r for r in decide(findings)["reasons"] if r["code"] == "OVERSIZED_SEGMENTS")


def test_segments_mode_names_oversized_segments_and_the_verdict_says_they_were_read():
    f = findings_for("segments", {"all"})
    assert f["warmup_mode"] == "segments" and "datafile_pass" not in f
    assert [(s["key"], s["status"]) for s in f["oversized_segments"]] == [
        ("APP.ORDERS_PK#INDEX", "READ"), ("APP.DOCS_LOB#LOBSEGMENT", "READ")]
    reason = oversized_reason(f)
    assert reason["ok"] and "all 2 segments too big for one work unit were read (by their own unit" in reason["message"]


def test_the_verdict_names_oversized_segments_that_were_not_read():
    reason = oversized_reason(findings_for("segments", {"none"}))
    assert not reason["ok"]
    assert reason["message"].startswith("2 of 2 segments too big for one work unit were not read: "
                                        "APP.ORDERS_PK#INDEX, APP.DOCS_LOB#LOBSEGMENT")


def test_both_mode_counts_oversized_segments_read_only_when_the_datafile_pass_is_complete():
    partial = findings_for("both", {"not_datafiles"})
    assert partial["datafile_pass"]["complete"] is False and partial["datafile_pass"]["done"] == 0
    assert {s["status"] for s in partial["oversized_segments"]} == {"NOT_READ"}
    assert not oversized_reason(partial)["ok"] and "2 by the datafile pass" in oversized_reason(partial)["message"]
    whole = findings_for("both", {"all"})
    assert whole["datafile_pass"] == {"units": 6, "done": 6, "bytes": 3000 * BS, "bytes_done": 3000 * BS,
                                      "complete": True}
    assert oversized_reason(whole)["ok"]


def test_no_oversized_segments_no_reason():
    f = findings_for("datafiles", {"all"})
    assert f["oversized_segments"] == [] and f["datafile_pass"]["complete"]
    assert not [r for r in decide(f)["reasons"] if r["code"] == "OVERSIZED_SEGMENTS"]


def test_chunk_size_of_a_datafile_range_is_the_engines_bigger_chunk():
    from cutover_prep.warmup.unit import chunks
    rng = datafile_range(blocks=300_000)
    sizes = [c.rng.blocks for c in chunks([rng], {"range": 0, "extent": 0, "offset": 0}, 64 * MIB)]
    assert sizes == [131_072, 131_072, 37_856]
