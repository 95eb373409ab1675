"""MySQL / MariaDB preflight (``cutover-prep preflight``): the connection, the README's grants (``SELECT``
on the databases to warm, ``PROCESS``), and each read method the plan uses (``pk_walk``: the clustered
index walk, ``index_scan``: a covering secondary index scan, ``full_scan`` where the plan has one), each
proven on the smallest real segment of the plan through ``MySQLEngine.read_range``.

A read is confirmed by the server's counters: the session's ``Handler_read_*`` (the engine refuses an index
read that scanned the table), the global ``Innodb_buffer_pool_read_requests`` (every page the read asked
for, cached or not) and ``Innodb_pages_read`` (those read from storage); its plan by the engine's own
``EXPLAIN`` guard (the intended index, ``Using index`` for a covering scan), which runs before the read.

Module top imports no driver (the registry imports this module).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cutover_prep.engines.locators import MysqlLocator
from cutover_prep.engines.mysql.evidence import delta
from cutover_prep.engines.preflight import (
    CONNECTION,
    FAIL,
    INFO,
    METHOD,
    PASS,
    PRIVILEGE,
    WARN,
    Check,
    Context,
    attempt,
    census_checks,
    connected,
    tls_check,
)

if TYPE_CHECKING:
    from cutover_prep.engines.base import ConnectionSpec

SERVER_SQL = "SELECT VERSION(), @@version_comment, @@basedir, CURRENT_USER()"
TLS_STATUS_SQL = "SHOW SESSION STATUS WHERE Variable_name IN ('Ssl_version', 'Ssl_cipher')"
# The current account's global privileges (the view lists other accounts' too for a user who may read mysql.*).
GLOBAL_PRIVILEGES_SQL = ("SELECT PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = "
                         "CONCAT('''', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), '''@''', "
                         "SUBSTRING_INDEX(CURRENT_USER(), '@', -1), '''')")
SCHEMA_SELECT_SQL = ("SELECT TABLE_SCHEMA FROM information_schema.SCHEMA_PRIVILEGES WHERE PRIVILEGE_TYPE = 'SELECT' "
                     "AND GRANTEE = CONCAT('''', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), '''@''', "
                     "SUBSTRING_INDEX(CURRENT_USER(), '@', -1), '''')")
VISIBLE_SCHEMAS_SQL = "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA"
POOL_SQL = ("SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_pages_read', 'Innodb_buffer_pool_read_requests', "
            "'Innodb_buffer_pool_reads')")
METHODS = ("pk_walk", "index_scan", "full_scan")  # the plan's read methods, in the engine's words
SAMPLE_PAGES = 4  # pages of the clustered walk read by the preflight


def run(spec: ConnectionSpec, ctx: Context) -> list[Check]:
    import pymysql

    from cutover_prep.engines.base import EngineError
    from cutover_prep.engines.mysql.engine import MySQLEngine

    errors = (EngineError, pymysql.err.MySQLError)
    engine, checks = connected(lambda: MySQLEngine.connect(spec, call_timeout_seconds=ctx.statement_seconds), spec,
                               lambda e: e.dialect.label)
    if engine is None:
        return checks
    options = ctx.options()  # the run's selection: only what the run will read is checked (issue 32)
    try:
        checks += attempt(ctx, CONNECTION, "server", lambda: _server(engine, spec), errors)
        census: list[Any] = []
        census_result = attempt(ctx, "census", "census", lambda: census_checks(_census(engine, options, census)),
                                errors)
        checks += attempt(ctx, PRIVILEGE, "privileges", lambda: _privileges(engine, ctx, census), errors)
        checks += attempt(ctx, METHOD, "read methods", lambda: _methods(engine, options, errors), errors)
        checks += census_result
    finally:
        engine.close()
    return checks


def _census(engine: Any, options: Any, into: list[Any]) -> list[Any]:
    into += engine.census(options)
    return into


def _rows(engine: Any, statement: str) -> list[tuple]:
    with engine.conn.cursor() as cur:
        cur.execute(statement)
        return list(cur.fetchall())


def _server(engine: Any, spec: ConnectionSpec) -> list[Check]:
    from cutover_prep.engines.mysql import sql as q

    version, comment, basedir, _user = _rows(engine, SERVER_SQL)[0]
    ssl = ", ".join(f"{n} {v}" for n, v in _rows(engine, TLS_STATUS_SQL) if v)
    guard = _rows(engine, f"SELECT {engine.dialect.read_only_variable()}")[0][0]
    rds = str(basedir or "").startswith("/rdsdbbin")
    edition = f"{engine.dialect.label} {comment}" + (" on Amazon RDS" if rds else " (not RDS)")
    ok = int(guard) == 1 and engine.read_only_guard
    return [tls_check(engine.transport, spec, ssl),
            Check(CONNECTION, "version", INFO, str(version)),
            Check(CONNECTION, "edition", INFO, edition),
            Check(CONNECTION, "read-only session", PASS if ok else FAIL,
                  f"{q.SESSION_READ_ONLY_SQL} ({engine.dialect.read_only_variable()}={guard}), each read in "
                  f"{q.START_READ_ONLY_SQL}")]


def _privileges(engine: Any, ctx: Context, census: list[Any]) -> list[Check]:
    import fnmatch

    from cutover_prep.engines.mysql import discovery
    from cutover_prep.engines.mysql import sql as q

    user = _rows(engine, "SELECT CURRENT_USER()")[0][0]
    glob = {str(p).upper() for (p,) in _rows(engine, GLOBAL_PRIVILEGES_SQL)}
    granted = {str(s).replace("\\_", "_").replace("\\%", "%") for (s,) in _rows(engine, SCHEMA_SELECT_SQL)}
    visible = {str(s) for (s,) in _rows(engine, VISIBLE_SCHEMAS_SQL)} - set(q.SYSTEM_SCHEMAS)
    out = [Check(PRIVILEGE, "PROCESS", PASS if "PROCESS" in glob else FAIL,
                 "held (the census of every InnoDB tablespace)" if "PROCESS" in glob else
                 f"missing: GRANT PROCESS ON *.* TO {user} (the census of the InnoDB tablespaces needs it)")]
    asked = [p for p in ctx.databases if not any(ch in p for ch in "*?[")]
    selected = {s for s in visible if discovery.schema_selected(s, ctx.options())}  # as the run's discovery
    no_privilege = {str(o.schema) for o in census if o.reason == "no privilege" and o.schema in selected | set(asked)}
    for schema in sorted(set(asked) | selected | no_privilege):
        may = "SELECT" in glob or any(fnmatch.fnmatchcase(schema, g.replace("%", "*").replace("_", "?"))
                                      for g in granted)
        if schema not in visible and schema in asked:
            out.append(Check(PRIVILEGE, f"SELECT on {q.quote_ident(schema)}", FAIL,
                             f"missing, or no such database: GRANT SELECT ON {q.quote_ident(schema)}.* TO {user}"))
        elif schema in no_privilege or not may:
            out.append(Check(PRIVILEGE, f"SELECT on {q.quote_ident(schema)}", FAIL,
                             f"missing on some of its tables: GRANT SELECT ON {q.quote_ident(schema)}.* TO {user}"))
        else:
            out.append(Check(PRIVILEGE, f"SELECT on {q.quote_ident(schema)}", PASS,
                             "held on *.*" if "SELECT" in glob else "held on the database"))
    if "SELECT" not in glob:
        out.append(Check(PRIVILEGE, "SELECT on *.*", INFO, "not held (optional: mysql.innodb_index_stats gives "
                         "each index's size; without it a table's INDEX_LENGTH is shared between its indexes)"))
    return out


def _pool(engine: Any) -> dict[str, int]:
    return {str(n).lower(): int(v) for n, v in _rows(engine, POOL_SQL)}


def _methods(engine: Any, options: Any, errors: tuple[type[BaseException], ...]) -> list[Check]:
    from cutover_prep.engines.base import Extent, ReadRange

    segments = engine.discover(options)
    typed = [(s, MysqlLocator.of(s.locator)) for s in segments]
    out: list[Check] = []
    for method in METHODS:
        found = sorted(((s, loc) for s, loc in typed if loc.read == method),
                       key=lambda sl: (sl[1].engine != "innodb", int(sl[1].rows or 0) == 0, sl[0].bytes))
        if not found:
            out.append(Check(METHOD, method, INFO, "not used by the plan (no segment of the selection needs it)"))
            continue
        seg, loc = found[0]
        extents = (Extent(0, 0, min(seg.blocks, SAMPLE_PAGES)),) if method == "pk_walk" else seg.extents
        rng = ReadRange(seg.key, seg.locator, extents, seg.block_size, seg.splittable)
        before = _pool(engine)
        try:
            result = engine.read_range(rng)
        except errors as exc:  # the EXPLAIN guard, the Handler_read_* check, no privilege ...
            out.append(Check(METHOD, method, FAIL, f"{seg.key}: {' '.join(str(exc).split())}"))
            continue
        moved_by = delta(before, _pool(engine))
        handler = {k: v for k, v in result.details["handler"].items() if v}
        planned = (seg.key, method) in engine._checked
        requests = moved_by["innodb_buffer_pool_read_requests"]
        counters = (f"Innodb_buffer_pool_read_requests +{requests:,}, Innodb_pages_read "
                    f"+{moved_by['innodb_pages_read']:,}; session "
                    + (", ".join(f"{k} +{v:,}" for k, v in sorted(handler.items())) or "Handler_read_* +0"))
        innodb = loc.engine == "innodb"  # MyISAM/Aria: the session's Handler_read_* only
        moved = requests > 0 if innodb else bool(handler)
        ok = moved and planned
        out.append(Check(METHOD, method, PASS if ok else FAIL,
                         f"{seg.key}: {rng.blocks} page(s), {result.details['rows']:,} rows ({counters}); "
                         + ("EXPLAIN: the intended plan" if planned else "EXPLAIN not checked")
                         + ("" if moved else "; the server's counters did not move"),
                         data={"pages": rng.blocks, "rows": result.details["rows"], "innodb": dict(moved_by),
                               "handler": handler, "explain_checked": planned}))
    if not segments:
        out.append(Check(METHOD, "read methods", WARN, "the selection holds nothing to read"))
    return out
