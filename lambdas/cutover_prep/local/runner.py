"""``cutover-prep local``: the whole workflow on this machine, against a DSN or a sample DB."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import signal
import sys
import threading
import time
import unicodedata
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from cutover_prep import deps
from cutover_prep.benchmark.scratch import ScratchStatus
from cutover_prep.benchmark.steps import cleanup_scratch
from cutover_prep.dal.store import EMULATION_EVIDENCE, UNIT_PREFIX, Store, evidence_key
from cutover_prep.engines import ConnectionSpec, EngineError, open_engine
from cutover_prep.engines.registry import KEYWORD_CONNINFO_ENGINE, families, family
from cutover_prep.engines.transport import DsnTlsProblem
from cutover_prep.escape import for_terminal
from cutover_prep.findings.eta import CostModel, WorkEta, clock_text, eta_seconds, unit_span
from cutover_prep.findings.timeline import warmup_wall
from cutover_prep.local import state
from cutover_prep.local.emulated import (
    DSN_REASON,
    Emulation,
    demo_database,
    demo_priority,
    snapshot_writer,
    unavailable,
)
from cutover_prep.local.harness import LocalAws
from cutover_prep.models.run_input import RUN_ID, InvalidInput, host_problem, parse_run_input
from cutover_prep.models.steps import RunContext
from cutover_prep.report import clocks
from cutover_prep.report.charts import fmt_duration, fmt_number
from cutover_prep.restart import RunIdReused, check_restart
from cutover_prep.workflows import FUNCTIONS

SCHEMES = {scheme: f.name for f in families() for scheme in f.dsn_schemes}  # URL scheme -> engine family
DSN_FORM = " or ".join(f"{f.dsn_schemes[0]}://USER:PASSWORD@HOST:PORT/{f.database_term}" for f in families())
LOCAL_IDENTIFIER = "local-target"
FINALIZE_MODULE = FUNCTIONS["Finalize"].module  # reads the emulation evidence into the findings
DEFAULT_PROFILE_UNAVAILABLE = "the default profile (the emulator cannot be imported)"
_PLACEHOLDER_SECRET = "arn:aws:secretsmanager:us-east-1:000000000000:secret:cutover-prep/local"
# The secret the local run makes in its moto, under one ARN in every process (moto's custom id tag; it would end
# in six random letters): the run input names it, and a restart must name the same target (restart.py)
SECRET_NAME, SECRET_SUFFIX = "cutover-prep/local", "LOCALS"
LOCAL_SECRET_ARN = f"arn:aws:secretsmanager:us-east-1:123456789012:secret:{SECRET_NAME}-{SECRET_SUFFIX}"


class UsageProblem(Exception):
    """A bad option or DSN: reported in one line, exit code 2."""


class TargetUnreachable(Exception):
    """The database cannot be reached: reported in one line, exit code 3."""


def _has_control(text: str) -> bool:
    return any(unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp") for ch in text)


CONNINFO_KEYS = ("host", "port", "dbname", "user", "password")
CONNINFO_FORM = "host=HOST port=5432 dbname=DATABASE user=USER password=PASSWORD"


def is_conninfo(dsn: str) -> bool:
    """libpq's keyword form (``host=... dbname=...``) rather than a URL."""
    return "://" not in dsn and "=" in dsn


def parse_conninfo(dsn: str) -> ConnectionSpec:
    """PostgreSQL's keyword conninfo, parsed by libpq's own parser (psycopg.conninfo.conninfo_to_dict):
    quoting and escapes as libpq has them. Other engines take the URL form only."""
    try:
        from psycopg import ProgrammingError
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:
        raise UsageProblem("--dsn: the keyword form (host=... dbname=...) needs psycopg: pip install "
                           "'cutover-prep[local]'; or write postgresql://USER:PASSWORD@HOST:PORT/DATABASE") from None
    try:
        info = {k: str(v) for k, v in conninfo_to_dict(dsn).items()}
    except ProgrammingError:  # libpq's message may quote part of the string, and so the password: not shown
        raise UsageProblem(f"--dsn: not a valid keyword conninfo; write {CONNINFO_FORM} (quote a value with "
                           f"spaces in single quotes), or a URL: {DSN_FORM}") from None
    tls, tls_ca = dsn_tls(KEYWORD_CONNINFO_ENGINE, [(k, v) for k, v in info.items() if k not in CONNINFO_KEYS])
    missing = [k for k in ("host", "user", "dbname") if not info.get(k)]
    if missing:
        raise UsageProblem(f"--dsn needs {', '.join(missing)}: {CONNINFO_FORM}")
    if info["host"].startswith("/") and tls not in (LOCAL_TLS, "disable"):
        raise UsageProblem("--dsn: sslmode asks for TLS, which a Unix socket (host=/...) does not use "
                           "(libpq ignores it there); remove sslmode, or connect over TCP")
    _check_host(info["host"])
    if "," in info.get("port", ""):
        raise UsageProblem("--dsn: one host and port (a list of hosts is libpq's failover; warm one server at a time)")
    try:
        port = int(info.get("port") or family(KEYWORD_CONNINFO_ENGINE).default_port)
        if not 1 <= port <= 65535:
            raise ValueError
    except ValueError:
        raise UsageProblem("--dsn has a port that is not a number from 1 to 65535") from None
    for name in ("host", "user", "password", "dbname"):
        if _has_control(info.get(name, "")):
            raise UsageProblem(f"--dsn: the {name} holds a control character; remove it")
    return ConnectionSpec(engine=family(KEYWORD_CONNINFO_ENGINE).name, host=info["host"], port=port,
                          database=info["dbname"], user=info["user"], password=info.get("password", ""),
                          tls=tls, tls_ca=tls_ca)


def _check_host(host: str) -> None:
    """The DSN's host by the run input's rule for ``target.host`` (``models.run_input.host_problem``): one host
    name or address (no libpq host list, no ``@``), or a socket directory. Every ``--dsn`` command parses
    here (``local``, ``preflight``, ``estimate``, ``hotset``), so none connects where another refuses."""
    problem = host_problem(host)
    if problem:
        raise UsageProblem(f"--dsn: the host {problem.replace('target.port', 'the DSN port')}")


def dsn_tls(engine: str, pairs: list[tuple[str, str]]) -> tuple[str, str | None]:
    """The TLS mode and CA file the DSN's parameters ask for, in the engine's own terms (libpq's
    ``sslmode``/``sslrootcert``, MySQL's ``ssl-mode``/``ssl-ca``, python-oracledb's ``protocol``/
    ``ssl_server_dn_match``; ``engines/<name>/tls.py``); none given: TLS when the server offers it
    (``LOCAL_TLS``). A parameter it cannot honour is refused by name: never a silent downgrade."""
    try:
        return family(engine).dsn_tls(pairs)
    except DsnTlsProblem as exc:
        raise UsageProblem(f"--dsn: {exc}") from None


def parse_dsn(dsn: str) -> ConnectionSpec:
    """``postgresql://user:pw@host:5432/db``, ``oracle://user:pw@host:1521/service``, ``mysql://``,
    ``mariadb://``; for PostgreSQL also libpq's keyword form ``host=h port=5432 dbname=db user=u``.

    No message repeats the DSN: it holds the password.
    """
    if _has_control(dsn):
        raise UsageProblem("--dsn: holds a control character; remove it")
    if is_conninfo(dsn):
        return parse_conninfo(dsn)
    try:
        parts = urlsplit(dsn)
        engine = SCHEMES.get(parts.scheme)
        host = parts.hostname
    except ValueError:  # urllib: "Invalid IPv6 URL", "'zz' does not appear to be an IPv4 or IPv6 address"
        raise UsageProblem("--dsn: not a valid URL (an IPv6 host goes in brackets, e.g. [::1]:5432); "
                           f"write {DSN_FORM}") from None
    if engine is None:
        starts = " or ".join(f"{f.dsn_schemes[0]}://" for f in families())
        raise UsageProblem(f"--dsn must start with {starts} ({DSN_FORM}), or be PostgreSQL's keyword form "
                           f"({CONNINFO_FORM})")
    try:
        port = parts.port
    except ValueError:
        raise UsageProblem("--dsn has a port that is not a number from 1 to 65535") from None
    database = unquote(parts.path.lstrip("/"))
    if not host or not parts.username or not database:
        raise UsageProblem(f"--dsn needs user, host and database: {engine}://USER:PASSWORD@HOST:PORT/DATABASE")
    if parts.fragment:
        raise UsageProblem("--dsn: has a '#' fragment, which would be ignored; write a '#' in the password as %23")
    _check_host(host)  # before anything connects: libpq would try each host of "h1,h2" with the password
    tls, tls_ca = dsn_tls(engine, parse_qsl(parts.query, keep_blank_values=True))
    user, password = unquote(parts.username), unquote(parts.password or "")
    for name, value in (("user", user), ("password", password), ("database", database)):
        if _has_control(value):  # %00 and friends, decoded
            raise UsageProblem(f"--dsn: the {name} holds a control character; remove it")
    return ConnectionSpec(engine=engine, host=host, port=port or family(engine).default_port,
                          database=database, user=user, password=password, tls=tls, tls_ca=tls_ca)


def evidence_dir(out: Path | None, run_id: str, *, base: Path | None = None) -> Path:
    """``--out``, else ``./out/<run id>``: a run id is one path component that stays inside ./out."""
    if not RUN_ID.fullmatch(run_id):
        raise UsageProblem("--run-id: must be 1-80 letters, digits, '.', '_' or '-', starting with a letter "
                           "or digit (it names a directory under ./out and the run)")
    if out is not None:
        return out
    root = base if base is not None else Path("out")
    path = root / run_id
    if path.resolve().parent != root.resolve():
        raise UsageProblem(f"--run-id: {run_id} would write outside {root}; pick another run id")
    return path


def evidence_file(out: Path, name: str) -> Path:
    """Where an evidence object is written: never outside the evidence directory."""
    root = out.resolve()
    path = (root / name).resolve()
    if not path.is_relative_to(root) or path == root:
        raise UsageProblem(f"evidence object {name[:100]!r} would be written outside {out}; not written")
    return path


def check_options(options: LocalOptions, spec: ConnectionSpec | None) -> None:
    """The options as the workflow will validate them, before anything is started."""
    target: dict[str, Any] = {"db_instance_identifier": LOCAL_IDENTIFIER, "secret_arn": _PLACEHOLDER_SECRET}
    if spec is not None:
        target.update(engine=spec.engine, host=spec.host, port=spec.port, database=spec.database)
    if options.databases:
        target["databases"] = options.databases
    try:
        parse_run_input({"target": target, "warmup": options.warmup, "benchmark": options.benchmark,
                         "run_id": options.run_id, **({"preflight": options.preflight} if options.preflight else {})})
    except InvalidInput as exc:
        raise UsageProblem(str(exc).replace("target.", "--dsn ")) from None


@dataclass
class LocalOptions:
    dsn: str | None = None
    out: Path | None = None
    size_mb: int = 300
    warmup: dict[str, Any] = field(default_factory=dict)
    benchmark: dict[str, Any] = field(default_factory=dict)
    run_id: str | None = None
    progress: bool = True
    storage: dict[str, Any] = field(default_factory=dict)  # the emulated volume's profile options (CLI names)
    emulate: bool = True  # the demo database on an emulated restored volume, where FUSE can be had
    preflight: dict[str, Any] = field(default_factory=dict)  # the run input's preflight section (empty: defaults)
    databases: str | None = None  # target.databases: "all" (--all-databases); None: the DSN's database (selection)


def check_reachable(spec: ConnectionSpec) -> None:
    try:
        open_engine(spec).close()
    except EngineError as exc:
        raise TargetUnreachable(str(exc)) from None


def _columns(stream: Any) -> int:
    """The terminal's width; 80 when the stream cannot say (not a file descriptor)."""
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return 80


class Progress:
    """Progress fed from the run item's counters in DynamoDB.

    On a terminal, a bar: the warm-up's bytes (MiB, MiB/s, units), then, once the benchmark is
    planned, a bar of its own (points done/total), so a finished warm-up's rate does not fall
    while the points run. Anywhere else (a pipe, a CI log) plain lines, never ``\\r``-joined
    frames: one when a phase starts, one every ``NON_TTY_INTERVAL_S`` and one at the end.
    """

    NON_TTY_INTERVAL_S = 10.0
    # what the bar and the lines read from the run item, polled every second: the whole item, serialized by
    # moto in this interpreter, cost most of its CPU on a busy machine (py-spy, issue 24 §5), which the
    # handlers and the probes' reads then waited for; the estimate (large) only until the ETA is made from it
    RUN_FIELDS = ("bytes_planned", "bytes_read", "benchmark_points", "units_done", "units_total", "units_failed",
                  "selection")

    def __init__(self, store: Store, run_id: str, enabled: bool, stream: Any = None,
                 time_scale: float | None = None) -> None:
        self.store, self.run_id, self.enabled = store, run_id, enabled
        self.time_scale = time_scale  # an emulated volume's (report.clocks): its clock beside the wall clock
        self.stream = stream if stream is not None else sys.stderr
        self.bar: Any = None
        # a terminal with no width (a pty nobody sized: `script` in some CI, `docker run -t`) gets no
        # bar from tqdm at all: plain lines there too
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)()) and _columns(self.stream) > 0
        self._phase: str | None = None
        self._phase_started = 0.0
        self._reading_since: tuple[float, float] | None = None  # (time, MiB) when bytes were first seen
        self._eta_samples: list[tuple[float, float]] = []  # (s since then, MiB done) until the plan is known
        self._work_eta: WorkEta | None = None  # then findings.eta's estimator, fed from the unit items
        self._unit_bytes: dict[str, int] = {}  # bytes read per unit, as last polled
        self._units_seen: tuple[Any, ...] | None = None  # the run item's counters when the unit items were read
        self._last_done, self._last_change = -1.0, 0.0  # MiB read at the last change, and when
        self._printed = 0.0
        self._last_line = ""
        self._said_selection = False

    def poll(self, *, final: bool = False) -> None:
        if not self.enabled:  # --no-progress: quiet, the selection line too (it is in the run's evidence)
            return
        fields = getattr(self.store, "get_run_fields", None)  # the tests' fake stores have get_run only
        wanted = self.RUN_FIELDS + (("estimate",) if self._work_eta is None else ())  # read until the ETA has it
        run = fields(self.run_id, wanted) if fields else self.store.get_run(self.run_id)
        if not run or "bytes_planned" not in run:
            return
        self._say_selection(run)
        phase = "benchmark" if run.get("benchmark_points") else "warm-up"
        started = phase != self._phase
        if started:
            self._start_phase(phase, run)
        if phase == "benchmark":
            done = sum(1 for p in self.store.points(self.run_id) if p.get("status") in ("DONE", "FAILED")
                       and not str(p.get("point_id", "")).startswith("probe-"))
            n, total = done, int(run.get("benchmark_points") or 0)
        else:
            n, total = int(run.get("bytes_read") or 0), int(run.get("bytes_planned") or 0)
        if self._tty:
            self._draw(n, total, self._warm_text(run) if phase == "warm-up" else "")
        elif final and phase == "warm-up":
            self._end_line(run)
        elif started or final or time.monotonic() - self._printed >= self.NON_TTY_INTERVAL_S:
            self._line(phase, n, total, run)

    def _say_selection(self, run: dict[str, Any] | None) -> None:
        """Once, before the warm-up reads: what it reads and what the selection leaves out (Discover's line)."""
        if not self._said_selection and run and run.get("selection"):
            self._said_selection = True
            print(f"cutover-prep: {for_terminal(str(run['selection']))}", file=self.stream, flush=True)

    def _warm_text(self, run: dict[str, Any], *, percent: bool = False, eta: bool = True, rate: bool = True) -> str:
        """``13.8 of 34.4 MiB (40 %), 30/71 units, 0 failed, 1.3 MiB/s``: MiB, as the report counts
        (tqdm's own scale would say MB and kB/s); the rate is the mean since the first bytes were read
        (the cold probe and discovery before them are not the warm-up's time)."""
        done, total = int(run.get("bytes_read") or 0) / 2**20, int(run.get("bytes_planned") or 0) / 2**20
        if done and self._reading_since is None:
            self._reading_since = (time.monotonic(), done)
        since, base = self._reading_since or (time.monotonic(), done)
        seconds = time.monotonic() - since
        if done != self._last_done:  # the rate runs until the last bytes, not on past the warm-up's end
            self._last_done, self._last_change = done, time.monotonic()
        reading = (self._last_change or time.monotonic()) - since
        speed = f", {(done - base) / reading:,.1f} MiB/s" if rate and reading >= 1 else ""
        if self._reading_since is not None:
            self._sample(run, seconds, done)
        left = self._left(run) if eta and seconds >= 1 and done < total else None
        pct = f" ({100 * done / total:.0f} %)" if percent and total else ""
        return (f"{done:,.1f} of {total:,.1f} MiB{pct}, {run.get('units_done', 0)}/{run.get('units_total', 0)} "
                f"units, {run.get('units_failed', 0)} failed{speed}"
                + (f", done in ~{clock_text(left)} (ETA at the measured rate)" if left is not None else ""))

    def _sample(self, run: dict[str, Any], seconds: float, done_mib: float) -> None:
        """What ``findings.eta``'s estimator goes on (``WorkEta``: each unit's bytes, ranges and itself, priced by
        the estimate's time model corrected by the units finished so far) once the plan and the estimate are
        recorded, fed from the unit items; MiB until then (and for a store without units: the tests' fakes)."""
        if self._work_eta is None and run.get("estimate") and hasattr(self.store, "units"):
            units_key = evidence_key(self.run_id, "units.json")
            model = CostModel.of(run.get("estimate"))
            if model is not None and self.store.exists(units_key):
                self._work_eta = WorkEta(self.store.get_json(units_key), model)
        if self._work_eta is None:
            if not self._eta_samples or seconds > self._eta_samples[-1][0]:
                self._eta_samples.append((seconds, done_mib))
            return
        # the unit items only change when the run item's counters do: read them (every unit, serialized by moto
        # in this interpreter) only then, not at every poll
        counters = (run.get("bytes_read"), run.get("units_done"), run.get("units_failed"))
        if counters == self._units_seen:
            self._work_eta.at(seconds)
            return
        self._units_seen = counters
        for item in self.store.units(self.run_id):
            uid = str(item.get("sk", "")).removeprefix(UNIT_PREFIX)
            nbytes = int(item.get("bytes_read") or 0)
            if nbytes > self._unit_bytes.get(uid, 0):
                self._work_eta.progress(seconds, uid, nbytes - self._unit_bytes.get(uid, 0))
                self._unit_bytes[uid] = nbytes
            self._work_eta.finished(uid, unit_span(item))
        self._work_eta.at(seconds)

    def _left(self, run: dict[str, Any]) -> float | None:
        """Seconds left at the measured rate (``findings.eta``)."""
        if self._work_eta is not None:
            return self._work_eta.eta()
        return eta_seconds(self._eta_samples, int(run.get("bytes_planned") or 0) / 2**20)

    def _start_phase(self, phase: str, run: dict[str, Any]) -> None:
        if self._phase == "warm-up" and not self._tty:  # a log says where the warm-up ended, not only its bar
            self._end_line(run)
        if self.bar is not None:  # the warm-up is over: its bar ends at what it read
            self.bar.n = min(int(run.get("bytes_read") or 0), self.bar.total or 0)
            self.bar.set_postfix_str(self._warm_text(run), refresh=False)
            self.bar.close()
            self.bar = None
        self._phase, self._phase_started = phase, time.monotonic()
        if self._tty:
            from tqdm import tqdm

            if phase == "benchmark":
                self.bar = tqdm(total=int(run.get("benchmark_points") or 0), desc="benchmark", file=self.stream,
                                dynamic_ncols=True,
                                bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} points [{elapsed}]")
            else:
                self.bar = tqdm(total=int(run.get("bytes_planned") or 0), desc="warm-up", file=self.stream,
                                dynamic_ncols=True,  # tqdm puts ", " before the postfix
                                bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}{postfix}]")

    def _draw(self, n: int, total: int, postfix: str) -> None:
        self.bar.total = total
        self.bar.n = min(n, total)
        if postfix:
            self.bar.set_postfix_str(postfix, refresh=False)
        self.bar.refresh()

    def _line(self, phase: str, n: int, total: int, run: dict[str, Any]) -> None:
        line = (f"benchmark: {n}/{total} points" if phase == "benchmark"
                else f"warm-up: {self._warm_text(run, percent=True)}")
        self._printed = time.monotonic()
        if line != self._last_line:
            print(f"cutover-prep: {line}", file=self.stream, flush=True)
            self._last_line = line

    def _end_line(self, run: dict[str, Any]) -> None:
        """The warm-up's last line, with its time and rate as the findings, summary.md and the report define
        them (``findings.timeline.warmup_wall``: the first unit's start to the last one's finish)."""
        line = f"warm-up ended: {self._warm_text(run, percent=True, eta=False, rate=False)}"
        if hasattr(self.store, "units"):
            wall, nbytes = warmup_wall(list(self.store.units(self.run_id)))
            if wall:
                rate = round(nbytes / wall / 2**20, 3)
                line += f", in {fmt_duration(wall)} at {fmt_number(rate)} MiB/s"
                line += clocks.warmup_text(wall, rate, self.time_scale)
        print(f"cutover-prep: {line}", file=self.stream, flush=True)
        self._last_line = line

    def close(self, *, interrupted: bool = False) -> None:
        """The last frame or line (none on Ctrl-C: the interruption is the one line then); piped, a run that
        ends in its warm-up (no benchmark) says where the warm-up ended."""
        if not self.enabled:
            return
        if not interrupted:
            self.poll(final=True)
        self.enabled = False
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _server_version(spec: ConnectionSpec) -> str | None:
    """The database's own version for the stand-in RDS instance (moto would say postgres 9.3.3)."""
    ask = family(spec.engine).server_version
    return ask(spec) if ask else None


STOP_GRACE_SECONDS = 30.0
LOCAL_TLS = "prefer"


def run_local(options: LocalOptions) -> dict[str, Any]:
    """Run the workflow; return the execution's description plus where the evidence is."""
    warnings.filterwarnings("ignore", message="No application metrics to publish")
    warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR")
    options = replace(options, run_id=options.run_id or f"local-{time.strftime('%Y%m%dT%H%M%S')}")
    out = evidence_dir(options.out, str(options.run_id))
    spec = parse_dsn(options.dsn) if options.dsn else None
    check_options(options, spec)
    if spec is not None and options.storage:
        flags = ", ".join(f"--{name.replace('_', '-')}" for name in options.storage)
        raise UsageProblem(f"{flags}: choose what the demo's emulated volume is; "
                           "with --dsn there is no emulation: drop them")
    try:
        with state.exclusive(out, str(options.run_id)):  # one local run on a folder (and so a run id) at a time
            resume = check_reuse(out, spec, options)  # before anything is read: resume, or refuse by name
            if spec is not None:
                check_reachable(spec)  # with the TLS its DSN asks for (none: TLS when offered); the findings say
                return _execute(spec, options, Emulation(reason=DSN_REASON), resume=resume)
            return _demo(options)
    except state.RunIdInUse as exc:
        raise UsageProblem(str(exc)) from None


def check_reuse(out: Path, spec: ConnectionSpec | None, options: LocalOptions) -> bool:
    """Whether this run resumes the run saved in ``out`` (``local.state``); a run id or folder that another run
    used is refused by name (``UsageProblem``), as the deployed workflow refuses it (``restart.check_restart``,
    the same comparison on the same run item): nothing is read and nothing in ``out`` is changed."""
    run_id = str(options.run_id)
    if not state.saved(out):
        if (out / "execution.json").exists():  # a folder written before local runs were saved, or copied without
            raise UsageProblem(f"RunIdReused: {out} holds the evidence of an earlier local run, without the state a "
                               "run resumes from; use a new --out (or --run-id) for this run")
        return False
    saved_id, run_item = state.saved_run(out)
    if saved_id != run_id:
        raise UsageProblem(f"RunIdReused: {out} holds the evidence of run {saved_id}; run {run_id} would mix its "
                           f"evidence with it: use another --out, or --run-id {saved_id} to resume that run")
    if spec is None:
        raise UsageProblem(f"RunIdReused: {out} holds run {run_id}; the demo's sample database is built anew for "
                           "each run, so a demo run cannot resume a run: use a new --run-id or --out")
    if run_item is None:  # stopped before ValidateInput recorded it: nothing was read, nothing to compare with
        return True
    try:
        check_restart(run_item, parse_run_input(_run_input(spec, options, LOCAL_SECRET_ARN)))
    except RunIdReused as exc:
        raise UsageProblem(f"RunIdReused: {exc} (the first run's evidence: {out})") from None
    except InvalidInput as exc:
        raise UsageProblem(str(exc)) from None
    return True


def _run_input(spec: ConnectionSpec, options: LocalOptions, secret_arn: str) -> dict[str, Any]:
    """The workflow's input for this local run (ValidateInput's, and the restart check's)."""
    return {
        "target": {"db_instance_identifier": LOCAL_IDENTIFIER, "secret_arn": secret_arn, "engine": spec.engine,
                   "host": spec.host, "port": spec.port, "database": spec.database,
                   **({"databases": options.databases} if options.databases else {})},
        "warmup": options.warmup,
        "benchmark": options.benchmark,
        **({"preflight": options.preflight} if options.preflight else {}),
        "run_id": str(options.run_id),
    }


def _demo(options: LocalOptions) -> dict[str, Any]:
    """The run on the embedded sample database (built for this run)."""
    profile = _profile(options)
    say(f"building the {options.size_mb:,} MB sample database (embedded PostgreSQL"
        + ("" if profile is None else ", on the emulated restored volume when FUSE can be had")
        + "; takes a while) ...")
    building = time.monotonic()
    with contextlib.ExitStack() as stack:
        if profile is not None and unavailable() is None:  # the emulated demo (root): decision 56
            nice = stack.enter_context(demo_priority())
            if nice is not None:
                say(f"the demo's processes (moto, the handlers, the embedded PostgreSQL) run at nice {nice}, the "
                    "volume's at -10: in AWS they would not share this machine's CPU")
        spec, emulation = stack.enter_context(demo_database(options.size_mb, profile))
        say(f"sample database ready in {time.monotonic() - building:.0f} s; starting run {options.run_id}")
        return _execute(spec, options, emulation)


def say(line: str) -> None:
    """A status line on stderr (stdout carries only the result)."""
    print(f"cutover-prep: {line}", file=sys.stderr, flush=True)


def _profile(options: LocalOptions) -> Any:
    """The emulated volume's profile from the CLI's options (None: no emulation asked for)."""
    if not options.emulate:
        return None
    try:
        from cutover_prep.local.volume import DEFAULT_PROFILE, InvalidProfile
    except ImportError:  # no mfusepy: demo_database says why in one line
        return DEFAULT_PROFILE_UNAVAILABLE
    try:
        return dataclasses.replace(DEFAULT_PROFILE, **options.storage)
    except InvalidProfile as exc:
        raise UsageProblem(str(exc)) from None


@contextlib.contextmanager
def _quiet_interpreter() -> Iterator[None]:
    """moto's Step Functions interpreter logs every failed state at ERROR with the whole state's
    repr (kilobytes a line); the run's own evidence and verdict say what failed, so the local
    run's terminal gets none of it (a stopped run's in-flight task made a wall of them)."""
    logger = logging.getLogger("moto.stepfunctions.parser")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


def _join_new_threads(before: set[threading.Thread], deadline: float) -> None:
    """After a stop, let the in-flight state's thread end while moto still answers (its handler's
    last AWS calls would otherwise go to the real endpoints once the mock is gone)."""
    for thread in set(threading.enumerate()) - before:
        if thread is not threading.current_thread():
            thread.join(max(0.0, deadline - time.monotonic()))


class Interrupted(Exception):
    """Ctrl-C once the run had started: the message says what happened to it (stopped, and what its cleanup
    removed or left; or it had ended) and where its evidence is. ``continues``: it ends the line
    ``_stop_and_clean`` began on stderr (so Ctrl-C is one line); else it is a line of its own."""

    def __init__(self, message: str, *, continues: bool = True) -> None:
        super().__init__(message)
        self.continues = continues


class _CtrlC:
    """SIGINT during a started run. While ``armed`` (the wait for the execution) it raises KeyboardInterrupt, and the
    run is stopped; otherwise (the start, the stop and its cleanup, writing the evidence and the saved state) it is
    only noted (``noted``), so what is written is written whole and the outcome is said after. One handler for the
    whole run, so no Ctrl-C falls between two sections and is told as one before the start. Installed in the main
    thread only (Python runs signal handlers there); a SIGINT the process ignores (SIG_IGN) stays ignored."""

    def __init__(self) -> None:
        self.armed = self.noted = False
        self._previous: Any = None

    def __enter__(self) -> _CtrlC:
        if threading.current_thread() is threading.main_thread():
            previous = signal.getsignal(signal.SIGINT)
            if callable(previous):  # Python's default_int_handler, or the caller's own
                self._previous = previous
                signal.signal(signal.SIGINT, self._on_sigint)
        return self

    def _on_sigint(self, signum: int, frame: Any) -> None:
        if self.armed:
            self.armed = False
            raise KeyboardInterrupt
        self.noted = True

    def __exit__(self, *exc: Any) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


def _stop_and_clean(aws: LocalAws, store: Store, execution_arn: str, run_input: dict[str, Any]) -> str:
    """Stop the execution, let its in-flight step end, then drop what the write test left (as the
    workflow's CleanupScratch step would have)."""
    # one line: begun now (the stop and the cleanup take seconds), ended by the CLI with the outcome
    print("cutover-prep: interrupted: stopping the run and removing its scratch objects ... ", end="",
          file=sys.stderr, flush=True)
    aws.stop(execution_arn)
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    while time.monotonic() < deadline and any(
            i.get("status") == ScratchStatus.CREATING for i in store.scratch_objects(run_input["run_id"])):
        time.sleep(0.2)  # a write point still running in-process drops its own schema when it ends
    run = RunContext.model_validate({**run_input,
                                     "instance": (store.get_run(run_input["run_id"]) or {}).get("instance") or {}})
    result = cleanup_scratch(run, store=store, open_driver=lambda r, database: deps.open_bench(r, database))
    if result["left"]:
        return f"run {run_input['run_id']} stopped; scratch objects LEFT in the database: {', '.join(result['left'])}"
    removed = f"; removed {', '.join(result['removed'])}" if result["removed"] else "; it had written nothing"
    return f"run {run_input['run_id']} stopped{removed}"


def _execute(spec: ConnectionSpec, options: LocalOptions, emulation: Emulation | None = None,
             faults: dict[str, list[Any]] | None = None, *, resume: bool = False) -> dict[str, Any]:
    """``faults``: handler module -> faults the harness applies (tests that cut a run short); ``resume``: load the
    run's saved state from its evidence folder first (``check_reuse`` has said it may)."""
    started = time.monotonic()
    out = evidence_dir(options.out, str(options.run_id))
    # the database the user typed (or the embedded one) is the target: its host may receive the
    # credentials; TLS as its DSN asks, else when the server offers it (a unix socket: none)
    env = {"ALLOWED_DB_HOSTS": spec.host, "CUTOVER_PREP_TLS_CA": spec.tls_ca or "",
           "CUTOVER_PREP_TLS": "disable" if spec.host.startswith("/") else spec.tls or LOCAL_TLS}
    with LocalAws(env=env) as aws, _quiet_interpreter():
        aws.faults.update(faults or {})
        identifier = LOCAL_IDENTIFIER
        # bound to the stand-in instance the run targets, as a deployed run requires (secret_binding)
        secret_arn = aws.create_secret(SECRET_NAME, {
            "username": spec.user, "password": spec.password, "engine": spec.engine,
            "host": spec.host, "port": spec.port, "dbname": spec.database, "dbInstanceIdentifier": identifier},
            tags={"_custom_id_": SECRET_SUFFIX})  # moto.utilities.id_generator.TAG_KEY_CUSTOM_ID
        if secret_arn != LOCAL_SECRET_ARN:
            raise RuntimeError(f"the local secret is {secret_arn}, not {LOCAL_SECRET_ARN}: a restart would differ")
        emulation = emulation or Emulation(reason=DSN_REASON)
        aws.create_instance(identifier, engine=family(spec.engine).rds_engines[0],
                            db_name=spec.database, engine_version=_server_version(spec), **emulation.instance())
        run_input = _run_input(spec, options, secret_arn)
        run_id = str(options.run_id)
        store = Store(dynamodb=aws.client("dynamodb"), s3=aws.client("s3"), table=aws.table, bucket=aws.bucket)
        if resume:  # the saved run's items and objects first: the workflow restarts it as a deployed restart does
            say(f"resuming run {run_id} from {out}: {state.load(aws, out)} saved records; its finished units "
                "are not read again")
        evidence = snapshot_writer(emulation, lambda doc: store.put_json(evidence_key(run_id, EMULATION_EVIDENCE), doc))
        # Written before the start (Discover's estimate reads the emulated volume's ceiling from it) and again
        # in Finalize's own thread just before it reads it: never while a thread of the run may be reading it
        # (moto's S3 closes the object being replaced under a reader: see local.harness)
        evidence()
        aws.hooks[FINALIZE_MODULE] = evidence
        before = set(threading.enumerate())
        scale = emulation.profile.time_scale if emulation.active and emulation.profile.limits else None
        progress = Progress(store, run_id, options.progress, time_scale=scale)
        interrupted: str | None = None  # the stop's outcome, when Ctrl-C stopped the run
        ended_first = False  # Ctrl-C came as the wait returned: the execution had ended
        with _CtrlC() as ctrl_c:
            execution_arn = aws.start(run_input)
            try:
                ctrl_c.armed = True
                if ctrl_c.noted:  # during the start
                    raise KeyboardInterrupt
                desc = aws.wait(execution_arn, timeout_s=6 * 3600, poll_s=1.0, on_poll=progress.poll)
                ctrl_c.armed = False
            except KeyboardInterrupt:
                ctrl_c.armed = ctrl_c.noted = False  # a second Ctrl-C does not cut the stop and cleanup short
                progress.close(interrupted=True)
                desc = aws.describe(execution_arn)
                if desc["status"] == "RUNNING":
                    interrupted = _stop_and_clean(aws, store, execution_arn, run_input)
                    _join_new_threads(before, time.monotonic() + STOP_GRACE_SECONDS)
                    desc = aws.describe(execution_arn)
                else:
                    ended_first = True
                ctrl_c.noted = False
            progress.close()
            summary = _write_evidence(aws, store, out, run_id, desc, started)  # whole, whatever Ctrl-C says now
        if interrupted is not None:
            resumes = " (the same command resumes it)" if options.dsn else ""  # the demo's database is built anew
            raise Interrupted(f"{interrupted}; its evidence so far: {out}{resumes}")
        if ended_first or ctrl_c.noted:
            raise Interrupted(f"run {run_id} had ended ({desc['status']}) when interrupted; its evidence: {out}",
                              continues=False)
        return summary


def _write_evidence(aws: LocalAws, store: Store, out: Path, run_id: str, desc: dict[str, Any],
                    started: float) -> dict[str, Any]:
    """The run's evidence objects, ``execution.json`` and the saved state (``local.state``) in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    s3 = aws.client("s3")
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=aws.bucket, Prefix=f"runs/{run_id}/"):
        for obj in page.get("Contents", []):
            name = obj["Key"].removeprefix(f"runs/{run_id}/")
            if name.startswith("map-results/"):
                continue
            path = evidence_file(out, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(s3.get_object(Bucket=aws.bucket, Key=obj["Key"])["Body"].read())
    summary = {"run_id": run_id, "status": desc["status"], "error": desc.get("error"),
               "cause": desc.get("cause"), "output": json.loads(desc["output"]) if desc.get("output") else None,
               "run": store.get_run(run_id), "seconds": round(time.monotonic() - started, 1),
               "out": str(out)}
    (out / "execution.json").write_text(json.dumps(summary, indent=1, default=str))
    state.save(aws, out, run_id)
    return summary
