"""cutover_prep.metrics against moto: CloudWatch datapoints arriving late, partly or never;
Enhanced Monitoring records (realistic RDSOSMetrics documents) fetched and summarised."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws
from tenacity import wait_none

from cutover_prep.metrics import (
    OPTIONAL_METRICS,
    REQUIRED_METRICS,
    MetricsAccessDenied,
    MetricSpec,
    align_note,
    collect_enhanced,
    collect_windows,
    fetch_records,
    fetch_series,
    parse_record,
    summarise_window,
)
from cutover_prep.metrics import cloudwatch as cw_module
from cutover_prep.metrics.enhanced import Disk

DB = "restored-db"
DBI = "db-ABCDEFGHIJKLMNOPQRSTUVWXY0"
REGION = "us-east-1"
# Recent enough for moto (CloudWatch Logs refuses events older than 14 days), on a minute.
BASE = (datetime.now(UTC) - timedelta(hours=2)).replace(second=0, microsecond=0)
LATER = BASE + timedelta(hours=1)  # a "now" long after every window


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, Any]]:
    for key, value in {"AWS_DEFAULT_REGION": REGION, "AWS_ACCESS_KEY_ID": "testing",
                       "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing"}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.setattr(cw_module.call_aws.retry, "wait", wait_none())
    with mock_aws():
        yield boto3.client("cloudwatch", region_name=REGION), boto3.client("logs", region_name=REGION)


def window(pid: str, start_s: float, seconds: float) -> dict[str, str]:
    start = BASE + timedelta(seconds=start_s)
    return {"point_id": pid, "started_at": start.isoformat(),
            "finished_at": (start + timedelta(seconds=seconds)).isoformat()}


def put(client: Any, metric: str, minute: int, value: float, second: int = 30, db: str = DB) -> None:
    client.put_metric_data(Namespace="AWS/RDS", MetricData=[{
        "MetricName": metric, "Dimensions": [{"Name": "DBInstanceIdentifier", "Value": db}],
        "Timestamp": BASE + timedelta(minutes=minute, seconds=second), "Value": value}])


def put_required(client: Any, minutes: list[int], base_value: float = 100.0, db: str = DB) -> None:
    for minute in minutes:
        for metric in REQUIRED_METRICS:
            put(client, metric, minute, base_value + minute, db=db)


# -- CloudWatch ---------------------------------------------------------------------------
def test_metric_catalogue_marks_core_io_required_and_balances_optional() -> None:
    assert set(REQUIRED_METRICS) == {"ReadIOPS", "ReadThroughput", "ReadLatency", "WriteIOPS", "WriteThroughput",
                                     "DiskQueueDepth"}
    assert set(OPTIONAL_METRICS) == {"BurstBalance", "EBSIOBalance%", "EBSByteBalance%"}


def test_datapoints_arriving_late_are_pending_then_complete(aws: tuple[Any, Any]) -> None:
    cloudwatch, _ = aws
    windows = [window("p1", 0, 120)]
    first = collect_windows(cloudwatch, DB, windows, now=LATER)
    assert first["complete"] is False and first["missing"] == []
    assert first["windows"]["p1"]["complete"] is False
    assert {m["status"] for m in first["windows"]["p1"]["metrics"].values()} == {"pending"}
    assert len(first["pending"]) == len(REQUIRED_METRICS)

    put_required(cloudwatch, [0, 1])
    second = collect_windows(cloudwatch, DB, windows, now=LATER)
    assert second["complete"] is True and second["missing"] == [] and second["pending"] == []
    read = second["windows"]["p1"]["metrics"]["ReadIOPS"]
    assert read["status"] == "complete" and read["expected"] == read["arrived"] == 2
    assert read["points"] == [[BASE.isoformat(), 100.0], [(BASE + timedelta(minutes=1)).isoformat(), 101.0]]
    assert read["mean"] == 100.5 and read["max"] == 101.0 and read["absent"] == []
    assert json.loads(json.dumps(second)) == second  # stored as evidence JSON as is


def test_optional_metric_absent_is_not_reported_and_window_still_complete(aws: tuple[Any, Any]) -> None:
    cloudwatch, _ = aws
    put_required(cloudwatch, [0, 1])
    put(cloudwatch, "BurstBalance", 0, 99.0)
    put(cloudwatch, "BurstBalance", 1, 97.0)
    result = collect_windows(cloudwatch, DB, [window("p1", 0, 120)], now=LATER)
    metrics = result["windows"]["p1"]["metrics"]
    assert result["complete"] is True
    assert metrics["BurstBalance"]["status"] == "complete" and metrics["BurstBalance"]["mean"] == 98.0
    for name in ("EBSIOBalance%", "EBSByteBalance%"):
        assert metrics[name]["status"] == "not_reported" and metrics[name]["points"] == []
        assert metrics[name]["mean"] is None and metrics[name]["max"] is None
    # cloudwatch.json's keys, in the order it has always written them (the typed poll keeps every field)
    assert list(result) == ["complete", "final", "polled_at", "namespace", "db_instance_identifier", "period",
                            "statistics", "windows", "missing", "pending", "notes"]
    assert list(result["windows"]["p1"]) == ["started_at", "finished_at", "complete", "expected_periods", "metrics",
                                             "notes"]
    assert list(metrics["BurstBalance"]) == ["unit", "required", "expected", "arrived", "points", "absent", "mean",
                                             "max", "status"]
    assert metrics["BurstBalance"]["points"][0][1] == 99.0 and json.loads(json.dumps(result)) == result


def test_datapoints_never_arriving_are_missing_on_the_final_poll_and_never_invented(aws: tuple[Any, Any]) -> None:
    cloudwatch, _ = aws
    result = collect_windows(cloudwatch, DB, [window("p1", 0, 120)], final=True, now=LATER)
    assert result["complete"] is False and result["final"] is True
    assert sorted(result["missing"]) == sorted(f"p1/{m}" for m in REQUIRED_METRICS)
    for name, metric in result["windows"]["p1"]["metrics"].items():
        assert metric["status"] == ("missing" if name in REQUIRED_METRICS else "not_reported")
        assert metric["points"] == [] and metric["mean"] is None and metric["max"] is None
        assert metric["arrived"] == 0 and len(metric["absent"]) == 2


def test_partly_arrived_is_pending_then_partial_with_only_real_values(aws: tuple[Any, Any]) -> None:
    cloudwatch, _ = aws
    put_required(cloudwatch, [0])
    windows = [window("p1", 0, 120)]
    pending = collect_windows(cloudwatch, DB, windows, now=LATER)
    assert pending["windows"]["p1"]["metrics"]["ReadIOPS"]["status"] == "pending"
    assert pending["windows"]["p1"]["metrics"]["ReadIOPS"]["arrived"] == 1

    final = collect_windows(cloudwatch, DB, windows, final=True, now=LATER)
    read = final["windows"]["p1"]["metrics"]["ReadIOPS"]
    assert read["status"] == "partial" and read["points"] == [[BASE.isoformat(), 100.0]]
    assert read["absent"] == [(BASE + timedelta(minutes=1)).isoformat()]
    assert read["mean"] == 100.0  # from the one datapoint that arrived, nothing filled in
    assert "p1/ReadIOPS" in final["missing"] and final["complete"] is False


def test_datapoints_are_assigned_to_their_own_window(aws: tuple[Any, Any]) -> None:
    cloudwatch, _ = aws
    put_required(cloudwatch, [0, 1], base_value=100.0)
    put_required(cloudwatch, [2], base_value=500.0)  # between the two windows
    put_required(cloudwatch, [3, 4], base_value=900.0)
    windows = [window("p1", 0, 120), window("p2", 180, 120)]
    result = collect_windows(cloudwatch, DB, windows, now=LATER)
    assert result["complete"] is True
    p1 = result["windows"]["p1"]["metrics"]["ReadIOPS"]
    p2 = result["windows"]["p2"]["metrics"]["ReadIOPS"]
    assert [v for _, v in p1["points"]] == [100.0, 101.0]
    assert [v for _, v in p2["points"]] == [903.0, 904.0]
    assert p2["points"][0][0] == (BASE + timedelta(minutes=3)).isoformat()


def test_average_gives_points_and_maximum_gives_max(aws: tuple[Any, Any]) -> None:
    cloudwatch, _ = aws
    put(cloudwatch, "DiskQueueDepth", 0, 10.0, second=10)
    put(cloudwatch, "DiskQueueDepth", 0, 30.0, second=40)
    result = collect_windows(cloudwatch, DB, [window("p1", 0, 60)], now=LATER)
    queue = result["windows"]["p1"]["metrics"]["DiskQueueDepth"]
    assert queue["points"] == [[BASE.isoformat(), 20.0]] and queue["mean"] == 20.0 and queue["max"] == 30.0


def test_a_window_that_ended_too_recently_cannot_be_complete(aws: tuple[Any, Any]) -> None:
    cloudwatch, _ = aws
    put_required(cloudwatch, [0, 1])
    now = BASE + timedelta(seconds=100)  # the window ends at +90 s; its last period closes at +120 s
    result = collect_windows(cloudwatch, DB, [window("p1", 0, 90)], now=now)
    assert result["complete"] is False
    assert result["windows"]["p1"]["metrics"]["ReadIOPS"]["status"] == "complete"
    assert any("cannot be complete yet" in n for n in result["windows"]["p1"]["notes"])
    later = collect_windows(cloudwatch, DB, [window("p1", 0, 90)], now=BASE + timedelta(seconds=150))
    assert later["complete"] is True


def test_other_instances_datapoints_are_not_counted(aws: tuple[Any, Any]) -> None:
    cloudwatch, _ = aws
    put_required(cloudwatch, [0], db="another-db")
    result = collect_windows(cloudwatch, DB, [window("p1", 0, 60)], final=True, now=LATER)
    assert result["windows"]["p1"]["metrics"]["ReadIOPS"]["status"] == "missing"


def test_no_windows_is_trivially_complete_without_calling_aws() -> None:
    result = collect_windows(object(), DB, [], final=True)
    assert result["complete"] is True and result["windows"] == {} and result["missing"] == []


@pytest.mark.parametrize("bad, message", [
    ({"point_id": "p", "started_at": "2026-01-01T00:00:00", "finished_at": "2026-01-01T00:01:00"}, "no timezone"),
    ({"point_id": "p", "started_at": "2026-01-01T00:01:00Z", "finished_at": "2026-01-01T00:00:00Z"}, "not after"),
    ({"point_id": "p", "started_at": "yesterday", "finished_at": "2026-01-01T00:00:00Z"}, "not an ISO 8601"),
])
def test_invalid_windows_are_refused_clearly(bad: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        collect_windows(object(), DB, [bad])


def test_period_must_match_rds_resolution() -> None:
    with pytest.raises(ValueError, match="multiple of 60"):
        collect_windows(object(), DB, [window("p1", 0, 60)], period=30)


def test_align_note() -> None:
    assert align_note(window("p1", 5, 20)) == (
        "window 20 s is shorter than CloudWatch's 60 s period: each datapoint mixes this point with its neighbours")
    assert align_note(window("p1", 0, 120)) is None
    assert "also cover 30 s outside it" in align_note(window("p1", 15, 90))


class _Recorder:
    """A GetMetricData stand-in: records the calls, answers in two pages per batch."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def get_metric_data(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(kwargs)
        queries = kwargs["MetricDataQueries"]
        half = len(queries) // 2
        page, token = (queries[half:], None) if "NextToken" in kwargs else (queries[:half], "more")
        results = [{"Id": q["Id"], "Timestamps": [kwargs["StartTime"]], "Values": [1.0], "StatusCode": "Complete"}
                   for q in page]
        return {"MetricDataResults": results, **({"NextToken": token} if token else {})}


def test_queries_are_batched_by_500_and_paginated() -> None:
    metrics = {f"Metric{i}": MetricSpec("Count", True, "test") for i in range(300)}  # 600 queries
    client = _Recorder()
    start = BASE
    series, notes = fetch_series(client, DB, start, start + timedelta(minutes=1), metrics=metrics)
    sizes = [len(c["MetricDataQueries"]) for c in client.calls]
    assert sizes == [500, 500, 100, 100] and notes == []
    assert all(series[name]["Average"] == {start: 1.0} and series[name]["Maximum"] == {start: 1.0}
               for name in metrics)


class _Flaky:
    def __init__(self, real: Any, failures: list[str]) -> None:
        self.real, self.failures, self.calls = real, failures, 0

    def get_metric_data(self, **kwargs: Any) -> dict[str, Any]:
        self.calls += 1
        if self.failures:
            code = self.failures.pop(0)
            raise ClientError({"Error": {"Code": code, "Message": f"{code} for test"}}, "GetMetricData")
        return self.real.get_metric_data(**kwargs)


def test_throttling_is_retried(aws: tuple[Any, Any]) -> None:
    cloudwatch, _ = aws
    put_required(cloudwatch, [0])
    flaky = _Flaky(cloudwatch, ["Throttling", "ThrottlingException"])
    result = collect_windows(flaky, DB, [window("p1", 0, 60)], now=LATER)
    assert result["complete"] is True and flaky.calls == 3


def test_access_denied_raises_a_named_error(aws: tuple[Any, Any]) -> None:
    cloudwatch, _ = aws
    flaky = _Flaky(cloudwatch, ["AccessDenied"])
    with pytest.raises(MetricsAccessDenied, match="cloudwatch:GetMetricData was denied"):
        collect_windows(flaky, DB, [window("p1", 0, 60)])
    assert flaky.calls == 1


# -- Enhanced Monitoring -------------------------------------------------------------------
def _disk(device: str, read_iops: float, read_kbps: float, **extra: float) -> dict[str, Any]:
    """One diskIO entry as RDS writes it (avgReqSz in 512-byte sectors, as in real records)."""
    write_iops, write_kbps = extra.pop("write_iops", 2.0), extra.pop("write_kbps", 16.0)
    tps = read_iops + write_iops
    return {"writeKbPS": write_kbps, "readIOsPS": read_iops, "await": extra.get("await_ms", 0.9),
            "readKbPS": read_kbps, "rrqmPS": 0, "util": 41.3, "avgQueueLen": extra.get("queue", 1.5), "tps": tps,
            "readKb": read_kbps * 5, "device": device, "writeKb": write_kbps * 5,
            "avgReqSz": round(2 * (read_kbps + write_kbps) / tps, 2), "wrqmPS": 0.4, "writeIOsPS": write_iops}


def em_record(ts: datetime, rdsdev_iops: float, fs_iops: float = 1.0) -> str:
    """A realistic RDSOSMetrics document (PostgreSQL, two logical devices, striped physical disks)."""
    doc = {
        "engine": "POSTGRES", "instanceID": DB, "instanceResourceID": DBI,
        "timestamp": ts.strftime("%Y-%m-%dT%H:%M:%SZ"), "version": 1.0, "uptime": "0 days, 0:41:07",
        "numVCPUs": 2,
        "cpuUtilization": {"guest": 0.0, "irq": 0.0, "system": 3.1, "wait": 38.2, "idle": 51.4, "user": 6.9,
                           "total": 48.6, "steal": 0.2, "nice": 0.0},
        "loadAverageMinute": {"fifteen": 0.6, "five": 1.1, "one": 2.3},
        "memory": {"writeback": 0, "free": 259016, "cached": 11742648, "total": 15670012, "dirty": 660},
        "tasks": {"sleeping": 223, "zombie": 0, "running": 2, "stopped": 0, "total": 225, "blocked": 1},
        "swap": {"cached": 0, "total": 0, "free": 0},
        "network": [{"interface": "eth0", "rx": 217.57, "tx": 2319.67}],
        "diskIO": [_disk("rdsdev", rdsdev_iops, rdsdev_iops * 8), _disk("filesystem", fs_iops, fs_iops * 4)],
        "physicalDeviceIO": [_disk("nvme1n1", rdsdev_iops / 2, rdsdev_iops * 4),
                             _disk("nvme2n1", rdsdev_iops / 2, rdsdev_iops * 4)],
        "fileSys": [{"used": 7006720, "name": "rdsfilesys", "mountPoint": "/rdsdbdata", "total": 30828540,
                     "usedPercent": 22.73}],
        "processList": [{"vss": 647304, "name": "postgres", "tgid": 812, "parentID": 1, "memoryUsedPc": 0.18,
                         "cpuUsedPc": 12.1, "id": 812, "rss": 22600}],
    }
    return json.dumps(doc)


def put_records(logs: Any, messages: list[tuple[datetime, str]], stream: str = DBI) -> None:
    logs.create_log_group(logGroupName="RDSOSMetrics")
    logs.create_log_stream(logGroupName="RDSOSMetrics", logStreamName=stream)
    logs.put_log_events(logGroupName="RDSOSMetrics", logStreamName=stream,
                        logEvents=[{"timestamp": int(ts.timestamp() * 1000), "message": m} for ts, m in messages])


def test_parse_record_reads_disk_fields_as_floats_and_ignores_the_rest() -> None:
    record = parse_record(em_record(BASE, 3000))
    assert record.timestamp == BASE and record.timestamp.tzinfo is not None
    assert record.engine == "POSTGRES" and record.instance_id == DB and record.instance_resource_id == DBI
    rdsdev = record.disk_io[0]
    assert rdsdev.device == "rdsdev" and rdsdev.values["readIOsPS"] == 3000.0
    assert isinstance(rdsdev.values["rrqmPS"], float)
    assert [d.device for d in record.physical_device_io] == ["nvme1n1", "nvme2n1"]
    assert set(record.model_dump()) == {"timestamp", "engine", "instance_id", "instance_resource_id", "disk_io",
                                        "physical_device_io"}  # processList, cpuUtilization ... left out


def test_parse_record_handles_missing_fields_and_refuses_non_json() -> None:
    sparse = json.dumps({"timestamp": "2026-01-01T00:00:05Z", "engine": "SQLSERVER",
                         "diskIO": [{"device": "xvdf", "readIOsPS": 12, "util": "n/a"}]})
    record = parse_record(sparse)
    assert record.disk_io == (Disk("xvdf", {"readIOsPS": 12.0}),) and record.physical_device_io == ()
    with pytest.raises(ValueError, match="not JSON"):
        parse_record("START RequestId: 1234")
    with pytest.raises(ValueError, match="no timestamp"):
        parse_record('{"engine": "MYSQL"}')


def test_fetch_and_summarise_a_window(aws: tuple[Any, Any]) -> None:
    _, logs = aws
    stamps = [BASE + timedelta(seconds=5 * i) for i in range(6)]  # 5 s interval
    put_records(logs, [(ts, em_record(ts, 1000.0 * (i + 1))) for i, ts in enumerate(stamps)])
    fetched = fetch_records(logs, DBI, BASE - timedelta(minutes=1), BASE + timedelta(minutes=1))
    assert fetched.available is True and len(fetched.records) == 6 and fetched.skipped == 0

    # Window (0 s, 20 s]: samples at 5, 10, 15, 20 s cover it wholly; the one at 0 s does not.
    summary = summarise_window(fetched.records, BASE, BASE + timedelta(seconds=20))
    assert summary["samples"] == 4 and summary["interval_s"] == 5.0
    assert summary["first_sample"] == stamps[1].isoformat() and summary["last_sample"] == stamps[4].isoformat()
    rdsdev = summary["devices"]["rdsdev"]
    assert rdsdev["readIOsPS"] == {"mean": 3500.0, "max": 5000.0, "samples": 4}
    assert rdsdev["readKbPS"]["mean"] == 28000.0
    assert set(rdsdev) >= {"avgReqSz", "await", "avgQueueLen", "writeIOsPS", "writeKbPS"}
    assert set(summary["physical_devices"]) == {"nvme1n1", "nvme2n1"}
    total = summary["all_devices"]
    assert total["devices"] == ["filesystem", "rdsdev"]
    assert total["readIOsPS"]["mean"] == 3501.0 and total["readIOsPS"]["max"] == 5001.0  # not the nvme disks
    assert total["read_kb_per_io"] == round((28000.0 + 4.0) / 3501.0, 3)


def test_collect_enhanced_keys_summaries_by_point_id(aws: tuple[Any, Any]) -> None:
    _, logs = aws
    stamps = [BASE + timedelta(seconds=10 * i) for i in range(1, 7)]
    put_records(logs, [(ts, em_record(ts, 100.0 if ts <= BASE + timedelta(seconds=30) else 900.0))
                       for ts in stamps])
    result = collect_enhanced(logs, DBI, [window("p1", 0, 30), window("p2", 30, 30)])
    assert result["available"] is True and result["interval_s"] == 10.0 and result["engine"] == "POSTGRES"
    assert result["windows"]["p1"]["devices"]["rdsdev"]["readIOsPS"]["mean"] == 100.0
    assert result["windows"]["p2"]["devices"]["rdsdev"]["readIOsPS"]["mean"] == 900.0
    assert result["windows"]["p1"]["samples"] == result["windows"]["p2"]["samples"] == 3
    assert json.loads(json.dumps(result)) == result


def test_a_window_shorter_than_the_interval_gets_no_sample_and_says_why(aws: tuple[Any, Any]) -> None:
    _, logs = aws
    stamps = [BASE + timedelta(seconds=60 * i) for i in range(3)]
    put_records(logs, [(ts, em_record(ts, 100.0)) for ts in stamps])
    result = collect_enhanced(logs, DBI, [window("p1", 10, 20)])
    summary = result["windows"]["p1"]
    assert summary["samples"] == 0 and summary["all_devices"] is None and summary["devices"] == {}
    assert "no sample lies wholly inside it" in summary["notes"][0]


def test_missing_stream_or_group_means_enhanced_monitoring_is_off(aws: tuple[Any, Any]) -> None:
    _, logs = aws
    no_group = collect_enhanced(logs, DBI, [window("p1", 0, 60)])
    assert no_group["available"] is False and no_group["windows"] == {}
    assert no_group["reason"] == f"Enhanced Monitoring is off for this instance (no RDSOSMetrics stream {DBI})"
    put_records(logs, [(BASE, em_record(BASE, 1.0))], stream="db-SOMEOTHERINSTANCE")
    no_stream = fetch_records(logs, DBI, BASE, BASE + timedelta(minutes=1))
    assert no_stream.available is False and "Enhanced Monitoring is off" in no_stream.reason
    wrong_id = fetch_records(logs, DB, BASE, BASE + timedelta(minutes=1))
    assert "not the instance identifier" in wrong_id.reason


def test_malformed_records_are_skipped_and_counted(aws: tuple[Any, Any]) -> None:
    _, logs = aws
    stamps = [BASE + timedelta(seconds=5 * i) for i in range(5)]
    messages = [(ts, em_record(ts, 200.0)) for ts in stamps]
    messages[2] = (stamps[2], "{truncated")
    put_records(logs, messages)
    result = collect_enhanced(logs, DBI, [window("p1", 0, 20)])
    assert result["available"] is True and result["skipped_records"] == 1 and result["records"] == 4
    assert "1 record(s) skipped" in result["notes"][0]
    assert result["windows"]["p1"]["samples"] == 3  # 5, 15, 20 s; the one at 10 s was unreadable


def test_fetch_records_follows_forward_tokens_until_they_repeat(aws: tuple[Any, Any]) -> None:
    _, logs = aws
    stamps = [BASE + timedelta(seconds=i) for i in range(25)]
    put_records(logs, [(ts, em_record(ts, float(i))) for i, ts in enumerate(stamps)])
    fetched = fetch_records(logs, DBI, BASE, BASE + timedelta(minutes=1), limit=10)
    assert [r.timestamp for r in fetched.records] == stamps


def test_logs_access_denied_raises_a_named_error() -> None:
    class Denied:
        def get_log_events(self, **kwargs: Any) -> dict[str, Any]:
            raise ClientError({"Error": {"Code": "AccessDeniedException", "Message": "no"}}, "GetLogEvents")

    with pytest.raises(MetricsAccessDenied, match="logs:GetLogEvents was denied on log group RDSOSMetrics"):
        fetch_records(Denied(), DBI, BASE, BASE + timedelta(minutes=1))
