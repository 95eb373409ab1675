"""MySQL / MariaDB connections under ``CUTOVER_PREP_TLS=require``: verified TLS or nothing, on a private
MariaDB with a certificate for 127.0.0.1 from a test CA (the machine's server is not touched)."""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from cutover_prep.engines import ConnectionSpec, DatabaseUnreachable
from cutover_prep.engines import transport as tls
from cutover_prep.engines.mysql.engine import MySQLEngine

pytestmark = pytest.mark.mysql


def _write_ca_and_server_cert(directory: Path) -> Path:
    """A CA and a server certificate naming only the IP 127.0.0.1; returns the CA file."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "cutover-prep test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(1).not_valid_before(now - datetime.timedelta(days=1))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(2)
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    (directory / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (directory / "server-cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (directory / "server-key.pem").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()))
    return directory / "ca.pem"


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory) -> Iterator[tuple[int, Path]]:
    from cutover_prep.engines.mysql.sample_db import PrivateServer, PrivateServerUnavailable

    certs = tmp_path_factory.mktemp("mysql-tls")
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


def _spec(port: int, host: str = "127.0.0.1") -> ConnectionSpec:
    return ConnectionSpec(engine="mariadb", host=host, port=port, database="mysql", user="root", password="",
                          tls="require")


def test_a_server_with_a_certificate_from_the_trusted_ca_is_verified(tls_server, monkeypatch) -> None:
    port, ca = tls_server
    monkeypatch.setattr(tls, "CA_BUNDLE", ca)  # stands in for the RDS CA bundle
    engine = MySQLEngine.connect(_spec(port))
    try:
        assert engine.transport == tls.TRANSPORT_TLS_VERIFIED
        with engine.conn.cursor() as cur:
            cur.execute("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
            assert cur.fetchone()[1]  # the session is encrypted
    finally:
        engine.close()


def test_a_certificate_not_from_the_rds_bundle_is_refused(tls_server) -> None:
    port, _ = tls_server
    with pytest.raises(DatabaseUnreachable, match="TLS is required") as err:
        MySQLEngine.connect(_spec(port))  # the shipped RDS CA bundle does not trust the test CA
    assert "certificate verify failed" in str(err.value) and "\n" not in str(err.value)


def test_a_certificate_for_another_host_name_is_refused(tls_server, monkeypatch) -> None:
    port, ca = tls_server
    monkeypatch.setattr(tls, "CA_BUNDLE", ca)
    with pytest.raises(DatabaseUnreachable, match="Hostname mismatch"):
        MySQLEngine.connect(_spec(port, host="localhost"))  # the certificate names 127.0.0.1 only


def test_prefer_takes_the_tls_the_server_offers_unverified(tls_server) -> None:
    port, _ = tls_server
    engine = MySQLEngine.connect(ConnectionSpec(engine="mariadb", host="127.0.0.1", port=port, database="mysql",
                                                user="root", password="", tls="prefer"))
    try:
        assert engine.transport == tls.TRANSPORT_TLS_UNVERIFIED
    finally:
        engine.close()
