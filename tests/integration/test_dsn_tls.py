"""A DSN's TLS settings are what the connection uses, on real servers (issue 20, finding 3).

``cutover-prep local --dsn 'postgresql://...?sslmode=verify-full'`` connected in plaintext and
reported ``connection: plaintext``. The judges are the servers and the vendors' documented rules:
- libpq ("SSL Mode Descriptions", https://www.postgresql.org/docs/current/libpq-ssl.html):
  ``require``, ``verify-ca`` and ``verify-full`` only try an SSL connection; ``verify-full`` also
  checks that the server host name matches its certificate; ``require`` with a root CA file is
  ``verify-ca``. The server's ``pg_stat_ssl`` and its ``log_connections`` lines say whether a session
  is encrypted;
- MySQL's ``--ssl-mode`` (REQUIRED: fail if an encrypted connection cannot be established;
  VERIFY_CA: also the CA; VERIFY_IDENTITY: also the host name). ``Ssl_cipher`` says the session is
  encrypted;
- python-oracledb: ``protocol=tcps`` verifies the certificate, ``ssl_server_dn_match`` (default true)
  also matches it to the host (DPY-6006 "The name on the server certificate does not match").
Private servers with a certificate for 127.0.0.1 only (from a test CA) are started from the
machine's binaries; the tests skip, saying why, where those are missing.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import socket
import ssl
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from cutover_prep.cli.main import main
from cutover_prep.engines import DatabaseUnreachable
from cutover_prep.engines import transport as tls
from cutover_prep.engines.postgres.engine import PostgresEngine
from cutover_prep.local.dsn import parse_dsn
from cutover_prep.local.runner import TargetUnreachable, check_reachable
from tests.integration.test_mysql_tls import _write_ca_and_server_cert
from tests.integration.test_tls import FakeTlsListener

PASSWORD = "pw-never-shown-5c1d"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- PostgreSQL ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tls_postgres() -> Iterator[tuple[int, Path, Path]]:
    """A private PostgreSQL with ssl=on and log_connections=on (the machine's binaries, its own data
    directory and port); yields (port, CA file, server log)."""
    servers = sorted(Path("/usr/lib/postgresql").glob("*/bin/postgres"),
                     key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0)
    if not servers:
        pytest.skip("no PostgreSQL server binaries under /usr/lib/postgresql (Debian: apt-get install postgresql)")
    bindir = servers[-1].parent
    run_as = None
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        try:
            run_as = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root, and no 'postgres' user to run a private server as")
    work = Path(tempfile.mkdtemp(prefix="cutover-prep-tls-pg-"))
    ca = _write_ca_and_server_cert(work)
    (work / "data").mkdir()
    if run_as is not None:
        for path in (work, work / "data", work / "server-cert.pem", work / "server-key.pem"):
            os.chown(path, run_as.pw_uid, run_as.pw_gid)
    work.chmod(0o755)
    (work / "server-key.pem").chmod(0o600)
    user = {"user": run_as.pw_name} if run_as else {}
    port, log = _free_port(), work / "data" / "server.log"
    try:
        subprocess.run([bindir / "initdb", "-D", work / "data", "--auth=trust", "-U", "postgres"],
                       check=True, capture_output=True, timeout=120, **user)
        options = (f"-h 127.0.0.1 -p {port} -k {work} -c ssl=on -c ssl_cert_file={work / 'server-cert.pem'} "
                   f"-c ssl_key_file={work / 'server-key.pem'} -c log_connections=on")
        subprocess.run([bindir / "pg_ctl", "-D", work / "data", "-w", "-l", log, "-o", options, "start"],
                       check=True, capture_output=True, timeout=120, **user)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        shutil.rmtree(work, ignore_errors=True)
        pytest.skip(f"the private PostgreSQL did not start: {exc}")
    try:
        with psycopg.connect(host="127.0.0.1", port=port, dbname="postgres", user="postgres", sslmode="disable",
                             autocommit=True) as conn:
            conn.execute("CREATE DATABASE app")
        with psycopg.connect(host="127.0.0.1", port=port, dbname="app", user="postgres", sslmode="disable",
                             autocommit=True) as conn:
            conn.execute("CREATE TABLE t AS SELECT g, md5(g::text) AS h FROM generate_series(1, 20000) g")
        yield port, ca, log
    finally:
        subprocess.run([bindir / "pg_ctl", "-D", work / "data", "-w", "-m", "fast", "stop"],
                       capture_output=True, timeout=120, **user)
        shutil.rmtree(work, ignore_errors=True)


def _session_ssl(engine: PostgresEngine, database: str) -> bool:
    """The server's own word: is this session encrypted (pg_stat_ssl)."""
    return engine.connection(database).execute(
        "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").fetchone()[0]


def _connect(dsn: str) -> PostgresEngine:
    return PostgresEngine.connect(parse_dsn(dsn))


@pytest.mark.postgres
def test_verify_full_with_the_users_ca_is_verified_tls(tls_postgres) -> None:
    port, ca, _ = tls_postgres
    engine = _connect(f"postgresql://postgres@127.0.0.1:{port}/app?sslmode=verify-full&sslrootcert={ca}")
    try:
        assert engine.transport == tls.TRANSPORT_TLS_VERIFIED and _session_ssl(engine, "app")
    finally:
        engine.close()


@pytest.mark.postgres
def test_verify_full_checks_the_host_name_and_verify_ca_does_not(tls_postgres) -> None:
    port, ca, _ = tls_postgres
    with pytest.raises(DatabaseUnreachable, match="does not match host name") as err:  # the certificate names 127.0.0.1
        _connect(f"postgresql://postgres@localhost:{port}/app?sslmode=verify-full&sslrootcert={ca}")
    assert "\n" not in str(err.value)
    engine = _connect(f"postgresql://postgres@localhost:{port}/app?sslmode=verify-ca&sslrootcert={ca}")
    try:
        assert engine.transport == tls.TRANSPORT_TLS_CA_VERIFIED and _session_ssl(engine, "app")
    finally:
        engine.close()


@pytest.mark.postgres
def test_verify_full_without_sslrootcert_trusts_only_the_rds_bundle(tls_postgres) -> None:
    port, _, _ = tls_postgres
    with pytest.raises(DatabaseUnreachable, match="certificate verify failed") as err:
        _connect(f"postgresql://postgres@127.0.0.1:{port}/app?sslmode=verify-full")
    assert "RDS CA bundle" in str(err.value)


@pytest.mark.postgres
def test_require_is_tls_without_verification(tls_postgres) -> None:
    port, _, _ = tls_postgres
    for query in ("sslmode=require", ""):  # require, and libpq's default (prefer) on a server offering TLS
        engine = _connect(f"postgresql://postgres@127.0.0.1:{port}/app?{query}")
        try:
            assert engine.transport == tls.TRANSPORT_TLS_UNVERIFIED and _session_ssl(engine, "app")
        finally:
            engine.close()


@pytest.mark.postgres
def test_tls_modes_fail_on_a_server_without_tls_instead_of_falling_back(pg_admin, capsys) -> None:
    if pg_admin.host.startswith("/"):
        pytest.skip("the test PostgreSQL is on a Unix socket (embedded server): TLS does not apply")
    with psycopg.connect(host=pg_admin.host, port=pg_admin.port, dbname=pg_admin.database, user=pg_admin.user,
                         password=pg_admin.password or None, sslmode="disable") as conn:
        if conn.execute("SHOW ssl").fetchone()[0] != "off":
            pytest.skip("the test PostgreSQL offers TLS")
    base = f"postgresql://{pg_admin.user}:{PASSWORD}@{pg_admin.host}:{pg_admin.port}/{pg_admin.database}"
    for query in ("sslmode=verify-full", "sslmode=verify-ca", "sslmode=require"):
        with pytest.raises(TargetUnreachable, match="server does not support SSL"):
            check_reachable(parse_dsn(f"{base}?{query}"))
    assert main(["local", "--dsn", f"{base}?sslmode=verify-full", "--no-progress"]) == 3
    err = capsys.readouterr().err.strip()
    assert "server does not support SSL" in err and "\n" not in err and PASSWORD not in err


@pytest.mark.postgres
def test_pgsslmode_in_the_environment_is_honoured_as_libpq_honours_it(pg_admin, monkeypatch) -> None:
    """libpq ("Environment Variables"): PGSSLMODE is the default of sslmode. psql, or libpq through psycopg,
    refuses the server without TLS when it says verify-full; the run must not connect in plaintext."""
    if pg_admin.host.startswith("/"):
        pytest.skip("the test PostgreSQL is on a Unix socket (embedded server): TLS does not apply")
    monkeypatch.setenv("PGSSLMODE", "verify-full")
    with pytest.raises(psycopg.OperationalError):  # the judge: libpq with the same environment and no sslmode
        psycopg.connect(host=pg_admin.host, port=pg_admin.port, dbname=pg_admin.database, user=pg_admin.user,
                        password=pg_admin.password or None, connect_timeout=5).close()
    with pytest.raises(TargetUnreachable):
        check_reachable(parse_dsn(f"postgresql://{pg_admin.user}@{pg_admin.host}:{pg_admin.port}/{pg_admin.database}"))


@pytest.mark.postgres
def test_a_local_run_with_verify_full_reads_over_verified_tls_and_says_so(tls_postgres, tmp_path) -> None:
    port, ca, log = tls_postgres
    start = log.stat().st_size
    code = main(["local", "--dsn", f"postgresql://postgres@127.0.0.1:{port}/app?sslmode=verify-full&sslrootcert={ca}",
                 "--database", "app", "--no-benchmark", "--no-progress", "--out", str(tmp_path), "--run-id", "tls"])
    assert code == 0
    findings = json.loads((tmp_path / "findings.json").read_text())
    plan = findings["plan"]
    assert plan["connection"]["transport"] == tls.TRANSPORT_TLS_VERIFIED
    # the run's Preflight state (issue 22) proved the same: verified, with the protocol the server reports
    checked = next(c for c in findings["preflight"]["checks"] if c["name"] == "tls")
    assert checked["status"] == "pass" and tls.TRANSPORT_TLS_VERIFIED in checked["detail"], checked
    assert "protocol TLSv1." in checked["detail"] and "cipher " in checked["detail"], checked
    # the server's log of the run's connections: every one of them encrypted
    with log.open() as f:
        f.seek(start)
        authorized = [line for line in f if "connection authorized" in line]
    assert authorized and all("SSL enabled" in line for line in authorized), authorized


# -- MySQL / MariaDB ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tls_mariadb(tmp_path_factory) -> Iterator[tuple[int, Path]]:
    from cutover_prep.engines.mysql.sample_db import PrivateServer, PrivateServerUnavailable

    certs = tmp_path_factory.mktemp("mariadb-tls")
    ca = _write_ca_and_server_cert(certs)
    try:
        server = PrivateServer(buffer_pool_mb=16, performance_schema=False, options=(
            f"--ssl-ca={ca}", f"--ssl-cert={certs / 'server-cert.pem'}", f"--ssl-key={certs / 'server-key.pem'}"))
        server.start()
    except PrivateServerUnavailable as exc:
        pytest.skip(str(exc))
    try:
        yield server.port, ca
    finally:
        server.close()


def _mysql(dsn: str):
    from cutover_prep.engines.mysql.engine import MySQLEngine

    return MySQLEngine.connect(parse_dsn(dsn))


def _cipher(engine) -> str:
    with engine.conn.cursor() as cur:
        cur.execute("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
        return cur.fetchone()[1]


@pytest.mark.mysql
def test_mysql_ssl_modes_are_what_the_session_uses(tls_mariadb) -> None:
    port, ca = tls_mariadb
    for host, query, transport in (
            ("127.0.0.1", f"ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}", tls.TRANSPORT_TLS_VERIFIED),
            ("localhost", f"ssl_mode=VERIFY_CA&ssl_ca={ca}", tls.TRANSPORT_TLS_CA_VERIFIED),
            ("127.0.0.1", "ssl-mode=REQUIRED", tls.TRANSPORT_TLS_UNVERIFIED)):
        engine = _mysql(f"mariadb://root@{host}:{port}/mysql?{query}")
        try:
            assert engine.transport == transport and _cipher(engine), query
        finally:
            engine.close()
    with pytest.raises(DatabaseUnreachable, match="Hostname mismatch"):
        _mysql(f"mariadb://root@localhost:{port}/mysql?ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}")
    with pytest.raises(DatabaseUnreachable, match="certificate verify failed") as err:
        _mysql(f"mariadb://root@127.0.0.1:{port}/mysql?ssl-mode=VERIFY_IDENTITY")  # the RDS bundle only
    assert "RDS CA bundle" in str(err.value)
    engine = _mysql(f"mariadb://root@127.0.0.1:{port}/mysql?ssl-mode=DISABLED")
    try:
        assert engine.transport == tls.TRANSPORT_PLAINTEXT and not _cipher(engine)
    finally:
        engine.close()


@pytest.mark.mysql
def test_mysql_required_fails_on_a_server_without_tls(mysql_admin) -> None:
    import pymysql

    conn = pymysql.connect(host=mysql_admin.host, port=mysql_admin.port, user=mysql_admin.user,
                           password=mysql_admin.password, ssl_disabled=True)
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW VARIABLES LIKE 'have_ssl'")
            row = cur.fetchone()
    finally:
        conn.close()
    if row and row[1] == "YES":
        pytest.skip("the test MySQL/MariaDB offers TLS")
    dsn = f"mysql://{mysql_admin.user}:{mysql_admin.password}@{mysql_admin.host}:{mysql_admin.port}/mysql"
    for query in ("ssl-mode=REQUIRED", "ssl-mode=VERIFY_CA", "ssl-mode=VERIFY_IDENTITY"):
        with pytest.raises(TargetUnreachable, match="TLS is required"):
            check_reachable(parse_dsn(f"{dsn}?{query}"))


# -- Oracle (no server here: a TLS listener that speaks no TNS) -----------------------------------------
class HangUpAfterHandshake(FakeTlsListener):
    """Completes the TLS handshake, then hangs up: the client fails at once instead of waiting for TNS."""

    def _serve(self) -> None:
        while True:
            try:
                raw, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            try:
                raw.settimeout(5)
                with self.context.wrap_socket(raw, server_side=True):
                    self.handshakes += 1
            except (OSError, ssl.SSLError):
                pass
            finally:
                raw.close()
                self._done()


def _listener(tmp_path: Path) -> tuple[FakeTlsListener, Path]:
    ca = _write_ca_and_server_cert(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "server-cert.pem", tmp_path / "server-key.pem")
    return HangUpAfterHandshake(context), ca


def test_oracle_tcps_verifies_against_the_bundle_and_matches_the_dn_unless_told_not(tmp_path, monkeypatch) -> None:
    from cutover_prep.engines.oracle.engine import OracleEngine

    listener, ca = _listener(tmp_path)
    try:
        dsn = f"oracle://warmer:{PASSWORD}@{{host}}:{listener.port}/ORCL?protocol=tcps"
        with pytest.raises(DatabaseUnreachable) as err:  # the test CA is not in the RDS bundle
            OracleEngine.connect(parse_dsn(dsn.format(host="127.0.0.1")))
        listener.wait_idle()  # the client returns before the listener has counted the handshake
        assert listener.handshakes == 0 and PASSWORD not in str(err.value)
        monkeypatch.setattr(tls, "CA_BUNDLE", ca)  # now the bundle trusts it; the certificate names 127.0.0.1
        with pytest.raises(DatabaseUnreachable, match="DPY-6006") as err:  # "name on the server certificate"
            OracleEngine.connect(parse_dsn(dsn.format(host="localhost")))
        listener.wait_idle()  # the client returns before the listener has counted the handshake
        assert listener.handshakes == 1
        with pytest.raises(DatabaseUnreachable) as err:  # the DN is not matched: on to the (fake) listener's TNS
            OracleEngine.connect(parse_dsn(dsn.format(host="localhost") + "&ssl_server_dn_match=false"))
        listener.wait_idle()  # the client returns before the listener has counted the handshake
        assert listener.handshakes == 2 and "DPY-6006" not in str(err.value)
    finally:
        listener.sock.close()
