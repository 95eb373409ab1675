"""python-oracledb's TCPS parameters for the modes ``engines.transport`` defines, and a DSN's
``protocol``/``ssl_server_dn_match`` (python-oracledb's own ``connect()`` parameter names)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cutover_prep.engines import transport  # read at call time: tests swap the CA bundle
from cutover_prep.engines.transport import DsnTlsProblem

ORACLE_TCPS_PORT = 2484  # the default port of RDS for Oracle's SSL option
DSN_TAKES = "an Oracle DSN takes protocol and ssl_server_dn_match"
TRUE, FALSE = ("true", "on", "yes", "1"), ("false", "off", "no", "0")


def oracle_attempts(spec: Any) -> list[tuple[dict[str, Any], str]]:
    """python-oracledb connect keywords to try in order, each with the transport it gives.

    python-oracledb (thin) turns the context's ``check_hostname`` off and matches the certificate
    to the host itself when ``ssl_server_dn_match`` is true (DPY-6006 otherwise)."""
    mode = transport.tls_mode(spec)
    port = spec.tls_port or spec.port

    def tcps(dn_match: bool, context: Any, how: str) -> tuple[dict[str, Any], str]:
        return {"protocol": "tcps", "port": port, "ssl_server_dn_match": dn_match, "ssl_context": context}, how

    tcp = ({"protocol": "tcp", "port": spec.port}, transport.TRANSPORT_PLAINTEXT)
    if mode == transport.REQUIRE:
        return [tcps(True, transport.verified_context(spec, check_hostname=True), transport.TRANSPORT_TCPS_VERIFIED)]
    if mode == transport.VERIFY_CA:
        return [tcps(False, transport.verified_context(spec, check_hostname=False),
                     transport.TRANSPORT_TLS_CA_VERIFIED)]
    if mode == transport.UNVERIFIED:
        return [tcps(False, transport.unverified_context(), transport.TRANSPORT_TLS_UNVERIFIED)]
    if mode == transport.PREFER:
        return [tcps(False, transport.unverified_context(), transport.TRANSPORT_TLS_UNVERIFIED), tcp]
    return [tcp]


def dsn_tls(pairs: Iterable[tuple[str, str]]) -> tuple[str, str | None]:
    """The mode and CA file an Oracle DSN asks for: ``protocol=tcps`` is TCPS verified against the RDS
    CA bundle with the DN matched (python-oracledb's default ``ssl_server_dn_match=True``),
    ``ssl_server_dn_match=false`` without the match; ``protocol=tcp`` plaintext; neither: TCPS when
    the listener offers it, else TCP. Anything else (a wallet, ...) is refused by name."""
    found = transport.dsn_params(pairs, ("protocol", "ssl_server_dn_match"), DSN_TAKES, canonical=str.lower)
    protocol = found.get("protocol", "").lower() if "protocol" in found else None
    if protocol not in (None, "tcp", "tcps"):
        raise DsnTlsProblem("protocol must be tcp or tcps")
    dn_match = True
    if "ssl_server_dn_match" in found:
        if protocol != "tcps":
            raise DsnTlsProblem("ssl_server_dn_match is used with protocol=tcps; add it, or remove "
                                "ssl_server_dn_match")
        value = found["ssl_server_dn_match"].lower()
        if value not in TRUE + FALSE:
            raise DsnTlsProblem("ssl_server_dn_match must be true or false")
        dn_match = value in TRUE
    if protocol is None:
        return transport.PREFER, None
    if protocol == "tcp":
        return transport.DISABLE, None
    return (transport.REQUIRE if dn_match else transport.VERIFY_CA), str(transport.CA_BUNDLE)
