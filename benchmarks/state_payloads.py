"""The JSON between the workflow's states, before and after a change (decision 53, decision 58).

Step Functions hands each Lambda its event and keeps its result; an execution in flight across a deploy hands
the new code a state the old code made, so a refactoring of how steps read their input must leave every event
and result as it was. This records them under the real ASL in moto (``cutover_prep.local.harness``) and compares
two recordings.

Record (a pytest plugin; the workflow tests run the real ASL with the real handlers in-process)::

    STATE_PAYLOADS=/tmp/new.jsonl .venv/bin/python -m pytest -p no:cacheprovider -p benchmarks.state_payloads \\
        tests/integration/test_workflow.py

and the version before from an export of its commit (``git archive COMMIT lambdas tests statemachines
pyproject.toml | tar -x -C /tmp/old``), run from there with ``PYTHONPATH=/tmp/old/lambdas:/tmp/old:$PWD``
(``$PWD`` this checkout, for this module). Compare::

    .venv/bin/python benchmarks/state_payloads.py /tmp/old.jsonl /tmp/new.jsonl

Per test and Lambda, the multiset of (event, result): exact; the same shape (keys in order, each value's type);
the same after masking what differs between any two runs of one version (times, moto's random ids and ARN
suffixes, the tests' random database, role and secret names, PostgreSQL oids, Lambda errors' stack traces);
and the run contexts every step after Discover carries. A warm-up's own numbers (continuations, slot
holders, bytes) depend on the schedule: compare those by shape.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections import defaultdict
from typing import Any

_current: dict[str, Any] = {"test": None}


def _record(module: str, event: Any, result: str, error: bool) -> None:
    with open(os.environ["STATE_PAYLOADS"], "a") as f:
        f.write(json.dumps({"test": _current["test"], "module": module, "event": event, "result": result,
                            "error": error}) + "\n")


def pytest_runtest_setup(item: Any) -> None:
    _current["test"] = item.nodeid


def pytest_configure(config: Any) -> None:
    if not os.environ.get("STATE_PAYLOADS"):
        return
    import handlers.on_restore as on_restore
    from cutover_prep.local import harness

    original = harness.LocalAws._invoker

    def _invoker(self: Any) -> Any:
        invoke = original(self)

        def recording(function: Any, event: Any = None) -> Any:
            out = invoke(function, event)
            payload = json.loads(event) if isinstance(event, str) else (event or {})
            _record(self._module_of[function.function_name], payload, out[0], out[1])
            return out
        return recording

    harness.LocalAws._invoker = _invoker
    direct = on_restore.handler  # OnRestore: the tests call it themselves (EventBridge's target)

    def on_restore_recording(event: Any, context: Any) -> Any:
        result = direct(event, context)
        _record("handlers.on_restore", event, json.dumps(result), False)
        return result

    on_restore.handler = on_restore_recording


MASKS = [
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(\+00:00|Z)?"), "<TIME>"),
    (re.compile(r"\d{8}T\d{6}Z?"), "<STAMP>"),
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<UUID>"),
    (re.compile(r"(secret:[A-Za-z0-9/_+=.@-]+)-[A-Za-z0-9]{6}(?=[\\\"])"), r"\1-<SFX>"),
    (re.compile(r"(?<![\w.])-?\d+\.\d+(e-?\d+)?"), "<F>"),
    (re.compile(r"db-[A-Z0-9]{26}"), "<DBI>"),
    (re.compile(r"secret:db-\d+-\d+"), "secret:db-<ID>"),
    (re.compile(r"cutover_prep_test_[0-9a-f]{8}"), "<TESTDB>"),
    (re.compile(r"cp_role_[0-9a-f]{8}"), "<ROLE>"),
    (re.compile(r"pg_toast_\d+"), "pg_toast_<OID>"),
]


def _no_trace(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _no_trace(v) for k, v in value.items() if k != "stackTrace"}
    if isinstance(value, list):
        return [_no_trace(v) for v in value]
    if isinstance(value, str) and value.startswith("{") and "stackTrace" in value:
        try:
            return json.dumps(_no_trace(json.loads(value)))
        except ValueError:
            return value
    return value


def masked(text: str) -> str:
    try:
        text = json.dumps(_no_trace(json.loads(text)))
    except ValueError:
        pass
    for rx, rep in MASKS:
        text = rx.sub(rep, text)
    return text


def _shape(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(v) for v in value]
    return type(value).__name__


def shaped(text: str) -> str:
    try:
        return json.dumps(_shape(json.loads(text)))
    except ValueError:
        return text


def load(path: str) -> dict[tuple[str, str], list[tuple[str, str, bool]]]:
    out: dict[tuple[str, str], list[tuple[str, str, bool]]] = defaultdict(list)
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            out[(r["test"], r["module"])].append((json.dumps(r["event"]), r["result"], r["error"]))
    return out


def contexts(records: dict[tuple[str, str], list[tuple[str, str, bool]]]) -> dict[str, set[str]]:
    """Per test, the run contexts carried: every event's ``run`` and Discover's ``context``, masked."""
    out: dict[str, set[str]] = defaultdict(set)
    for (test, module), calls in records.items():
        for event, result, error in calls:
            run = json.loads(event).get("run")
            if isinstance(run, dict):
                out[test].add(masked(json.dumps(run)))
            if module == "handlers.discover" and not error:
                out[test].add(masked(json.dumps(json.loads(result)["context"])))
    return out


def compare(old_path: str, new_path: str) -> int:
    old, new = load(old_path), load(new_path)
    differ = 0
    for module in sorted({m for _, m in old} | {m for _, m in new}):
        keys = [k for k in sorted(set(old) | set(new)) if k[1] == module]
        count = same_exact = same_shape = same_masked = 0
        largest = {"old": [0, 0], "new": [0, 0]}
        for key in keys:
            a, b = old.get(key, []), new.get(key, [])
            count += len(a)
            same_exact += len(a) if sorted(a) == sorted(b) else 0
            same_shape += len(a) if sorted((shaped(e), shaped(r), x) for e, r, x in a) == \
                sorted((shaped(e), shaped(r), x) for e, r, x in b) else 0
            same = sorted((masked(e), masked(r), x) for e, r, x in a) == \
                sorted((masked(e), masked(r), x) for e, r, x in b)
            same_masked += len(a) if same else 0
            differ += 0 if len(a) == len(b) else 1
            for side, calls in (("old", a), ("new", b)):
                for e, r, x in calls:
                    if not x:  # an error's size is its stack trace's
                        largest[side] = [max(largest[side][0], len(e)), max(largest[side][1], len(r))]
        print(f"{module}: {count} calls (new {sum(len(new.get(k, [])) for k in keys)}); exact {same_exact}, "
              f"same shape {same_shape}, same masked {same_masked}; largest event/result "
              f"{largest['old'][0]}/{largest['old'][1]} -> {largest['new'][0]}/{largest['new'][1]} bytes")
    a, b = contexts(old), contexts(new)
    same_contexts = sum(a.get(t) == b.get(t) for t in set(a) | set(b))
    print(f"run contexts: the same (masked) in {same_contexts} of {len(set(a) | set(b))} tests")
    return differ + len(set(a) | set(b)) - same_contexts


if __name__ == "__main__":
    sys.exit(1 if compare(sys.argv[1], sys.argv[2]) else 0)
