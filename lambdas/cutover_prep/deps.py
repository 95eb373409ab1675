"""Dependencies of the handlers, built once per Lambda container and injectable in tests."""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import cache
from typing import Any

import boto3
from botocore.config import Config

from cutover_prep import engines
from cutover_prep.access.connection import connection_spec, secrets_manager_reader, secrets_manager_tags
from cutover_prep.dal.store import Store
from cutover_prep.engines import ConnectionSpec, Engine, registry
from cutover_prep.models.steps import RunContext
from cutover_prep.models.warmup import Warmup
from cutover_prep.settings import get_settings

# One engine per target and thread, with the thread that took it: an engine of a thread that has
# ended (locally each invocation may run in a thread of its own) is closed when the next is taken.
_engines: dict[tuple[str, str, int, str, str, str | None, int], tuple[threading.Thread, Engine]] = {}
_engines_lock = threading.Lock()


@cache
def client(service: str) -> Any:
    return boto3.client(service)


@cache
def progress_client() -> Any:
    """An RDS client for sampling the storage progress (``restore.progress``): one attempt, short timeouts,
    so that a throttled or unreachable RDS API costs a step seconds, not minutes (it is a gap)."""
    return boto3.client("rds", config=Config(connect_timeout=3, read_timeout=5,
                                             retries={"max_attempts": 1, "mode": "standard"}))


@cache
def pricing_client() -> Any:
    """The Price List API's client, in its own region (it answers from few: ``pricing.book``), with short
    timeouts: an unreachable API costs the comparison seconds, then the shipped price file is used."""
    from cutover_prep.pricing.book import PRICING_REGION

    return boto3.client("pricing", region_name=PRICING_REGION,
                        config=Config(connect_timeout=5, read_timeout=10, retries={"max_attempts": 2}))


def store() -> Store:
    settings = get_settings()
    return Store(dynamodb=client("dynamodb"), s3=client("s3"), table=settings.table_name,
                 bucket=settings.bucket_name)


def read_secret(arn: str) -> str:
    return secrets_manager_reader(client("secretsmanager"))(arn)


def read_secret_tags(arn: str) -> dict[str, str]:
    """The secret's tags: RDS's aws:rds:primaryDBInstanceArn names the instance of a secret it manages."""
    return secrets_manager_tags(client("secretsmanager"))(arn)


def open_engine(spec: ConnectionSpec, warmup: Warmup, *, call_timeout_seconds: float | None = None) -> Engine:
    return engines.open_engine(spec, call_timeout_seconds=call_timeout_seconds,
                               create_extension=warmup.create_extension)


def engine_opener(context: Any, margin_seconds: float) -> Callable[[ConnectionSpec, Warmup], Engine]:
    """``open_engine`` whose sessions' statement bound is this invocation's remaining time, when each is opened,
    less ``margin_seconds`` (their lock bound below it: ``engines.bounds``)."""
    return lambda spec, warmup: open_engine(spec, warmup, call_timeout_seconds=max(
        1.0, context.get_remaining_time_in_millis() / 1000 - margin_seconds))


def target_spec(run: RunContext) -> ConnectionSpec:
    """The run's target as the engines connect to it (``connection_spec``: the secret checked against the
    instance, the host against the endpoint and allow-list, the deployment's TLS mode)."""
    return connection_spec(run.target, run.instance, read_secret, read_tags=read_secret_tags)


def cached_engine(run: RunContext, call_timeout_seconds: float) -> Engine:
    """One connection per container and target, reused across invocations.

    ``connection_spec`` refuses a secret that belongs to another instance and a host that is neither
    the RDS endpoint nor allow-listed, and carries the deployment's TLS mode; ``engine.transport``
    then says what protected it."""
    spec = target_spec(run)
    me = threading.current_thread()
    key = (spec.engine, spec.host, spec.port, spec.database, spec.user, spec.tls, me.ident or 0)
    with _engines_lock:
        held = _engines.get(key)
    if held is not None and held[0] is me:
        return held[1]
    engine = open_engine(spec, run.warmup, call_timeout_seconds=call_timeout_seconds)
    with _engines_lock:
        replaced = _engines.get(key)  # an ended thread's, whose ident this thread was given
        _engines[key] = (me, engine)
        ended = [k for k, (thread, _) in _engines.items() if not thread.is_alive()]
        stale = [_engines.pop(k)[1] for k in ended] + ([replaced[1]] if replaced is not None else [])
    for old in stale:
        old.close()
    return engine


def activity_reader(run: RunContext, call_timeout_seconds: float = 10.0) -> Callable[[], dict[str, Any] | None]:
    """The warm-up's yield signal (issue 36 §1): the other sessions' read counters from the engine's family hook
    (``EngineFamily.activity``), on this container's engine; None from a family without one."""
    def read() -> dict[str, Any] | None:
        engine = cached_engine(run, call_timeout_seconds)  # the target's spec (its secret) read once, here
        hook = registry.family(engine.name).activity
        return None if hook is None else hook(engine).to_json()
    return read


def open_bench(run: RunContext, database: str | None, *, call_timeout_seconds: float | None = None) -> Any:
    """A benchmark driver for the run's target (its own connections, closed by the caller), from its
    engine's family in ``engines.registry``."""
    spec = target_spec(run)
    return registry.family(spec.engine).open_bench(spec, database, call_timeout_seconds=call_timeout_seconds,
                                                   create_extension=run.warmup.create_extension)


def bench_opener(context: Any, margin_seconds: float = 10) -> Callable[[RunContext, str | None], Any]:
    """``open_bench`` with a database call timeout just inside this invocation's remaining time."""
    timeout = context.get_remaining_time_in_millis() / 1000 - margin_seconds
    return lambda run, database: open_bench(run, database, call_timeout_seconds=timeout)


def reset() -> None:
    """Forget cached clients and connections (tests, the local runner between runs)."""
    client.cache_clear()
    progress_client.cache_clear()
    get_settings.cache_clear()
    with _engines_lock:
        held = [engine for _, engine in _engines.values()]
        _engines.clear()
    for engine in held:
        engine.close()
