"""What CloudWatch (``AWS/RDS``) recorded during each benchmark window, polled until it has arrived.

One ``GetMetricData`` call set covers the union of the windows: one query per metric and
statistic over [earliest start floored to the period, latest end ceiled to the period],
batched at most 500 queries a call and paginated with ``NextToken``. Each window then gets
the datapoints whose period overlaps it (the *expected* period starts).

Statistics: ``Average`` gives the points and the mean; ``Maximum`` gives ``max``. RDS
publishes one sample a minute, so at a 60 s period both are equal; at longer periods
``Maximum`` keeps the peak that an average would flatten.

A window is complete when every *required* metric has all its expected datapoints and
the window's last period has closed. *Optional* metrics (BurstBalance: gp2 storage and
burstable classes only; EBSIOBalance%/EBSByteBalance%: burstable-EBS instance classes
only) are collected when present and never block. RDS publishes datapoints minutes late,
so the workflow calls ``collect_windows`` repeatedly; on the last call (``final=True``)
anything absent is recorded as ``missing`` (required) or ``not_reported`` (optional with
no datapoint). Values are never invented nor interpolated.

Shared by ``enhanced``: the retry policy (throttling and transient errors) and
``MetricsAccessDenied``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple, TypedDict

from botocore.exceptions import (
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)
from pydantic import BaseModel, Field
from tenacity import retry, retry_if_exception, stop_after_attempt, wait_random_exponential

NAMESPACE = "AWS/RDS"
DIMENSION = "DBInstanceIdentifier"
DEFAULT_PERIOD = 60
STATISTICS = ("Average", "Maximum")
MAX_QUERIES_PER_CALL = 500
# CloudWatch keeps 60 s datapoints for 15 days, then only 5-minute ones (63 days).
ONE_MINUTE_RETENTION = timedelta(days=15)


class MetricSpec(NamedTuple):
    unit: str
    required: bool
    applies_to: str


RDS_METRICS: dict[str, MetricSpec] = {
    "ReadIOPS": MetricSpec("Count/Second", True, "all instances"),
    "ReadThroughput": MetricSpec("Bytes/Second", True, "all instances"),
    "ReadLatency": MetricSpec("Seconds", True, "all instances"),
    "WriteIOPS": MetricSpec("Count/Second", True, "all instances"),
    "WriteThroughput": MetricSpec("Bytes/Second", True, "all instances"),
    "DiskQueueDepth": MetricSpec("Count", True, "all instances"),
    "BurstBalance": MetricSpec("Percent", False, "gp2 storage (and burstable classes) only"),
    "EBSIOBalance%": MetricSpec("Percent", False, "burstable-EBS instance classes only"),
    "EBSByteBalance%": MetricSpec("Percent", False, "burstable-EBS instance classes only"),
}
REQUIRED_METRICS = tuple(name for name, spec in RDS_METRICS.items() if spec.required)
OPTIONAL_METRICS = tuple(name for name, spec in RDS_METRICS.items() if not spec.required)

# -- errors and retries (shared with enhanced) ----------------------------------------
TRANSIENT_CODES = frozenset({
    "Throttling", "ThrottlingException", "ThrottledException", "TooManyRequestsException", "RequestLimitExceeded",
    "RequestThrottled", "RequestThrottledException", "LimitExceededException", "ServiceUnavailable",
    "ServiceUnavailableException", "InternalFailure", "InternalServiceError", "InternalServiceFault",
    "RequestTimeout", "RequestTimeoutException",
})
ACCESS_DENIED_CODES = frozenset({"AccessDenied", "AccessDeniedException", "UnauthorizedOperation",
                                 "NotAuthorized"})
TRANSIENT_EXCEPTIONS = (EndpointConnectionError, ConnectionClosedError, ReadTimeoutError, ConnectTimeoutError)


class MetricsAccessDenied(PermissionError):
    """The function's role may not read the metrics: its IAM policy lacks ``action``."""

    error_type = "MetricsAccessDenied"

    def __init__(self, action: str, resource: str, detail: str = "") -> None:
        self.action, self.resource = action, resource
        super().__init__(f"{action} was denied on {resource}: grant it to the function's role"
                         + (f" ({detail})" if detail else ""))


class ErrorDetail(BaseModel):
    code: str | None = Field(None, alias="Code")
    message: str = Field("", alias="Message")


class ResponseMetadata(BaseModel):
    http_status_code: int | None = Field(None, alias="HTTPStatusCode")


class ErrorResponse(BaseModel):
    """What a ``ClientError`` says (its ``response``: the fields read)."""

    error: ErrorDetail = Field(ErrorDetail(), alias="Error")
    metadata: ResponseMetadata = Field(ResponseMetadata(), alias="ResponseMetadata")

    @classmethod
    def of(cls, exc: ClientError) -> ErrorResponse:
        return cls.model_validate(exc.response)


def error_code(exc: BaseException) -> str | None:
    return ErrorResponse.of(exc).error.code if isinstance(exc, ClientError) else None


def is_transient(exc: BaseException) -> bool:
    """Throttling, 5xx and connection errors: worth another try."""
    if isinstance(exc, ClientError):
        status = ErrorResponse.of(exc).metadata.http_status_code or 0
        return error_code(exc) in TRANSIENT_CODES or status >= 500
    return isinstance(exc, TRANSIENT_EXCEPTIONS)


aws_retry = retry(retry=retry_if_exception(is_transient), stop=stop_after_attempt(6),
                  wait=wait_random_exponential(multiplier=0.5, max=10), reraise=True)


@aws_retry
def call_aws(fn: Callable[..., dict[str, Any]], action: str, resource: str, **kwargs: Any) -> dict[str, Any]:
    """``fn(**kwargs)`` with retries; an access-denied answer becomes ``MetricsAccessDenied``."""
    try:
        return fn(**kwargs)
    except ClientError as exc:
        if error_code(exc) in ACCESS_DENIED_CODES:
            raise MetricsAccessDenied(action, resource, ErrorResponse.of(exc).error.message) from None
        raise


# -- time -------------------------------------------------------------------------------
def parse_time(value: str | datetime, field: str = "time") -> datetime:
    """An aware UTC datetime from an ISO 8601 string or datetime; a naive one is refused."""
    try:
        dt = value if isinstance(value, datetime) else datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{field} {value!r} is not an ISO 8601 time") from None
    if dt.tzinfo is None:
        raise ValueError(f"{field} {value!r} has no timezone: give UTC times such as 2026-01-31T12:00:00Z")
    return dt.astimezone(UTC)


def floor_to_period(dt: datetime, period: int) -> datetime:
    seconds = int(dt.timestamp() // period * period)
    return datetime.fromtimestamp(seconds, UTC)


def ceil_to_period(dt: datetime, period: int) -> datetime:
    floored = floor_to_period(dt, period)
    return floored if floored == dt else floored + timedelta(seconds=period)


def expected_periods(start: datetime, end: datetime, period: int) -> list[datetime]:
    """Start of every period that overlaps [start, end)."""
    out, t = [], floor_to_period(start, period)
    while t < end:
        out.append(t)
        t += timedelta(seconds=period)
    return out


class WindowSpec(TypedDict):
    """A point's window as the benchmark hands it in: ISO 8601 times with a timezone, or aware datetimes."""

    point_id: str
    started_at: str | datetime
    finished_at: str | datetime


@dataclass(frozen=True)
class Window:
    point_id: str
    start: datetime
    end: datetime


def parse_windows(windows: list[WindowSpec]) -> list[Window]:
    parsed, seen = [], set()
    for w in windows:
        pid = str(w["point_id"])
        start = parse_time(w["started_at"], f"{pid}: started_at")
        end = parse_time(w["finished_at"], f"{pid}: finished_at")
        if end <= start:
            raise ValueError(f"{pid}: finished_at {end.isoformat()} is not after started_at {start.isoformat()}")
        if pid in seen:
            raise ValueError(f"point_id {pid} appears in two windows")
        seen.add(pid)
        parsed.append(Window(pid, start, end))
    return parsed


def align_note(window: WindowSpec, period: int = DEFAULT_PERIOD) -> str | None:
    """A plain note when the window (its ``started_at`` and ``finished_at``) cannot be isolated by ``period``-second
    datapoints."""
    return _align_note(parse_time(window["started_at"], "started_at"), parse_time(window["finished_at"], "finished_at"),
                       period)


def _align_note(start: datetime, end: datetime, period: int) -> str | None:
    seconds = (end - start).total_seconds()
    if seconds < period:
        return (f"window {seconds:.0f} s is shorter than CloudWatch's {period} s period: each datapoint mixes "
                "this point with its neighbours")
    outside = (start - floor_to_period(start, period)).total_seconds() + \
        (ceil_to_period(end, period) - end).total_seconds()
    if outside >= 1:
        return (f"window {seconds:.0f} s is not aligned to the {period} s period: its first and last datapoints "
                f"also cover {outside:.0f} s outside it")
    return None


# -- GetMetricData ------------------------------------------------------------------------
class MetricDataResult(BaseModel):
    """One query's datapoints in a GetMetricData answer."""

    id: str = Field(alias="Id")
    status_code: str = Field("Complete", alias="StatusCode")
    timestamps: list[datetime] = Field([], alias="Timestamps")
    values: list[float] = Field([], alias="Values")


class MetricDataMessage(BaseModel):
    value: str | None = Field(None, alias="Value")


class MetricDataPage(BaseModel):
    """One page of a GetMetricData answer (the fields read)."""

    results: list[MetricDataResult] = Field([], alias="MetricDataResults")
    messages: list[MetricDataMessage] = Field([], alias="Messages")
    next_token: str | None = Field(None, alias="NextToken")


def _queries(identifier: str, metrics: Mapping[str, MetricSpec], period: int) -> list[dict[str, Any]]:
    """The queries (GetMetricData's ``MetricDataQueries``); the Id encodes the metric's position and the statistic."""
    return [{"Id": f"m{i}_{stat.lower()}", "ReturnData": True, "MetricStat": {
        "Metric": {"Namespace": NAMESPACE, "MetricName": name,
                   "Dimensions": [{"Name": DIMENSION, "Value": identifier}]},
        "Period": period, "Stat": stat}} for i, name in enumerate(metrics) for stat in STATISTICS]


def _batches(items: list[Any], size: int) -> Iterator[list[Any]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def _pages(cloudwatch: Any, queries: list[dict[str, Any]], start: datetime, end: datetime,
           resource: str) -> Iterator[MetricDataPage]:
    kwargs: dict[str, Any] = {"MetricDataQueries": queries, "StartTime": start, "EndTime": end,
                              "ScanBy": "TimestampAscending"}
    previous = None
    while True:
        page = MetricDataPage.model_validate(call_aws(cloudwatch.get_metric_data, "cloudwatch:GetMetricData",
                                                      resource, **kwargs))
        yield page
        if not page.next_token or page.next_token == previous:
            return
        kwargs["NextToken"] = previous = page.next_token


def fetch_series(cloudwatch: Any, identifier: str, start: datetime, end: datetime, period: int = DEFAULT_PERIOD,
                 metrics: Mapping[str, MetricSpec] = RDS_METRICS) -> tuple[dict[str, dict[str, dict[datetime, float]]],
                                                                           list[str]]:
    """metric -> statistic -> {period start: value} between start and end, and notes from CloudWatch."""
    queries = _queries(identifier, metrics, period)
    names = {f"m{i}": name for i, name in enumerate(metrics)}
    series: dict[str, dict[str, dict[datetime, float]]] = {n: {s: {} for s in STATISTICS} for n in metrics}
    notes: list[str] = []
    resource = f"{NAMESPACE} {DIMENSION}={identifier}"
    for batch in _batches(queries, MAX_QUERIES_PER_CALL):
        for page in _pages(cloudwatch, batch, start, end, resource):
            notes += [m.value for m in page.messages if m.value]
            for result in page.results:
                prefix, _, stat = result.id.partition("_")
                name = names[prefix]
                _check_status(result, name, resource, notes)
                target = series[name][stat.capitalize()]
                for ts, value in zip(result.timestamps, result.values, strict=False):
                    target[floor_to_period(ts.astimezone(UTC), period)] = float(value)
    return series, notes


def _check_status(result: MetricDataResult, name: str, resource: str, notes: list[str]) -> None:
    status = result.status_code
    if status == "Forbidden":
        raise MetricsAccessDenied("cloudwatch:GetMetricData", f"{resource} {name}")
    if status == "InternalError":
        notes.append(f"CloudWatch answered InternalError for {name}: its datapoints may be incomplete this poll")


# -- assigning datapoints to windows --------------------------------------------------------
def _status(expected: int, arrived: int, required: bool, settled: bool) -> str:
    if arrived == expected:
        return "complete"
    if not settled:
        return "pending"
    if arrived:
        return "partial"
    return "missing" if required else "not_reported"


@dataclass(frozen=True)
class MetricWindow:
    """One metric over one window: the datapoints that arrived, those still absent, their mean and peak."""

    unit: str
    required: bool
    expected: int
    arrived: int
    points: list[list[str | float]]  # [period start (ISO), average]
    absent: list[str]
    mean: float | None
    max: float | None
    status: str  # complete, pending, partial, missing, not_reported


@dataclass(frozen=True)
class WindowResult:
    """What CloudWatch holds for one point's window."""

    started_at: str
    finished_at: str
    complete: bool
    expected_periods: int
    metrics: dict[str, MetricWindow]
    notes: list[str]


@dataclass(kw_only=True)
class Collected:
    """One poll of every window (``collect_windows``: cloudwatch.json, its keys in this order)."""

    complete: bool = True
    final: bool
    polled_at: str
    namespace: str = NAMESPACE
    db_instance_identifier: str
    period: int
    statistics: list[str] = field(default_factory=lambda: list(STATISTICS))
    windows: dict[str, WindowResult] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _metric_result(spec: MetricSpec, starts: list[datetime], values: dict[str, dict[datetime, float]],
                   settled: bool) -> MetricWindow:
    averages = values["Average"]
    got = [t for t in starts if t in averages]
    means = [averages[t] for t in got]
    peaks = [values["Maximum"].get(t, averages[t]) for t in got]
    return MetricWindow(unit=spec.unit, required=spec.required, expected=len(starts), arrived=len(got),
                        points=[[t.isoformat(), averages[t]] for t in got],
                        absent=[t.isoformat() for t in starts if t not in averages],
                        mean=round(sum(means) / len(means), 6) if means else None,
                        max=max(peaks) if peaks else None,
                        status=_status(len(starts), len(got), spec.required, settled))


def _window_notes(w: Window, period: int, now: datetime, last_closes: datetime) -> list[str]:
    notes = []
    note = _align_note(w.start, w.end, period)
    if note:
        notes.append(note)
    if now < last_closes:
        notes.append(f"the window ended {(now - w.end).total_seconds():.0f} s before this poll and its last "
                      f"{period} s period closes at {last_closes.isoformat()}: it cannot be complete yet")
    if period < 300 and w.start < now - ONE_MINUTE_RETENTION:
        notes.append(f"the window is older than 15 days: CloudWatch no longer keeps {period} s datapoints for it")
    return notes


def _window_result(w: Window, series: dict[str, dict[str, dict[datetime, float]]],
                   metrics: Mapping[str, MetricSpec], period: int, final: bool, now: datetime) -> WindowResult:
    starts = expected_periods(w.start, w.end, period)
    last_closes = ceil_to_period(w.end, period)
    required_ok = all(all(t in series[n]["Average"] for t in starts) for n, s in metrics.items() if s.required)
    complete = required_ok and now >= last_closes
    settled = final or complete
    return WindowResult(started_at=w.start.isoformat(), finished_at=w.end.isoformat(), complete=complete,
                        expected_periods=len(starts),
                        metrics={n: _metric_result(s, starts, series[n], settled) for n, s in metrics.items()},
                        notes=_window_notes(w, period, now, last_closes))


def collect_windows(cloudwatch: Any, db_instance_identifier: str, windows: list[WindowSpec], *,
                    period: int = DEFAULT_PERIOD, final: bool = False, now: datetime | None = None,
                    metrics: Mapping[str, MetricSpec] = RDS_METRICS) -> dict[str, Any]:
    """One poll: what CloudWatch holds for each window, and whether everything has arrived.

    ``missing`` lists ``point_id/metric`` for required metrics still absent (wholly or
    partly) on the final poll; ``pending`` lists those still awaited on earlier polls.
    """
    if period < 60 or period % 60:
        raise ValueError(f"period {period} s: AWS/RDS metrics have 60 s resolution, use a multiple of 60")
    now = parse_time(now, "now") if now else datetime.now(UTC)
    parsed = parse_windows(windows)
    result = Collected(final=final, polled_at=now.isoformat(), db_instance_identifier=db_instance_identifier,
                       period=period)
    if parsed:
        start = floor_to_period(min(w.start for w in parsed), period)
        end = ceil_to_period(max(w.end for w in parsed), period)
        series, result.notes = fetch_series(cloudwatch, db_instance_identifier, start, end, period, metrics)
        for w in parsed:
            window = result.windows[w.point_id] = _window_result(w, series, metrics, period, final, now)
            for name, m in window.metrics.items():
                if m.required and m.status in ("missing", "partial"):
                    result.missing.append(f"{w.point_id}/{name}")
                elif m.required and m.status == "pending":
                    result.pending.append(f"{w.point_id}/{name}")
        result.complete = all(w.complete for w in result.windows.values())
    return asdict(result)
