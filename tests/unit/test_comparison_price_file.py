"""The shipped price file (pricing/prices.json, issue 23 §4): every class the analyser knows is priced
for every engine the comparison prices, or listed as unpriced with the reason; every price sits beside a
named, dated source; and a local comparison of db.m5.large vs db.m5.xlarge is priced and recommends one.

The expected prices are AWS's own numbers as read from its RDS price feed (the snapshot the file names:
github.com/iann0036/aws-price-watcher, processed/rds-postgresql-ondemand.json and raw/rds-storage.json,
commit d65c44f0 of 2025-05-24), typed here by hand, not read from the file under test:
PostgreSQL Single-AZ us-east-1 db.m5.large $0.178/h, db.m5.xlarge $0.356/h; gp3 $0.115/GB-month;
io1 $0.125/GB-month and $0.10/IOPS-month. The recommendation rule is docs/compare.md's (and
result.py's): the cheapest configuration meeting every target.
"""

from __future__ import annotations

import copy
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from cutover_prep.analysis.instance_classes import INSTANCE_CLASSES
from cutover_prep.engines.registry import families
from cutover_prep.local import compare as local
from cutover_prep.local.outcome import LocalRun
from cutover_prep.pricing.book import HOURS_PER_MONTH, price_file

PRICE_MAPS = ("storage_per_gb_month", "iops_per_month", "throughput_per_mibps_month")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def coverage_gaps(prices: dict[str, Any], classes: list[str]) -> list[str]:
    """Each (engine family, class) that has neither a price nor an unpriced entry with a reason."""
    gaps = []
    for fam in families():
        engine = fam.limits.price_list[0] if fam.limits.price_list else None
        priced = ((prices.get("instances") or {}).get(engine) or {}).get("usd_per_hour") or {} if engine else {}
        unpriced = (prices.get("unpriced") or {}).get(fam.name) or {}
        for cls in classes:
            if cls in priced:
                continue
            reason = unpriced.get(cls) or unpriced.get("*")
            if not (isinstance(reason, str) and reason.strip()):
                gaps.append(f"{fam.name} {cls}: neither priced nor listed as unpriced with a reason")
    return gaps


def source_problems(prices: dict[str, Any]) -> list[str]:
    """Every number in the file must sit under a map whose ``source`` names a dated entry of ``sources``;
    every source must give its URL, the snapshot it was read from and the date."""
    sources = prices.get("sources") or {}
    problems = [f"source {name}: no {key}" for name, s in sources.items() for key in ("url", "snapshot", "dated")
                if not (s or {}).get(key)]
    problems += [f"source {name}: date {s['dated']!r} is not YYYY-MM-DD" for name, s in sources.items()
                 if s.get("dated") and not DATE.match(s["dated"])]

    def walk(node: Any, path: str, source: str | None) -> None:
        if isinstance(node, dict):
            here = node.get("source", source)
            for key, value in node.items():
                if key != "source":
                    walk(value, f"{path}.{key}", here)
        elif isinstance(node, bool) or not isinstance(node, int | float):
            return
        elif source is None:
            problems.append(f"{path}: a price without a source")
        elif source not in sources:
            problems.append(f"{path}: its source {source!r} is not among the sources")
        elif not (math.isfinite(node) and node > 0):
            problems.append(f"{path}: {node} is not a price")

    for key in ("instances", "oracle_instances", *PRICE_MAPS):
        walk(prices.get(key), key, None)
    loose = [k for k, v in prices.items() if isinstance(v, int | float) and not isinstance(v, bool)]
    problems += [f"{k}: a number outside any price map" for k in loose]
    return problems


# -- the file as shipped --------------------------------------------------------------------------------
def test_every_class_of_the_limits_table_is_priced_or_listed_unpriced_for_every_engine():
    assert coverage_gaps(price_file(), list(INSTANCE_CLASSES)) == []


def test_every_price_has_a_named_dated_source():
    f = price_file()
    assert source_problems(f) == []
    assert f["dated"] == max(s["dated"] for s in f["sources"].values())  # the label's date: the newest source
    for key in PRICE_MAPS:
        assert set(f[key]["usd"]) and f[key]["source"] in f["sources"]


def test_postgres_mysql_and_mariadb_leave_no_class_of_the_limits_table_unpriced():
    f = price_file()
    for engine in ("PostgreSQL", "MySQL", "MariaDB"):
        assert set(f["instances"][engine]["usd_per_hour"]) == set(INSTANCE_CLASSES), engine
    assert f["unpriced"]["oracle"]["*"] and "licence model" in f["unpriced"]["oracle"]["*"]


# -- the checks can fail --------------------------------------------------------------------------------
def test_the_coverage_check_flags_a_class_nobody_priced():
    gaps = coverage_gaps(price_file(), [*INSTANCE_CLASSES, "db.q9.large"])
    assert {g.split(":")[0] for g in gaps} == {"postgres db.q9.large", "mysql db.q9.large", "mariadb db.q9.large"}
    no_reason = copy.deepcopy(price_file())
    no_reason["unpriced"]["oracle"]["*"] = " "
    assert len(coverage_gaps(no_reason, list(INSTANCE_CLASSES))) == len(INSTANCE_CLASSES)


def test_the_source_check_flags_a_price_without_a_source_or_date():
    f = copy.deepcopy(price_file())
    del f["instances"]["MySQL"]["source"]
    f["storage_per_gb_month"]["source"] = "a blog"
    f["sources"][next(iter(f["sources"]))]["dated"] = "May 2025"
    f["iops_per_month"]["usd"]["io1"] = 0
    f["guessed"] = 0.5
    problems = source_problems(f)
    assert "instances.MySQL.usd_per_hour.db.m5.large: a price without a source" in problems
    assert "storage_per_gb_month.usd.gp2: its source 'a blog' is not among the sources" in problems
    assert any("is not YYYY-MM-DD" in p for p in problems)
    assert "iops_per_month.usd.io1: 0 is not a price" in problems
    assert "guessed: a number outside any price map" in problems


# -- db.m5.large vs db.m5.xlarge, the way `cutover-prep local --compare` prices and recommends ---------------
M5_LARGE, M5_XLARGE = 0.178, 0.356  # AWS feed, PostgreSQL, Single-AZ, us-east-1, $/h
GP3_GB, IO1_GB, IO1_IOPS = 0.115, 0.125, 0.10  # $/GB-month, $/GB-month, $/IOPS-month


def _findings(read_iops: float) -> dict[str, Any]:
    """What the local run writes for a configuration: the sample database is PostgreSQL on an emulated
    volume (time scale 1: wall-clock figures are the volume's)."""
    return {"engine": "postgres", "storage_emulation": {"emulated": True, "profile": {"time_scale": 1}},
            "read_rate": {"mib_per_s_wall": 20.0},
            "timings": {"started_at": "2026-11-25T04:00:00+00:00", "finished_at": "2026-11-25T04:06:00+00:00",
                        "unit_busy_seconds": 30.0},
            "units": {"total": 4},
            "benchmark": {"points": [{"kind": "random", "sessions": 8, "iops": read_iops,
                                      "throughput_kbps": read_iops * 8},
                                     {"kind": "sequential", "sessions": 1, "iops": 10, "throughput_kbps": 60_000}],
                          "probes": {"warm": {"latency_us": {"p99": 2000}}}}}


def _compare_locally(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, configurations: list[dict[str, Any]],
                     targets: dict[str, Any], read_iops: float) -> dict[str, Any]:
    """local.compare.run on an input file, each configuration's run replaced by its findings (the
    emulated volume's measuring is the integration tests'; here: the input, the prices, the judging,
    the recommendation and comparison.json, as `local --compare` makes them)."""
    import cutover_prep.local.emulated as emulated

    monkeypatch.setattr(emulated, "unavailable", lambda: None)
    path = tmp_path / "m5.json"
    path.write_text(json.dumps({"comparison_id": "m5", "configurations": configurations, "targets": targets}))

    def runner(options: Any) -> LocalRun:
        options.out.mkdir(parents=True, exist_ok=True)
        (options.out / "findings.json").write_text(json.dumps(_findings(read_iops)))
        return LocalRun(run_id=options.run_id, status="SUCCEEDED", out=str(options.out))

    code, result, out = local.run(path, out=tmp_path / "out", runner=runner)
    document = result.model_dump(mode="json", exclude_unset=True)
    assert json.loads((out / "comparison.json").read_text()) == document
    assert code == (0 if document["recommendation"]["name"] else 1)
    return document


def test_m5_large_and_xlarge_are_priced_and_the_cheaper_one_meeting_the_targets_is_recommended(tmp_path,
                                                                                               monkeypatch):
    doc = _compare_locally(tmp_path, monkeypatch, [
        {"name": "m5-large", "db_instance_class": "db.m5.large", "storage_type": "gp3", "allocated_gb": 100},
        {"name": "m5-xlarge", "db_instance_class": "db.m5.xlarge", "storage_type": "gp3", "allocated_gb": 100},
    ], {"min_read_iops": 2000}, read_iops=2900)
    large, xlarge = doc["configurations"]
    assert large["price_per_hour_usd"] == pytest.approx(M5_LARGE + GP3_GB * 100 / HOURS_PER_MONTH, abs=1e-6)
    assert xlarge["price_per_hour_usd"] == pytest.approx(M5_XLARGE + GP3_GB * 100 / HOURS_PER_MONTH, abs=1e-6)
    assert large["meets_targets"] is True and xlarge["meets_targets"] is True
    assert doc["recommendation"]["name"] == "m5-large"
    assert "the cheapest configuration meeting every target ($0.1938/h" in doc["recommendation"]["why"]
    assert doc["prices"]["source"].startswith(f"shipped price file (dated {price_file()['dated']})")
    assert doc["prices"]["dated"] == price_file()["dated"]


def test_when_only_the_xlarge_sustains_the_target_it_is_recommended_at_its_higher_price(tmp_path, monkeypatch):
    # io1 200 GiB, 8,000 IOPS (40 per GiB, within RDS's 0.5-50): once the burst is over the instance is the
    # bound (db.m5.large 3,600 IOPS, db.m5.xlarge 6,000: the EC2 page's baseline, analysis/instance_classes.py);
    # both measure 7,000 on the burst
    doc = _compare_locally(tmp_path, monkeypatch, [
        {"name": "m5-large", "db_instance_class": "db.m5.large", "storage_type": "io1", "allocated_gb": 200,
         "iops": 8000},
        {"name": "m5-xlarge", "db_instance_class": "db.m5.xlarge", "storage_type": "io1", "allocated_gb": 200,
         "iops": 8000},
    ], {"min_read_iops": 5000}, read_iops=7000)
    large, xlarge = doc["configurations"]
    storage = (IO1_GB * 200 + IO1_IOPS * 8000) / HOURS_PER_MONTH
    assert large["price_per_hour_usd"] == pytest.approx(M5_LARGE + storage, abs=1e-6)
    assert xlarge["price_per_hour_usd"] == pytest.approx(M5_XLARGE + storage, abs=1e-6)
    assert large["meets_targets"] is False and "3,600 sustained" in large["why"]
    assert xlarge["meets_targets"] is True
    assert doc["recommendation"]["name"] == "m5-xlarge" and "missing a target: m5-large" in \
        doc["recommendation"]["why"]
