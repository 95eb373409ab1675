"""CloudWatch polling against moto with datapoints arriving late, partly or never; Enhanced
Monitoring parsing of realistic RDSOSMetrics records."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import boto3
import pytest
from moto import mock_aws

from cutover_prep.rdsmetrics import (
    RDS_METRICS,
    collect_enhanced,
    collect_windows,
    parse_record,
)

DB = "restored-db"
REQUIRED = [m for m, (_, req) in RDS_METRICS.items() if req]


@pytest.fixture
def cw(monkeypatch):
    for k, v in {"AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "t", "AWS_SECRET_ACCESS_KEY": "t"}.items():
        monkeypatch.setenv(k, v)
    with mock_aws():
        yield boto3.client("cloudwatch", region_name="us-east-1"), boto3.client("logs", region_name="us-east-1")


BASE = (datetime.now(UTC) - timedelta(hours=2)).replace(second=0, microsecond=0)


def window(pid, start_min, seconds):
    start = BASE + timedelta(minutes=start_min)
    return {"point_id": pid, "started_at": start.isoformat(),
            "finished_at": (start + timedelta(seconds=seconds)).isoformat()}


def put(client, metric, minute, value, db=DB):
    client.put_metric_data(Namespace="AWS/RDS", MetricData=[{
        "MetricName": metric, "Dimensions": [{"Name": "DBInstanceIdentifier", "Value": db}],
        "Timestamp": BASE + timedelta(minutes=minute, seconds=30), "Value": value}])


def put_required(client, minutes, value=100.0, db=DB):
    for m in minutes:
        for metric in REQUIRED:
            put(client, metric, m, value + m, db)


def test_datapoints_arriving_late_are_waited_for_then_complete(cw):
    client, _ = cw
    windows = [window("p1", 0, 120)]
    first = collect_windows(client, DB, windows)
    assert first["complete"] is False and first["missing"] == []
    assert first["windows"]["p1"]["metrics"]["ReadIOPS"]["status"] == "pending"
    put_required(client, [0, 1])
    second = collect_windows(client, DB, windows)
    assert second["complete"] is True
    read = second["windows"]["p1"]["metrics"]["ReadIOPS"]
    assert read["status"] == "complete" and read["expected"] == read["arrived"] == 2
    assert read["mean"] == pytest.approx(100.5) and read["max"] == pytest.approx(101)
    # optional metrics absent: not blocking, reported pending now and not_reported at the end
    assert second["windows"]["p1"]["metrics"]["BurstBalance"]["arrived"] == 0


def test_datapoints_that_never_arrive_are_recorded_missing_never_invented(cw):
    client, _ = cw
    put(client, "ReadIOPS", 0, 50.0)  # one of two minutes, one metric only
    result = collect_windows(client, DB, [window("p1", 0, 120)], final=True)
    assert result["complete"] is False
    metrics = result["windows"]["p1"]["metrics"]
    assert metrics["ReadIOPS"]["status"] == "partial" and metrics["ReadIOPS"]["points"][0][1] == 50.0
    assert metrics["ReadIOPS"]["arrived"] == 1 and metrics["ReadIOPS"]["mean"] == 50.0
    assert metrics["WriteIOPS"] == {**metrics["WriteIOPS"], "status": "missing", "mean": None, "points": []}
    assert metrics["BurstBalance"]["status"] == "not_reported"
    assert set(result["missing"]) == {f"p1/{m}" for m in REQUIRED}


def test_windows_get_their_own_minutes_and_other_instances_do_not_leak(cw):
    client, _ = cw
    put_required(client, [0, 1, 2, 3])
    put_required(client, [0, 1, 2, 3], value=9999.0, db="other-db")
    put(client, "BurstBalance", 2, 80.0)
    result = collect_windows(client, DB, [window("a", 0, 60), window("b", 2, 90)], final=True)
    assert result["complete"] is True
    a, b = result["windows"]["a"]["metrics"], result["windows"]["b"]["metrics"]
    assert a["ReadIOPS"]["mean"] == 100.0 and a["ReadIOPS"]["expected"] == 1
    assert b["ReadIOPS"]["mean"] == pytest.approx(102.5) and b["ReadIOPS"]["expected"] == 2
    assert b["BurstBalance"]["status"] == "partial" and a["BurstBalance"]["status"] == "not_reported"


def test_short_and_recent_windows_say_so(cw):
    client, _ = cw
    put_required(client, [0])
    short = collect_windows(client, DB, [window("s", 0, 20)])
    assert short["complete"] is True and "shorter than CloudWatch" in short["windows"]["s"]["notes"][0]
    now = datetime.now(UTC)
    recent = {"point_id": "r", "started_at": (now - timedelta(seconds=30)).isoformat(), "finished_at": now.isoformat()}
    result = collect_windows(client, DB, [recent], now=now)
    assert result["complete"] is False and any("less than one period" in n for n in result["windows"]["r"]["notes"])


def em_record(ts: datetime, read_iops: float, device_b_iops: float) -> str:
    return json.dumps({
        "engine": "ORACLE", "instanceID": DB, "instanceResourceID": "db-ABCDEFGHIJKL", "timestamp": ts.strftime(
            "%Y-%m-%dT%H:%M:%SZ"), "version": 1.0, "uptime": "10 days, 1:53:04", "numVCPUs": 4,
        "cpuUtilization": {"guest": 0.0, "irq": 0.02, "system": 1.2, "wait": 30.5, "idle": 60.1, "user": 8.1,
                           "total": 39.9, "steal": 0.0, "nice": 0.0},
        "loadAverageMinute": {"fifteen": 1.2, "five": 1.5, "one": 2.1},
        "memory": {"writeback": 0, "hugePagesFree": 0, "total": 16000000, "free": 200000},
        "diskIO": [
            {"writeKbPS": 30.8, "readIOsPS": read_iops, "await": 7.5, "readKbPS": read_iops * 8, "rrqmPS": 0.0,
             "util": 95.0, "avgQueueLen": 3.2, "tps": read_iops + 3, "readKb": 0, "device": "rdsdev",
             "writeKb": 463, "avgReqSz": 16.0, "wrqmPS": 2.6, "writeIOsPS": 3.0},
            {"writeKbPS": 0.0, "readIOsPS": device_b_iops, "await": 1.0, "readKbPS": device_b_iops * 4,
             "device": "filesystem", "avgReqSz": 8.0, "avgQueueLen": 0.1, "writeIOsPS": 0.0},
        ],
        "fileSys": [{"used": 1000, "name": "rdsfilesys", "total": 100000, "mountPoint": "/rdsdbdata"}],
        "processList": [{"vss": 100, "name": "oracle", "tgid": 1, "cpuUsedPc": 1.0, "rss": 10, "pid": 1}],
    })


def test_enhanced_monitoring_records_are_parsed_and_summarised_per_window(cw):
    _, logs = cw
    logs.create_log_group(logGroupName="RDSOSMetrics")
    logs.create_log_stream(logGroupName="RDSOSMetrics", logStreamName="db-ABCDEFGHIJKL")
    events = []
    for i in range(6):
        ts = BASE + timedelta(seconds=10 * i)
        events.append({"timestamp": int(ts.timestamp() * 1000), "message": em_record(ts, 100.0 * (i + 1), 10.0)})
    events.insert(2, {"timestamp": events[1]["timestamp"] + 1, "message": "truncated {"})
    logs.put_log_events(logGroupName="RDSOSMetrics", logStreamName="db-ABCDEFGHIJKL", logEvents=events)
    windows = [window("first", 0, 25), {"point_id": "second", "started_at": (BASE + timedelta(seconds=30)).isoformat(),
                                        "finished_at": (BASE + timedelta(seconds=50)).isoformat()}]
    result = collect_enhanced(logs, "db-ABCDEFGHIJKL", windows)
    assert result["available"] is True and result["skipped_records"] == 1
    first, second = result["windows"]["first"], result["windows"]["second"]
    assert first["samples"] == 3 and second["samples"] == 3 and first["interval_s"] == 10
    assert first["devices"]["rdsdev"]["readIOsPS"] == {"mean": 200.0, "max": 300.0}
    assert second["devices"]["rdsdev"]["readIOsPS"]["mean"] == 500.0
    assert first["devices"]["rdsdev"]["avgReqSz"]["mean"] == 16.0
    assert first["all_devices"]["readIOsPS"] == 210.0


def test_enhanced_monitoring_off_is_reported_not_raised(cw):
    _, logs = cw
    result = collect_enhanced(logs, "db-NOPE", [window("p", 0, 60)])
    assert result["available"] is False and "Enhanced Monitoring is off" in result["reason"]


def test_parse_record_rejects_non_records():
    with pytest.raises(ValueError, match="not JSON"):
        parse_record("oops")
    with pytest.raises(ValueError, match="no timestamp"):
        parse_record("{}")
    rec = parse_record(em_record(BASE, 1.0, 2.0))
    assert rec["timestamp"] == BASE and rec["diskIO"][1]["device"] == "filesystem"
    assert "rrqmPS" not in rec["diskIO"][0]
