"""Per storage volume findings (issue 22, RDS additional storage volumes): coverage planned / read /
unread per volume from the planned ranges' ``file_volumes``, each volume's own ceiling from its own
settings, the measured warm-up rate against it, and the report's separate block. Every expected figure
is worked out by hand below from the units and the documented storage limits."""

from __future__ import annotations

import pytest

from cutover_prep.analysis.limits import volume_limits
from cutover_prep.report import render_report, summary_markdown
from tests.unit.stored_sections import add_volume_findings, range_volume_bytes, volumes_section

MIB = 2**20
BS = 8192  # 128 blocks = 1 MiB

INSTANCE = {
    "engine": "oracle-ee", "db_instance_class": None, "storage_type": "gp3", "allocated_storage_gb": 100,
    "iops": 3000, "storage_throughput": 125,
    "additional_storage_volumes": [
        {"name": "RDSDBDATA2", "storage_type": "io2", "allocated_storage_gb": 100, "iops": 1000,
         "storage_throughput": None, "status": "ACTIVE", "operation_status": "Initializing", "operation_percent": 15},
    ],
}
UNITS = [
    {"unit_id": "u1", "bytes": 100 * MIB, "ranges": [  # 100 MiB on RDSDBDATA2 (a bigfile: RELATIVE_FNO 1024)
        {"segment": "APP.HIST#TABLE", "locator": {"file_volumes": {"1024": "RDSDBDATA2"}},
         "extents": [[1024, 0, 12_800]], "block_size": BS, "splittable": True}]},
    {"unit_id": "u2", "bytes": 50 * MIB, "ranges": [  # 50 MiB on the primary
        {"segment": "APP.ORDERS#TABLE", "locator": {}, "extents": [[4, 0, 6_400]], "block_size": BS,
         "splittable": True}]},
    {"unit_id": "u3", "bytes": 30 * MIB, "ranges": [  # 10 MiB on RDSDBDATA2 (its file 7), 20 MiB on the primary
        {"segment": "APP.EVENTS:P1#TABLE PARTITION", "locator": {"file_volumes": {"7": "RDSDBDATA2"}},
         "extents": [[7, 0, 1_280], [5, 0, 2_560]], "block_size": BS, "splittable": True}]},
]
ITEMS = {
    "u1": {"status": "DONE", "started_at": "2026-11-25T01:00:00+00:00", "finished_at": "2026-11-25T01:00:10+00:00"},
    "u2": {"status": "DONE", "started_at": "2026-11-25T01:00:05+00:00", "finished_at": "2026-11-25T01:00:25+00:00"},
    # cut off in its second extent after 640 blocks (5 MiB): the first extent (10 MiB, RDSDBDATA2) was read
    "u3": {"status": "RUNNING", "cursor": {"range": 0, "extent": 1, "offset": 640}},
}


def test_a_range_is_split_per_volume_extent_by_extent_and_the_cursor_counts():
    rng = UNITS[2]["ranges"][0]
    assert range_volume_bytes(rng, 0, "RUNNING", {"range": 0, "extent": 1, "offset": 640}) == {
        "RDSDBDATA2": (10 * MIB, 10 * MIB), "primary": (20 * MIB, 5 * MIB)}
    assert range_volume_bytes(rng, 0, "PENDING", None) == {"RDSDBDATA2": (10 * MIB, 0), "primary": (20 * MIB, 0)}
    assert range_volume_bytes(rng, 0, "DONE", None) == {"RDSDBDATA2": (10 * MIB, 10 * MIB),
                                                        "primary": (20 * MIB, 20 * MIB)}


def test_coverage_rate_and_ceiling_per_volume():
    section = volumes_section(INSTANCE, UNITS, ITEMS)
    assert section is not None
    rows = {r["volume"]: r for r in section["volumes"]}
    assert list(rows) == ["primary", "RDSDBDATA2"]
    p, d2 = rows["primary"], rows["RDSDBDATA2"]
    # primary: u2 50 MiB + u3 20 MiB planned; u2 50 + u3 5 read
    assert (p["bytes_planned"], p["bytes_read"], p["bytes_unread"]) == (70 * MIB, 55 * MIB, 15 * MIB)
    assert p["pct"] == pytest.approx(100 * 55 / 70, abs=0.001)
    # RDSDBDATA2: u1 100 MiB + u3's first extent 10 MiB, all read
    assert (d2["bytes_planned"], d2["bytes_read"], d2["bytes_unread"], d2["pct"]) == (110 * MIB, 110 * MIB, 0, 100.0)
    # rates: bytes read over the wall time of the timed units that read the volume (u3 has no end)
    assert p["mib_per_s_wall"] == pytest.approx(55 / 20, abs=0.001)  # u2: 01:00:05 -> 01:00:25
    assert d2["mib_per_s_wall"] == pytest.approx(110 / 10, abs=0.001)  # u1: 01:00:00 -> 01:00:10
    # ceilings from each volume's own settings (RDS User Guide / EBS): gp3 below Oracle's 200 GiB striping
    # threshold is the fixed 125 MiB/s; io2 Block Express 0.256 MiB/s per IOPS -> 1,000 IOPS = 256 MiB/s
    assert (p["ceiling_mib_s"], p["ceiling_bound_by"], p["ceiling_iops"]) == (125.0, "storage", 3000)
    assert (d2["ceiling_mib_s"], d2["ceiling_bound_by"], d2["ceiling_iops"]) == (256.0, "storage", 1000)
    assert p["pct_of_ceiling"] == pytest.approx(100 * 2.75 / 125, abs=0.05)
    assert d2["pct_of_ceiling"] == pytest.approx(100 * 11 / 256, abs=0.05)
    assert section["shared_units"] == 1 and any("lower bounds" in n for n in section["notes"])


def test_the_instance_class_caps_a_volume_whose_own_ceiling_is_higher():
    # db.r5.xlarge: 1,150 Mbps sustained EBS bandwidth = 143.75 MiB/s, 6,000 IOPS (EC2 EBS-optimized table)
    rows = {r["volume"]: r for r in volume_limits("db.r5.xlarge", [
        {"name": "primary", "storage_type": "gp3", "allocated_storage_gb": 100, "iops": None,
         "storage_throughput": None},
        {"name": "RDSDBDATA2", "storage_type": "io2", "allocated_storage_gb": 100, "iops": 1000,
         "storage_throughput": None}], engine="oracle-ee")}
    assert (rows["primary"]["ceiling_mib_s"], rows["primary"]["ceiling_bound_by"]) == (125.0, "storage")
    assert rows["RDSDBDATA2"]["ceiling_mib_s"] == pytest.approx(143.75, abs=0.1)
    assert rows["RDSDBDATA2"]["ceiling_bound_by"] == "instance"


def test_a_volume_rds_does_not_describe_fully_has_no_ceiling_but_its_coverage():
    rows = volume_limits(None, [{"name": "RDSDBDATA3", "storage_type": None, "allocated_storage_gb": None}])
    assert rows[0]["error"].startswith("no ceiling") and "ceiling_mib_s" not in rows[0]


@pytest.mark.parametrize("instance", [None, {"engine": "postgres", "storage_type": "gp3", "allocated_storage_gb": 100},
                                      {"engine": "oracle-ee", "additional_storage_volumes": []}])
def test_an_instance_without_additional_volumes_gets_no_volume_findings(instance):
    findings = {"engine": "postgresql", "coverage": {"by_database": []}}
    add_volume_findings(findings, instance, UNITS, ITEMS)
    assert findings == {"engine": "postgresql", "coverage": {"by_database": []}}


def test_findings_and_both_renderings_carry_the_volumes_block():
    findings = {"engine": "oracle", "coverage": {"by_database": []}, "run_id": "r1",
                "storage_initialization": {
                    "rds_initialized_pct": [{"at": "2026-11-25T01:00:00+00:00", "pct": 40.0},
                                            {"at": "2026-11-25T01:05:00+00:00", "pct": 70.0}],
                    "last": {"at": "2026-11-25T01:05:00+00:00", "status": "Initializing", "percent": 70},
                    "reported": True,
                    "volumes": [{"volume": "RDSDBDATA2", "reported": True, "last": {
                        "at": "2026-11-25T01:05:00+00:00", "status": None, "percent": None},
                        "rds_initialized_pct": [{"at": "2026-11-25T01:00:00+00:00", "pct": 15.0},
                                                {"at": "2026-11-25T01:05:00+00:00", "pct": 100.0}]}]}}
    add_volume_findings(findings, INSTANCE, UNITS, ITEMS)
    assert findings["coverage"]["by_volume"] == [
        {"volume": "primary", "bytes_planned": 70 * MIB, "bytes_read": 55 * MIB, "bytes_unread": 15 * MIB,
         "pct": pytest.approx(78.571, abs=0.001)},
        {"volume": "RDSDBDATA2", "bytes_planned": 110 * MIB, "bytes_read": 110 * MIB, "bytes_unread": 0, "pct": 100.0}]
    md = summary_markdown(findings)
    assert "## Storage volumes" in md
    row = next(line for line in md.splitlines() if "RDSDBDATA2" in line and line.startswith("|"))
    assert "110 MiB" in row and "256 MiB/s (storage)" in row and "`done`" in row
    assert "`Initializing 70 %`" in next(line for line in md.splitlines() if line.startswith("| `primary`"))
    page = render_report(findings)
    assert page.count('<section id="volumes">') == 1 and 'id="chart-volumes-init"' in page
    assert "RDS: RDSDBDATA2 initialized %" in page and "RDS: primary initialized %" in page
    assert page.index('<section id="volumes">') < page.index("</body>")


def test_no_volumes_no_block_in_either_rendering():
    findings = {"engine": "postgresql", "run_id": "r1"}
    assert "Storage volumes" not in summary_markdown(findings)
    assert 'id="volumes"' not in render_report(findings)


# ---- verdict: verdict.require_storage_initialized covers every volume ---------------------------------

def _judged(volume2: dict, **thresholds) -> dict:
    from cutover_prep.models.thresholds import Thresholds
    from tests.unit.stored_sections import storage_initialization
    from tests.unit.verdict_of_documents import decide

    samples = [{"at": "2026-11-25T01:00:00+00:00", "step": "WarmUnit", "status": "Initializing", "percent": 90,
                "volumes": [{"volume": "RDSDBDATA2", "status": "Initializing", "percent": 10}]},
               {"at": "2026-11-25T01:09:00+00:00", "step": "Finalize", "status": None, "percent": None,
                "volumes": [volume2]}]
    findings = {"units": {"total": 1, "done": 1, "failed": 0, "in_progress": 0, "not_started": 0},
                "bytes": {"planned": 10}, "coverage_pct": 100.0,
                "storage_initialization": storage_initialization(samples, [], 10)}
    return decide(findings, Thresholds(**thresholds), benchmark_requested=False)


def test_an_additional_volume_still_initializing_is_not_ready_when_required():
    result = _judged({"volume": "RDSDBDATA2", "status": "Initializing", "percent": 35},
                     require_storage_initialized=True)
    assert result["verdict"] == "NOT_READY"
    failing = [r for r in result["reasons"] if r["code"] == "STORAGE_INITIALIZING" and not r["ok"]]
    assert len(failing) == 1 and "RDSDBDATA2: Initializing 35 %" in failing[0]["message"]


def test_every_volume_done_is_ready_when_required_and_a_volume_is_only_judged_when_required():
    done = _judged({"volume": "RDSDBDATA2", "status": None, "percent": None}, require_storage_initialized=True)
    assert done["verdict"] == "READY"
    assert all(r["ok"] for r in done["reasons"] if r["code"] == "STORAGE_INITIALIZING")
    assert _judged({"volume": "RDSDBDATA2", "status": "Initializing", "percent": 35})["verdict"] == "READY"
