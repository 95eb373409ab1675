"""``cutover-prep local``: the whole workflow on this machine, against a DSN (parsed by ``local/dsn.py``) or a sample
DB, with moto playing AWS (``local/harness.py``); the run id, its evidence folder, Ctrl-C and the evidence written."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cutover_prep import deps
from cutover_prep.benchmark.scratch import ScratchStatus
from cutover_prep.benchmark.steps import cleanup_scratch
from cutover_prep.dal.restart import check_restart
from cutover_prep.dal.store import EMULATION_EVIDENCE, Store, evidence_key
from cutover_prep.engines import ConnectionSpec, EngineError, open_engine
from cutover_prep.engines.registry import family
from cutover_prep.local import state
from cutover_prep.local.dsn import LOCAL_TLS, UsageProblem, parse_dsn
from cutover_prep.local.emulated import (
    DSN_REASON,
    Emulation,
    Storage,
    demo_database,
    demo_priority,
    snapshot_writer,
    unavailable,
)
from cutover_prep.local.harness import LocalAws
from cutover_prep.local.input_file import Sections
from cutover_prep.local.outcome import ExecutionEnd, LocalRun
from cutover_prep.local.progress import Progress
from cutover_prep.models.fields import RUN_ID
from cutover_prep.models.run_input import InvalidInput, RunIdReused, parse_run_input
from cutover_prep.models.steps import RunContext
from cutover_prep.workflows import FUNCTIONS

LOCAL_IDENTIFIER = "local-target"
FINALIZE_MODULE = FUNCTIONS["Finalize"].module  # reads the emulation evidence into the findings
DEFAULT_PROFILE_UNAVAILABLE = "the default profile (the emulator cannot be imported)"
_PLACEHOLDER_SECRET = "arn:aws:secretsmanager:us-east-1:000000000000:secret:cutover-prep/local"
# The secret the local run makes in its moto, under one ARN in every process (moto's custom id tag; it would end
# in six random letters): the run input names it, and a restart must name the same target (steps/validate_input.py)
SECRET_NAME, SECRET_SUFFIX = "cutover-prep/local", "LOCALS"
LOCAL_SECRET_ARN = f"arn:aws:secretsmanager:us-east-1:123456789012:secret:{SECRET_NAME}-{SECRET_SUFFIX}"


class TargetUnreachable(Exception):
    """The database cannot be reached: reported in one line, exit code 3."""


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
    """The options as the workflow will validate them, before anything is started (the demo's before its
    database is built: without ``spec``)."""
    try:
        parse_run_input(_run_input(spec, options, _PLACEHOLDER_SECRET))
    except InvalidInput as exc:
        raise UsageProblem(str(exc).replace("target.", "--dsn ")) from None


@dataclass
class LocalOptions:
    dsn: str | None = None
    out: Path | None = None
    size_mb: int = 300
    sections: Sections = field(default_factory=Sections)  # the run input's warmup, benchmark, verdict, preflight
    run_id: str | None = None
    progress: bool = True
    storage: Storage = field(default_factory=Storage)  # the emulated volume's options (the demo's)
    emulate: bool = True  # the demo database on an emulated restored volume, where FUSE can be had
    databases: str | None = None  # target.databases: "all" (--all-databases); None: the DSN's database (selection)


def check_reachable(spec: ConnectionSpec) -> None:
    try:
        open_engine(spec).close()
    except EngineError as exc:
        raise TargetUnreachable(str(exc)) from None


def _server_version(spec: ConnectionSpec) -> str | None:
    """The database's own version for the stand-in RDS instance (moto would say postgres 9.3.3)."""
    ask = family(spec.engine).server_version
    return ask(spec) if ask else None


STOP_GRACE_SECONDS = 30.0


def run_local(options: LocalOptions) -> LocalRun:
    """Run the workflow; its outcome, with where the evidence is."""
    warnings.filterwarnings("ignore", message="No application metrics to publish")
    options = replace(options, run_id=options.run_id or f"local-{time.strftime('%Y%m%dT%H%M%S')}")
    out = evidence_dir(options.out, str(options.run_id))
    spec = parse_dsn(options.dsn) if options.dsn else None
    check_options(options, spec)
    if spec is not None and options.storage.given():
        flags = ", ".join(f"--{name.replace('_', '-')}" for name in options.storage.given())
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
    used is refused by name (``UsageProblem``), as the deployed workflow refuses it (``dal.restart.check_restart``,
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


def _run_input(spec: ConnectionSpec | None, options: LocalOptions, secret_arn: str) -> dict[str, Any]:
    """The workflow's input for this local run (ValidateInput's, and the restart check's); without ``spec``, the
    target the demo's database will be before it is built."""
    database = {"engine": spec.engine, "host": spec.host, "port": spec.port, "database": spec.database} \
        if spec is not None else {}
    sections = options.sections
    return {"target": {"db_instance_identifier": LOCAL_IDENTIFIER, "secret_arn": secret_arn, **database,
                       **({"databases": options.databases} if options.databases else {})},
            "warmup": sections.warmup, "benchmark": sections.benchmark,
            **({"preflight": sections.preflight} if sections.preflight else {}),
            **({"verdict": sections.verdict} if sections.verdict else {}),
            "run_id": str(options.run_id)}


def _demo(options: LocalOptions) -> LocalRun:
    """The run on the embedded sample database (built for this run)."""
    profile = _profile(options)
    say(f"building the {options.size_mb:,} MB sample database (embedded PostgreSQL"
        + ("" if profile is None else ", on the emulated restored volume when FUSE can be had")
        + "; takes a while) ...")
    building = time.monotonic()
    with contextlib.ExitStack() as stack:
        if profile is not None and unavailable() is None:  # the emulated demo (root): decision 56
            announce = None if os.geteuid() != 0 else (lambda nice: say(  # only root may raise a priority
                f"raising the demo's processes (moto, the handlers, the embedded PostgreSQL) to nice {nice}, the "
                "emulated volume's to -10: in AWS they would not share this machine's CPU"))
            if stack.enter_context(demo_priority(announce=announce)) is None and announce is not None:
                say("the priority could not be raised: the demo runs at the usual one")
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
        return dataclasses.replace(DEFAULT_PROFILE, **options.storage.given())
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


def _stop_and_clean(aws: LocalAws, store: Store, execution_arn: str, run: RunContext) -> str:
    """Stop the execution, let its in-flight step end, then drop what the write test left (as the
    workflow's CleanupScratch step would have, with the instance the run recorded)."""
    # one line: begun now (the stop and the cleanup take seconds), ended by the CLI with the outcome
    print("cutover-prep: interrupted: stopping the run and removing its scratch objects ... ", end="",
          file=sys.stderr, flush=True)
    aws.stop(execution_arn)
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    while time.monotonic() < deadline and any(
            i.status == ScratchStatus.CREATING for i in store.scratch_objects(run.run_id)):
        time.sleep(0.2)  # a write point still running in-process drops its own schema when it ends
    item = store.get_run(run.run_id)
    run = run.model_copy(update={"instance": (item.instance if item is not None else None) or {}})
    result = cleanup_scratch(run, store=store, open_driver=lambda r, database: deps.open_bench(r, database))
    if result.left:
        return f"run {run.run_id} stopped; scratch objects LEFT in the database: {', '.join(result.left)}"
    removed = f"; removed {', '.join(result.removed)}" if result.removed else "; it had written nothing"
    return f"run {run.run_id} stopped{removed}"


def _execute(spec: ConnectionSpec, options: LocalOptions, emulation: Emulation | None = None,
             faults: dict[str, list[Any]] | None = None, *, resume: bool = False) -> LocalRun:
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
        progress = Progress(store, run_id, options.progress, time_scale=scale, steps=lambda: list(aws.steps))
        interrupted: str | None = None  # the stop's outcome, when Ctrl-C stopped the run
        ended_first = False  # Ctrl-C came as the wait returned: the execution had ended
        with _CtrlC() as ctrl_c:
            execution_arn = aws.start(run_input)
            try:
                ctrl_c.armed = True
                if ctrl_c.noted:  # during the start
                    raise KeyboardInterrupt
                end = ExecutionEnd.model_validate(aws.wait(execution_arn, timeout_s=6 * 3600, poll_s=1.0,
                                                           on_poll=progress.poll))
                ctrl_c.armed = False
            except KeyboardInterrupt:
                ctrl_c.armed = ctrl_c.noted = False  # a second Ctrl-C does not cut the stop and cleanup short
                progress.close(interrupted=True)
                end = ExecutionEnd.model_validate(aws.describe(execution_arn))
                if end.status == "RUNNING":
                    interrupted = _stop_and_clean(aws, store, execution_arn, RunContext.model_validate(run_input))
                    _join_new_threads(before, time.monotonic() + STOP_GRACE_SECONDS)
                    end = ExecutionEnd.model_validate(aws.describe(execution_arn))
                else:
                    ended_first = True
                ctrl_c.noted = False
            progress.close()
            summary = _write_evidence(aws, store, out, run_id, end, started)  # whole, whatever Ctrl-C says now
        if interrupted is not None:
            resumes = " (the same command resumes it)" if options.dsn else ""  # the demo's database is built anew
            raise Interrupted(f"{interrupted}; its evidence so far: {out}{resumes}")
        if ended_first or ctrl_c.noted:
            raise Interrupted(f"run {run_id} had ended ({end.status}) when interrupted; its evidence: {out}",
                              continues=False)
        return summary


def _write_evidence(aws: LocalAws, store: Store, out: Path, run_id: str, end: ExecutionEnd,
                    started: float) -> LocalRun:
    """The run's evidence objects, ``execution.json`` and the saved state (``local.state``) in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    s3 = aws.client("s3")
    for key in state.object_keys(s3, aws.bucket, f"runs/{run_id}/"):
        name = key.removeprefix(f"runs/{run_id}/")
        if name.startswith("map-results/"):
            continue
        path = evidence_file(out, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(s3.get_object(Bucket=aws.bucket, Key=key)["Body"].read())
    summary = LocalRun.of(run_id, end, store.get_run(run_id), seconds=round(time.monotonic() - started, 1),
                          out=str(out))
    (out / "execution.json").write_text(summary.document())
    state.save(aws, out, run_id)
    return summary
