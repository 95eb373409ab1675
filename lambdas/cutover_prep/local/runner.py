"""``cutover-prep local``: the whole workflow on this machine, against a DSN or a sample DB."""

from __future__ import annotations

import contextlib
import json
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from cutover_prep.engines import ConnectionSpec, EngineError, open_engine
from cutover_prep.local.harness import LocalAws
from cutover_prep.store import Store

DEMO_DATABASE = "cutover_demo"
SCHEMES = {"postgres": "postgres", "postgresql": "postgres", "oracle": "oracle"}


class UsageProblem(Exception):
    """A bad option or DSN: reported in one line, exit code 2."""


class TargetUnreachable(Exception):
    """The database cannot be reached: reported in one line, exit code 3."""


def parse_dsn(dsn: str) -> ConnectionSpec:
    """``postgresql://user:pw@host:5432/db`` or ``oracle://user:pw@host:1521/service``."""
    parts = urlsplit(dsn)
    engine = SCHEMES.get(parts.scheme)
    if engine is None:
        raise UsageProblem(f"--dsn must start with postgresql:// or oracle://, got {parts.scheme or dsn!r}")
    try:
        port = parts.port
    except ValueError:
        raise UsageProblem("--dsn has a port that is not a number") from None
    database = unquote(parts.path.lstrip("/"))
    if not parts.hostname or not parts.username or not database:
        raise UsageProblem(f"--dsn needs user, host and database: {engine}://USER:PASSWORD@HOST:PORT/DATABASE")
    return ConnectionSpec(engine=engine, host=parts.hostname, port=port or (5432 if engine == "postgres" else 1521),
                          database=database, user=unquote(parts.username),
                          password=unquote(parts.password or ""))


@dataclass
class LocalOptions:
    dsn: str | None = None
    out: Path | None = None
    size_mb: int = 300
    warmup: dict[str, Any] = field(default_factory=dict)
    benchmark: dict[str, Any] = field(default_factory=dict)
    run_id: str | None = None
    progress: bool = True


@contextlib.contextmanager
def embedded_postgres(size_mb: int) -> Iterator[ConnectionSpec]:
    """Start pgserver in a temporary directory with a generated sample database."""
    import pgserver
    import psycopg

    from cutover_prep.local.sample_db import create_sample

    with tempfile.TemporaryDirectory(prefix="cutover-prep-pg-") as pgdata:
        server = pgserver.get_server(pgdata, cleanup_mode="stop")
        try:
            socket_dir = urlsplit(server.get_uri()).query.removeprefix("host=")
            with psycopg.connect(host=socket_dir, dbname="postgres", user="postgres", autocommit=True) as conn:
                conn.execute(f"CREATE DATABASE {DEMO_DATABASE}")
            create_sample(f"host={socket_dir} dbname={DEMO_DATABASE} user=postgres", size_mb=size_mb)
            yield ConnectionSpec(engine="postgres", host=socket_dir, port=5432, database=DEMO_DATABASE,
                                 user="postgres", password="")
        finally:
            server.cleanup()


def check_reachable(spec: ConnectionSpec) -> None:
    try:
        open_engine(spec).close()
    except EngineError as exc:
        raise TargetUnreachable(str(exc)) from None


class Progress:
    """A progress bar fed from the run item's counters in DynamoDB (units, MB, MB/s)."""

    NON_TTY_INTERVAL_S = 10.0  # a log file or CI console gets a frame every 10 s, not 5 per second

    def __init__(self, store: Store, run_id: str, enabled: bool) -> None:
        self.store, self.run_id, self.enabled = store, run_id, enabled
        self.bar: Any = None
        self._tty = sys.stderr.isatty()
        self._drawn = 0.0

    def poll(self, *, final: bool = False) -> None:
        if not self.enabled:
            return
        if not (self._tty or final) and time.monotonic() - self._drawn < self.NON_TTY_INTERVAL_S:
            return
        run = self.store.get_run(self.run_id)
        if not run or "bytes_planned" not in run:
            return
        self._drawn = time.monotonic()
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=run["bytes_planned"], unit="B", unit_scale=True, unit_divisor=1024,
                            desc="warm-up", dynamic_ncols=True)
        self.bar.n = min(run.get("bytes_read", 0), self.bar.total)
        self.bar.set_postfix_str(f"{run.get('units_done', 0)}/{run.get('units_total', 0)} units, "
                                 f"{run.get('units_failed', 0)} failed", refresh=False)
        if run.get("benchmark_points"):  # planned: from then on, to the end of the run
            done = sum(1 for p in self.store.points(self.run_id) if p.get("status") in ("DONE", "FAILED")
                       and not p["point_id"].startswith("probe-"))
            self.bar.set_description_str(f"benchmark {done}/{run.get('benchmark_points', 0)} points", refresh=False)
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.poll(final=True)
            self.bar.close()


def _server_version(spec: ConnectionSpec) -> str | None:
    """The database's own version for the stand-in RDS instance (moto would say postgres 9.3.3)."""
    if spec.engine != "postgres":
        return None
    import psycopg

    try:
        with psycopg.connect(host=spec.host, port=spec.port, dbname=spec.database, user=spec.user,
                             password=spec.password or None, connect_timeout=10) as conn:
            return str(conn.execute("SHOW server_version").fetchone()[0]).split()[0]
    except psycopg.Error:
        return None


def run_local(options: LocalOptions) -> dict[str, Any]:
    """Run the workflow; return the execution's description plus where the evidence is."""
    warnings.filterwarnings("ignore", message="No application metrics to publish")
    warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR")
    if options.dsn:
        spec = parse_dsn(options.dsn)
        check_reachable(spec)
        return _execute(spec, options)
    with embedded_postgres(options.size_mb) as spec:
        return _execute(spec, options)


def _execute(spec: ConnectionSpec, options: LocalOptions) -> dict[str, Any]:
    started = time.monotonic()
    with LocalAws() as aws:
        secret_arn = aws.create_secret("cutover-prep/local", {
            "username": spec.user, "password": spec.password, "engine": spec.engine,
            "host": spec.host, "port": spec.port, "dbname": spec.database})
        identifier = "local-target"
        aws.create_instance(identifier, engine="postgres" if spec.engine == "postgres" else "oracle-ee",
                            db_name=spec.database, engine_version=_server_version(spec))
        run_input: dict[str, Any] = {
            "target": {"db_instance_identifier": identifier, "secret_arn": secret_arn, "engine": spec.engine,
                       "host": spec.host, "port": spec.port, "database": spec.database},
            "warmup": options.warmup,
            "benchmark": options.benchmark,
        }
        run_id = options.run_id or f"local-{time.strftime('%Y%m%dT%H%M%S')}"
        run_input["run_id"] = run_id
        execution_arn = aws.start(run_input)
        store = Store(dynamodb=aws.client("dynamodb"), s3=aws.client("s3"), table=aws.table, bucket=aws.bucket)
        progress = Progress(store, run_id, options.progress)
        try:
            desc = aws.wait(execution_arn, timeout_s=6 * 3600, poll_s=1.0, on_poll=progress.poll)
        finally:
            progress.close()
        out = options.out or Path("out") / run_id
        out.mkdir(parents=True, exist_ok=True)
        s3 = aws.client("s3")
        for obj in s3.list_objects_v2(Bucket=aws.bucket, Prefix=f"runs/{run_id}/").get("Contents", []):
            name = obj["Key"].removeprefix(f"runs/{run_id}/")
            if name.startswith("map-results/"):
                continue
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            (out / name).write_bytes(s3.get_object(Bucket=aws.bucket, Key=obj["Key"])["Body"].read())
        summary = {"run_id": run_id, "status": desc["status"], "error": desc.get("error"),
                   "cause": desc.get("cause"), "output": json.loads(desc["output"]) if desc.get("output") else None,
                   "run": store.get_run(run_id), "seconds": round(time.monotonic() - started, 1),
                   "out": str(out)}
        (out / "execution.json").write_text(json.dumps(summary, indent=1, default=str))
        return summary
