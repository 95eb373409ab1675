"""Oracle's full datafile pass: every block of every datafile, by block range, through RMAN.

RDS for Oracle gives no shell and no SYSDBA, so RMAN is driven from SQL through the RDS
package ``rdsadmin.rdsadmin_rman_util`` (Amazon RDS User Guide, "Validating database files
in RDS for Oracle"): ``validate_datafile(p_datafile, p_from_block, p_to_block, ...)``
validates one datafile, or one block range of it, and returns when RMAN is done. That is
a bounded read a warm-up unit can hand out: one call per chunk of a datafile's blocks,
sized so that the warm-unit Lambda's continue/resume loop (``warmup.unit``) can stop
between two calls and commit exactly what was read. (``validate_database`` would read
everything in one call, which no Lambda invocation can bound.)

What a call confirmed comes, in this order, from:
1. RMAN's own output, sent to DBMS_OUTPUT of this session (``p_rman_to_dbms_output =>
   TRUE``) and read back with ``DBMS_OUTPUT.GET_LINES``: the "File Status Marked Corrupt
   Empty Blocks Blocks Examined High SCN" table gives the blocks RMAN examined in our
   file, and any ``RMAN-``/``ORA-`` line is the error;
2. when the output is empty, ``V$RMAN_STATUS`` of this call's own RMAN session: the one
   session (ROW_TYPE 'SESSION') that started during the call and whose ``V$RMAN_OUTPUT`` names
   this datafile, and its VALIDATE command's status (COMPLETED, FAILED ...). None or several
   such sessions (units validating the same file at once), and nothing is confirmed: the
   chunk is a short read, never confirmed by another unit's row.
``RMAN-nnnnn: WARNING: ...`` lines are recorded (``details["rman_warnings"]``), not failures;
every other ``RMAN-``/``ORA-`` line is an error. ``p_parallel`` is 1: Standard Edition 2 allows
one channel, and one block range per call gains nothing from more.
Corrupt blocks (RMAN lists them in ``V$DATABASE_BLOCK_CORRUPTION``) fail the unit by name:
a database with corrupt blocks is not ready for a cutover.

The call writes no customer data; rdsadmin starts an RMAN process, which records its run
in the control file (``V$RMAN_STATUS``) and writes its log to BDUMP. It runs outside the
session's ``SET TRANSACTION READ ONLY`` (the transaction is ended before and after).
RMAN 12c and later examine every block of the range ("VALIDATE", Backup and Recovery
Reference); 11g skipped never-used blocks, which would show here as short reads.
"""

# ruff: noqa: S608 -- fixed SQL text; every value is a bind
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

from cutover_prep.engines.base import Extent, PermanentReadError, ReadRange, ReadResult, Segment
from cutover_prep.engines.locators import OracleLocator

METHOD = "rman_validate_datafile"
KIND = "DATAFILE"
# One RMAN call per chunk: starting RMAN costs seconds, so a datafile chunk is bigger than a
# segment chunk (warmup.chunk_mb); the unit still stops between calls when time runs short.
CHUNK_BYTES = 1024 * 1024 * 1024
DBMS_OUTPUT_BATCH = 200  # lines fetched per DBMS_OUTPUT.GET_LINES call

# Every datafile that can be read now: online (or SYSTEM), available. Temp files are not in
# DBA_DATA_FILES and hold nothing to warm. FILE_ID is the absolute file number (V$DATAFILE.FILE#),
# which validate_datafile takes; its blocks are numbered from 1.
DATAFILES_SQL = """
SELECT f.file_id, f.tablespace_name, f.blocks, t.block_size
FROM dba_data_files f
JOIN dba_tablespaces t ON t.tablespace_name = f.tablespace_name
WHERE f.status = 'AVAILABLE' AND f.online_status IN ('ONLINE', 'SYSTEM')
ORDER BY f.file_id
"""

DB_TIME_SQL = "SELECT SYSDATE FROM dual"
DBMS_OUTPUT_ENABLE_SQL = "BEGIN DBMS_OUTPUT.ENABLE(NULL); END;"  # NULL: no buffer limit
DBMS_OUTPUT_GET_LINES_SQL = "BEGIN DBMS_OUTPUT.GET_LINES(:lines, :numlines); END;"

VALIDATE_DATAFILE_SQL = (
    "BEGIN rdsadmin.rdsadmin_rman_util.validate_datafile("
    "p_datafile => :datafile, p_from_block => :from_block, p_to_block => :to_block, "
    "p_validation_type => 'PHYSICAL', p_parallel => 1, p_section_size_mb => NULL, "
    "p_rman_to_dbms_output => TRUE); END;"
)

# The RMAN sessions (V$RMAN_STATUS rows of ROW_TYPE 'SESSION') that started during this call (the
# database's clock before and after it) and whose output (V$RMAN_OUTPUT, same SESSION_RECID/STAMP)
# names this datafile. Other units' RMAN runs write rows too: only exactly one candidate is ours.
RMAN_SESSIONS_SQL = """
SELECT DISTINCT s.session_recid, s.session_stamp
FROM v$rman_status s
JOIN v$rman_output o ON o.session_recid = s.session_recid AND o.session_stamp = s.session_stamp
WHERE s.row_type = 'SESSION' AND s.start_time >= :since AND s.start_time <= :until
  AND o.output LIKE :file_line
"""

# That session's VALIDATE command and how it ended (COMPLETED, COMPLETED WITH WARNINGS, FAILED ...).
RMAN_STATUS_SQL = """
SELECT status, mbytes_processed, input_bytes
FROM v$rman_status
WHERE operation = 'VALIDATE' AND row_type = 'COMMAND'
  AND session_recid = :session_recid AND session_stamp = :session_stamp
ORDER BY start_time DESC FETCH FIRST 1 ROWS ONLY
"""

_HEADER = re.compile(r"^\s*File\s+Status\s+Marked\s+Corrupt\s+Empty\s+Blocks\s+Blocks\s+Examined", re.I)
_ROW = re.compile(r"^\s*(\d+)\s+(OK|FAILED)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$", re.I)
_ERROR = re.compile(r"^\s*((?:RMAN|ORA)-\d{5}.*)$")
_WARNING = re.compile(r"^\s*(RMAN-\d{5}:\s*WARNING\b.*)$", re.I)  # RMAN carried on: recorded, not a failure


@dataclass
class ValidateReport:
    """What RMAN said about one call, from its output."""

    examined: int | None = None  # blocks of our file RMAN examined (None: no per-file table in the output)
    empty: int = 0
    corrupt: int = 0
    status: str | None = None  # OK / FAILED of our file's row
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    lines: int = 0


def parse_validate_output(lines: list[str], file_id: int) -> ValidateReport:
    """Read RMAN's VALIDATE output: our file's row(s) of the per-file table, and error lines."""
    report = ValidateReport(lines=len(lines))
    in_table = False
    for line in lines:
        if _HEADER.match(line):
            in_table = True
            continue
        if (warning := _WARNING.match(line)) is not None:
            report.warnings.append(warning.group(1).strip())
            continue
        if (err := _ERROR.match(line)) is not None:
            report.errors.append(err.group(1).strip())
            continue
        row = _ROW.match(line) if in_table else None
        if row is None:
            continue
        if int(row.group(1)) != file_id:
            continue
        report.status = "FAILED" if "FAILED" in (report.status, row.group(2).upper()) else "OK"
        report.corrupt += int(row.group(3))
        report.empty += int(row.group(4))
        report.examined = (report.examined or 0) + int(row.group(5))
    return report


def datafile_segment(file_id: int, tablespace: str, blocks: int, block_size: int) -> Segment:
    """One datafile as a splittable segment: one extent of blocks 1..``blocks``."""
    return Segment(schema=tablespace, name=f"file_{file_id}", kind=KIND, bytes=blocks * block_size,
                   block_size=block_size, extents=(Extent(file_id, 1, blocks),),
                   locator=OracleLocator(read="datafile", file_id=file_id, tablespace=tablespace,
                                         chunk_bytes=CHUNK_BYTES),
                   splittable=True)


def discover_datafiles(cur: Any) -> list[Segment]:
    return [datafile_segment(int(fid), str(ts), int(blocks), int(bs))
            for fid, ts, blocks, bs in cur.execute(DATAFILES_SQL) if blocks]


def _dbms_output(cur: Any) -> list[str]:
    """Every line waiting in this session's DBMS_OUTPUT buffer."""
    out: list[str] = []
    lines = cur.arrayvar(str, DBMS_OUTPUT_BATCH)
    count = cur.var(int)
    while True:
        count.setvalue(0, DBMS_OUTPUT_BATCH)
        cur.execute(DBMS_OUTPUT_GET_LINES_SQL, lines=lines, numlines=count)
        got = int(count.getvalue() or 0)
        out.extend(str(s) for s in (lines.getvalue() or [])[:got] if s is not None)
        if got < DBMS_OUTPUT_BATCH:
            return out


def validate_range(cur: Any, rng: ReadRange) -> ReadResult:
    """Validate each extent of ``rng`` (blocks of one datafile) with one RMAN call; what RMAN confirmed."""
    file_id = int(OracleLocator.of(rng.locator).file_id or 0)
    started = time.monotonic()
    confirmed, details = 0, {"calls": 0, "empty_blocks": 0, "sources": []}
    cur.execute(DBMS_OUTPUT_ENABLE_SQL)
    for ext in rng.extents:
        since = cur.execute(DB_TIME_SQL).fetchone()[0]
        _dbms_output(cur)  # drop anything an earlier call left in the buffer
        last = ext.first_block + ext.blocks - 1
        cur.execute(VALIDATE_DATAFILE_SQL, datafile=str(file_id), from_block=ext.first_block, to_block=last)
        details["calls"] += 1
        report = parse_validate_output(_dbms_output(cur), file_id)
        where = f"datafile {file_id} blocks {ext.first_block}-{last}"
        if report.warnings:
            details.setdefault("rman_warnings", []).extend(report.warnings)
        if report.errors:
            raise PermanentReadError(f"{where}: RMAN validate failed: {report.errors[0]}")
        if report.corrupt or report.status == "FAILED":
            raise PermanentReadError(f"{where}: RMAN found {report.corrupt} corrupt blocks (see "
                                     "V$DATABASE_BLOCK_CORRUPTION); the blocks were read, the database is not sound")
        if report.examined is not None:
            confirmed += min(report.examined, ext.blocks)
            details["empty_blocks"] += report.empty
            details["sources"].append("rman_output")
            continue
        until = cur.execute(DB_TIME_SQL).fetchone()[0]
        sessions = list(cur.execute(RMAN_SESSIONS_SQL, since=since, until=until,
                                    file_line=f"%input datafile file number={file_id:05d}%"))
        if len(sessions) != 1:  # none, or several units' RMAN runs on this file: none can be told ours
            details["sources"].append("ambiguous" if sessions else "none")
            continue
        session_recid, session_stamp = sessions[0]
        status = cur.execute(RMAN_STATUS_SQL, session_recid=session_recid, session_stamp=session_stamp).fetchone()
        if status is None or status[0] is None:
            details["sources"].append("none")
            continue  # nothing confirms this extent: counted as not read (a short read)
        if not str(status[0]).upper().startswith("COMPLETED") or "ERRORS" in str(status[0]).upper():
            raise PermanentReadError(f"{where}: RMAN validate ended {status[0]} (V$RMAN_STATUS)")
        confirmed += ext.blocks
        details["sources"].append("v$rman_status")
    return ReadResult(blocks=confirmed, bytes=confirmed * rng.block_size, seconds=time.monotonic() - started,
                      method=METHOD, details=details)
