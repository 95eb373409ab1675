"""What AWS recorded during each benchmark window: CloudWatch and Enhanced Monitoring.

CloudWatch (``AWS/RDS``, 1-minute ``Average`` per period): one ``GetMetricData`` over
the union of the windows, then each window gets the datapoints whose period overlaps
it. A window is complete when every *required* metric has all its expected datapoints;
*optional* metrics (BurstBalance: gp2/burstable only; EBSIOBalance%/EBSByteBalance%:
burstable-EBS instance classes only) are collected when present and never block. RDS
publishes datapoints a few minutes late: the workflow calls ``collect_windows`` again
until complete, and on the last call (``final``) whatever is absent is recorded as
``missing`` (required) or ``not_reported`` (optional) — values are never invented.

Enhanced Monitoring: one JSON document per interval in the log group ``RDSOSMetrics``,
stream = the instance's DbiResourceId; ``diskIO[]`` per device (readIOsPS, readKbPS,
avgReqSz, await, avgQueueLen, ...). An instance without it is reported, not an error.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError
from tenacity import retry, retry_if_exception, stop_after_attempt, wait_exponential

NAMESPACE = "AWS/RDS"
LOG_GROUP = "RDSOSMetrics"
# metric -> (unit, required for a window to be complete)
RDS_METRICS: dict[str, tuple[str, bool]] = {
    "ReadIOPS": ("Count/Second", True),
    "ReadThroughput": ("Bytes/Second", True),
    "ReadLatency": ("Seconds", True),
    "WriteIOPS": ("Count/Second", True),
    "WriteThroughput": ("Bytes/Second", True),
    "DiskQueueDepth": ("Count", True),
    "BurstBalance": ("Percent", False),
    "EBSIOBalance%": ("Percent", False),
    "EBSByteBalance%": ("Percent", False),
}
DISK_FIELDS = ("readIOsPS", "writeIOsPS", "readKbPS", "writeKbPS", "avgReqSz", "await", "avgQueueLen", "util", "tps")
RETRYABLE = {"Throttling", "ThrottlingException", "RequestLimitExceeded", "ServiceUnavailable", "InternalFailure"}


class MetricsAccessDenied(Exception):
    error_type = "MetricsAccessDenied"


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, ClientError) and exc.response["Error"]["Code"] in RETRYABLE


_retry = retry(retry=retry_if_exception(_retryable), stop=stop_after_attempt(5),
               wait=wait_exponential(multiplier=0.5, max=8), reraise=True)


def _dt(value: str | datetime) -> datetime:
    dt = value if isinstance(value, datetime) else datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def _floor(dt: datetime, period: int) -> datetime:
    epoch = int(dt.timestamp())
    return datetime.fromtimestamp(epoch - epoch % period, UTC)


def expected_starts(start: datetime, end: datetime, period: int) -> list[datetime]:
    """Period starts whose period overlaps [start, end)."""
    out, t = [], _floor(start, period)
    while t < end:
        out.append(t)
        t += timedelta(seconds=period)
    return out


def align_note(window: dict[str, Any], period: int = 60) -> str | None:
    seconds = (_dt(window["finished_at"]) - _dt(window["started_at"])).total_seconds()
    if seconds < period:
        return (f"window {seconds:.0f} s is shorter than CloudWatch's {period} s period: each datapoint mixes "
                "this point with its neighbours")
    return None


@_retry
def _get_page(cloudwatch: Any, **kwargs: Any) -> dict[str, Any]:
    try:
        return cloudwatch.get_metric_data(**kwargs)
    except ClientError as exc:
        if exc.response["Error"]["Code"] in ("AccessDenied", "AccessDeniedException"):
            raise MetricsAccessDenied(f"cloudwatch:GetMetricData was denied: {exc.response['Error']['Message']}") \
                from None
        raise


def fetch_series(cloudwatch: Any, identifier: str, start: datetime, end: datetime,
                 period: int = 60) -> dict[str, dict[datetime, float]]:
    """Every RDS metric's datapoints (period start -> Average) between start and end."""
    ids = {f"m{i}": name for i, name in enumerate(RDS_METRICS)}
    queries = [{"Id": qid, "ReturnData": True, "MetricStat": {
        "Metric": {"Namespace": NAMESPACE, "MetricName": name,
                   "Dimensions": [{"Name": "DBInstanceIdentifier", "Value": identifier}]},
        "Period": period, "Stat": "Average"}} for qid, name in ids.items()]
    series: dict[str, dict[datetime, float]] = {name: {} for name in RDS_METRICS}
    kwargs: dict[str, Any] = {"MetricDataQueries": queries, "StartTime": start, "EndTime": end,
                              "ScanBy": "TimestampAscending"}
    while True:
        page = _get_page(cloudwatch, **kwargs)
        for result in page.get("MetricDataResults", []):
            name = ids[result["Id"]]
            for ts, value in zip(result.get("Timestamps", []), result.get("Values", []), strict=False):
                series[name][_floor(_dt(ts), period)] = float(value)
        if not page.get("NextToken"):
            return series
        kwargs["NextToken"] = page["NextToken"]


def _metric_status(expected: int, arrived: int, required: bool, final: bool) -> str:
    if expected and arrived == expected:
        return "complete"
    if arrived:
        return "partial" if final else "pending"
    if not final:
        return "pending"
    return "missing" if required else "not_reported"


def collect_windows(cloudwatch: Any, db_instance_identifier: str, windows: list[dict[str, Any]], *,
                    period: int = 60, final: bool = False, now: datetime | None = None) -> dict[str, Any]:
    now = now or datetime.now(UTC)
    parsed = [(w["point_id"], _dt(w["started_at"]), _dt(w["finished_at"])) for w in windows]
    if not parsed:
        return {"complete": True, "polled_at": now.isoformat(), "period": period, "windows": {}, "missing": []}
    start = _floor(min(s for _, s, _ in parsed), period)
    end = _floor(max(e for _, _, e in parsed), period) + timedelta(seconds=period)
    series = fetch_series(cloudwatch, db_instance_identifier, start, end, period)
    out: dict[str, Any] = {}
    missing: list[str] = []
    for point_id, w_start, w_end in parsed:
        starts = expected_starts(w_start, w_end, period)
        metrics: dict[str, Any] = {}
        complete = True
        for name, (unit, required) in RDS_METRICS.items():
            got = [(t, series[name][t]) for t in starts if t in series[name]]
            values = [v for _, v in got]
            status = _metric_status(len(starts), len(got), required, final)
            metrics[name] = {"unit": unit, "required": required, "expected": len(starts), "arrived": len(got),
                             "points": [[t.isoformat(), v] for t, v in got],
                             "mean": round(sum(values) / len(values), 6) if values else None,
                             "max": max(values) if values else None, "status": status}
            if required and status != "complete":
                complete = False
                if final:
                    missing.append(f"{point_id}/{name}")
        notes = []
        note = align_note({"started_at": w_start, "finished_at": w_end}, period)
        if note:
            notes.append(note)
        if now < w_end + timedelta(seconds=period):
            complete = False
            notes.append("the window ended less than one period ago: its last datapoint cannot have arrived")
        out[point_id] = {"started_at": w_start.isoformat(), "finished_at": w_end.isoformat(), "complete": complete,
                         "metrics": metrics, "notes": notes}
    return {"complete": all(w["complete"] for w in out.values()), "polled_at": now.isoformat(), "period": period,
            "windows": out, "missing": missing}


# -- Enhanced Monitoring ---------------------------------------------------------------
def parse_record(message: str) -> dict[str, Any]:
    try:
        doc = json.loads(message)
    except ValueError:
        raise ValueError(f"not an Enhanced Monitoring record (not JSON): {message[:60]!r}") from None
    if not isinstance(doc, dict) or "timestamp" not in doc:
        raise ValueError("not an Enhanced Monitoring record (no timestamp)")
    disks = []
    for entry in doc.get("diskIO") or []:
        disk = {"device": entry.get("device", "?")}
        for f in DISK_FIELDS:
            if isinstance(entry.get(f), int | float):
                disk[f] = float(entry[f])
        disks.append(disk)
    return {"timestamp": _dt(doc["timestamp"]), "engine": doc.get("engine"), "instanceID": doc.get("instanceID"),
            "diskIO": disks}


@_retry
def _log_page(logs: Any, **kwargs: Any) -> dict[str, Any]:
    return logs.get_log_events(**kwargs)


def fetch_records(logs: Any, dbi_resource_id: str, start: datetime, end: datetime) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"logGroupName": LOG_GROUP, "logStreamName": dbi_resource_id,
                              "startTime": int(start.timestamp() * 1000), "endTime": int(end.timestamp() * 1000),
                              "startFromHead": True}
    records, skipped, token = [], 0, None
    while True:
        try:
            page = _log_page(logs, **kwargs)
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "ResourceNotFoundException":
                return {"available": False, "records": [], "skipped": 0,
                        "reason": f"Enhanced Monitoring is off for this instance (no {LOG_GROUP} stream "
                                  f"{dbi_resource_id})"}
            raise
        for event in page.get("events", []):
            try:
                records.append(parse_record(event["message"]))
            except ValueError:
                skipped += 1
        if not page.get("events") or page.get("nextForwardToken") in (None, token):
            break
        token = page["nextForwardToken"]
        kwargs["nextToken"] = token
    return {"available": True, "records": records, "skipped": skipped, "reason": None}


def summarise_window(records: list[dict[str, Any]], started_at: str | datetime,
                     finished_at: str | datetime) -> dict[str, Any]:
    start, end = _dt(started_at), _dt(finished_at)
    inside = [r for r in records if start <= r["timestamp"] <= end]
    devices: dict[str, dict[str, list[float]]] = {}
    for r in inside:
        for disk in r["diskIO"]:
            per = devices.setdefault(disk["device"], {})
            for f in DISK_FIELDS:
                if f in disk:
                    per.setdefault(f, []).append(disk[f])
    summary = {dev: {f: {"mean": round(sum(v) / len(v), 3), "max": max(v)} for f, v in fields.items()}
               for dev, fields in devices.items()}
    total = {f: round(sum(d[f]["mean"] for d in summary.values() if f in d), 3)
             for f in ("readIOsPS", "writeIOsPS", "readKbPS", "writeKbPS")}
    stamps = sorted(r["timestamp"] for r in inside)
    interval = (stamps[-1] - stamps[0]).total_seconds() / (len(stamps) - 1) if len(stamps) > 1 else None
    return {"samples": len(inside), "interval_s": interval, "devices": summary, "all_devices": total}


def collect_enhanced(logs: Any, dbi_resource_id: str, windows: list[dict[str, Any]]) -> dict[str, Any]:
    if not windows:
        return {"available": False, "reason": "no windows", "windows": {}}
    start = min(_dt(w["started_at"]) for w in windows)
    end = max(_dt(w["finished_at"]) for w in windows)
    fetched = fetch_records(logs, dbi_resource_id, start - timedelta(seconds=1), end + timedelta(seconds=1))
    if not fetched["available"]:
        return {"available": False, "reason": fetched["reason"], "windows": {}}
    return {"available": True, "reason": None, "skipped_records": fetched["skipped"],
            "windows": {w["point_id"]: summarise_window(fetched["records"], w["started_at"], w["finished_at"])
                        for w in windows}}

