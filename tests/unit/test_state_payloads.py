"""benchmarks/state_payloads.py (issue 34): what differs from one run to the next is masked, nothing else is.

A second recording of the same code must compare equal (a new run id, new times, uuids, oids, measured rates, a
new order of the Map's calls); a field added, removed, renamed or retyped, or a step called a different number of
times, must be reported (exit 1), by its path."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def payloads():
    spec = importlib.util.spec_from_file_location("state_payloads", ROOT / "benchmarks" / "state_payloads.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(run_id: str, started: str, execution: str, oid: int, rate: float, holders: int | None) -> list[dict]:
    def run() -> dict:
        return {"run_id": run_id, "target": {"host": "127.0.0.1", "port": 5432}}

    return [
        {"step": "cutover-prep-validate-input", "event": {"input": {"run_id": run_id}, "execution_name": execution},
         "result": {"run_id": run_id, "started_at": started}, "error": False},
        {"step": "cutover-prep-discover", "event": {"run_id": run_id, "started_at": started},
         "result": {"units": 2, "plan_key": f"runs/{run_id}/plan.json", "context": run()}, "error": False},
        *({"step": "cutover-prep-warm-unit",
           "event": {"run": run(), "unit": {"unit_id": f"u{i}", "ranges": [
               {"locator": {"oid": oid + i, "relname": f"pg_toast_{oid}"}, "extents": [[0, 0, 7]]}]},
               "slot": {"holders": holders, "rate": {"mib_per_s": rate}}},
           "result": {"unit_id": f"u{i}", "bytes_read": 57344, "rate": {"mib_per_s": rate * 2}}, "error": False}
          for i in (1, 2)),
        {"step": "cutover-prep-run-point", "event": {"point": {"point_id": "random-01s", "seconds": 1.0}},
         "result": {"point_id": "random-01s", "iops": rate * 100, "started_at": started}, "error": False},
    ]


@pytest.fixture
def before() -> list[dict]:
    return _run("payloads", "2026-11-27T23:53:13.330272+00:00", "28ea2953-b849-442d-9f23-492b4986c674",
                24850, 1.032, None)


@pytest.fixture
def again() -> list[dict]:
    """The same code run again: another run id, times, execution name, oids, rates, slot holders, Map order."""
    records = _run("local-20261128T001500", "2026-11-28T00:15:02.1+00:00", "8b53d61e-f89a-469f-b561-daf07e7ad3f0",
                   25701, 0.875, 1)
    records[2], records[3] = records[3], records[2]
    return records


def _compare(payloads, a, b) -> tuple[int, str]:
    lines: list[str] = []
    return payloads.compare(a, b, echo=lines.append), "\n".join(lines)


def test_a_second_run_of_the_same_code_compares_equal(payloads, before, again) -> None:
    differ, text = _compare(payloads, before, again)
    assert differ == 0, text
    assert "no differences" in text


def test_a_changed_run_id_alone_is_not_a_difference(payloads, before) -> None:
    other = json.loads(json.dumps(before).replace('"payloads"', '"run-2"').replace("runs/payloads/", "runs/run-2/"))
    assert other != before
    assert _compare(payloads, before, other)[0] == 0


def test_the_order_of_keys_is_not_a_difference(payloads, before) -> None:
    other = copy.deepcopy(before)
    other[1]["result"] = dict(reversed(list(other[1]["result"].items())))
    assert _compare(payloads, before, other)[0] == 0


@pytest.mark.parametrize("change, path", [
    (lambda r: r[2]["result"].update(bytes=r[2]["result"].pop("bytes_read")), "bytes_read"),  # renamed
    (lambda r: r[1]["result"].update(schema_version=1), "result.schema_version"),  # added
    (lambda r: r[1]["result"]["context"].pop("target"), "result.context.target"),  # removed
    (lambda r: r[2]["result"].update(bytes_read="57344"), "result.bytes_read"),  # retyped
    (lambda r: r[1]["result"].update(units=3), "result.units"),  # another value
    (lambda r: r[2]["event"]["slot"].pop("holders"), "event.slot.holders"),  # a masked value's key removed
    (lambda r: r[2]["event"]["slot"]["rate"].update(mib_per_s={"v": 1.0}), "event.slot.rate.mib_per_s"),
])
def test_a_change_of_structure_or_value_is_reported_by_its_path(payloads, before, again, change, path) -> None:
    after = copy.deepcopy(again)
    change(after)
    differ, text = _compare(payloads, before, after)
    assert differ == 1, text
    assert path in text
    assert "1 invocations differ" in text


def test_a_masked_value_is_replaced_but_its_key_is_kept(payloads, before) -> None:
    calls = payloads.masked_calls(before)
    unit = json.loads(calls["cutover-prep-warm-unit"][0])
    assert unit["event"]["unit"]["ranges"][0]["locator"] == {"oid": "<masked>", "relname": "pg_toast_<OID>"}
    assert unit["event"]["slot"] == {"holders": "<masked>", "rate": {"mib_per_s": "<masked>"}}
    assert unit["result"]["bytes_read"] == 57344  # not a timing: compared as it is
    point = json.loads(calls["cutover-prep-run-point"][0])
    assert point["event"]["point"]["seconds"] == 1.0  # the point's configured length, not a measurement
    assert point["result"]["started_at"] == "<TIME>"


def test_a_step_called_more_or_less_often_is_reported(payloads, before) -> None:
    fewer = [r for r in before if r["step"] != "cutover-prep-run-point"]
    differ, text = _compare(payloads, before, fewer)
    assert differ == 1
    assert "cutover-prep-run-point: 1 calls before, 0 after" in text
    assert "only before" in text


def test_the_command_line_exits_1_on_a_difference_and_0_on_none(payloads, before, again, tmp_path, capsys) -> None:
    paths = {}
    for name, records in (("before", before), ("again", again), ("changed", again[:-1])):
        paths[name] = tmp_path / f"{name}.jsonl"
        paths[name].write_text("".join(json.dumps(r) + "\n" for r in records))
    assert payloads.main(["--compare", str(paths["before"]), str(paths["again"])]) == 0
    assert payloads.main(["--compare", str(paths["before"]), str(paths["changed"])]) == 1
    assert "1 invocations differ" in capsys.readouterr().out


def test_the_recorded_before_file_compares_equal_with_itself_and_names_every_step(payloads) -> None:
    records = payloads.load(ROOT / "benchmarks" / "state_payloads" / "before.jsonl")
    steps = {r["step"] for r in records}
    assert {"cutover-prep-validate-input", "cutover-prep-discover", "cutover-prep-warm-unit",
            "cutover-prep-run-point", "cutover-prep-finalize"} <= steps
    assert not any(r["error"] for r in records)
    assert payloads.compare(records, records, echo=lambda line: None) == 0
