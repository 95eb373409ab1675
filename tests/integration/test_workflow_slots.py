"""Admission control in the real ASL (moto's interpreter, handlers in-process, real PostgreSQL):
units wait for a slot, a failed unit gives its slot back, a restart keeps the level."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta
from typing import Any

import pytest

from cutover_prep.dal.records.run import WarmupControl
from cutover_prep.engines import PermanentReadError
from cutover_prep.warmup import slots
from tests.integration.test_workflow import aws, finish, run_input, store_of  # noqa: F401  (aws: the fixture)

pytestmark = pytest.mark.postgres

# level 1 for the whole run: no window ends (by time: an hour; by chunks: never)
ONE_AT_A_TIME = {"adaptive": True, "adaptive_start": 1, "adaptive_window_seconds": 3600, "adaptive_window_chunks": 0}


def reading_intervals(unit_items: list[dict[str, Any]]) -> list[tuple[datetime, datetime]]:
    """When each unit was reading: from its first chunk's start to its last chunk's end."""
    out = []
    for item in unit_items:
        spans = [(datetime.fromisoformat(end) - timedelta(seconds=float(secs)), datetime.fromisoformat(end))
                 for end, _, secs in item.get("chunks") or []]
        if spans:
            out.append((min(s for s, _ in spans), max(e for _, e in spans)))
    return sorted(out)


def _hold(_event: Any) -> None:
    """A unit that reads a while: the other Map iterations ask for the slot while it is held (0.5 s on the
    wall clock; the harness scales only the ASL's Wait and Retry intervals, decision 61)."""
    threading.Event().wait(0.5)


def test_units_wait_for_a_slot_and_never_read_beyond_the_level(aws, sample_db, monkeypatch):  # noqa: F811
    # The first units hold their slot 0.5 s, so the other Map iterations find none. A unit without a
    # slot asks again inside its invocation for up to slots.POLL_SECONDS, so a short wait costs no
    # extra invocation (counting invocations failed in CI: exactly 2 × units): the refusals are
    # counted where they are decided.
    answers: list[bool] = []
    ask = slots._acquire_once

    def counted(*args: Any, **kwargs: Any) -> Any:
        result = ask(*args, **kwargs)
        answers.append(bool(result.granted))
        return result

    monkeypatch.setattr(slots, "_acquire_once", counted)
    aws.faults["handlers.warm_unit"] = [_hold, _hold, _hold]
    desc = finish(aws, run_input(aws, sample_db, run_id="slots", max_concurrency=4, **ONE_AT_A_TIME))
    assert desc["status"] == "SUCCEEDED", desc.get("cause")
    out = desc["output_json"]
    units = out["units"]["total"]
    assert units > 3 and out["coverage_pct"] == 100.0
    # every unit was granted a slot once; some were refused first and asked again
    assert answers.count(True) == units and answers.count(False) > 0
    assert aws.invocations["handlers.warm_slot"] >= 2 * units  # asked, and gave the slot back
    intervals = reading_intervals([u.stored() for u in store_of(aws).units("slots")])
    assert len(intervals) == units
    for (_, end), (start, _) in zip(intervals, intervals[1:], strict=False):
        assert start >= end - timedelta(milliseconds=5), "two units read at once at level 1"
    findings = store_of(aws).get_json("runs/slots/findings.json")
    concurrency = findings["warmup"]["concurrency"]
    assert concurrency["level"] == 1 and concurrency["adaptive"] is True and concurrency["max_concurrency"] == 4
    assert findings["warmup"]["sizing_rate"]["source"] == "assumed"  # no benchmark: no cold probe
    assert store_of(aws).get_warmup_control("slots").holders == []


def test_a_failed_unit_gives_its_slot_back(aws, sample_db):  # noqa: F811
    def broken(_event):
        raise PermanentReadError("relation is gone (injected)")

    aws.faults["handlers.warm_unit"] = [broken]
    desc = finish(aws, run_input(aws, sample_db, run_id="slotfail", max_concurrency=4, **ONE_AT_A_TIME))
    out = desc["output_json"]
    # at level 1 a slot kept by the failed unit would leave every other unit waiting for ever
    assert out["units"]["failed"] == 1 and out["units"]["done"] == out["units"]["total"] - 1
    assert store_of(aws).get_warmup_control("slotfail").holders == []


def test_not_adaptive_admits_every_unit_at_once(aws, sample_db):  # noqa: F811
    desc = finish(aws, run_input(aws, sample_db, run_id="fixed", max_concurrency=4, adaptive=False))
    out = desc["output_json"]
    assert out["coverage_pct"] == 100.0
    assert aws.invocations["handlers.warm_slot"] == 2 * out["units"]["total"]  # nobody waited
    concurrency = store_of(aws).get_json("runs/fixed/findings.json")["warmup"]["concurrency"]
    assert concurrency["level"] == 4 and concurrency["settled"] == "fixed"


def test_a_restart_keeps_the_level_and_drops_the_old_attempts_slots(aws, sample_db):  # noqa: F811
    payload = run_input(aws, sample_db, run_id="again", max_concurrency=4, **ONE_AT_A_TIME)
    first = finish(aws, payload)
    assert first["output_json"]["coverage_pct"] == 100.0
    store = store_of(aws)
    doc = store.get_warmup_control("again").stored()
    # as the controller would leave it after settling at 2, with slots an aborted execution never gave back
    control = {**doc["control"], "level": 2, "best_level": 2, "best_mib_per_s": 50.0, "settled": "no_growth"}
    kept = {k: v for k, v in doc.items() if k not in ("pk", "sk", "version", "updated_at")}
    assert store.put_warmup_control("again", WarmupControl.model_validate(
        {**kept, "control": control, "holders": ["x1", "x2"]}), version=doc["version"])
    for unit in store.units("again"):  # the next attempt has units to read
        store._ddb.delete_item(TableName=store.table, Key={"pk": {"S": "RUN#again"}, "sk": {"S": unit.sk}})
    second = finish(aws, payload)
    assert second["status"] == "SUCCEEDED", second.get("cause")
    assert second["output_json"]["coverage_pct"] == 100.0
    concurrency = store.get_json("runs/again/findings.json")["warmup"]["concurrency"]
    assert concurrency["level"] == 2 and concurrency["settled"] == "no_growth" and concurrency["best_level"] == 2
    assert store.get_warmup_control("again").holders == []
