"""PyMySQL's TLS parameters for the modes ``engines.transport`` defines, and a DSN's ``ssl-mode``/``ssl-ca``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cutover_prep.engines import transport  # read at call time: tests swap the CA bundle
from cutover_prep.engines.transport import DsnTlsProblem

# MySQL's --ssl-mode -> our mode (MySQL Reference Manual, "Command Options for Encrypted Connections")
SSL_MODES = {"DISABLED": transport.DISABLE, "PREFERRED": transport.PREFER, "REQUIRED": transport.UNVERIFIED,
             "VERIFY_CA": transport.VERIFY_CA, "VERIFY_IDENTITY": transport.REQUIRE}
DSN_TAKES = "a MySQL or MariaDB DSN takes ssl-mode and ssl-ca"


def mysql_params(spec: Any) -> tuple[dict[str, Any], str]:
    """PyMySQL connect parameters for the spec's TLS mode, and the transport if known before connecting.

    Any of ``ssl_ca``/``ssl_verify_*``/``ssl`` makes PyMySQL (1.2) refuse a server without TLS
    *before* it sends the password. ``require``: the CA file and the host name
    (``ssl_verify_identity``); ``verify-ca``: the CA file only; ``unverified``: a context that
    verifies nothing; ``prefer``: PyMySQL's default (TLS when offered, not verified)."""
    if spec.host.startswith("/"):  # a Unix socket on this machine: nothing leaves it
        return {"unix_socket": spec.host}, transport.TRANSPORT_UNIX_SOCKET
    mode = transport.tls_mode(spec)
    if mode in transport.VERIFYING:
        identity = mode == transport.REQUIRE
        return {"ssl_ca": transport.ca_file(spec), "ssl_verify_cert": True, "ssl_verify_identity": identity}, \
            transport.TRANSPORT_TLS_VERIFIED if identity else transport.TRANSPORT_TLS_CA_VERIFIED
    if mode == transport.UNVERIFIED:
        return {"ssl": transport.unverified_context()}, transport.TRANSPORT_TLS_UNVERIFIED
    if mode == transport.PREFER:
        return {}, ""  # known only once connected
    return {"ssl_disabled": True}, transport.TRANSPORT_PLAINTEXT


def _canonical(name: str) -> str:
    """``ssl-mode``, ``ssl_mode`` and ``SSL-MODE`` are one option (the client's and connectors' spellings)."""
    return name.lower().replace("_", "-")


def dsn_tls(pairs: Iterable[tuple[str, str]]) -> tuple[str, str | None]:
    """The mode and CA file a MySQL/MariaDB DSN's ``ssl-mode`` and ``ssl-ca`` ask for (no ssl-mode:
    ``PREFERRED``, the client's default; a verifying mode without ``ssl-ca`` trusts the RDS CA bundle).
    ``ssl-ca`` goes with ``VERIFY_CA`` or ``VERIFY_IDENTITY`` only; anything else is refused by name."""
    found = transport.dsn_params(pairs, ("ssl-mode", "ssl-ca"), DSN_TAKES, canonical=_canonical)
    ssl_mode = found.get("ssl-mode", "PREFERRED").upper().replace("-", "_")
    if ssl_mode not in SSL_MODES:
        raise DsnTlsProblem("ssl-mode must be DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY")
    mode = SSL_MODES[ssl_mode]
    if "ssl-ca" not in found:
        return mode, str(transport.CA_BUNDLE) if mode in transport.VERIFYING else None
    if mode not in transport.VERIFYING:
        raise DsnTlsProblem("ssl-ca is used with ssl-mode=VERIFY_CA or VERIFY_IDENTITY; add one of them, "
                            "or remove ssl-ca")
    return mode, transport.ca_path("ssl-ca", found["ssl-ca"])
