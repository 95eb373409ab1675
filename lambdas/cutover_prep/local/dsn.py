"""The ``--dsn`` of every command that connects from this machine (``local``, ``preflight``, ``estimate``,
``hotset``): a URL (``postgresql://``, ``mysql://``, ``mariadb://``, ``oracle://``) or libpq's keyword form, parsed
into a ``ConnectionSpec``; its host by the run input's rule, its TLS in the engine's own words. A DSN that cannot be
honoured is a ``UsageProblem`` (one line, exit 2) that never repeats the DSN: it holds the password."""

from __future__ import annotations

import unicodedata
from urllib.parse import parse_qsl, unquote, urlsplit

from cutover_prep.engines import ConnectionSpec
from cutover_prep.engines.registry import KEYWORD_CONNINFO_ENGINE, families, family
from cutover_prep.engines.transport import DsnTlsProblem
from cutover_prep.models.fields import host_problem

SCHEMES = {scheme: f.name for f in families() for scheme in f.dsn_schemes}  # URL scheme -> engine family
DSN_FORM = " or ".join(f"{f.dsn_schemes[0]}://USER:PASSWORD@HOST:PORT/{f.database_term}" for f in families())
LOCAL_TLS = "prefer"  # a DSN that says nothing of TLS: TLS when the server offers it


class UsageProblem(Exception):
    """A bad option or DSN: reported in one line, exit code 2."""



def _has_control(text: str) -> bool:
    return any(unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp") for ch in text)


CONNINFO_KEYS = ("host", "port", "dbname", "user", "password")
CONNINFO_FORM = "host=HOST port=5432 dbname=DATABASE user=USER password=PASSWORD"


def is_conninfo(dsn: str) -> bool:
    """libpq's keyword form (``host=... dbname=...``) rather than a URL."""
    return "://" not in dsn and "=" in dsn


def parse_conninfo(dsn: str) -> ConnectionSpec:
    """PostgreSQL's keyword conninfo, parsed by libpq's own parser (psycopg.conninfo.conninfo_to_dict):
    quoting and escapes as libpq has them. Other engines take the URL form only."""
    try:
        from psycopg import ProgrammingError
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:
        raise UsageProblem("--dsn: the keyword form (host=... dbname=...) needs psycopg: pip install "
                           "'cutover-prep[local]'; or write postgresql://USER:PASSWORD@HOST:PORT/DATABASE") from None
    try:
        info = {k: str(v) for k, v in conninfo_to_dict(dsn).items()}
    except ProgrammingError:  # libpq's message may quote part of the string, and so the password: not shown
        raise UsageProblem(f"--dsn: not a valid keyword conninfo; write {CONNINFO_FORM} (quote a value with "
                           f"spaces in single quotes), or a URL: {DSN_FORM}") from None
    tls, tls_ca = dsn_tls(KEYWORD_CONNINFO_ENGINE, [(k, v) for k, v in info.items() if k not in CONNINFO_KEYS])
    missing = [k for k in ("host", "user", "dbname") if not info.get(k)]
    if missing:
        raise UsageProblem(f"--dsn needs {', '.join(missing)}: {CONNINFO_FORM}")
    if info["host"].startswith("/") and tls not in (LOCAL_TLS, "disable"):
        raise UsageProblem("--dsn: sslmode asks for TLS, which a Unix socket (host=/...) does not use "
                           "(libpq ignores it there); remove sslmode, or connect over TCP")
    _check_host(info["host"])
    if "," in info.get("port", ""):
        raise UsageProblem("--dsn: one host and port (a list of hosts is libpq's failover; warm one server at a time)")
    try:
        port = int(info.get("port") or family(KEYWORD_CONNINFO_ENGINE).default_port)
        if not 1 <= port <= 65535:
            raise ValueError
    except ValueError:
        raise UsageProblem("--dsn has a port that is not a number from 1 to 65535") from None
    for name in ("host", "user", "password", "dbname"):
        if _has_control(info.get(name, "")):
            raise UsageProblem(f"--dsn: the {name} holds a control character; remove it")
    return ConnectionSpec(engine=family(KEYWORD_CONNINFO_ENGINE).name, host=info["host"], port=port,
                          database=info["dbname"], user=info["user"], password=info.get("password", ""),
                          tls=tls, tls_ca=tls_ca)


def _check_host(host: str) -> None:
    """The DSN's host by the run input's rule for ``target.host`` (``models.run_input.host_problem``): one host
    name or address (no libpq host list, no ``@``), or a socket directory. Every ``--dsn`` command parses
    here (``local``, ``preflight``, ``estimate``, ``hotset``), so none connects where another refuses."""
    problem = host_problem(host)
    if problem:
        raise UsageProblem(f"--dsn: the host {problem.replace('target.port', 'the DSN port')}")


def dsn_tls(engine: str, pairs: list[tuple[str, str]]) -> tuple[str, str | None]:
    """The TLS mode and CA file the DSN's parameters ask for, in the engine's own terms (libpq's
    ``sslmode``/``sslrootcert``, MySQL's ``ssl-mode``/``ssl-ca``, python-oracledb's ``protocol``/
    ``ssl_server_dn_match``; ``engines/<name>/tls.py``); none given: TLS when the server offers it
    (``LOCAL_TLS``). A parameter it cannot honour is refused by name: never a silent downgrade."""
    try:
        return family(engine).dsn_tls(pairs)
    except DsnTlsProblem as exc:
        raise UsageProblem(f"--dsn: {exc}") from None


def parse_dsn(dsn: str) -> ConnectionSpec:
    """``postgresql://user:pw@host:5432/db``, ``oracle://user:pw@host:1521/service``, ``mysql://``,
    ``mariadb://``; for PostgreSQL also libpq's keyword form ``host=h port=5432 dbname=db user=u``.

    No message repeats the DSN: it holds the password.
    """
    if _has_control(dsn):
        raise UsageProblem("--dsn: holds a control character; remove it")
    if is_conninfo(dsn):
        return parse_conninfo(dsn)
    try:
        parts = urlsplit(dsn)
        engine = SCHEMES.get(parts.scheme)
        host = parts.hostname
    except ValueError:  # urllib: "Invalid IPv6 URL", "'zz' does not appear to be an IPv4 or IPv6 address"
        raise UsageProblem("--dsn: not a valid URL (an IPv6 host goes in brackets, e.g. [::1]:5432); "
                           f"write {DSN_FORM}") from None
    if engine is None:
        starts = " or ".join(f"{f.dsn_schemes[0]}://" for f in families())
        raise UsageProblem(f"--dsn must start with {starts} ({DSN_FORM}), or be PostgreSQL's keyword form "
                           f"({CONNINFO_FORM})")
    try:
        port = parts.port
    except ValueError:
        raise UsageProblem("--dsn has a port that is not a number from 1 to 65535") from None
    database = unquote(parts.path.lstrip("/"))
    if not host or not parts.username or not database:
        raise UsageProblem(f"--dsn needs user, host and database: {engine}://USER:PASSWORD@HOST:PORT/DATABASE")
    if parts.fragment:
        raise UsageProblem("--dsn: has a '#' fragment, which would be ignored; write a '#' in the password as %23")
    _check_host(host)  # before anything connects: libpq would try each host of "h1,h2" with the password
    tls, tls_ca = dsn_tls(engine, parse_qsl(parts.query, keep_blank_values=True))
    user, password = unquote(parts.username), unquote(parts.password or "")
    for name, value in (("user", user), ("password", password), ("database", database)):
        if _has_control(value):  # %00 and friends, decoded
            raise UsageProblem(f"--dsn: the {name} holds a control character; remove it")
    return ConnectionSpec(engine=engine, host=host, port=port or family(engine).default_port,
                          database=database, user=user, password=password, tls=tls, tls_ca=tls_ca)

