"""The engine registry: every engine the run can warm and benchmark, one ``EngineFamily`` each.

This is the one place outside an engine's folder that names engines. Everything else asks
the registry: the connection's defaults (``connection``), the warm-up engine and the
benchmark driver (``engines.open_engine``, ``deps.open_bench``), the accepted
``target.engine`` values (``inputs``), the CLIs' choices, the sample locator
(``measure.sample``), the scratch object's name (``scratch``) and the storage limits
(``analysis.limits``).

Adding an engine: a folder ``engines/<name>/`` with its engine, its benchmark driver and
the hooks named below, and one ``EngineFamily`` in ``FAMILIES``. ``ANALYSIS_ONLY`` holds the
storage facts the offline analysis needs for an RDS engine the run cannot warm (none today;
``family()`` says such an engine is not supported).

Reading the registry imports no database driver: the hooks import psycopg / oracledb
only when called.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from cutover_prep.engines import mysql, oracle, postgres
from cutover_prep.engines.base import EngineError
from cutover_prep.engines.locators import BaseLocator
from cutover_prep.engines.mysql import activity as mysql_activity
from cutover_prep.engines.mysql import hotset as mysql_hotset
from cutover_prep.engines.mysql import preflight as mysql_preflight
from cutover_prep.engines.mysql import replication as mysql_replication
from cutover_prep.engines.mysql.sql import SYSTEM_SCHEMAS as MYSQL_SYSTEM_SCHEMAS
from cutover_prep.engines.mysql.tls import dsn_tls as mysql_dsn_tls
from cutover_prep.engines.oracle import activity as oracle_activity
from cutover_prep.engines.oracle import hotset as oracle_hotset
from cutover_prep.engines.oracle import preflight as oracle_preflight
from cutover_prep.engines.oracle.sql import SYSTEM_SCHEMAS as ORACLE_SYSTEM_SCHEMAS
from cutover_prep.engines.oracle.tls import ORACLE_TCPS_PORT
from cutover_prep.engines.oracle.tls import dsn_tls as oracle_dsn_tls
from cutover_prep.engines.postgres import activity as postgres_activity
from cutover_prep.engines.postgres import hotset as postgres_hotset
from cutover_prep.engines.postgres import preflight as postgres_preflight
from cutover_prep.engines.postgres import replication as postgres_replication
from cutover_prep.engines.postgres.tls import dsn_tls as postgres_dsn_tls
from cutover_prep.engines.replication import Found

if TYPE_CHECKING:
    from cutover_prep.engines.base import ConnectionSpec, Engine


class UnknownEngine(EngineError, ValueError):
    """An engine name that no family covers; the message names the accepted ones."""

    error_type = "UnknownEngine"


class UnsupportedWarmupMode(EngineError, ValueError):
    """``warmup.mode`` asks for a pass the engine does not offer; the message names the ones it does."""

    error_type = "UnsupportedWarmupMode"


class HotSetEngineMismatch(EngineError, ValueError):
    """``warmup.hot_set`` was taken on another engine than the run's: its names match none of the segments."""

    error_type = "HotSetEngineMismatch"


# warmup.mode values: per-segment reads, the full datafile pass, or both
SEGMENTS, DATAFILES, BOTH = "segments", "datafiles", "both"


@dataclass(frozen=True)
class LimitsFacts:
    """What ``analysis.limits`` needs to know per engine."""

    stripe_threshold_gb: int  # RDS stripes gp2/gp3/io storage over 4 volumes from this size
    # (databaseEngine, databaseEdition, licenseModel) of its instances in the AWS Price List; None when
    # the family alone does not name one (Oracle: several editions and licence models)
    price_list: tuple[str, str | None, str] | None = None


@dataclass(frozen=True)
class EngineFamily:
    """One engine: its names, its connection defaults, how to open it, its limits facts."""

    name: str  # the family name used everywhere in the run (target.engine, findings)
    label: str  # for people: "PostgreSQL"
    rds_engines: tuple[str, ...]  # DescribeDBInstances "Engine" values it covers; the first one names a stand-in
    aliases: tuple[str, ...]  # other spellings accepted for the family (e.g. a secret's "engine" field)
    default_port: int
    default_database: str  # when neither the target, the secret nor the instance names one
    database_term: str  # what the DSN's path names: DATABASE, SERVICE
    dsn_schemes: tuple[str, ...]  # URL schemes of ``cutover-prep local --dsn``; the first one is shown
    tls_port: int | None  # TLS on its own port unless target.port names one (Oracle TCPS), else None
    scratch_prefix: str  # the write test's scratch object: prefix + a digest of the run id
    upper_case_identifiers: bool  # unquoted identifiers are upper case (the scratch name is made so)
    limits: LimitsFacts
    # the longest name of a database, schema or relation, in characters (a byte limit bounds the characters
    # too: a character is at least a byte in every character set); the run input refuses a longer one
    identifier_max_chars: int
    open_engine: Callable[..., Engine]  # (spec, *, call_timeout_seconds, create_extension) -> warm-up engine
    open_bench: Callable[..., Any]  # (spec, database, *, call_timeout_seconds, create_extension) -> BenchDriver
    block_readable: Callable[[BaseLocator], bool]  # may a probe read this locator's single blocks?
    # a local run's DSN parameters (name, value pairs) -> (engines.transport mode, CA file or None); refuses
    # what it cannot honour by name (transport.DsnTlsProblem)
    dsn_tls: Callable[[Iterable[tuple[str, str]]], tuple[str, str | None]]
    server_version: Callable[[ConnectionSpec], str | None] | None = None  # for a local run's stand-in instance
    warmup_modes: tuple[str, ...] = (SEGMENTS,)  # warmup.mode values it offers (the engine then has discover_datafiles)
    # ``cutover-prep preflight``: (spec, preflight.Context) -> [preflight.Check], each read method and grant proven
    preflight: Callable[..., list[Any]] | None = None
    # what the estimate counts (issue 23): the schemas of the engine's catalogues, (schema, name prefix) of its
    # large objects, and whether warmup.include_system selects the catalogues (not on PostgreSQL: decision 40)
    catalogue_schemas: frozenset[str] = frozenset()
    large_objects: tuple[tuple[str, str], ...] = ()
    include_system_applies: bool = True
    # ``cutover-prep hotset``: (spec, engines.hotset.HotsetOptions) -> engines.hotset.Taken, the user relations
    # with the engine's own statistics, read-only; awr: whether the engine has AWR history (``--awr``)
    hotset: Callable[..., Any] | None = None
    hotset_awr: bool = False
    hotset_buffer_pool: bool = False  # hotset --buffer-pool / --buffer-pool-file: InnoDB's buffer pool (issue 33)
    database_is_identifier: bool = True  # target.database names a database or schema (Oracle: a service name)
    # ``cutover-prep gate``: (replica spec, source spec | None, *, max_lag_seconds, max_lag_bytes) ->
    # replication.Found: native replication read on the target, read-only (None: not offered)
    replication: Callable[..., Found] | None = None
    # a DSN's database is a schema (MySQL, MariaDB): the default of the schema selection (cutover_prep.access.selection)
    database_is_schema: bool = False
    # the warm-up's yield signal (issue 36 §1): (the warm-up's engine) -> engines.activity.Activity, the other
    # sessions' reads and read time from the server's own counters (None: the warm-up never yields)
    activity: Callable[[Engine], Any] | None = None
    # when the server last started, as it says (the warm-up's engine) -> ISO 8601: Discover and the end census read
    # it, so the findings say whether the database restarted under the run (None: never known)
    started: Callable[[Engine], str] | None = None

    @property
    def names(self) -> tuple[str, ...]:
        """Every name ``family()`` maps to this family."""
        return (self.name, *self.rds_engines, *self.aliases)

    def scratch_name(self, digest: str) -> str:
        name = f"{self.scratch_prefix}{digest}"
        return name.upper() if self.upper_case_identifiers else name


POSTGRES = EngineFamily(
    name="postgres", label="PostgreSQL",
    rds_engines=("postgres", "aurora-postgresql"), aliases=("postgresql",),
    default_port=5432, default_database="postgres", database_term="DATABASE", dsn_schemes=("postgresql", "postgres"),
    tls_port=None, scratch_prefix="cutover_prep_scratch_", upper_case_identifiers=False,
    limits=LimitsFacts(stripe_threshold_gb=400, price_list=("PostgreSQL", None, "No license required")),
    identifier_max_chars=63,  # NAMEDATALEN-1 bytes (PostgreSQL manual, 4.1.1 Identifiers and Key Words)
    open_engine=postgres.open_engine, open_bench=postgres.open_bench, block_readable=postgres.block_readable,
    dsn_tls=postgres_dsn_tls, server_version=postgres.server_version, preflight=postgres_preflight.run,
    catalogue_schemas=frozenset({"pg_catalog", "information_schema"}),
    large_objects=(("pg_catalog", "pg_largeobject"),),  # pg_largeobject, _metadata and their indexes
    include_system_applies=False, hotset=postgres_hotset.run, replication=postgres_replication.check,
    activity=postgres_activity.read, started=postgres_activity.started,
)

ORACLE = EngineFamily(
    name="oracle", label="Oracle",
    rds_engines=("oracle-ee", "oracle-se2", "oracle-ee-cdb", "oracle-se2-cdb", "custom-oracle-ee"), aliases=(),
    default_port=1521, default_database="ORCL", database_term="SERVICE", dsn_schemes=("oracle",),
    tls_port=ORACLE_TCPS_PORT, scratch_prefix="CPREP_SCRATCH_", upper_case_identifiers=True,  # 30 bytes at most
    limits=LimitsFacts(stripe_threshold_gb=200),
    # 128 bytes from COMPATIBLE 12.2, 30 before (SQL Language Reference, Database Object Names and Qualifiers)
    identifier_max_chars=128, database_is_identifier=False,
    open_engine=oracle.open_engine, open_bench=oracle.open_bench, block_readable=oracle.block_readable,
    dsn_tls=oracle_dsn_tls,
    warmup_modes=(SEGMENTS, DATAFILES, BOTH), preflight=oracle_preflight.run,
    catalogue_schemas=frozenset(ORACLE_SYSTEM_SCHEMAS), hotset=oracle_hotset.run, hotset_awr=True,
    activity=oracle_activity.read, started=oracle_activity.started,
)

# MySQL and MariaDB: one engine folder (engines/mysql/ tells them apart by VERSION()), two
# families so the findings and the storage analysis keep RDS's names.
MYSQL = EngineFamily(
    name="mysql", label="MySQL", rds_engines=("mysql",), aliases=(),
    default_port=3306, default_database="information_schema", database_term="DATABASE", dsn_schemes=("mysql",),
    tls_port=None, scratch_prefix="cutover_prep_scratch_", upper_case_identifiers=False,
    limits=LimitsFacts(stripe_threshold_gb=400, price_list=("MySQL", None, "No license required")),
    identifier_max_chars=64,  # MySQL manual, Identifier Length Limits; MariaDB KB, Identifier Names: the same
    open_engine=mysql.open_engine, open_bench=mysql.open_bench, block_readable=mysql.block_readable,
    dsn_tls=mysql_dsn_tls, server_version=mysql.server_version, preflight=mysql_preflight.run,
    catalogue_schemas=frozenset(MYSQL_SYSTEM_SCHEMAS), hotset=mysql_hotset.run, hotset_buffer_pool=True,
    database_is_schema=True, replication=mysql_replication.check, activity=mysql_activity.read,
    started=mysql_activity.started,
)

MARIADB = replace(MYSQL, name="mariadb", label="MariaDB", rds_engines=("mariadb",),
                  dsn_schemes=("mariadb",),  # the same engine code; RDS's own name and price
                  limits=LimitsFacts(stripe_threshold_gb=400, price_list=("MariaDB", None, "No license required")))

FAMILIES: tuple[EngineFamily, ...] = (POSTGRES, ORACLE, MYSQL, MARIADB)

# The engine assumed where none is known (the offline analysis' default).
DEFAULT_ENGINE = POSTGRES.name
# The family whose DSN may also be libpq's keyword conninfo (host=... dbname=...).
KEYWORD_CONNINFO_ENGINE = POSTGRES.name

# RDS engines the run cannot warm yet, with what the offline storage analysis needs for them.
ANALYSIS_ONLY: dict[str, LimitsFacts] = {}

_BY_NAME = {name: f for f in FAMILIES for name in f.names}


def families() -> tuple[EngineFamily, ...]:
    return FAMILIES


def engine_names() -> tuple[str, ...]:
    """The family names: ``postgres``, ``oracle``."""
    return tuple(f.name for f in FAMILIES)


def accepted_names() -> tuple[str, ...]:
    """Every name ``family()`` accepts: family names, RDS engine names, aliases."""
    return tuple(_BY_NAME)


def rds_engine_family() -> dict[str, str]:
    """RDS engine name -> family name, for the engines the run supports."""
    return {rds: f.name for f in FAMILIES for rds in f.rds_engines}


def family(name_or_rds_engine: str) -> EngineFamily:
    """The family of a family name (``oracle``), an RDS engine name (``oracle-se2-cdb``) or an alias."""
    key = str(name_or_rds_engine or "").strip().lower()
    found = _BY_NAME.get(key)
    if found is not None:
        return found
    accepted = "; ".join(f"{f.name} (RDS: {', '.join(f.rds_engines)})" for f in FAMILIES)
    if key in ANALYSIS_ONLY:
        raise UnknownEngine(f"engine {name_or_rds_engine!r} is not supported yet; use one of: {accepted}")
    raise UnknownEngine(f"unknown engine {name_or_rds_engine!r}; use one of: {accepted}")


def server_started(engine: Engine) -> str | None:
    """When ``engine``'s server last started (its family's ``started``); None when the family cannot say or the
    server did not answer (the findings then say a restart is not known, never that there was none)."""
    try:
        hook = family(engine.name).started
        return None if hook is None else hook(engine)
    except Exception as exc:  # noqa: BLE001 - a fact for the findings, never a reason to fail the step
        logging.getLogger(__name__).warning("the server's start time could not be read: %s: %s",
                                            type(exc).__name__, str(exc).strip()[:200])
        return None


def identifier_max_chars(engine: str | None = None) -> int:
    """The longest identifier ``engine`` holds, in characters; no engine named: the longest any engine holds."""
    return family(engine).identifier_max_chars if engine else max(f.identifier_max_chars for f in FAMILIES)


def same_engine_code(a: str, b: str) -> bool:
    """Whether the engines named ``a`` and ``b`` are served by the same engine code (MySQL and MariaDB share
    one), so that a hot-set profile taken on one names relations as the other's discovery does; False for a
    name no family covers."""
    try:
        return family(a).open_engine is family(b).open_engine
    except UnknownEngine:
        return False


def hot_set_engine_problem(hot_set_engine: str, engine: str) -> str | None:
    """Why a hot set taken on ``hot_set_engine`` cannot steer a run on ``engine`` (one line), or None: the one
    rule of the run input (when it names ``target.engine``) and of Discover (the engine it found)."""
    if same_engine_code(hot_set_engine, engine):
        return None
    return (f"the profile was taken on {hot_set_engine[:32]}, the target is {family(engine).name}: its names "
            "match none of the target's segments; take it on the source of this target")


def check_hot_set_engine(hot_set_engine: str | None, engine: str) -> None:
    """Discover: raise ``HotSetEngineMismatch`` (one line, naming the field) when the hot set was taken on
    another engine than the one the run connects to, whether the input named it or RDS reported it."""
    if hot_set_engine is not None and (problem := hot_set_engine_problem(hot_set_engine, engine)):
        raise HotSetEngineMismatch(f"warmup.hot_set.engine: {problem}")


def check_warmup_mode(engine: str, mode: str) -> None:
    """Raise ``UnsupportedWarmupMode`` (one line) when ``engine``'s family does not offer ``mode``."""
    fam = family(engine)
    if mode not in fam.warmup_modes:
        raise UnsupportedWarmupMode(f"warmup.mode {mode!r} is not offered for {fam.label}; use one of: "
                                    f"{', '.join(fam.warmup_modes)}")


def block_readable(locator: BaseLocator) -> bool:
    """Whether some engine reads this locator's single blocks on its own (locators differ per engine)."""
    return any(f.block_readable(locator) for f in FAMILIES)


def limits_facts() -> dict[str, LimitsFacts]:
    """Storage facts per engine name the offline analysis accepts: the families, then ``ANALYSIS_ONLY``."""
    return {**{f.name: f.limits for f in FAMILIES}, **ANALYSIS_ONLY}


def analysis_engine(name: str) -> str:
    """The engine name the offline analysis uses for a family name, an RDS engine name or an alias
    (``oracle-se2-cdb`` -> ``oracle``), also for the engines it can analyse but not yet warm."""
    key = str(name or "").strip().lower()
    if key in ANALYSIS_ONLY:
        return key
    try:
        return family(key).name
    except UnknownEngine:
        accepted = ", ".join([*(n for f in FAMILIES for n in (f.name, *f.rds_engines)), *ANALYSIS_ONLY])
        raise UnknownEngine(f"unknown engine {name!r}; use one of: {accepted}") from None
