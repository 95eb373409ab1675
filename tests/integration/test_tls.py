"""The password goes only to the target, over verified TLS (fake servers on 127.0.0.1, real PostgreSQL).

A fake PostgreSQL server records every byte a client sends (after TLS, decrypted) and asks
for the password in clear text (AuthenticationCleartextPassword), as a server planted in
``target.host`` would. It must never see the password.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import socket
import ssl
import struct
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from cutover_prep.engines import DatabaseUnreachable, open_engine
from cutover_prep.engines import transport as tls
from cutover_prep.engines.postgres.engine import PostgresEngine
from cutover_prep.settings import ConnectionPolicy
from tests.unit.contexts import spec_of

pytestmark = pytest.mark.postgres

PASSWORD = "pw-must-never-leave-7f3a"
SSL_REQUEST, GSSENC_REQUEST = 80877103, 80877104
ENDPOINT = "db1.abcdefghijkl.eu-west-1.rds.amazonaws.com"


class FakePostgres:
    """Accepts connections, answers SSL/GSS requests, asks for a cleartext password, records bytes."""

    def __init__(self, server_context: ssl.SSLContext | None = None) -> None:
        self.context = server_context
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.received = bytearray()
        self.connections = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            try:
                self._session(conn)
            except (OSError, ssl.SSLError, struct.error):
                pass
            finally:
                conn.close()

    def _read(self, conn: socket.socket, n: int) -> bytes:
        data = b""
        while len(data) < n:
            part = conn.recv(n - len(data))
            if not part:
                raise OSError("closed")
            self.received += part
            data += part
        return data

    def _session(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        while True:
            length, code = struct.unpack("!ii", self._read(conn, 8))
            if length == 8 and code == SSL_REQUEST:
                if self.context is None:
                    conn.sendall(b"N")
                    continue
                conn.sendall(b"S")
                conn = self.context.wrap_socket(conn, server_side=True)
                continue
            if length == 8 and code == GSSENC_REQUEST:
                conn.sendall(b"N")
                continue
            self._read(conn, length - 8)  # the rest of the startup message
            break
        conn.sendall(b"R" + struct.pack("!ii", 8, 3))  # AuthenticationCleartextPassword
        while True:  # record whatever comes (a PasswordMessage from a vulnerable client)
            try:
                data = conn.recv(4096)
            except (OSError, ssl.SSLError):
                return
            if not data:
                return
            self.received += data

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def fake_server(monkeypatch):
    """Also: the engine's connect timeout at libpq's least (2 s). A failed connection is followed by a libpq
    ping (``PostgresEngine._may_answer_again``) that holds the GIL, so this in-process server cannot answer it
    and the ping waits out the connection's timeout (10 s by default, 3 of these tests)."""
    monkeypatch.setattr(PostgresEngine, "connect_timeout_seconds", 2)
    servers: list[FakePostgres] = []

    def start(context: ssl.SSLContext | None = None) -> FakePostgres:
        server = FakePostgres(context)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


def _self_signed(tmp_path: Path) -> tuple[ssl.SSLContext, Path]:
    """A CA and a server certificate for 127.0.0.1: a server context and the CA file."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fake test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(1).not_valid_before(now - datetime.timedelta(days=1))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(2)
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                                                        x509.DNSName("localhost")]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    (tmp_path / "server.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM) + key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    (tmp_path / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "server.pem")
    return context, tmp_path / "ca.pem"


def _run(port: int) -> dict:
    return {"target": {"db_instance_identifier": "db1", "secret_arn": "arn:secret", "engine": "postgres",
                       "host": "127.0.0.1", "port": port, "database": "app"},
            "instance": {"address": ENDPOINT, "port": 5432, "engine_family": "postgres"}}


def _secret(arn: str) -> str:
    return json.dumps({"username": "warmer", "password": PASSWORD, "dbInstanceIdentifier": "db1"})


def _connect(run: dict, policy: ConnectionPolicy) -> None:
    """What the discover and warm-unit Lambdas do: spec from the run, then open the engine."""
    open_engine(spec_of(run, _secret, policy)).close()


def test_a_host_planted_in_the_input_is_refused_and_never_contacted(fake_server, monkeypatch) -> None:
    monkeypatch.delenv("CUTOVER_PREP_TLS", raising=False)
    server = fake_server()
    with pytest.raises(DatabaseUnreachable, match="target.host") as err:
        _connect(_run(server.port), ConnectionPolicy())  # the Lambda's defaults: no allow-list, TLS required
    assert PASSWORD not in str(err.value)
    assert server.connections == 0 and PASSWORD.encode() not in server.received


def test_an_allow_listed_host_without_tls_never_gets_the_password(fake_server) -> None:
    server = fake_server()
    started = time.monotonic()
    with pytest.raises(DatabaseUnreachable, match="TLS is required") as err:
        _connect(_run(server.port), ConnectionPolicy(ALLOWED_DB_HOSTS="127.0.0.1"))
    # the ping after the failure waited the connection's timeout (2 s here), not a bound of its own (10 s)
    assert time.monotonic() - started < 9
    assert "\n" not in str(err.value) and PASSWORD not in str(err.value)
    assert server.connections >= 1  # it was reached, and refused before the password
    assert PASSWORD.encode() not in server.received


def test_a_tls_server_whose_certificate_is_not_from_rds_never_gets_the_password(fake_server, tmp_path) -> None:
    context, _ = _self_signed(tmp_path)
    server = fake_server(context)
    with pytest.raises(DatabaseUnreachable, match="TLS is required"):
        _connect(_run(server.port), ConnectionPolicy(ALLOWED_DB_HOSTS="127.0.0.1"))
    assert server.connections >= 1 and PASSWORD.encode() not in server.received


def test_a_verified_server_asking_for_a_cleartext_password_does_not_get_it(fake_server, tmp_path, monkeypatch) -> None:
    context, ca = _self_signed(tmp_path)
    monkeypatch.setattr(tls, "CA_BUNDLE", ca)  # trust the fake server: only require_auth stands in its way
    server = fake_server(context)
    with pytest.raises(DatabaseUnreachable, match="password"):
        _connect(_run(server.port), ConnectionPolicy(ALLOWED_DB_HOSTS="127.0.0.1"))
    assert server.connections >= 1 and PASSWORD.encode() not in server.received


def test_local_postgres_without_tls_fails_when_tls_is_required_and_works_when_disabled(pg_admin) -> None:
    if pg_admin.host.startswith("/"):
        pytest.skip("the test PostgreSQL is on a Unix socket (embedded server): TLS does not apply")
    with pytest.raises(DatabaseUnreachable) as err:
        PostgresEngine.connect(replace(pg_admin, tls="require"))
    message = str(err.value)
    assert "TLS" in message and "CUTOVER_PREP_TLS" in message and "\n" not in message
    engine = PostgresEngine.connect(replace(pg_admin, tls="disable"))
    try:
        assert engine.transport == tls.TRANSPORT_PLAINTEXT
    finally:
        engine.close()
    engine = PostgresEngine.connect(replace(pg_admin, tls="prefer"))
    try:
        ssl_on = engine.connection(pg_admin.database).execute("SELECT ssl FROM pg_stat_ssl "
                                                              "WHERE pid = pg_backend_pid()").fetchone()[0]
        assert engine.transport == (tls.TRANSPORT_TLS_UNVERIFIED if ssl_on else tls.TRANSPORT_PLAINTEXT)
    finally:
        engine.close()


def test_the_environment_decides_when_the_spec_does_not(pg_admin, monkeypatch) -> None:
    if pg_admin.host.startswith("/"):
        pytest.skip("the test PostgreSQL is on a Unix socket (embedded server): TLS does not apply")
    monkeypatch.delenv("CUTOVER_PREP_TLS", raising=False)  # a Lambda without the variable requires TLS
    with pytest.raises(DatabaseUnreachable, match="TLS"):
        PostgresEngine.connect(replace(pg_admin, tls=None))
    monkeypatch.setenv("CUTOVER_PREP_TLS", "disable")
    PostgresEngine.connect(replace(pg_admin, tls=None)).close()


class FakeTlsListener:
    """A TCPS listener with a certificate RDS never issued: records what it receives after the handshake."""

    def __init__(self, context: ssl.SSLContext) -> None:
        self.context = context
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.received, self.connections, self.handshakes, self.served = bytearray(), 0, 0, 0
        self.idle = threading.Condition()
        threading.Thread(target=self._serve, daemon=True).start()

    def wait_idle(self, timeout: float = 60) -> None:
        """Wait until every connection accepted so far has been served to its end: the client may
        return (it aborted, or the listener hung up) before this thread has counted its handshake."""
        with self.idle:
            assert self.idle.wait_for(lambda: self.served >= self.connections, timeout), "listener never finished"

    def _done(self) -> None:
        with self.idle:
            self.served += 1
            self.idle.notify_all()

    def _serve(self) -> None:
        while True:
            try:
                raw, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            try:
                raw.settimeout(5)
                conn = self.context.wrap_socket(raw, server_side=True)
                self.handshakes += 1
                while data := conn.recv(4096):
                    self.received += data
            except (OSError, ssl.SSLError):
                pass
            finally:
                raw.close()
                self._done()


def test_oracle_tcps_refuses_a_listener_whose_certificate_is_not_from_rds(tmp_path) -> None:
    from cutover_prep.engines import ConnectionSpec
    from cutover_prep.engines.oracle.engine import OracleEngine

    context, _ = _self_signed(tmp_path)
    listener = FakeTlsListener(context)
    try:
        spec = ConnectionSpec("oracle", "127.0.0.1", 1, "ORCL", "warmer", PASSWORD, tls="require",
                              tls_port=listener.port)
        with pytest.raises(DatabaseUnreachable, match="TLS is required") as err:
            OracleEngine.connect(spec)
        assert PASSWORD not in str(err.value)
        listener.wait_idle()
        assert listener.connections >= 1 and listener.handshakes == 0  # the client aborted the handshake
        assert PASSWORD.encode() not in listener.received
    finally:
        listener.sock.close()
