"""The preflight's checks, engine-neutral: what was checked, whether it passed, and the bytes it concerns.

One ``Check`` is one line of ``cutover-prep preflight``. Its ``status``:

- ``pass``: proven on the target (a read the server's counters confirmed, a grant the server reports);
- ``fail``: the run would not work as planned; ``name`` says what is missing (a grant, a method);
- ``warn``: the run works, but leaves something unread the verdict will name (``not readable by SQL``);
- ``info``: a fact (version, edition, a method the plan does not use).

A report passes when no check failed (exit 0), else exit 1 naming each failed check.

Each engine's preflight hook (``engines/<name>/preflight.py``, ``EngineFamily.preflight``) proves its checks
with the helpers here (``attempt``, ``connected``, ``tls_check``); ``preflight/`` runs the hook for
``cutover-prep preflight`` and for the run's Preflight state.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cutover_prep.engines import transport as tls
from cutover_prep.engines.base import ENGINE_INTERNAL, DiscoveryOptions, EngineError

PASS, FAIL, WARN, INFO = "pass", "fail", "warn", "info"
STATUSES = (PASS, FAIL, WARN, INFO)
# kinds, in the order the report lists them
CONNECTION, PRIVILEGE, METHOD, CENSUS = "connection", "privilege", "method", "census"
KINDS = (CONNECTION, PRIVILEGE, METHOD, CENSUS)
WAIVER = "excluded by input"  # as findings.census: the input's selection left it out
NO_PRIVILEGE = "no privilege"  # a grant would let the run read it: a failure
CENSUS_NAMED = 10  # unreadable objects named one per line; the rest summed in one line


@dataclass
class Check:
    kind: str
    name: str
    status: str
    detail: str
    bytes: int | None = None
    data: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in STATUSES or self.kind not in KINDS:
            raise ValueError(f"check {self.name!r}: status {self.status!r} / kind {self.kind!r} not known")

    def line(self) -> str:
        size = f" ({mib(self.bytes)})" if self.bytes is not None else ""
        return f"{self.status.upper():<4} {self.kind}: {self.name}: {self.detail}{size}"


def mib(nbytes: int) -> str:
    return f"{nbytes:,} bytes" if nbytes < 1024 * 1024 else f"{nbytes / 2**20:,.1f} MiB"


@dataclass
class Context:
    """What the preflight is asked: the run's selection (the databases (PostgreSQL) or schemas (MySQL) and
    the schema globs, as ``warmup.databases`` / ``include_schemas`` / ``exclude_schemas`` / ``include_system``:
    the preflight checks exactly what the run will read, issue 32), whether the datafile pass is asked for,
    and the time it may take."""

    databases: tuple[str, ...] = ()
    datafiles: bool = False
    include_schemas: tuple[str, ...] = ()
    exclude_schemas: tuple[str, ...] = ()
    include_system: bool = False
    timeout_seconds: float = 60.0
    max_databases: int = 4  # databases whose methods are proven (a bounded sample); the rest are named
    started: float = field(default_factory=time.monotonic)

    @property
    def statement_seconds(self) -> float:
        """A statement's timeout: what is left, at least 1 s."""
        return max(1.0, self.timeout_seconds - (time.monotonic() - self.started))

    def options(self) -> DiscoveryOptions:
        """The selection as discovery and the census take it (the same object the run's Discover builds)."""
        return DiscoveryOptions(include_schemas=tuple(self.include_schemas),
                                exclude_schemas=tuple(self.exclude_schemas), databases=tuple(self.databases),
                                include_system=self.include_system)

    def expired(self) -> bool:
        return time.monotonic() - self.started >= self.timeout_seconds


def attempt(ctx: Context, kind: str, name: str, call: Callable[[], Check | list[Check]],
            errors: tuple[type[BaseException], ...]) -> list[Check]:
    """Run one check; an engine error it raises is that check failing (one line, the server's words);
    past ``--timeout`` it is not run and fails as such."""
    if ctx.expired():
        return [Check(kind, name, FAIL, f"not checked: --timeout {ctx.timeout_seconds:g} s reached")]
    try:
        out = call()
    except errors as exc:
        text = " ".join(str(exc).split()) or type(exc).__name__
        return [Check(kind, name, FAIL, text)]
    return out if isinstance(out, list) else [out]


def census_checks(objects: Iterable[Any]) -> list[Check]:
    """The objects the plan cannot read (``engines.base.CensusObject``), with bytes: ``no privilege``
    fails (a grant fixes it), any other reason warns (the verdict's UNREAD_OBJECTS will name it);
    what the selection leaves out (``excluded by input``) and the engine's own files no SQL reads
    (``engine-internal``, judged by the verdict's ENGINE_INTERNAL) are counted only."""
    objects = list(objects)
    unread = [o for o in objects if not o.readable and o.reason not in (WAIVER, ENGINE_INTERNAL)]
    waived = [o for o in objects if o.reason == WAIVER]
    internal = [o for o in objects if o.reason == ENGINE_INTERNAL]
    total = sum(int(o.bytes or 0) for o in objects)
    waived_bytes = sum(int(o.bytes or 0) for o in waived)
    summary = (f"{len(objects):,} objects on the volume ({mib(total)}), {len(unread):,} the plan cannot read"
               + (f", {len(waived):,} excluded by the selection ({mib(waived_bytes)})" if waived else "")
               + (f", {len(internal):,} engine-internal, which no SQL reads "
                  f"({mib(sum(int(o.bytes or 0) for o in internal))}: the verdict's ENGINE_INTERNAL)"
                  if internal else ""))
    status = FAIL if any(o.reason == NO_PRIVILEGE for o in unread) else WARN if unread else PASS
    out = [Check(CENSUS, "census", status, summary,
                 data={"objects": len(objects), "unread": len(unread), "unread_bytes": sum(o.bytes for o in unread),
                       "waived": len(waived), "bytes": total})]
    unread.sort(key=lambda o: (o.reason != NO_PRIVILEGE, -int(o.bytes or 0), o.key))
    for o in unread[:CENSUS_NAMED]:
        size = "" if o.size_known else ", size not reported by the server"
        out.append(Check(CENSUS, o.key, FAIL if o.reason == NO_PRIVILEGE else WARN, f"{o.reason}{size}",
                         bytes=int(o.bytes or 0), data={"reason": o.reason, "size_known": o.size_known}))
    rest = unread[CENSUS_NAMED:]
    if rest:
        out.append(Check(CENSUS, f"{len(rest):,} more", FAIL if any(o.reason == NO_PRIVILEGE for o in rest) else WARN,
                         "; ".join(sorted({str(o.reason) for o in rest})), bytes=sum(int(o.bytes or 0) for o in rest)))
    return out


@dataclass
class Report:
    """A preflight's checks of one engine; ``target``: its host, port, database and user (never the password)."""

    engine: str
    target: dict[str, str | int]
    checks: list[Check]
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failed

    @property
    def failed(self) -> list[str]:
        return [c.name for c in self.checks if c.status == FAIL]

    def ordered(self) -> list[Check]:
        return sorted(self.checks, key=lambda c: KINDS.index(c.kind))  # stable: each engine's order within a kind

    def lines(self) -> list[str]:
        head = ", ".join(f"{k} {v}" for k, v in self.target.items() if v not in (None, ""))
        verdict = ("preflight passed" if self.ok else
                   f"preflight FAILED: {len(self.failed)} check(s): " + "; ".join(self.failed))
        return [f"preflight of {self.engine} ({head})", *(c.line() for c in self.ordered()),
                f"{verdict} in {self.seconds:.1f} s"]

    def to_json(self) -> dict[str, Any]:
        return {"engine": self.engine, "target": self.target, "ok": self.ok, "failed": self.failed,
                "seconds": round(self.seconds, 3), "checks": [asdict(c) for c in self.ordered()]}


def tls_check(transport: str, spec: Any, extra: str = "") -> Check:
    """The connection's protection (``engines.transport``) and what is known of the server's certificate."""
    extra = f"; {extra}" if extra else ""
    if transport in (tls.TRANSPORT_TLS_VERIFIED, tls.TRANSPORT_TCPS_VERIFIED):
        return Check(CONNECTION, "tls", PASS, f"{transport}: the server certificate verified against "
                     f"{Path(tls.ca_file(spec)).name}, its host name matched{extra}")
    if transport == tls.TRANSPORT_TLS_CA_VERIFIED:
        return Check(CONNECTION, "tls", PASS, f"{transport}: the server certificate verified against "
                     f"{Path(tls.ca_file(spec)).name}, its host name not matched{extra}")
    if transport == tls.TRANSPORT_TLS_UNVERIFIED:
        return Check(CONNECTION, "tls", WARN, f"{transport}: encrypted, the server certificate not verified "
                     f"(a deployed run verifies it: CUTOVER_PREP_TLS=require){extra}")
    if transport == tls.TRANSPORT_UNIX_SOCKET:
        return Check(CONNECTION, "tls", INFO, f"{transport}: a local socket, no TLS{extra}")
    return Check(CONNECTION, "tls", WARN, f"{transport or 'unknown'}: no TLS (a deployed run requires verified "
                 f"TLS: CUTOVER_PREP_TLS=require){extra}")


def connected(connect: Callable[[], Any], spec: Any,
              label: str | Callable[[Any], str]) -> tuple[Any | None, list[Check]]:
    """Open the engine, timed: ``(engine, [its connection check])``, or ``(None, [the failed check, one line])``."""
    started = time.monotonic()
    try:
        engine = connect()
    except EngineError as exc:
        return None, [Check(CONNECTION, "connection", FAIL, " ".join(str(exc).split()))]
    name = label(engine) if callable(label) else label
    return engine, [connection_check(spec, name, time.monotonic() - started)]


def connection_check(spec: Any, label: str, seconds: float) -> Check:
    return Check(CONNECTION, "connection", PASS, f"{label} {spec.host}:{spec.port}/{spec.database} as {spec.user} "
                 f"in {seconds * 1000:,.0f} ms")
