"""PyMySQL's TLS parameters for the mode ``engines.transport`` defines (verified against the RDS CA bundle)."""

from __future__ import annotations

from typing import Any

from cutover_prep.engines import transport  # read at call time: tests swap the CA bundle


def mysql_params(spec: Any) -> tuple[dict[str, Any], str]:
    """PyMySQL connect parameters for the spec's TLS mode, and the transport if known before connecting.

    ``require``: the CA bundle and host-name check (``ssl={"ca": bundle, "check_hostname": True}``
    in PyMySQL's newer spelling); PyMySQL then refuses a server without TLS *before* it sends
    the password. ``prefer``: PyMySQL's default (TLS when offered, not verified)."""
    if spec.host.startswith("/"):  # a Unix socket on this machine: nothing leaves it
        return {"unix_socket": spec.host}, transport.TRANSPORT_UNIX_SOCKET
    mode = transport.tls_mode(spec)
    if mode == "require":
        return {"ssl_ca": str(transport.CA_BUNDLE), "ssl_verify_cert": True, "ssl_verify_identity": True}, \
            transport.TRANSPORT_TLS_VERIFIED
    if mode == "prefer":
        return {}, ""  # known only once connected
    return {"ssl_disabled": True}, transport.TRANSPORT_PLAINTEXT
