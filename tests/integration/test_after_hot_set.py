"""``warmup.after_hot_set`` in the real ASL (moto's interpreter, handlers in-process, the PostgreSQL here):
once the hot set is read, no new unit is admitted while ``max_concurrency`` units or more hold slots, and the
run still reads everything (issue 23 §1).

Judges: every version of the slot item the run wrote (captured as DynamoDB accepted it), not timing; the
coverage the server confirmed (pg_prewarm's or pg_read_binary_file's block counts) and the census of what the
server's catalogue says is on the volume."""

from __future__ import annotations

import time
from typing import Any

import pytest

from cutover_prep.dal.records.run import WarmupControl
from cutover_prep.dal.store import Store
from tests.integration.test_workflow import aws, finish, run_input, store_of  # noqa: F401  (aws: the fixture)
from tests.integration.test_workflow_slots import _hold

pytestmark = pytest.mark.postgres


def test_after_the_hot_set_at_most_n_units_hold_slots_and_everything_is_read(aws, sample_db, monkeypatch):  # noqa: F811
    accepted_versions: list[tuple[int, dict[str, Any]]] = []
    put = Store.put_warmup_control

    def recorded(self: Store, run_id: str, control: WarmupControl, *, version: int | None) -> bool:
        accepted = put(self, run_id, control, version=version)
        if accepted:
            now_at = (version or 0) + 1  # the version DynamoDB accepted (Store.put_warmup_control)
            kept = control.state()  # as written
            if now_at % 3 == 0:  # an adverse schedule, as on a loaded machine: this writer is descheduled between
                time.sleep(0.05)  # DynamoDB's acceptance and this record, and later versions are recorded first
            accepted_versions.append((now_at, kept))
        return accepted

    monkeypatch.setattr(Store, "put_warmup_control", recorded)
    aws.faults["handlers.warm_unit"] = [_hold] * 4  # the first units read a while: the others ask meanwhile
    hot = {"engine": "postgres", "server": "the PostgreSQL here", "taken_at": "2026-11-25T00:00:00+00:00",
           "sources": ["statistics: pg_stat_user_tables"], "relations": 1,
           "names": [f"{sample_db.database}/hr.employees"]}
    desc = finish(aws, run_input(aws, sample_db, run_id="after-hot", max_concurrency=4, hot_set=hot,
                                 after_hot_set={"max_concurrency": 1}))
    assert desc["status"] == "SUCCEEDED", desc.get("cause")
    out = desc["output_json"]
    assert out["coverage_pct"] == 100.0
    store = store_of(aws)
    findings = store.get_json("runs/after-hot/findings.json")
    assert findings["census"]["unread_bytes"] == 0  # nothing the server's catalogue names was left unread
    hot_units = store.get_run("after-hot").hot_set_units
    assert hot_units and findings["hot_set"]["units"] == len(hot_units) == findings["hot_set"]["units_done"]

    # the item's history in the order DynamoDB accepted it (the order of the records is the threads' schedule's:
    # a loaded run recorded an admission before the switch after the switch, and this judge failed on it)
    accepted_versions.sort(key=lambda pair: pair[0])
    assert [v for v, _ in accepted_versions] == list(range(1, len(accepted_versions) + 1))  # each version once
    written = [doc for _, doc in accepted_versions]
    switched = [i for i, doc in enumerate(written) if doc.get("after_hot_set")]
    assert switched, "the slot item never recorded the hot set as warm"
    first = switched[0]
    assert written[first]["hot_left"] == []
    admitted_after = 0
    for before, doc in zip(written[first:], written[first + 1:], strict=False):
        new = set(doc["holders"]) - set(before["holders"])
        if new:  # a unit admitted after the hot set was warm: at most 1 held a slot with it
            admitted_after += len(new)
            assert len(doc["holders"]) <= 1, doc["holders"]
    new_at_switch = set(written[first]["holders"]) - set(written[first - 1]["holders"] if first else [])
    assert len(new_at_switch) == 0 or len(written[first]["holders"]) <= 1
    assert admitted_after + len(new_at_switch) > 0, "no unit left to admit after the hot set: the test proves nothing"
    section = findings["warmup"]["concurrency"]["after_hot_set"]
    assert section["max_concurrency"] == 1 and section["most_holders"] == 1
    assert section["admitted"] == admitted_after + len(new_at_switch)
    assert out["units"]["total"] - len(hot_units) >= section["admitted"]
