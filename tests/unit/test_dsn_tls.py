"""--dsn's TLS settings reach the driver, or the DSN is refused by name (issue 20, finding 3).

``postgresql://...?sslmode=verify-full`` connected in plaintext: the URL's query was dropped. Every
query parameter is now either honoured or refused in one line (exit 2). What each setting means is
the vendor's:
- libpq, "SSL Mode Descriptions" (https://www.postgresql.org/docs/current/libpq-ssl.html#LIBPQ-SSL-SSLMODE-STATEMENTS):
  ``disable``, ``allow`` (plaintext first), ``prefer``, ``require`` (TLS, not verified; "if a root CA
  file exists ... the same as verify-ca"), ``verify-ca``, ``verify-full`` (and the host name);
- MySQL, "Command Options for Encrypted Connections" (``--ssl-mode`` DISABLED, PREFERRED, REQUIRED,
  VERIFY_CA, VERIFY_IDENTITY; ``--ssl-ca``);
- python-oracledb's ``connect()``: ``protocol`` (``tcp``, ``tcps``), ``ssl_server_dn_match``.
The judges here are the drivers' own readings of the parameters (PyMySQL's connection object built
without connecting; libpq's and python-oracledb's keywords as their documentation defines them); the
integration tests (tests/integration/test_dsn_tls.py) connect to real TLS servers.
"""

from __future__ import annotations

import shutil
import ssl
from pathlib import Path

import pymysql
import pytest

from cutover_prep.cli.main import main
from cutover_prep.engines import transport
from cutover_prep.engines.mysql.tls import mysql_params
from cutover_prep.engines.oracle.tls import oracle_attempts
from cutover_prep.engines.postgres.tls import postgres_params
from cutover_prep.local.dsn import UsageProblem, parse_dsn

PASSWORD = "pw-never-shown-93ab"


@pytest.fixture(autouse=True)
def no_libpq_environment(monkeypatch) -> None:
    monkeypatch.delenv("PGSSLMODE", raising=False)
    monkeypatch.delenv("PGSSLROOTCERT", raising=False)


@pytest.fixture
def ca(tmp_path: Path) -> str:
    """A file of PEM CA certificates the user names (a copy of the RDS bundle will do)."""
    path = tmp_path / "my-ca.pem"
    shutil.copy(transport.CA_BUNDLE, path)
    return str(path)


def pg(query: str) -> dict[str, str]:
    return postgres_params(parse_dsn(f"postgresql://u:{PASSWORD}@db.example.com:5432/app?{query}"))[0]


def test_libpq_sslmode_and_sslrootcert_reach_libpq(ca) -> None:
    assert pg(f"sslmode=verify-full&sslrootcert={ca}") | {"require_auth": None} == {
        "sslmode": "verify-full", "sslrootcert": ca, "require_auth": None}
    assert pg(f"sslmode=verify-ca&sslrootcert={ca}")["sslmode"] == "verify-ca"
    assert pg(f"sslmode=verify-ca&sslrootcert={ca}")["sslrootcert"] == ca
    assert pg("sslmode=require")["sslmode"] == "require"
    # libpq: require with a root CA file behaves as verify-ca
    assert pg(f"sslmode=require&sslrootcert={ca}") | {"require_auth": None} == {
        "sslmode": "verify-ca", "sslrootcert": ca, "require_auth": None}
    assert pg("sslmode=prefer")["sslmode"] == "prefer"
    assert pg("sslmode=disable")["sslmode"] == "disable"
    assert postgres_params(parse_dsn("postgresql://u@db.example.com/app"))[0] == {"sslmode": "prefer"}  # the default


def test_verify_without_a_ca_file_uses_the_bundle_the_package_ships() -> None:
    params = pg("sslmode=verify-full")
    assert params["sslmode"] == "verify-full" and Path(params["sslrootcert"]) == transport.CA_BUNDLE


def test_a_relative_ca_path_is_made_absolute(ca, monkeypatch) -> None:
    monkeypatch.chdir(Path(ca).parent)
    assert pg("sslmode=verify-full&sslrootcert=my-ca.pem")["sslrootcert"] == ca


def test_the_keyword_conninfo_takes_the_same_settings(ca) -> None:
    url = parse_dsn(f"postgresql://u@h:5432/d?sslmode=verify-ca&sslrootcert={ca}")
    assert parse_dsn(f"host=h dbname=d user=u sslmode=verify-ca sslrootcert='{ca}'") == url


def test_libpqs_environment_stands_for_what_the_dsn_does_not_say(ca, monkeypatch) -> None:
    """libpq, "Environment Variables": PGSSLMODE and PGSSLROOTCERT behave as sslmode and sslrootcert."""
    monkeypatch.setenv("PGSSLMODE", "verify-full")
    monkeypatch.setenv("PGSSLROOTCERT", ca)
    assert pg("") | {"require_auth": None} == {"sslmode": "verify-full", "sslrootcert": ca, "require_auth": None}
    assert pg("sslmode=disable") == {"sslmode": "disable"}  # the DSN's own word wins
    monkeypatch.setenv("PGSSLMODE", "require")
    assert pg("")["sslmode"] == "verify-ca"  # require with a root CA file, as libpq has it
    monkeypatch.setenv("PGSSLMODE", "prefer")
    assert pg("") == {"sslmode": "prefer"}  # a CA file in the environment does not refuse a mode that does not verify
    monkeypatch.setenv("PGSSLMODE", "allow")
    with pytest.raises(UsageProblem, match=r"sslmode=allow.*\(sslmode from PGSSLMODE\)"):
        parse_dsn("postgresql://u@h/d")


def _pymysql(query: str, scheme: str = "mysql") -> pymysql.connections.Connection:
    """What PyMySQL makes of the parameters (its connection object, not connected)."""
    spec = parse_dsn(f"{scheme}://u:{PASSWORD}@db.example.com:3306/app?{query}")
    return pymysql.connections.Connection(host=spec.host, user=spec.user, password=spec.password,
                                          defer_connect=True, **mysql_params(spec)[0])


@pytest.mark.parametrize("scheme", ["mysql", "mariadb"])
def test_mysql_ssl_mode_and_ssl_ca_reach_pymysql(ca, scheme) -> None:
    conn = _pymysql(f"ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}", scheme)
    assert conn._ssl_required and conn.ctx.verify_mode == ssl.CERT_REQUIRED and conn.ctx.check_hostname
    conn = _pymysql(f"ssl_mode=verify_ca&ssl_ca={ca}", scheme)
    assert conn._ssl_required and conn.ctx.verify_mode == ssl.CERT_REQUIRED and not conn.ctx.check_hostname
    conn = _pymysql("ssl-mode=REQUIRED", scheme)  # encrypted or nothing, not verified
    assert conn._ssl_required and conn.ctx.verify_mode == ssl.CERT_NONE
    conn = _pymysql("ssl-mode=PREFERRED", scheme)
    assert conn.ssl and not conn._ssl_required
    conn = _pymysql("ssl-mode=DISABLED", scheme)
    assert not conn.ssl


def test_mysql_verify_without_ssl_ca_uses_the_bundle_the_package_ships() -> None:
    conn = _pymysql("ssl-mode=VERIFY_IDENTITY")
    assert conn._ssl_required and conn.ctx.verify_mode == ssl.CERT_REQUIRED and conn.ctx.check_hostname
    assert Path(mysql_params(parse_dsn("mysql://u@h/d?ssl-mode=VERIFY_CA"))[0]["ssl_ca"]) == transport.CA_BUNDLE


def oracle(query: str) -> list[dict]:
    return [kw for kw, _ in oracle_attempts(parse_dsn(f"oracle://u:{PASSWORD}@db.example.com:2484/ORCL?{query}"))]


def test_oracle_protocol_and_dn_match_reach_python_oracledb() -> None:
    [tcps] = oracle("protocol=tcps")
    assert tcps["protocol"] == "tcps" and tcps["ssl_server_dn_match"] is True
    assert tcps["ssl_context"].verify_mode == ssl.CERT_REQUIRED
    [tcps] = oracle("protocol=tcps&ssl_server_dn_match=false")
    assert tcps["ssl_server_dn_match"] is False and tcps["ssl_context"].verify_mode == ssl.CERT_REQUIRED
    assert [kw["protocol"] for kw in oracle("protocol=tcp")] == ["tcp"]
    assert [kw["protocol"] for kw in oracle("")] == ["tcps", "tcp"]  # no setting: TCPS when offered


@pytest.mark.parametrize(("dsn", "words"), [
    ("postgresql://u:{pw}@h/d?sslmode=allow", "sslmode=allow"),
    ("postgresql://u:{pw}@h/d?sslmode=verify_full", "sslmode must be"),
    ("postgresql://u:{pw}@h/d?sslmode=require&sslmode=disable", "sslmode: given twice"),
    ("postgresql://u:{pw}@h/d?sslmode=verify-full&sslrootcert=/no/such/ca.pem", "sslrootcert"),
    ("postgresql://u:{pw}@h/d?sslmode=verify-full&sslrootcert=system", "sslrootcert=system"),
    ("postgresql://u:{pw}@h/d?sslrootcert={ca}", "sslrootcert is used with sslmode"),
    ("postgresql://u:{pw}@h/d?sslmode=prefer&sslrootcert={ca}", "sslrootcert is used with sslmode"),
    ("postgresql://u:{pw}@h/d?sslmode=verify-full&sslcert=c.pem&sslkey=k.pem", "sslcert, sslkey: not used"),
    ("postgresql://u:{pw}@h/d?connect_timeout=5", "connect_timeout: not used"),
    ("postgresql://u@h/d?password={pw}", "password: not used"),
    ("postgresql://u:{pw}@h/d?sslmode", "sslmode must be"),
    ("host=h dbname=d user=u password={pw} sslmode=allow", "sslmode=allow"),
    ("host=h dbname=d user=u password={pw} sslcert=c.pem", "sslcert: not used"),
    ("host=/var/run/postgresql dbname=d user=u sslmode=verify-full", "a Unix socket"),  # libpq ignores sslmode there
    ("postgresql://u:{pw}@h/d#sslmode=verify-full", "'#' fragment"),
    ("mysql://u:{pw}@h/d?ssl-mode=VERIFY", "ssl-mode must be"),
    ("mysql://u:{pw}@h/d?ssl-ca={ca}", "ssl-ca is used with ssl-mode"),
    ("mysql://u:{pw}@h/d?ssl-mode=REQUIRED&ssl-ca={ca}", "ssl-ca is used with ssl-mode"),
    ("mariadb://u:{pw}@h/d?ssl-mode=VERIFY_CA&ssl-ca=/no/such/ca.pem", "ssl-ca"),
    ("mysql://u:{pw}@h/d?ssl-cert=c.pem", "ssl-cert: not used"),
    ("mysql://u:{pw}@h/d?ssl-mode=REQUIRED&ssl_mode=DISABLED", "ssl-mode: given twice"),
    ("oracle://u:{pw}@h/s?protocol=tcpx", "protocol must be"),
    ("oracle://u:{pw}@h/s?ssl_server_dn_match=false", "ssl_server_dn_match is used with protocol=tcps"),
    ("oracle://u:{pw}@h/s?protocol=tcps&ssl_server_dn_match=maybe", "ssl_server_dn_match must be"),
    ("oracle://u:{pw}@h/s?protocol=tcps&wallet_location=/w", "wallet_location: not used"),
])
def test_a_tls_setting_that_cannot_be_honoured_is_refused_by_name(dsn, words, ca, capsys) -> None:
    dsn = dsn.format(pw=PASSWORD, ca=ca)
    with pytest.raises(UsageProblem, match=words):
        parse_dsn(dsn)
    assert main(["local", "--dsn", dsn]) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and err.startswith("cutover-prep: --dsn") and "\n" not in err and PASSWORD not in err
