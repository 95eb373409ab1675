"""The live view's metrics as the functions emit them (Powertools EMF on stdout, metrics enabled in-process):
names, units and dimensions are those of ``live.names``; nothing at all when metrics are disabled."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from aws_lambda_powertools.metrics import MetricUnit
from botocore.exceptions import ClientError

from cutover_prep.dal.records.run import RunItem, StorageSample
from cutover_prep.dal.store import Store
from cutover_prep.live import names
from cutover_prep.live.completion import completion_detail
from cutover_prep.observability import metrics
from cutover_prep.steps import live_emit as emit
from cutover_prep.warmup.planning import MIB
from tests.unit.contexts import warm_json
from tests.unit.test_unit_sizing import ALWAYS, RateEngine, big_event
from tests.unit.test_warmup import RUN_ID, start


def json_documents(text: str) -> list[dict[str, Any]]:
    """Every JSON object printed at the start of a line or right after another: a local run's WarmUnit threads
    print at once, and ``print`` writes a document and its line feed apart, so two documents can share a line
    ('{...}{...}'). Lambda's log stream has one invocation a process; this is only the test's reading of it."""
    decoder, docs = json.JSONDecoder(), []
    for line in text.splitlines():
        at = 0
        while line.startswith("{", at):
            doc, at = decoder.raw_decode(line, at)
            docs.append(doc)
    return docs


def emf_records(text: str) -> list[dict[str, Any]]:
    """Each metric value in the EMF documents printed: name, unit, value, namespace and dimensions."""
    found = []
    for number, doc in enumerate(json_documents(text)):
        meta = doc.get("_aws")
        if not meta:
            continue
        for directive in meta["CloudWatchMetrics"]:
            dims = {name: doc[name] for group in directive["Dimensions"] for name in group}
            for metric in directive["Metrics"]:
                values = doc[metric["Name"]]
                for value in values if isinstance(values, list) else [values]:
                    found.append({"name": metric["Name"], "unit": metric["Unit"], "value": value,
                                  "namespace": directive["Namespace"], "dimensions": dims,
                                  "document": number})
    return found


@pytest.fixture
def enabled(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    monkeypatch.delenv("POWERTOOLS_DEV", raising=False)
    metrics.clear_metrics()
    yield
    metrics.clear_metrics()


def test_the_names_module_is_one_consistent_list() -> None:
    assert len({m.name for m in names.METRICS}) == len(names.METRICS)
    assert {m.unit for m in names.METRICS} <= {u.value for u in MetricUnit}
    assert names.NAMESPACE == metrics.namespace and names.SERVICE == metrics.service
    assert names.DIMENSIONS == ("service", "run_id")  # docs/deploy.md documents exactly these


def test_a_warm_unit_emits_each_chunk_its_end_and_what_is_left(store: Store, capsys, enabled) -> None:
    start(store)
    store.update_run(RUN_ID, bytes_planned=24 * MIB)
    engine = RateEngine(mib_per_s=50.0)
    out = warm_json(big_event(10, chunk_mb=2), store=store, engine=lambda: engine, budget=ALWAYS,
                    on_chunk=lambda n: emit.chunk_read(RUN_ID, n))
    assert out["status"] == "DONE"
    emit.unit_done(RUN_ID)
    emit.bytes_remaining(RUN_ID, store)
    metrics.flush_metrics()  # what @metrics.log_metrics does at the end of the handler
    records = emf_records(capsys.readouterr().out)

    by_name: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by_name.setdefault(r["name"], []).append(r)
    assert set(by_name) == {"BytesRead", "ChunksRead", "UnitsDone", "BytesRemaining"}
    assert sum(r["value"] for r in by_name["BytesRead"]) == 10 * MIB == sum(r.bytes for r in engine.reads)
    assert len(by_name["ChunksRead"]) == len(engine.reads) == 5
    # one EMF document a chunk: each datapoint has its chunk's time, not the invocation's end
    assert len({r["document"] for r in by_name["BytesRead"]}) == 5
    assert [r["value"] for r in by_name["UnitsDone"]] == [1.0]
    assert [r["value"] for r in by_name["BytesRemaining"]] == [14 * MIB]
    units = {m.name: m.unit for m in names.METRICS}
    for r in records:
        assert r["namespace"] == names.NAMESPACE
        assert r["dimensions"] == {"service": names.SERVICE, "run_id": RUN_ID}
        assert r["unit"] == units[r["name"]]


def test_a_failed_unit_and_rds_progress_are_emitted_with_the_run(capsys, enabled) -> None:
    emit.unit_failed("r-2")
    emit.storage_progress("r-2", StorageSample.new(at="t", step="WarmUnit", status="Initializing", percent=42))
    emit.storage_progress("r-2", None)  # another caller sampled within the minute
    emit.storage_progress("r-2", StorageSample.new(at="t", step="WarmUnit", gap="Throttling"))
    metrics.flush_metrics()
    records = emf_records(capsys.readouterr().out)
    assert [(r["name"], r["unit"], r["value"]) for r in records] == [
        ("UnitsFailed", "Count", 1.0), ("StorageOperationPercentProgress", "Percent", 42.0)]
    assert all(r["dimensions"] == {"service": "cutover-prep", "run_id": "r-2"} for r in records)


def test_bytes_remaining_says_nothing_without_a_plan_or_a_readable_run(capsys, enabled) -> None:
    class Runs:
        def __init__(self, item: Any) -> None:
            self.item = item

        def get_run(self, run_id: str) -> Any:
            if isinstance(self.item, Exception):
                raise self.item
            return self.item

    emit.bytes_remaining("r-3", Runs(RunItem.read({"run_id": "r-3", "bytes_read": 5})))  # not planned yet
    emit.bytes_remaining("r-3", Runs(ClientError({"Error": {"Code": "ProvisionedThroughputExceededException"}},
                                                 "GetItem")))
    emit.bytes_remaining("r-3", Runs(RunItem.read({"run_id": "r-3", "bytes_planned": 10, "bytes_read": 12})))  # >= 0
    metrics.flush_metrics()
    assert [(r["name"], r["value"]) for r in emf_records(capsys.readouterr().out)] == [("BytesRemaining", 0.0)]


def test_disabled_metrics_print_nothing_and_read_nothing(capsys, monkeypatch) -> None:
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    metrics.clear_metrics()

    class NoReads:
        def get_run(self, run_id: str) -> Any:
            raise AssertionError("no DynamoDB read when metrics are off")

    emit.chunk_read("r-4", 8192)
    emit.unit_done("r-4")
    emit.unit_failed("r-4")
    emit.bytes_remaining("r-4", NoReads())
    emit.storage_progress("r-4", StorageSample.new(at="t", step="WarmUnit", percent=10))
    assert metrics.metric_set == {}
    assert capsys.readouterr().out == ""


def test_the_link_in_the_completion_event(monkeypatch) -> None:
    item = {"run_id": "r-5", "target": {"db_instance_identifier": "db1", "engine": "postgres"}}
    monkeypatch.delenv(names.DASHBOARD_ENV, raising=False)
    assert completion_detail(item, status="SUCCEEDED", verdict="READY", reasons=[], bucket="b",
                             findings_key=None)["dashboard"] is None
    monkeypatch.setenv(names.DASHBOARD_ENV, "CutoverPrep-live-eu-west-1")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    link = completion_detail(item, status="SUCCEEDED", verdict="READY", reasons=[], bucket="b",
                             findings_key=None)["dashboard"]
    assert link == ("https://console.aws.amazon.com/cloudwatch/home?region=eu-west-1"
                    "#dashboards/dashboard/CutoverPrep-live-eu-west-1")
    assert names.is_dashboard_url(link)
    assert not names.is_dashboard_url(link + ")[x](https://evil.example)")


def test_deploy_md_documents_every_metric_and_dimension() -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "deploy.md").read_text()
    section = text[text.index("### The live view (CloudWatch dashboard)"):]
    section = section[:section.index("\n### ", 5)]
    for metric in names.METRICS:
        assert f"`{metric.name}`" in section, metric.name
    for dimension in (names.SERVICE_DIMENSION, names.RUN_DIMENSION, names.NAMESPACE, names.DASHBOARD_OUTPUT):
        assert f"`{dimension}`" in section, dimension


def test_threads_emitting_at_once_keep_each_datapoint_with_its_own_run(capsys, enabled) -> None:
    """CI: a local run's WarmUnit threads shared Powertools' one metric and dimension set, and a document
    declared run_id without its value (KeyError 'run_id' in test_live_view). Each thread here emits its own
    run's bytes (thread i: run r-i, i bytes), so a datapoint carried by another run's document is seen."""
    import sys
    import threading

    barrier = threading.Barrier(8)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can: the race shows at once

    def emit_many(i: int) -> None:
        barrier.wait()
        for _ in range(40):
            emit.chunk_read(f"r-{i}", i + 1)

    threads = [threading.Thread(target=emit_many, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    records = [r for r in emf_records(capsys.readouterr().out) if r["name"] == "BytesRead"]
    assert len(records) == 8 * 40
    assert all(r["dimensions"] == {"service": names.SERVICE, "run_id": f"r-{int(r['value']) - 1}"} for r in records)


class TruncatedEngine(RateEngine):
    """Reads as RateEngine, but the segment ends at block ``ends``: the blocks past it are gone."""

    def __init__(self, ends: int, **kw: Any) -> None:
        super().__init__(**kw)
        self.ends = ends

    def read_range(self, rng):  # type: ignore[no-untyped-def]
        from dataclasses import replace as copy

        from cutover_prep.engines import Extent

        ext = rng.extents[0]
        exists = max(0, min(ext.blocks, self.ends - ext.first_block))
        result = super().read_range(copy(rng, extents=(Extent(ext.file_id, ext.first_block, exists),)))
        result.gone = ext.blocks - exists
        return result


def test_bytes_remaining_leaves_out_what_was_truncated_while_the_run_ran(store: Store, capsys, enabled) -> None:
    """Issue 32: 10 MiB planned in the unit, the relation ends 4 MiB in: nothing is left to read of it."""
    start(store)
    store.update_run(RUN_ID, bytes_planned=10 * MIB)
    engine = TruncatedEngine(ends=4 * MIB // 8192, mib_per_s=50.0)
    assert warm_json(big_event(10, chunk_mb=2), store=store, engine=lambda: engine, budget=ALWAYS)["status"] == "DONE"
    emit.bytes_remaining(RUN_ID, store)
    metrics.flush_metrics()
    remaining = [r["value"] for r in emf_records(capsys.readouterr().out) if r["name"] == "BytesRemaining"]
    assert remaining == [0.0]
    assert sum(r.bytes for r in engine.reads) == 4 * MIB
