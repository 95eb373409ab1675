"""How an engine's connection is protected: TLS mode, CA bundle, and the transport it reports.

``require`` (the default, and what every Lambda runs with unless the stack says otherwise):
- PostgreSQL: ``sslmode=verify-full`` against the RDS CA bundle shipped in this package
  (the server's certificate must chain to an RDS or Amazon root CA and name the host), and
  ``require_auth=!password``: libpq refuses a server that asks for the password in clear
  text, before sending it;
- Oracle: TCPS with the same CA bundle and ``ssl_server_dn_match`` (thin mode).
``prefer``: TLS when the server offers it, not verified; else plaintext. ``disable``: plaintext.
Only the local run against a database the user typed uses ``prefer`` or ``disable``.

Each engine's ``tls`` module (``engines/<name>/tls.py``) turns the mode into its driver's
connect parameters. The transport actually used is reported by each engine as
``engine.transport`` (one of the ``TRANSPORT_*`` values below) so the findings can say it.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

from cutover_prep.settings import connection_policy

CA_BUNDLE = Path(__file__).resolve().parent.parent / "certs" / "rds-ca-bundle.pem"

TRANSPORT_TLS_VERIFIED = "tls-verified"  # PostgreSQL: TLS, certificate and host name verified
TRANSPORT_TCPS_VERIFIED = "tcps-verified"  # Oracle: TCPS, certificate and DN verified
TRANSPORT_TLS_UNVERIFIED = "tls-unverified"  # prefer: TLS the server offered, not verified
TRANSPORT_PLAINTEXT = "plaintext"  # prefer without server TLS, or disable (local runs only)
TRANSPORT_UNIX_SOCKET = "unix-socket"  # a local socket directory (the embedded demo server)

NO_TLS_HINT = ("TLS is required (CUTOVER_PREP_TLS=require): the server must offer TLS with a certificate "
               "from the RDS CA bundle for this host name; only a local run against a database you typed "
               "may set CUTOVER_PREP_TLS=prefer or disable")


def tls_mode(spec: Any) -> str:
    """The spec's TLS mode, else the environment's (default ``require``)."""
    mode = getattr(spec, "tls", None) or connection_policy().tls
    if mode not in ("require", "prefer", "disable"):
        raise ValueError(f"TLS mode must be require, prefer or disable, got {mode!r}")
    return mode


def rds_ssl_context() -> ssl.SSLContext:
    """An SSL context trusting only the RDS CA bundle, checking host names (Oracle TCPS).

    A new one per connection: python-oracledb adds a wallet's certificates to the context it is given."""
    context = ssl.create_default_context(cafile=str(CA_BUNDLE))
    context.check_hostname = True
    context.verify_mode = ssl.CERT_REQUIRED
    return context
