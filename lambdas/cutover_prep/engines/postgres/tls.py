"""libpq's TLS parameters for the mode ``engines.transport`` defines (verify-full against the RDS CA bundle)."""

from __future__ import annotations

from typing import Any

from cutover_prep.engines import transport  # read at call time: tests swap the CA bundle


def postgres_params(spec: Any) -> tuple[dict[str, str], str]:
    """libpq connection parameters for the spec's TLS mode, and the transport if known before connecting."""
    if spec.host.startswith("/"):  # a Unix socket directory on this machine: nothing leaves it
        return {}, transport.TRANSPORT_UNIX_SOCKET
    mode = transport.tls_mode(spec)
    if mode == "require":
        return {"sslmode": "verify-full", "sslrootcert": str(transport.CA_BUNDLE), "require_auth": "!password"}, \
            transport.TRANSPORT_TLS_VERIFIED
    if mode == "prefer":
        return {"sslmode": "prefer"}, ""  # known only once connected
    return {"sslmode": "disable"}, transport.TRANSPORT_PLAINTEXT
