"""PostgreSQL's preflight (``cutover-prep preflight``): the connection, the grants the README lists, and
the read method the plan will use, proven on one small real relation of each checked database.

The read goes through ``PostgresEngine.read_range`` (its read-only session), and is confirmed:

- ``tid_range_scan``: the transaction's own pg_statio counters of the relation
  (``pg_stat_get_xact_blocks_fetched`` / ``_hit``, what pg_statio_all_tables sums once flushed) moved,
  and ``EXPLAIN`` shows a ``Tid Range Scan`` (the plan the engine's statement relies on);
- ``pg_prewarm`` (mode ``read``) and ``pg_read_binary_file``: the block count the server returned (the
  engine raises ``ShortRead`` when it is short). Both read around shared buffers, so pg_statio and
  pg_stat_io do not count them; their return value is the server's own count.

Module top imports no driver (the registry imports this module).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cutover_prep.engines import keys
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
    mib,
    tls_check,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from cutover_prep.engines.base import ConnectionSpec, DiscoveryOptions
    from cutover_prep.engines.postgres.census import RelationRow

SERVER_SQL = """
SELECT current_setting('server_version'), version(),
       current_setting('rds.extensions', true) IS NOT NULL AS rds,
       EXISTS (SELECT 1 FROM pg_proc WHERE proname = 'aurora_version') AS aurora,
       current_setting('default_transaction_read_only'), current_setting('transaction_read_only')
"""

# The README's grants: CONNECT, pg_read_all_data (14+), pg_monitor (optional), and what decides the read
# method: the pg_prewarm extension, EXECUTE on pg_read_binary_file (pg_read_server_files does not give it).
PRIVILEGES_SQL = """
SELECT current_user,
       has_database_privilege(current_database(), 'CONNECT'),
       CASE WHEN EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'pg_read_all_data')
            THEN pg_has_role('pg_read_all_data', 'MEMBER') END,
       pg_has_role('pg_read_server_files', 'MEMBER'),
       has_function_privilege('pg_catalog.pg_read_binary_file(text, bigint, bigint)', 'EXECUTE'),
       (SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_prewarm'),
       EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_prewarm'),
       pg_has_role('pg_monitor', 'MEMBER'),
       (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
"""

# The session's own TLS (pg_stat_ssl: every session may read its own row; libpq's PQsslAttribute is not in every
# psycopg build, so the server says it).
SSL_SQL = "SELECT version, cipher FROM pg_stat_ssl WHERE pid = pg_backend_pid() AND ssl"
# The transaction's own buffer accesses of one relation (pending pg_statio counters, not yet flushed).
XACT_BLOCKS_SQL = "SELECT pg_stat_get_xact_blocks_fetched(%s::oid), pg_stat_get_xact_blocks_hit(%s::oid)"
TID_PLAN = "Tid Range Scan"
MIN_SAMPLE_BYTES = 16 * 8192
HEAP = ("r", "m", "t")


def run(spec: ConnectionSpec, ctx: Context) -> list[Check]:
    import psycopg

    from cutover_prep.engines.base import EngineError
    from cutover_prep.engines.postgres.engine import PostgresEngine

    errors = (EngineError, psycopg.Error)
    engine, checks = connected(lambda: PostgresEngine.connect(spec, call_timeout_seconds=ctx.statement_seconds), spec,
                               "PostgreSQL")
    if engine is None:
        return checks
    try:
        conn = engine.connection(spec.database)
        checks += attempt(ctx, CONNECTION, "server", lambda: _server(engine, conn, spec), errors)
        databases = engine.databases(ctx.databases)
        if not databases:
            checks.append(Check(PRIVILEGE, "CONNECT", FAIL, "no database the run selects admits this user "
                                f"({', '.join(ctx.databases) or 'all but the templates'})"))
        options = ctx.options()  # the run's selection: only what the run will read is checked (issue 32)

        def waits_named(database: str, check: Callable[[], Any]) -> Any:
            """A lock held past lock_timeout on a relation the check lists: the relation and its holder."""
            try:
                return check()
            except psycopg.errors.LockNotAvailable:
                raise engine.lock_wait(database, f"reading the catalogue of {database}") from None

        for database in databases[:ctx.max_databases]:
            checks += attempt(ctx, PRIVILEGE, f"{database}: privileges",
                              lambda d=database: waits_named(d, lambda: _privileges(engine, d, options)), errors)
            checks += attempt(ctx, METHOD, f"{database}: read method",
                              lambda d=database: waits_named(d, lambda: _methods(engine, d, errors, options)), errors)
        if len(databases) > ctx.max_databases:
            rest = databases[ctx.max_databases:]
            checks.append(Check(METHOD, "databases not sampled", INFO, f"{len(rest)} more, read by the same method "
                                f"rules: {', '.join(rest[:5])}{' ...' if len(rest) > 5 else ''}"))
        checks += attempt(ctx, "census", "census", lambda: census_checks(engine.census(options)), errors)
    finally:
        engine.close()
    return checks


def _server(engine: Any, conn: Any, spec: ConnectionSpec) -> list[Check]:
    version, banner, rds, aurora, default_ro, ro = conn.execute(SERVER_SQL).fetchone()
    ssl = ""
    if conn.pgconn.ssl_in_use:
        row = conn.execute(SSL_SQL).fetchone()
        ssl = ", ".join(f"{k} {v}" for k, v in zip(("protocol", "cipher"), row or (), strict=False) if v)
    edition = "Aurora PostgreSQL" if aurora else "Amazon RDS for PostgreSQL" if rds else "PostgreSQL (not RDS)"
    guarded = default_ro == "on" and ro == "on"
    return [tls_check(engine.transport, spec, ssl),
            Check(CONNECTION, "version", INFO, str(banner).split(",")[0]),
            Check(CONNECTION, "edition", INFO, edition),
            Check(CONNECTION, "read-only session", PASS if guarded else FAIL,
                  f"default_transaction_read_only={default_ro}, transaction_read_only={ro}"
                  + ("" if guarded else ": the session is not read-only; nothing is read"))]


def _selected(rows: list[RelationRow], options: DiscoveryOptions) -> list[RelationRow]:
    """The relations the run's selection reads, judged as the census judges them: by the schema of the table a
    relation belongs to (a TOAST table or an index goes with its table)."""
    from cutover_prep.engines.postgres import census

    return [r for r in rows if census.schema_selected(r.logical_schema, options)]


def _privileges(engine: Any, database: str, options: DiscoveryOptions) -> list[Check]:
    from cutover_prep.engines.postgres import census

    conn = engine.connection(database)
    user, connect, read_all, server_files, exec_read, prewarm, prewarm_available, monitor, superuser = \
        conn.execute(PRIVILEGES_SQL).fetchone()
    at = f"{database}: "
    out = [Check(PRIVILEGE, f"{at}CONNECT", PASS if connect else FAIL,
                 f"{user} may connect" if connect else f"GRANT CONNECT ON DATABASE {database} TO {user}")]
    rows = [r for r in _selected(census.relation_rows(conn, with_shared=True), options)
            if r.fork == "main" and r.relkind != "i"]
    missing = [r for r in rows if not r.may_select]
    if superuser:
        out.append(Check(PRIVILEGE, f"{at}SELECT on tables", PASS, f"{user} is a superuser"))
    elif missing and not exec_read:
        out.append(Check(PRIVILEGE, f"{at}SELECT on tables", FAIL,
                         f"missing on {len(missing):,} of {len(rows):,} relations (GRANT pg_read_all_data TO {user} "
                         f"(14+), or SELECT on each): {missing_text(missing)}",
                         bytes=sum(int(r.bytes) for r in missing)))
    else:
        how = "pg_read_all_data" if read_all else "table grants"
        out.append(Check(PRIVILEGE, f"{at}SELECT on tables", PASS, f"all {len(rows):,} relations ({how})"
                         + ("" if not missing else f"; {len(missing):,} without SELECT read as files")))
    out.append(Check(PRIVILEGE, f"{at}pg_prewarm extension", INFO if prewarm or exec_read else FAIL,
                     f"installed in schema {prewarm}" if prewarm else
                     ("not installed (CREATE EXTENSION pg_prewarm, by rds_superuser; or warmup.create_extension)"
                      + ("" if prewarm_available else "; not available on this server"))))
    out.append(Check(PRIVILEGE, f"{at}EXECUTE on pg_read_binary_file", INFO if exec_read or prewarm else FAIL,
                     "granted" if exec_read else
                     "not granted (GRANT EXECUTE ON FUNCTION pg_read_binary_file(text, bigint, bigint); membership "
                     f"in pg_read_server_files ({'held' if server_files else 'not held'}) does not give it)"))
    if not (prewarm or exec_read):
        out.append(Check(PRIVILEGE, f"{at}pg_prewarm extension or EXECUTE on pg_read_binary_file", FAIL,
                         "neither: only heaps are read (TID range scans); indexes, TOAST indexes and the fsm/vm forks "
                         "stay cold (the census names them)"))
    out.append(Check(PRIVILEGE, f"{at}pg_monitor", INFO, "held" if monitor else "not held (optional: other "
                     "sessions' statistics for the benchmark)"))
    return out


CATALOGUES = ("pg_catalog", "information_schema")
NAMED_MISSING = 5  # the user's relations without SELECT named, largest first; the rest counted


def missing_text(missing: list[RelationRow]) -> str:
    """The relations without SELECT as a DBA reads them (issue 33 §1): the user's own first, largest first, each
    a table with its TOAST (``logical_schema.logical_name``) and its bytes; then the count and bytes of the rest
    of them and of the catalogues' (``pg_catalog``, ``information_schema``), which no application grant gives."""
    own: dict[tuple[str, str], int] = {}
    catalogue = [r for r in missing if r.logical_schema in CATALOGUES]
    for r in missing:
        if r.logical_schema not in CATALOGUES:
            name = (r.logical_schema, r.logical_name)
            own[name] = own.get(name, 0) + int(r.bytes)
    ranked = sorted(own.items(), key=lambda kv: (-kv[1], kv[0]))
    parts = [f"{keys.label(name)} ({mib(size)})" for name, size in ranked[:NAMED_MISSING]]
    if rest := ranked[NAMED_MISSING:]:
        parts.append(f"and {len(rest):,} more of yours ({mib(sum(size for _, size in rest))})")
    if catalogue:
        parts.append(f"{'and ' if parts else ''}{len(catalogue):,} catalogue relations "
                     f"({mib(sum(int(r.bytes) for r in catalogue))}: {', '.join(CATALOGUES)} and their TOAST)")
    return ", ".join(parts)


def _sample(engine: Any, database: str, method: str, options: DiscoveryOptions) -> list[RelationRow]:
    """The smallest real relations the method reads, of those the run selects: a heap's main fork, and an index
    unless TID scans."""
    from cutover_prep.engines.postgres import census

    rows = [r for r in _selected(census.relation_rows(engine.connection(database), with_shared=False), options)
            if r.fork == "main" and (r.may_select or method == "pg_read_binary_file")]
    # a heap of a few blocks at least: on one of a block or two the planner rightly prefers a Seq Scan
    heaps = sorted((r for r in rows if r.relkind in HEAP),
                   key=lambda r: (r.schema == "pg_toast", r.bytes < MIN_SAMPLE_BYTES, r.bytes))
    indexes = sorted((r for r in rows if r.relkind == "i"),
                     key=lambda r: (r.schema in ("pg_toast", "pg_catalog"), r.bytes))
    return heaps[:1] + ([] if method == "tid_range_scan" else indexes[:1])


def _methods(engine: Any, database: str, errors: tuple[type[BaseException], ...],
             options: DiscoveryOptions) -> list[Check]:
    from psycopg import sql

    from cutover_prep.engines.base import Extent, ReadRange
    from cutover_prep.engines.postgres.engine import READ_METHODS

    caps = engine.capabilities(database)
    method = caps.method
    at = f"{database}: "
    out = [Check(METHOD, f"{at}{m}", INFO, f"not used by the plan ({method} is preferred to it)"
                 if READ_METHODS.index(m) > READ_METHODS.index(method) else "not available here")
           for m in READ_METHODS if m != method]
    sample = _sample(engine, database, method, options)
    if not sample:
        return [Check(METHOD, f"{at}{method}", WARN, "no relation with storage to read a block of"), *out]
    conn = engine.connection(database)
    for row in sample:
        loc = {"database": database, "oid": row.oid, "fork": "main", "relkind": row.relkind,
               "schema": row.schema, "relname": row.relname}
        name = keys.label((row.schema, row.relname))  # each name quoted where needed (issue 32)
        rng = ReadRange(keys.object_key((row.schema, row.relname), "main", database=database), loc,
                        (Extent(0, 0, 1),), caps.block_size)
        try:
            with conn.transaction():
                before = conn.execute(XACT_BLOCKS_SQL, (row.oid, row.oid)).fetchone()
                result = engine.read_range(rng)
                after = conn.execute(XACT_BLOCKS_SQL, (row.oid, row.oid)).fetchone()
        except errors as exc:  # a ShortRead, no privilege ...
            out.insert(0, Check(METHOD, f"{at}{method}", FAIL, f"{name}: {' '.join(str(exc).split())}"))
            continue
        fetched, hit = after[0] - before[0], after[1] - before[1]
        counters = f"pg_statio: blocks fetched +{fetched} (read +{fetched - hit}, hit +{hit})"
        if method == "tid_range_scan":
            plan = "\n".join(str(r[0]) for r in conn.execute(sql.SQL(
                "EXPLAIN SELECT count(*) FROM {} WHERE ctid >= %s::tid AND ctid < %s::tid").format(
                sql.Identifier(row.schema, row.relname)), ("(0,0)", "(1,0)")))
            planned = TID_PLAN in plan
            small = row.bytes < MIN_SAMPLE_BYTES  # the planner reads a tiny heap whole: the same blocks
            ok = result.blocks >= 1 and fetched >= 1 and (planned or small)
            shown = next((ln.strip() for ln in plan.splitlines() if "Scan" in ln), plan.splitlines()[0].strip())
            detail = (f"{name}: block 0 read ({counters}); EXPLAIN: "
                      + (TID_PLAN if planned else f"no {TID_PLAN} ({shown})"
                         + (f": the relation is {row.bytes // caps.block_size} block(s), read whole" if small
                            else "")))
        else:
            ok = result.blocks >= 1
            detail = (f"{name}: {method} returned {result.blocks} block ({mib(result.bytes)}); it reads around "
                      f"shared buffers, so the server's count is its return value ({counters})")
        out.insert(0, Check(METHOD, f"{at}{method}", PASS if ok else FAIL, detail,
                            data={"blocks": result.blocks, "xact_blocks_fetched": fetched, "xact_blocks_hit": hit}))
    return out
