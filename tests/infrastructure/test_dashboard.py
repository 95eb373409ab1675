"""The live view in the synthesized template: one CloudWatch dashboard whose metrics are the names the
functions emit (``live.names``, compared with the EMF that ``steps.live_emit`` prints), the target's AWS/RDS
metrics beside them, its two variables, the limits as annotations when the context names the target,
the console link as a stack output and in every function's environment."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from cutover_prep.analysis.limits import expected_limits
from cutover_prep.dal.records.run import RunItem, StorageSample
from cutover_prep.live import names
from cutover_prep.observability import metrics
from cutover_prep.steps import live_emit as emit
from tests.unit.test_live_metrics import emf_records

from .conftest import Synth, flat

TARGET_CONTEXT = {"dashboard_instance_class": "db.m5.large", "dashboard_storage_type": "gp3",
                  "dashboard_allocated_gb": "400"}
NAME = "<AWS::StackName>-live-<AWS::Region>"


def dashboard_of(synth: Synth) -> tuple[str, dict[str, Any]]:
    dashboards = synth.resources("AWS::CloudWatch::Dashboard")
    assert len(dashboards) == 1, sorted(dashboards)
    [(logical_id, resource)] = dashboards.items()
    return logical_id, resource["Properties"]


def body_of(synth: Synth) -> dict[str, Any]:
    return json.loads(flat(dashboard_of(synth)[1]["DashboardBody"]))


def metric_rows(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every metric (not expression) of every widget: namespace, name, dimensions, options."""
    rows = []
    for widget in body["widgets"]:
        for row in widget.get("properties", {}).get("metrics", []):
            options = row[-1] if isinstance(row[-1], dict) else {}
            parts = row[:-1] if options else row
            if not parts:  # a math expression
                continue
            namespace, name, *dims = parts
            dimensions = dict(zip(dims[::2], dims[1::2], strict=True))
            rows.append({"namespace": namespace, "name": name, "dimensions": dimensions,
                         "stat": options.get("stat", "Average"), "widget": widget["properties"].get("title")})
    return rows


@pytest.fixture(scope="module")
def with_target(synth_factory) -> Synth:
    return synth_factory(TARGET_CONTEXT)


@pytest.fixture
def emitted(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Iterator[list[dict[str, Any]]]:
    """What every emitting function prints with Powertools metrics enabled in-process."""

    class Run:
        def get_run(self, run_id: str) -> RunItem:
            return RunItem.read({"run_id": run_id, "bytes_planned": 100, "bytes_read": 40})

    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    metrics.clear_metrics()
    capsys.readouterr()
    emit.chunk_read("run-x", 4096)
    emit.unit_done("run-x")
    emit.unit_failed("run-x")
    emit.bytes_remaining("run-x", Run())
    emit.storage_progress("run-x", StorageSample(at="2026-11-27T10:00:00+00:00", step="WarmUnit", percent=37))

    class Samples:  # two minutes of RDS progress: 10 % then 12 % (1 %/min, 88 min left)
        def storage_samples(self, run_id: str) -> list[StorageSample]:
            return [StorageSample(at=f"2026-11-27T10:0{m}:00+00:00", step="WarmUnit", status="Initializing",
                                  percent=10 + m) for m in (0, 2)]

    emit.storage_eta("run-x", StorageSample(at="2026-11-27T10:02:00+00:00", step="WarmUnit", status="Initializing",
                                            percent=12), Samples())
    metrics.flush_metrics()
    yield emf_records(capsys.readouterr().out)
    metrics.clear_metrics()


def test_the_dashboard_shows_what_the_functions_emit_under_the_same_names(plain: Synth, emitted) -> None:
    ours = [r for r in metric_rows(body_of(plain)) if r["namespace"] == names.NAMESPACE]
    assert {r["name"] for r in ours} == {m.name for m in names.METRICS}
    # the same names and the same dimension set on both sides (a metric is its namespace, name and dimensions)
    assert {r["name"] for r in emitted} == {m.name for m in names.METRICS}
    assert {r["namespace"] for r in emitted} == {names.NAMESPACE}
    for r in ours:
        assert set(r["dimensions"]) == {e_dim for e in emitted for e_dim in e["dimensions"]} == set(names.DIMENSIONS)
        assert r["dimensions"][names.SERVICE_DIMENSION] == names.SERVICE
    statistic = {m.name: m.statistic for m in names.METRICS}
    assert all(r["stat"] == statistic[r["name"]] for r in ours), ours


def test_the_target_s_rds_metrics_are_beside_ours(plain: Synth) -> None:
    rds = [r for r in metric_rows(body_of(plain)) if r["namespace"] == "AWS/RDS"]
    assert {r["name"] for r in rds} == {"ReadIOPS", "ReadThroughput", "ReadLatency", "DiskQueueDepth"}
    assert all(set(r["dimensions"]) == {"DBInstanceIdentifier"} for r in rds)


def test_the_rate_and_the_eta_are_metric_math_on_our_metrics(plain: Synth) -> None:
    expressions = {row[0]["label"]: row[0]["expression"] for w in body_of(plain)["widgets"]
                   for row in w.get("properties", {}).get("metrics", []) if len(row) == 1 and "expression" in row[0]}
    assert expressions["read rate (MiB/s, ours)"] == "bytes / PERIOD(bytes) / 1048576"
    eta = next(e for label, e in expressions.items() if label.startswith("ETA"))
    assert eta == "FILL(left, REPEAT) / (bytes5 / PERIOD(bytes5)) / 60"
    ids = {row[-1].get("id"): row[1] for w in body_of(plain)["widgets"]
           for row in w.get("properties", {}).get("metrics", []) if len(row) > 1}
    assert ids["bytes"] == ids["bytes5"] == "BytesRead" and ids["left"] == "BytesRemaining"


def test_the_run_and_the_instance_are_variables_of_one_dashboard(plain: Synth) -> None:
    variables = {v["id"]: v for v in body_of(plain)["variables"]}
    assert set(variables) == {names.RUN_VARIABLE, names.INSTANCE_VARIABLE}
    run, instance = variables[names.RUN_VARIABLE], variables[names.INSTANCE_VARIABLE]
    assert (run["type"], run["property"]) == ("property", names.RUN_DIMENSION)
    assert run["search"] == '{CutoverPrep,service,run_id} MetricName="BytesRead"'
    assert run["populateFrom"] == names.RUN_DIMENSION
    assert (instance["type"], instance["property"]) == ("property", "DBInstanceIdentifier")
    assert instance["search"].startswith("{AWS/RDS,DBInstanceIdentifier}")


def test_the_console_link_is_an_output_and_in_every_function(plain: Synth) -> None:
    _, props = dashboard_of(plain)
    assert flat(props["DashboardName"]) == NAME
    url = flat(plain.template["Outputs"][names.DASHBOARD_OUTPUT]["Value"])
    assert url == names.dashboard_url("<AWS::Region>", NAME)
    functions = plain.resources("AWS::Lambda::Function")
    assert functions
    for logical_id, function in functions.items():
        assert flat(function["Properties"]["Environment"]["Variables"][names.DASHBOARD_ENV]) == NAME, logical_id


def test_no_limits_are_drawn_unless_the_context_names_the_target(plain: Synth) -> None:
    body = body_of(plain)
    assert not any(w.get("properties", {}).get("annotations") for w in body["widgets"])
    assert "No ceilings drawn" in body["widgets"][0]["properties"]["markdown"]


def test_the_storage_limits_are_horizontal_annotations(with_target: Synth) -> None:
    assert with_target.error is None, with_target.error
    nag = with_target.plugin("AwsSolutions")
    assert nag["conclusion"] == "success" and nag["violations"] == []
    limits = expected_limits("db.m5.large", "gp3", 400)["effective"]
    drawn = {w["properties"]["title"]: [a["value"] for a in w["properties"]["annotations"]["horizontal"]]
             for w in body_of(with_target)["widgets"] if w.get("properties", {}).get("annotations")}
    assert drawn == {
        "RDS ReadIOPS": [limits["peak"]["iops"], limits["sustained"]["iops"]],
        "Read rate (MiB/s): ours and RDS ReadThroughput": [limits["peak"]["throughput_mb_s"],
                                                           limits["sustained"]["throughput_mb_s"]],
    }
    assert drawn["RDS ReadIOPS"] == [12000, 3600]  # gp3 striped from 400 GiB; db.m5.large's baseline


@pytest.mark.parametrize(("context", "needle"), [
    ({"dashboard_instance_class": "db.m5.large"}, "needs dashboard_storage_type and dashboard_allocated_gb"),
    ({**TARGET_CONTEXT, "dashboard_instance_class": "db.nope.large"}, "context dashboard_*"),
    ({**TARGET_CONTEXT, "dashboard_allocated_gb": "lots"}, "dashboard_allocated_gb must be a number"),
])
def test_a_bad_target_context_fails_the_synth_by_name(context: dict[str, str], needle: str) -> None:
    from aws_cdk import App

    from cutover_prep_cdk.config import Config, ConfigError
    from cutover_prep_cdk.dashboard import target_limits

    app = App(context={"skip_layer_build": True, **context})
    with pytest.raises(ConfigError, match=None) as raised:
        target_limits(Config.from_node(app.node).dashboard_target)
    assert needle in str(raised.value)
