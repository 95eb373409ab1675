"""A local run with a hot-set profile (issue 23 §1): the profile taken by `cutover-prep hotset` on the
PostgreSQL here, the run's plan reads its relations first, and the findings say when they were warm."""

from __future__ import annotations

import json

import psycopg
import pytest
from click.testing import CliRunner

from cutover_prep.cli.main import app
from cutover_prep.hotset import load
from tests.conftest import conninfo
from tests.integration.test_hotset_cli import _dsn
from tests.integration.test_workflow import aws, finish, run_input, store_of  # noqa: F401 - the aws fixture

pytestmark = pytest.mark.postgres


def test_a_run_with_a_hot_set_profile_reads_it_first_and_says_when_it_was_warm(aws, sample_db, tmp_path):  # noqa: F811
    with psycopg.connect(conninfo(sample_db), autocommit=True) as conn:
        for _ in range(200):  # the application's hot table
            conn.execute("SELECT count(*) FROM hr.employees").fetchone()
    out = tmp_path / "hot.json"
    result = CliRunner().invoke(app, ["hotset", "--dsn", _dsn(sample_db, "postgresql", sample_db.database),
                                      "--database", sample_db.database, "--top", "2", "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    profile = load(out)
    hot = profile.to_input()

    taken = {f"{rel.schema_}.{rel.name}" for rel in profile.relations}
    first = next(n for n in ("docs.documents", "sales.orders_2023", "hr.employees") if n not in taken)
    desc = finish(aws, run_input(aws, sample_db, run_id="hot", hot_set=hot, priority=[first]))
    assert desc["status"] == "SUCCEEDED", desc.get("cause")
    store = store_of(aws)
    findings = store.get_json("runs/hot/findings.json")
    units = store.get_json("runs/hot/units.json")
    units = units["units"] if isinstance(units, dict) else units
    ranks = [u["priority"] for u in units]
    assert ranks == sorted(ranks) and set(ranks) == {0, 1, 2}  # priority, then the hot set, then the rest
    hot_keys = {r["segment"] for u in units if u["priority"] == 1 for r in u["ranges"]}
    names = {f"{sample_db.database}/{rel.schema_}.{rel.name}" for rel in profile.relations}
    assert {k.split("#")[0] for k in hot_keys} >= names  # the profile's tables (with their indexes, TOAST)

    section = findings["hot_set"]
    assert [s["source"] for s in section["sources"]] == ["warmup.priority", "hot-set profile statistics"]
    assert section["units"] == section["units_done"] > 0 and section["names_matched"] > 0
    assert section["warm_at"] is not None and section["warm_after_s"] is not None
    assert section["warm_at"] <= findings["timings"]["warmup_finished_at"]
    assert section["followed"] is True, json.dumps(findings["priority"], indent=1)
    assert section["pct_of_warmup"] < 100
    assert [g.get("hot_set", False) for g in findings["priority"]["groups"]] == [False, True, False]
    summary = store._s3.get_object(Bucket=store.bucket, Key="runs/hot/summary.md")["Body"].read().decode()
    line = next(x for x in summary.splitlines() if "hot set warm at" in x)
    assert "after the warm-up started" in line and "% of the warm-up's time" in line and "order followed" in line
    report = store._s3.get_object(Bucket=store.bucket, Key="runs/hot/report.html")["Body"].read().decode()
    assert 'id="hot-set"' in report
