"""libpq's TLS parameters for the modes ``engines.transport`` defines, and a DSN's ``sslmode``/``sslrootcert``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cutover_prep.engines import transport  # read at call time: tests swap the CA bundle
from cutover_prep.engines.transport import DsnTlsProblem
from cutover_prep.settings import environment

# libpq's sslmode -> our mode ("SSL Mode Descriptions" in libpq's documentation); allow is refused
SSLMODES = {"disable": transport.DISABLE, "prefer": transport.PREFER, "require": transport.UNVERIFIED,
            "verify-ca": transport.VERIFY_CA, "verify-full": transport.REQUIRE}
DSN_TAKES = "a PostgreSQL DSN takes sslmode and sslrootcert"
# libpq's environment defaults of the two ("Environment Variables" in libpq's documentation)
LIBPQ_ENV = {"sslmode": "PGSSLMODE", "sslrootcert": "PGSSLROOTCERT"}


def postgres_params(spec: Any) -> tuple[dict[str, str], str]:
    """libpq connection parameters for the spec's TLS mode, and the transport if known before connecting."""
    if spec.host.startswith("/"):  # a Unix socket directory on this machine: nothing leaves it
        return {}, transport.TRANSPORT_UNIX_SOCKET
    mode = transport.tls_mode(spec)
    if mode == transport.REQUIRE:
        return {"sslmode": "verify-full", "sslrootcert": transport.ca_file(spec), "require_auth": "!password"}, \
            transport.TRANSPORT_TLS_VERIFIED
    if mode == transport.VERIFY_CA:
        return {"sslmode": "verify-ca", "sslrootcert": transport.ca_file(spec), "require_auth": "!password"}, \
            transport.TRANSPORT_TLS_CA_VERIFIED
    if mode == transport.UNVERIFIED:
        return {"sslmode": "require"}, transport.TRANSPORT_TLS_UNVERIFIED
    if mode == transport.PREFER:
        return {"sslmode": "prefer"}, ""  # known only once connected
    return {"sslmode": "disable"}, transport.TRANSPORT_PLAINTEXT


def dsn_tls(pairs: Iterable[tuple[str, str]]) -> tuple[str, str | None]:
    """The mode and CA file a PostgreSQL DSN's parameters ask for, as libpq reads them: no sslmode is
    ``prefer``; ``require`` with ``sslrootcert`` is ``verify-ca`` ("for backwards compatibility", libpq's
    documentation); a verifying mode without ``sslrootcert`` trusts the RDS CA bundle (libpq would read
    ~/.postgresql/root.crt). ``PGSSLMODE`` (and ``PGSSLROOTCERT``, for a mode that verifies) stand for
    a parameter the DSN does not give, as in libpq: where psql would verify, so does the run.
    Anything else is refused by name (``DsnTlsProblem``)."""
    found = transport.dsn_params(pairs, ("sslmode", "sslrootcert"), DSN_TAKES)
    env = environment(*LIBPQ_ENV.values())
    from_env = {key: env[var] for key, var in LIBPQ_ENV.items() if key not in found and env.get(var)}
    if from_env.get("sslmode", found.get("sslmode")) not in ("require", "verify-ca", "verify-full"):
        from_env.pop("sslrootcert", None)  # a CA file in the environment is for the modes that verify
    try:
        return _mode_and_ca({**found, **from_env})
    except DsnTlsProblem as exc:
        if not from_env:
            raise
        given = ", ".join(f"{key} from {LIBPQ_ENV[key]}" for key in from_env)
        raise DsnTlsProblem(f"{exc} ({given})") from None


def _mode_and_ca(found: dict[str, str]) -> tuple[str, str | None]:
    sslmode, root = found.get("sslmode", "prefer"), found.get("sslrootcert")
    if sslmode == "allow":
        raise DsnTlsProblem("sslmode=allow: not supported (libpq tries plaintext first); "
                            "use prefer (TLS when the server offers it), require, or disable")
    if sslmode not in SSLMODES:
        raise DsnTlsProblem("sslmode must be disable, prefer, require, verify-ca or verify-full")
    if root is None:
        mode = SSLMODES[sslmode]
        return mode, str(transport.CA_BUNDLE) if mode in transport.VERIFYING else None
    if root == "system":
        raise DsnTlsProblem("sslrootcert=system (the system's trust store) is not supported; name a file of "
                            "PEM CA certificates, or leave sslrootcert out for the RDS CA bundle")
    if sslmode not in ("require", "verify-ca", "verify-full"):
        raise DsnTlsProblem("sslrootcert is used with sslmode=verify-full, verify-ca or require; "
                            "add one of them, or remove sslrootcert")
    mode = transport.VERIFY_CA if sslmode == "require" else SSLMODES[sslmode]
    return mode, transport.ca_path("sslrootcert", root)
