"""A local run (real ASL in moto, real handlers in-process, PostgreSQL) with Powertools metrics enabled:
what the functions print as EMF are the dashboard's metric names (``live.names``, which
tests/infrastructure/test_dashboard.py checks against the synthesized dashboard), with the run as the
only dimension besides ``service``, and their figures agree with the findings; the dashboard's link
is in the findings, summary.md and the completion event."""

from __future__ import annotations

from collections import defaultdict
from unittest import mock

import pytest

from cutover_prep.live import names
from cutover_prep.local.harness import LocalAws
from cutover_prep.observability import metrics
from tests.integration.test_workflow import capture_completion_events, finish, run_input, store_of
from tests.unit.test_live_metrics import emf_records

pytestmark = pytest.mark.postgres
DASHBOARD = "CutoverPrep-live-us-east-1"


def test_a_run_emits_the_dashboards_metrics_and_links_the_dashboard(sample_db, capsys) -> None:
    env = {"POWERTOOLS_METRICS_DISABLED": "false", names.DASHBOARD_ENV: DASHBOARD}
    with LocalAws(env=env) as aws:
        aws.create_instance("restored-db")
        completions = capture_completion_events(aws)
        # The harness mutes add_metric (a local run's stdout is the CLI's result): give it back, as in Lambda.
        with mock.patch.object(metrics, "add_metric", type(metrics).add_metric.__get__(metrics)):
            capsys.readouterr()
            desc = finish(aws, run_input(aws, sample_db, run_id="live"))
            printed = capsys.readouterr().out
        assert desc["status"] == "SUCCEEDED", desc.get("cause")
        store = store_of(aws)
        findings = store.get_json("runs/live/findings.json")
        summary = store._s3.get_object(Bucket=store.bucket, Key="runs/live/summary.md")["Body"].read().decode()
        events = completions()

    records = emf_records(printed)
    values: dict[str, list[float]] = defaultdict(list)
    for r in records:
        values[r["name"]].append(r["value"])
        assert r["namespace"] == names.NAMESPACE
        assert r["dimensions"] == {"service": names.SERVICE, "run_id": "live"}, r
    assert set(values) <= {m.name for m in names.METRICS}
    assert {"BytesRead", "ChunksRead", "UnitsDone", "BytesRemaining"} <= set(values)
    assert sum(values["BytesRead"]) == findings["bytes"]["read"] > 0
    assert sum(values["UnitsDone"]) == findings["units"]["done"]
    assert min(values["BytesRemaining"]) == 0  # the last unit to finish finds nothing left

    link = names.dashboard_url("us-east-1", DASHBOARD)
    assert findings["dashboard"] == link
    assert f"- Live view: <{link}> (CloudWatch dashboard: choose run `live`)" in summary.splitlines()
    assert [e["detail"]["dashboard"] for e in events] == [link]
