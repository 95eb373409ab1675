"""python-oracledb's TCPS parameters for the mode ``engines.transport`` defines."""

from __future__ import annotations

import ssl
from typing import Any

from cutover_prep.engines import transport  # read at call time: tests swap the CA bundle

ORACLE_TCPS_PORT = 2484  # the default port of RDS for Oracle's SSL option


def oracle_attempts(spec: Any) -> list[tuple[dict[str, Any], str]]:
    """python-oracledb connect keywords to try in order, each with the transport it gives."""
    mode = transport.tls_mode(spec)
    tcps = ({"protocol": "tcps", "port": spec.tls_port or spec.port, "ssl_server_dn_match": True,
             "ssl_context": transport.rds_ssl_context()}, transport.TRANSPORT_TCPS_VERIFIED)
    tcp = ({"protocol": "tcp", "port": spec.port}, transport.TRANSPORT_PLAINTEXT)
    if mode == "require":
        return [tcps]
    if mode == "prefer":
        unverified = ssl.create_default_context()
        unverified.check_hostname, unverified.verify_mode = False, ssl.CERT_NONE
        return [({**tcps[0], "ssl_server_dn_match": False, "ssl_context": unverified},
                 transport.TRANSPORT_TLS_UNVERIFIED), tcp]
    return [tcp]
