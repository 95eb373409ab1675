"""What Enhanced Monitoring (the OS view, 1-60 s samples) recorded during each benchmark window.

RDS writes one JSON document per monitoring interval to the CloudWatch Logs group
``RDSOSMetrics``, in the stream named after the instance's DbiResourceId (``db-...``).
``diskIO[]`` has one entry per logical device (``rdsdev``/``rdsdbdata``, ``filesystem``,
additional storage volumes) with readIOsPS, writeIOsPS, readKbPS, writeKbPS, avgReqSz,
await (ms), avgQueueLen, util, tps, ...; ``physicalDeviceIO[]`` (when the data volume is
striped over several disks, e.g. ``nvme1n1``) has the same fields per physical disk.
Fields vary by engine (Aurora has readLatency/readThroughput, SQL Server has no diskIO):
absent fields are simply absent from the summary.

``avgReqSz``: AWS documents it in kilobytes, but in real records it equals twice
KbPS/tps, i.e. 512-byte sectors as iostat reports it. It is passed through untouched; the
summary adds ``read_kb_per_io``/``write_kb_per_io`` computed from KbPS and IOsPS.

A sample stamped t covers the interval (t - interval, t]; only samples wholly inside a
window count for it. An instance without Enhanced Monitoring is reported, not an error.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated, Any, NotRequired, TypedDict

from botocore.exceptions import ClientError
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from cutover_prep.metrics.cloudwatch import WindowSpec, call_aws, error_code, parse_time, parse_windows

LOG_GROUP = "RDSOSMetrics"
DISK_FIELDS = ("readIOsPS", "writeIOsPS", "readKbPS", "writeKbPS", "readKb", "writeKb", "avgReqSz", "await",
               "avgQueueLen", "util", "tps", "rrqmPS", "wrqmPS")
SUMMARY_FIELDS = ("readIOsPS", "writeIOsPS", "readKbPS", "writeKbPS", "avgReqSz", "await", "avgQueueLen", "util",
                  "tps")
SUM_FIELDS = ("readIOsPS", "writeIOsPS", "readKbPS", "writeKbPS", "tps")
# Records carry whole-second timestamps; the fetch is widened so edge samples are seen.
TIMESTAMP_SLACK = timedelta(seconds=1)
FETCH_MARGIN = timedelta(seconds=60)
MAX_PAGES = 10_000

Stats = dict[str, float]  # {"mean", "max", "samples"} of one field
# all_devices: each summed field's stats, the KiB per read and per write IO, the devices summed
AllDevices = dict[str, Stats | float | list[str] | None]


class WindowSummary(TypedDict):
    """What Enhanced Monitoring recorded during one window (enhanced.json's ``windows``, per point)."""

    started_at: str
    finished_at: str
    samples: int
    edge_samples_excluded: int
    interval_s: float | None
    first_sample: str | None
    last_sample: str | None
    devices: dict[str, dict[str, Stats]]
    physical_devices: dict[str, dict[str, Stats]]
    all_devices: AllDevices | None
    notes: list[str]


class EnhancedEvidence(TypedDict):
    """enhanced.json: the stream read, whether Enhanced Monitoring was on, and each window's summary."""

    log_group: str
    log_stream: str
    available: bool
    reason: str | None
    interval_s: NotRequired[float | None]
    engine: NotRequired[str | None]
    records: NotRequired[int]
    skipped_records: NotRequired[int]
    notes: NotRequired[list[str]]
    windows: dict[str, WindowSummary]


# -- records ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Disk:
    """One device of a record (``diskIO``, ``physicalDeviceIO``): its numeric disk fields, as floats."""

    device: str
    values: dict[str, float]


def _devices(entries: object) -> tuple[Disk, ...]:
    """The devices of a record's list: entries that are not objects skipped, fields that are not numbers left out."""
    out = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        values = {field: float(entry[field]) for field in DISK_FIELDS
                  if isinstance(entry.get(field), int | float) and not isinstance(entry[field], bool)}
        out.append(Disk(device=str(entry.get("device", "?")), values=values))
    return tuple(out)


Devices = Annotated[tuple[Disk, ...], BeforeValidator(_devices)]


class OsRecord(BaseModel):
    """One RDSOSMetrics document: its time (aware), engine, instance ids, ``diskIO`` and ``physicalDeviceIO``."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    timestamp: datetime
    engine: str | None = None
    instance_id: str | None = Field(None, alias="instanceID")
    instance_resource_id: str | None = Field(None, alias="instanceResourceID")
    disk_io: Devices = Field((), alias="diskIO")
    physical_device_io: Devices = Field((), alias="physicalDeviceIO")


def parse_record(message: str) -> OsRecord:
    """One RDSOSMetrics document (``ValueError`` when it is not one)."""
    try:
        doc = json.loads(message)
    except (TypeError, ValueError):
        raise ValueError(f"not an Enhanced Monitoring record (not JSON): {str(message)[:60]!r}") from None
    if not isinstance(doc, dict) or "timestamp" not in doc:
        raise ValueError(f"not an Enhanced Monitoring record (no timestamp): {str(message)[:60]!r}")
    return OsRecord.model_validate({**doc, "timestamp": parse_time(doc["timestamp"], "Enhanced Monitoring timestamp")})


class LogEvent(BaseModel):
    message: str | None = None


class LogEventsPage(BaseModel):
    """A GetLogEvents answer (the fields read)."""

    events: list[LogEvent] = []
    next_forward_token: str | None = Field(None, alias="nextForwardToken")


@dataclass(frozen=True)
class Fetched:
    """The stream's records between two times, oldest first; unparsable messages skipped and counted."""

    available: bool
    reason: str | None
    records: list[OsRecord]
    skipped: int
    notes: list[str]


def _ms(dt: datetime) -> int:
    return int(dt.timestamp() * 1000)


def _unavailable(dbi_resource_id: str) -> Fetched:
    hint = "" if dbi_resource_id.startswith("db-") else \
        " — the stream is named after the DbiResourceId (db-...), not the instance identifier"
    return Fetched(available=False, records=[], skipped=0, notes=[],
                   reason=f"Enhanced Monitoring is off for this instance (no {LOG_GROUP} stream {dbi_resource_id})"
                          f"{hint}")


def fetch_records(logs: Any, dbi_resource_id: str, start: datetime, end: datetime, *,
                  limit: int | None = None) -> Fetched:
    """Every parsable record of the stream between start and end, oldest first; unparsable messages are skipped
    and counted, never fatal."""
    kwargs: dict[str, Any] = {"logGroupName": LOG_GROUP, "logStreamName": dbi_resource_id,
                              "startTime": _ms(start), "endTime": _ms(end), "startFromHead": True}
    if limit:
        kwargs["limit"] = limit
    resource = f"log group {LOG_GROUP} stream {dbi_resource_id}"
    records, skipped, first_error, previous = [], 0, None, None
    for _ in range(MAX_PAGES):
        try:
            page = LogEventsPage.model_validate(call_aws(logs.get_log_events, "logs:GetLogEvents", resource,
                                                         **kwargs))
        except ClientError as exc:
            if error_code(exc) == "ResourceNotFoundException":
                return _unavailable(dbi_resource_id)
            raise
        for event in page.events:
            try:
                records.append(parse_record(event.message))
            except ValueError as exc:
                skipped += 1
                first_error = first_error or str(exc)
        token = page.next_forward_token
        if not token or token == previous:
            break
        kwargs["nextToken"] = previous = token
    records.sort(key=lambda r: r.timestamp)
    notes = [f"{skipped} record(s) skipped, not Enhanced Monitoring documents (first: {first_error})"] if skipped \
        else []
    return Fetched(available=True, reason=None, records=records, skipped=skipped, notes=notes)


# -- summaries -------------------------------------------------------------------------------
def infer_interval(records: list[OsRecord]) -> float | None:
    """The monitoring interval in seconds: the median gap between consecutive samples."""
    stamps = sorted({r.timestamp for r in records})
    gaps = [(b - a).total_seconds() for a, b in zip(stamps, stamps[1:], strict=False)]
    return float(statistics.median(gaps)) if gaps else None


def _stats(values: list[float]) -> Stats:
    return {"mean": round(sum(values) / len(values), 3), "max": max(values), "samples": len(values)}


def _per_device(devices: list[tuple[Disk, ...]]) -> dict[str, dict[str, Stats]]:
    """Each device's stats per summary field, over the samples' lists of devices."""
    collected: dict[str, dict[str, list[float]]] = {}
    for disks in devices:
        for disk in disks:
            per = collected.setdefault(disk.device, {})
            for field in SUMMARY_FIELDS:
                if field in disk.values:
                    per.setdefault(field, []).append(disk.values[field])
    return {dev: {f: _stats(v) for f, v in fields.items()} for dev, fields in collected.items()}


def _ratio(stats: dict[str, Stats], numerator: str, denominator: str) -> float | None:
    if numerator not in stats or denominator not in stats or not stats[denominator]["mean"]:
        return None
    return round(stats[numerator]["mean"] / stats[denominator]["mean"], 3)


def _all_devices(samples: list[OsRecord]) -> AllDevices:
    """Per-sample sums over the diskIO devices (physicalDeviceIO is not added: it makes up rdsdev)."""
    sums: dict[str, list[float]] = {}
    for record in samples:
        for field in SUM_FIELDS:
            values = [d.values[field] for d in record.disk_io if field in d.values]
            if values:
                sums.setdefault(field, []).append(sum(values))
    stats = {f: _stats(v) for f, v in sums.items()}
    return {**stats, "read_kb_per_io": _ratio(stats, "readKbPS", "readIOsPS"),
            "write_kb_per_io": _ratio(stats, "writeKbPS", "writeIOsPS"),
            "devices": sorted({d.device for r in samples for d in r.disk_io})}


def _inside(records: list[OsRecord], start: datetime, end: datetime,
            interval: float | None) -> tuple[list[OsRecord], int]:
    """Samples wholly inside [start, end], and how many only overlap it."""
    span = timedelta(seconds=interval or 0)
    inside, edge = [], 0
    for r in records:
        ts = r.timestamp
        if not start < ts <= end + TIMESTAMP_SLACK:
            if start < ts <= end + span:
                edge += 1
            continue
        if ts - span >= start - TIMESTAMP_SLACK:
            inside.append(r)
        else:
            edge += 1
    return inside, edge


def _summary_notes(samples: list[OsRecord], edge: int, seconds: float, interval: float | None) -> list[str]:
    notes = []
    if not samples and edge:
        notes.append(f"the Enhanced Monitoring interval ({interval:.0f} s) is longer than the window "
                     f"({seconds:.0f} s): no sample lies wholly inside it")
    elif not samples:
        notes.append("no Enhanced Monitoring sample in this window")
    elif not any(r.disk_io for r in samples):
        notes.append(f"the records have no diskIO section (engine {samples[0].engine})")
    return notes


def summarise_window(records: list[OsRecord], started_at: str | datetime, finished_at: str | datetime, *,
                     interval_s: float | None = None) -> WindowSummary:
    """Per-device mean/max of the disk fields over the samples wholly inside the window."""
    start, end = parse_time(started_at, "started_at"), parse_time(finished_at, "finished_at")
    interval = interval_s if interval_s is not None else infer_interval(records)
    samples, edge = _inside(records, start, end, interval)
    return WindowSummary(started_at=start.isoformat(), finished_at=end.isoformat(), samples=len(samples),
                         edge_samples_excluded=edge, interval_s=interval,
                         first_sample=samples[0].timestamp.isoformat() if samples else None,
                         last_sample=samples[-1].timestamp.isoformat() if samples else None,
                         devices=_per_device([r.disk_io for r in samples]),
                         physical_devices=_per_device([r.physical_device_io for r in samples]),
                         all_devices=_all_devices(samples) if samples else None,
                         notes=_summary_notes(samples, edge, (end - start).total_seconds(), interval))


def collect_enhanced(logs: Any, dbi_resource_id: str, windows: list[WindowSpec]) -> EnhancedEvidence:
    """One fetch over the union of the windows, then one summary per point_id."""
    parsed = parse_windows(windows)
    if not parsed:
        return EnhancedEvidence(log_group=LOG_GROUP, log_stream=dbi_resource_id, available=False,
                                reason="no windows to collect", windows={})
    start = min(w.start for w in parsed) - FETCH_MARGIN
    end = max(w.end for w in parsed) + FETCH_MARGIN
    fetched = fetch_records(logs, dbi_resource_id, start, end)
    if not fetched.available:
        return EnhancedEvidence(log_group=LOG_GROUP, log_stream=dbi_resource_id, available=False,
                                reason=fetched.reason, windows={})
    records = fetched.records
    interval = infer_interval(records)
    notes = list(fetched.notes)
    if not records:
        notes.append(f"the stream has no record between {start.isoformat()} and {end.isoformat()}: Enhanced "
                     "Monitoring was off then, or the records have expired")
    return EnhancedEvidence(log_group=LOG_GROUP, log_stream=dbi_resource_id, available=True, reason=None,
                            interval_s=interval, engine=records[0].engine if records else None,
                            records=len(records), skipped_records=fetched.skipped, notes=notes,
                            windows={w.point_id: summarise_window(records, w.start, w.end, interval_s=interval)
                                     for w in parsed})
