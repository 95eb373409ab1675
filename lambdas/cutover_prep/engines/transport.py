"""How an engine's connection is protected: TLS mode, CA file, and the transport it reports.

Modes (``CUTOVER_PREP_TLS``, or a spec's ``tls``):
- ``require`` (the default, and what every Lambda runs with unless the stack says otherwise): TLS,
  the server's certificate verified against the CA file and naming the host:
  PostgreSQL ``sslmode=verify-full`` with ``require_auth=!password`` (libpq refuses a server that
  asks for the password in clear text, before sending it); MySQL/MariaDB the CA and the identity;
  Oracle TCPS with ``ssl_server_dn_match`` (thin mode);
- ``verify-ca``: the same without the host name (libpq ``verify-ca``, MySQL ``VERIFY_CA``, Oracle
  TCPS without the DN match);
- ``unverified``: TLS or nothing, the certificate not verified (libpq ``require``, MySQL ``REQUIRED``);
- ``prefer``: TLS when the server offers it, not verified; else plaintext;
- ``disable``: plaintext.
The CA file: the spec's ``tls_ca``, else ``CUTOVER_PREP_TLS_CA``, else the RDS CA bundle shipped
in this package. Only the local run against a database the user typed uses another mode or CA
file: what its DSN asks, read by each engine's ``dsn_tls`` (libpq's, MySQL's, python-oracledb's
own parameter names); a DSN parameter it cannot honour is refused by name (``DsnTlsProblem``).

Each engine's ``tls`` module (``engines/<name>/tls.py``) turns the mode into its driver's
connect parameters. The transport actually used is reported by each engine as
``engine.transport`` (one of the ``TRANSPORT_*`` values below) so the findings can say it.
"""

from __future__ import annotations

import re
import ssl
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from cutover_prep.settings import connection_policy

CA_BUNDLE = Path(__file__).resolve().parent.parent / "certs" / "rds-ca-bundle.pem"

REQUIRE, VERIFY_CA, UNVERIFIED, PREFER, DISABLE = "require", "verify-ca", "unverified", "prefer", "disable"
MODES = (REQUIRE, VERIFY_CA, UNVERIFIED, PREFER, DISABLE)
VERIFYING = (REQUIRE, VERIFY_CA)  # the modes that verify the certificate against the CA file

TRANSPORT_TLS_VERIFIED = "tls-verified"  # TLS, certificate and host name verified
TRANSPORT_TCPS_VERIFIED = "tcps-verified"  # Oracle: TCPS, certificate and DN verified
TRANSPORT_TLS_CA_VERIFIED = "tls-ca-verified"  # verify-ca: TLS, the certificate verified, not its host name
TRANSPORT_TLS_UNVERIFIED = "tls-unverified"  # unverified, or prefer with a server offering TLS
TRANSPORT_PLAINTEXT = "plaintext"  # prefer without server TLS, or disable (local runs only)
TRANSPORT_UNIX_SOCKET = "unix-socket"  # a local socket directory (the embedded demo server)

NO_TLS_HINT = ("TLS is required (CUTOVER_PREP_TLS=require): the server must offer TLS with a certificate "
               "from the RDS CA bundle for this host name; only a local run against a database you typed "
               "may set CUTOVER_PREP_TLS=prefer or disable")


def tls_mode(spec: Any) -> str:
    """The spec's TLS mode, else the environment's (default ``require``)."""
    mode = getattr(spec, "tls", None) or connection_policy().tls
    if mode not in MODES:
        raise ValueError(f"TLS mode must be {', '.join(MODES[:-1])} or {MODES[-1]}, got {mode!r}")
    return mode


def ca_file(spec: Any) -> str:
    """The PEM file of CA certificates a verifying mode trusts (read at call time: tests swap CA_BUNDLE)."""
    return getattr(spec, "tls_ca", None) or connection_policy().tls_ca or str(CA_BUNDLE)


def verified_context(spec: Any, *, check_hostname: bool) -> ssl.SSLContext:
    """An SSL context trusting only the spec's CA file. A new one per connection: python-oracledb
    adds a wallet's certificates to the context it is given."""
    context = ssl.create_default_context(cafile=ca_file(spec))
    context.check_hostname = check_hostname
    context.verify_mode = ssl.CERT_REQUIRED
    return context


def unverified_context() -> ssl.SSLContext:
    """TLS without verifying the server's certificate (``unverified``, ``prefer``)."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    return context


def tls_hint(spec: Any, default: str = NO_TLS_HINT) -> str:
    """What a failed connection's message adds in a mode that requires TLS ("" in the others):
    ``default`` (the deployment's rule) for ``require`` with no CA file named."""
    mode = tls_mode(spec)
    named = getattr(spec, "tls_ca", None) or connection_policy().tls_ca
    if mode == REQUIRE and not named:
        return default
    if mode in VERIFYING:
        ca = "the RDS CA bundle shipped with cutover-prep" if Path(ca_file(spec)) == CA_BUNDLE else ca_file(spec)
        return (f"TLS is required ({mode}): the server must offer TLS with a certificate from {ca}"
                + (" for this host name" if mode == REQUIRE else ""))
    return "TLS is required (unverified): the server must offer TLS" if mode == UNVERIFIED else ""


# -- a local run's DSN: its TLS parameters, each engine's vocabulary (engines/<name>/tls.py dsn_tls) ----------
class DsnTlsProblem(ValueError):
    """A DSN parameter that cannot be honoured: one line naming it (never its value: it may be a secret)."""


def shown(name: str) -> str:
    """A parameter name as a message may show it (a name is typed by the user: kept short and printable)."""
    return name if re.fullmatch(r"[A-Za-z0-9_.-]{1,40}", name) else repr(name[:40])


def dsn_params(pairs: Iterable[tuple[str, str]], accepted: tuple[str, ...], takes: str,
               canonical: Any = str) -> dict[str, str]:
    """The DSN's parameters by ``canonical`` name (e.g. MySQL's ``ssl_mode`` is ``ssl-mode``): one each;
    names outside ``accepted`` are refused together, by name, saying what the engine ``takes``."""
    found: dict[str, str] = {}
    others: list[str] = []
    for name, value in pairs:
        key = canonical(name)
        if key not in accepted:
            others.append(shown(name))
        elif key in found:
            raise DsnTlsProblem(f"{key}: given twice; keep one")
        else:
            found[key] = value
    if others:
        raise DsnTlsProblem(f"{', '.join(others)}: not used by cutover-prep local ({takes}); "
                            f"remove {'them' if len(others) > 1 else 'it'}")
    return found


def ca_path(name: str, value: str) -> str:
    """A CA file the DSN names: an absolute path to PEM certificates Python's ssl module can load."""
    path = Path(value).resolve()
    try:
        ssl.create_default_context(cafile=str(path))
    except (OSError, ssl.SSLError, ValueError):
        raise DsnTlsProblem(f"{name}: cannot read PEM CA certificates from {str(path)[:200]}; "
                            "name a readable file of PEM certificates") from None
    return str(path)
