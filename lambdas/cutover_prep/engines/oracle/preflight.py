"""Oracle preflight (``cutover-prep preflight``): the connection, the views and grants the engine uses, and
each read method the plan uses, proven on a real segment of the plan through ``OracleEngine.read_range`` (its
read-only transaction):

- ``rowid_range_scan`` (issue 35 §1): one chunk (the first extent) of the customer's *largest* table, with its
  plan kept (``engine.capture_plan``: V$SESSION.PREV_SQL_ID, V$SQL_PLAN) and checked by name (``rowid range
  plan``: a ``TABLE ACCESS`` with option ``BY ROWID RANGE``, no ``TABLE ACCESS FULL``), its physical reads
  checked against the chunk's blocks (the engine's confirmation: its segment's V$SEGMENT_STATISTICS and the
  session's V$MYSTAT; ``OverRead`` beyond the plan, ``ShortRead`` short of it), and the rowid text the engine
  builds compared with the server's DBMS_ROWID.ROWID_CREATE (``rowid encoding``);
- ``index_ffs``: the smallest index, whole; ``lob_read``: the smallest LOB segment, whole;
- the bigfile round trip (``rowids.BIGFILE_ROUNDTRIP_SQL``) when the plan holds a bigfile segment: the block
  number DBMS_ROWID reads back from the rowid the binds build is the block asked for.

A read not confirmed by both views (no SELECT on V$MYSTAT or V$SEGMENT_STATISTICS) fails: the preflight is
where a read path is proven. The views checked are the ones the engine's own SQL names (``engine_views``), each
with ``SELECT COUNT(*) FROM <view> WHERE ROWNUM < 1``; with ``--datafiles`` also the datafile pass's views and
EXECUTE on ``rdsadmin.rdsadmin_rman_util`` (ALL_PROCEDURES lists what the user may execute); RMAN is not
run by the preflight. Module top imports no driver (the registry imports this module).
"""

from __future__ import annotations

import re
from types import ModuleType
from typing import TYPE_CHECKING, Any

from cutover_prep.engines.locators import OracleLocator
from cutover_prep.engines.preflight import (
    CONNECTION,
    FAIL,
    INFO,
    METHOD,
    PASS,
    PRIVILEGE,
    Check,
    Context,
    attempt,
    census_checks,
    connected,
    tls_check,
)

if TYPE_CHECKING:
    from cutover_prep.engines.base import ConnectionSpec
    from cutover_prep.engines.oracle.reads import StatementPlan

EDITION_SQL = "SELECT banner FROM v$version WHERE banner LIKE 'Oracle%' AND ROWNUM = 1"
SESSION_PRIVS_SQL = ("SELECT privilege FROM session_privs WHERE privilege IN "
                     "('CREATE SESSION', 'READ ANY TABLE', 'SELECT ANY TABLE', 'SELECT ANY DICTIONARY', 'ANALYZE ANY')")
RMAN_UTIL_SQL = ("SELECT COUNT(*) FROM all_procedures WHERE owner = 'RDSADMIN' "
                 "AND object_name = 'RDSADMIN_RMAN_UTIL'")
VIEW = re.compile(r"\b(dba_[a-z_]+|v\$[a-z_]+)\b", re.IGNORECASE)
READS = (("rowid_range", "rowid_range_scan"), ("index", "index_ffs"), ("lob", "lob_read"))
ROWID_PLAN = "rowid range plan"
ROWID_ENCODING = "rowid encoding"


def view_probe_sql(view: str) -> str:
    if not re.fullmatch(r"(dba_[a-z_]+|v\$[a-z_]+)", view):  # names from our own SQL only, never from input
        raise ValueError(f"not a dictionary view: {view!r}")
    return f"SELECT COUNT(*) FROM {view} WHERE ROWNUM < 1"  # noqa: S608 (a view name checked just above)


def views_of(module: ModuleType) -> list[str]:
    """The DBA_ and V$ views named by a module's SQL text (its string constants, not its docstring)."""
    found = set()
    for name, value in vars(module).items():
        if isinstance(value, str) and not name.startswith("__"):
            found |= {v.lower() for v in VIEW.findall(value)}
    return sorted(found)


def engine_views(datafiles: bool) -> list[str]:
    from cutover_prep.engines.oracle import datafiles as df
    from cutover_prep.engines.oracle import read_sql as rq
    from cutover_prep.engines.oracle import sql as q

    views = set(views_of(q)) | set(views_of(rq))
    if datafiles:
        views |= set(views_of(df))
    return sorted(views)


def run(spec: ConnectionSpec, ctx: Context) -> list[Check]:
    import oracledb

    from cutover_prep.engines.base import EngineError
    from cutover_prep.engines.oracle.engine import OracleEngine

    engine, checks = connected(lambda: OracleEngine.connect(spec, call_timeout_seconds=ctx.statement_seconds), spec,
                               "Oracle")
    if engine is None:
        return checks
    try:
        checks += checks_of(engine, spec, ctx, errors=(EngineError, oracledb.Error))
    finally:
        engine.close()
    return checks


def checks_of(engine: Any, spec: ConnectionSpec, ctx: Context, *, errors: tuple[type[BaseException], ...]
              ) -> list[Check]:
    """Every check after the connection, on an open ``OracleEngine`` (unit-tested with a fake connection)."""
    from dataclasses import replace

    # the run's selection (issue 32); Oracle's schemas may come as --database (the command's word for them)
    options = replace(ctx.options(), include_schemas=tuple(ctx.include_schemas or ctx.databases))
    out = attempt(ctx, CONNECTION, "server", lambda: _server(engine, spec), errors)
    out += attempt(ctx, PRIVILEGE, "privileges", lambda: _privileges(engine, ctx, errors), errors)
    out += attempt(ctx, METHOD, "read methods", lambda: _methods(engine, options, errors), errors)
    out += attempt(ctx, "census", "census", lambda: census_checks(engine.census(options)), errors)
    return out


def _one(engine: Any, statement: str, **binds: Any) -> Any:
    with engine.conn.cursor() as cur:
        row = cur.execute(statement, **binds).fetchone()
    return None if row is None else row[0]


def _server(engine: Any, spec: ConnectionSpec) -> list[Check]:
    import oracledb

    from cutover_prep.engines.oracle import sql as q

    try:
        version = _one(engine, q.VERSION_FULL_SQL)
    except oracledb.DatabaseError:  # before 18c: no VERSION_FULL (ORA-00904)
        version = _one(engine, q.VERSION_SQL)
    try:
        edition = _one(engine, EDITION_SQL)
    except oracledb.DatabaseError as exc:
        edition = f"not known (V$VERSION: {' '.join(str(exc).split())[:120]})"
    guard = engine.read_only_guard
    how = ("ALTER SESSION SET READ_ONLY = TRUE and SET TRANSACTION READ ONLY for each read"
           if guard == "session+transaction" else "SET TRANSACTION READ ONLY for each read (READ_ONLY, 23ai+, "
           "not offered)")
    return [tls_check(engine.transport, spec),
            Check(CONNECTION, "version", INFO, str(version)),
            Check(CONNECTION, "edition", INFO, str(edition)),
            Check(CONNECTION, "read-only session", PASS, how)]


def _privileges(engine: Any, ctx: Context, errors: tuple[type[BaseException], ...]) -> list[Check]:
    with engine.conn.cursor() as cur:
        privs = {str(p) for (p,) in cur.execute(SESSION_PRIVS_SQL)}
    read_any = privs & {"READ ANY TABLE", "SELECT ANY TABLE"}
    out = [Check(PRIVILEGE, "READ ANY TABLE", INFO, f"held ({', '.join(sorted(read_any))})" if read_any else
                 "not held: each table needs SELECT or READ (the census names what may not be read)"),
           Check(PRIVILEGE, "ANALYZE ANY", INFO, "held: DBMS_SPACE.UNUSED_SPACE gives each table's high-water mark"
                 if "ANALYZE ANY" in privs else "not held: DBMS_SPACE.UNUSED_SPACE needs ANALYZE on each table, else "
                 "table reads plan whole extents (free blocks above the high-water mark included) and are confirmed "
                 "with the looser bound (half the planned blocks)")]
    for view in engine_views(ctx.datafiles):
        def probe(view: str = view) -> Check:
            import oracledb

            name = f"SELECT on {view.upper()}"
            try:
                _one(engine, view_probe_sql(view))
            except oracledb.DatabaseError as exc:  # ORA-00942 / ORA-01031: the grant is missing
                err = exc.args[0] if exc.args else exc
                text = " ".join(str(getattr(err, "message", None) or exc).split())
                return Check(PRIVILEGE, name, FAIL, f"{text}: GRANT SELECT_CATALOG_ROLE, or on RDS EXEC "
                             f"rdsadmin.rdsadmin_util.grant_sys_object('{view.upper().replace('V$', 'V_$')}', "
                             "'<USER>')")
            return Check(PRIVILEGE, name, PASS, "readable")
        out += attempt(ctx, PRIVILEGE, f"SELECT on {view.upper()}", probe, errors)
    if ctx.datafiles:
        granted = int(_one(engine, RMAN_UTIL_SQL) or 0) > 0
        out.append(Check(PRIVILEGE, "EXECUTE on rdsadmin.rdsadmin_rman_util", PASS if granted else FAIL,
                         "granted (the datafile pass; RMAN is not run by the preflight)" if granted else
                         "missing: GRANT EXECUTE ON rdsadmin.rdsadmin_rman_util TO <USER>, by the master user"))
    return out


def plan_check(key: str, table: str, plan: StatementPlan | None) -> Check:
    """The chunk's plan, by name: ``TABLE ACCESS BY ROWID RANGE`` of the table and no full scan (Database
    Reference, "V$SQL_PLAN": OPERATION, OPTIONS; SQL Tuning Guide, "Table Access by Rowid")."""
    lines = plan.lines if plan is not None else []
    shown = "; ".join(" ".join(str(x) for x in (op, opt, name) if x) for op, opt, _, name in lines)
    if not lines:
        sql_id = plan.sql_id if plan is not None else None
        return Check(METHOD, ROWID_PLAN, FAIL, f"{key}: no plan found for the chunk's statement (V$SESSION.PREV_SQL_ID"
                     f" {sql_id}, V$SQL_PLAN): SELECT on V_$SESSION and V_$SQL_PLAN is needed")
    ranged = [ln for ln in lines if ln[0] == "TABLE ACCESS" and ln[1] == "BY ROWID RANGE" and ln[3] in (None, table)]
    full = [ln for ln in lines if ln[0] == "TABLE ACCESS" and ln[1] != "BY ROWID RANGE"]
    if ranged and not full:
        return Check(METHOD, ROWID_PLAN, PASS, f"{key}: SQL_ID {plan.sql_id}: {shown}",  # type: ignore[union-attr]
                     data={"plan": lines})
    return Check(METHOD, ROWID_PLAN, FAIL, f"{key}: the chunk ran as {shown or 'nothing'}, not TABLE ACCESS BY ROWID "
                 "RANGE: each chunk would not stop at its rowid bounds", data={"plan": lines})


def _encoding(engine: Any, seg: Any) -> Check:
    """The rowid the engine builds for the chunk's first block is the server's DBMS_ROWID.ROWID_CREATE."""
    from cutover_prep.engines.oracle import rowids as rid

    ext, loc = seg.extents[0], OracleLocator.of(seg.locator)
    b = rid.rowid_range_binds(int(loc.data_object_id or 0), ext.file_id, ext.first_block, ext.first_block,
                            loc.bigfile)
    ours = rid.rowid_of(b["objd"], b["lo_fno"], b["lo_block"], 0)
    server = _one(engine, rid.ROWID_CREATE_SQL, objd=b["objd"], fno=b["lo_fno"], block=b["lo_block"], row_number=0)
    ok = server is not None and str(server) == ours
    return Check(METHOD, ROWID_ENCODING, PASS if ok else FAIL,
                 f"{seg.key}: block {ext.first_block:,} of file {ext.file_id}: ours {ours}, DBMS_ROWID.ROWID_CREATE "
                 f"{server}" + ("" if ok else ": the rowid ranges would name other blocks"))


def _methods(engine: Any, options: Any, errors: tuple[type[BaseException], ...]) -> list[Check]:
    from cutover_prep.engines.base import ReadRange
    from cutover_prep.engines.oracle import rowids as rid

    segments = engine.discover(options)
    typed = [(s, OracleLocator.of(s.locator)) for s in segments]
    out: list[Check] = []
    for read, method in READS:
        found = sorted((s for s, loc in typed if loc.read == read), key=lambda s: s.bytes)
        if not found:
            out.append(Check(METHOD, method, INFO, "not used by the plan (no segment of the selection needs it)"))
            continue
        seg = found[-1] if read == "rowid_range" else found[0]  # the largest table; the smallest index, LOB
        extents = seg.extents[:1] if read == "rowid_range" else seg.extents
        rng = ReadRange(seg.key, seg.locator, extents, seg.block_size, seg.splittable)
        engine.capture_plan, engine.last_plan = read == "rowid_range", None
        try:
            result = engine.read_range(rng)
        except errors as exc:  # an OverRead, a ShortRead, no privilege, ...
            out.append(Check(METHOD, method, FAIL, f"{seg.key}: {type(exc).__name__}: {' '.join(str(exc).split())}"))
            result = None
        finally:
            engine.capture_plan = False
        if read == "rowid_range":
            out.append(plan_check(seg.key, str(OracleLocator.of(seg.locator).table), engine.last_plan))
            out.append(_encoding(engine, seg))
        if result is None:
            continue
        details = result.details
        if result.gone and not result.blocks:  # issue 32: nothing of the planned storage exists now
            out.append(Check(METHOD, method, FAIL, f"{seg.key}: nothing read: {details.get('gone_reason')} "
                             f"(DATA_OBJECT_ID {OracleLocator.of(seg.locator).data_object_id} at discovery, "
                             f"{details.get('data_object_id_now', 'the same')} now); run the preflight again"))
            continue
        missing = [details[k] for k in ("unconfirmed", "segment_unconfirmed") if details.get(k)]
        if details.get("confirmed_blocks") is None or missing:
            out.append(Check(METHOD, method, FAIL, f"{seg.key}: read, but not confirmed: "
                             f"{'; '.join(missing) or 'no counters'}"))
            continue
        mystat, segstat = details.get("mystat") or {}, details.get("segment_stats") or {}
        seen = (f"V$SEGMENT_STATISTICS physical reads +{segstat.get('physical reads', 0):,}, logical reads "
                f"+{segstat.get('logical reads', 0):,}; V$MYSTAT physical reads +{mystat.get('physical reads', 0):,}")
        path = details.get("read_path") or {}
        if path:  # Oracle's choice, said (issue 35: no session setting asks for direct path reads)
            seen += (f"; read path: {path['path']} ({path['direct']:,} direct, {path['buffer_cache']:,} through the "
                     f"buffer cache, by {path['by']})")
        out.append(Check(METHOD, method, PASS, f"{seg.key}: {result.blocks:,} block(s) read of {rng.blocks:,} planned "
                         f"({result.gone:,} free above the high-water mark or gone); {seen}",
                         data={"blocks": rng.blocks, "read": result.blocks, "mystat": mystat,
                               "segment_stats": segstat, "high_water_mark": details.get("high_water_mark"),
                               "read_path": details.get("read_path")}))
    bigfile = sorted((s for s, loc in typed if loc.read == "rowid_range" and loc.bigfile), key=lambda s: s.bytes)
    if not bigfile:
        out.append(Check(METHOD, "bigfile round trip", INFO, "not used by the plan (no bigfile table segment)"))
        return out
    seg = bigfile[0]
    last = seg.extents[-1]
    block = last.first_block + last.blocks - 1
    objd = int(OracleLocator.of(seg.locator).data_object_id or 0)
    binds = rid.rowid_range_binds(objd, last.file_id, block, block, True)
    back = _one(engine, rid.BIGFILE_ROUNDTRIP_SQL, objd=binds["objd"], fno=binds["lo_fno"], block=binds["lo_block"])
    ok = back is not None and int(back) == block
    out.append(Check(METHOD, "bigfile round trip", PASS if ok else FAIL,
                     f"{seg.key}: block {block:,} -> rowid -> DBMS_ROWID.ROWID_BLOCK_NUMBER(..., 'BIGFILE') = "
                     f"{back if back is None else f'{int(back):,}'}" + ("" if ok else ": the rowid ranges of "
                                                                        "bigfile tablespaces would miss blocks")))
    return out

