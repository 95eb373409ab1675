"""A Multi-AZ failover under the run: the database is then served from the standby's volume, which the run did not
read, so the run is not READY (the verdict's FAILED_OVER).

RDS fails a Multi-AZ instance over to "a standby replica in another Availability Zone" (RDS User Guide, "Multi-AZ DB
instance deployments"), and DescribeDBInstances then reports that zone. The whole local run (the deployed ASL in moto,
the real handlers) warms the shared PostgreSQL's sample database; at its first WarmUnit the test moves moto's
stand-in instance to another zone, as RDS's answer would after a failover (moto's RebootDBInstance with ForceFailover
moves nothing). The judge is moto's own answer before and after: the findings must name both zones and fail the run.
Without the move (test_cli's run), the same zone is read twice and nothing fails for it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cutover_prep.local.input_file import Sections
from cutover_prep.local.runner import LOCAL_IDENTIFIER, LocalOptions, _execute


def _move_the_instance(zone: str, seen: dict[str, str]) -> Any:
    def fault(_payload: Any) -> None:
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.rds.models import rds_backends

        instance = rds_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].databases[LOCAL_IDENTIFIER]
        seen["before"] = instance.availability_zone
        instance.availability_zone = zone
    return fault


@pytest.mark.postgres
def test_a_failover_under_the_run_names_both_zones_and_is_not_ready(sample_db, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUTOVER_PREP_TLS", "disable")
    seen: dict[str, str] = {}
    options = LocalOptions(out=tmp_path / "failover", run_id="failover", progress=False,
                           sections=Sections(warmup={"unit_mb": 64}, benchmark={"enabled": False}))
    result = _execute(sample_db, options, faults={"handlers.warm_unit": [_move_the_instance("us-east-1b", seen)]})
    assert result.status == "SUCCEEDED"  # the workflow ran to its end; its verdict says what the failover means
    doc = json.loads((Path(result.out) / "findings.json").read_text())
    server = doc["server"]
    assert seen["before"] == "us-east-1a"  # moto's zone of the stand-in instance before the move
    assert (server["availability_zone"], server["availability_zone_end"]) == (seen["before"], "us-east-1b"), server
    assert server["failed_over"] is True and "standby's volume, which this run did not read" in server["note"]
    failing = [r["code"] for r in doc["verdict"]["reasons"] if not r["ok"]]
    assert doc["verdict"]["verdict"] == "NOT_READY" and failing == ["FAILED_OVER"], doc["verdict"]
    assert doc["coverage_pct"] == 100.0  # every unit was read: on the volume that is no longer the primary's
