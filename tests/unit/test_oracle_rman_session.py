"""Issue 22, finding 6: the datafile pass trusts only its own RMAN session, and only RMAN's errors.

- Database Reference, "V$RMAN_STATUS": one row per RMAN session (ROW_TYPE 'SESSION', ROW_LEVEL
  0) and per command, each with SESSION_RECID/SESSION_STAMP naming its session; "V$RMAN_OUTPUT":
  each session's messages, with the same SESSION_RECID/SESSION_STAMP. Any unit's RMAN run writes
  rows there, so "the newest VALIDATE since the call began" may be another unit's: a unit keeps
  only the session that started during its call and whose output names its datafile ("input
  datafile file number=nnnnn"), and confirms nothing when that is not exactly one session.
- RMAN messages (Database Error Messages, RMAN-00550 to RMAN-20xxx): a message whose text starts
  "WARNING:" (e.g. RMAN-06207, RMAN-08591) reports something RMAN carried on past; V$RMAN_STATUS
  says COMPLETED WITH WARNINGS. Only errors fail the unit.
- RDS User Guide, "Validating database files in RDS for Oracle": p_parallel is the number of RMAN
  channels; Standard Edition 2 allows only 1, and one block range per call gains nothing from
  more, so the call always passes 1."""

from __future__ import annotations

import pytest

from cutover_prep.engines.base import PermanentReadError
from cutover_prep.engines.oracle import datafiles as d
from cutover_prep.engines.oracle.engine import OracleEngine
from tests.unit.test_oracle_datafiles import FakeOracle, datafile_range, rman_output

SILENT = lambda f, lo, hi: []  # noqa: E731 - RMAN's output did not reach DBMS_OUTPUT


def test_the_status_query_is_filtered_to_the_units_own_rman_session():
    assert "session_recid = :session_recid AND session_stamp = :session_stamp" in d.RMAN_STATUS_SQL
    sql = d.RMAN_SESSIONS_SQL
    assert "row_type = 'SESSION'" in sql and "JOIN v$rman_output o" in sql and ":file_line" in sql
    assert ":since" in sql and ":until" in sql
    db = FakeOracle(output=SILENT, status=("COMPLETED", 0.8, 819200))
    db.sessions = [(41, 1_190_000_001)]
    result = OracleEngine(db).read_range(datafile_range(blocks=100))
    assert result.blocks == 100 and result.details["sources"] == ["v$rman_status"]
    (_, binds), = [(s, b) for s, b in db.executed if s == d.RMAN_SESSIONS_SQL]
    assert binds["file_line"] == "%input datafile file number=00004%"
    (_, binds), = [(s, b) for s, b in db.executed if s == d.RMAN_STATUS_SQL]
    assert binds == {"session_recid": 41, "session_stamp": 1_190_000_001}


def test_another_units_completed_validate_does_not_confirm_this_one():
    db = FakeOracle(output=SILENT, status=("COMPLETED", 0.8, 819200))  # a COMPLETED row exists: someone else's
    db.sessions = [(41, 1), (42, 2)]  # two RMAN sessions validated file 4 in this window
    result = OracleEngine(db).read_range(datafile_range(blocks=100))
    assert result.blocks == 0 and result.details["sources"] == ["ambiguous"]
    db.sessions = []
    assert OracleEngine(db).read_range(datafile_range(blocks=100)).blocks == 0


def test_an_rman_warning_is_recorded_and_does_not_fail_the_unit():
    def warned(f, lo, hi):
        return ["RMAN-06207: WARNING: 1 objects could not be deleted for DISK channel(s) due",
                "RMAN-08591: WARNING: invalid archived log deletion policy", *rman_output(f, lo, hi)]
    result = OracleEngine(FakeOracle(output=warned)).read_range(datafile_range(blocks=100))
    assert result.blocks == 100
    assert result.details["rman_warnings"] == ["RMAN-06207: WARNING: 1 objects could not be deleted for DISK "
                                               "channel(s) due", "RMAN-08591: WARNING: invalid archived log "
                                               "deletion policy"]
    report = d.parse_validate_output(["RMAN-08591: WARNING: invalid archived log deletion policy"], 4)
    assert report.errors == [] and len(report.warnings) == 1


def test_an_rman_error_still_fails_the_unit():
    broken = FakeOracle(output=lambda f, lo, hi: ["RMAN-03009: failure of validate command on ORA_DISK_1 channel"])
    with pytest.raises(PermanentReadError, match="RMAN-03009"):
        OracleEngine(broken).read_range(datafile_range(blocks=100))


def test_one_rman_channel_whatever_the_edition():
    assert "p_parallel => 1," in d.VALIDATE_DATAFILE_SQL
