"""The JSON between the workflow's states, before and after a change (decision 53, decision 58, issue 34).

Step Functions hands each Lambda its event and keeps its result; an execution in flight across a deploy hands
the new code a state the old code made, so a refactoring of how steps read and return their data must leave
every event and result as it was. This records them and compares two recordings.

Record a local run (``cutover-prep local`` in-process: the very ASL in moto, the real handlers; each Lambda's
event and result taken where moto's Lambda answers the state machine, ``moto.awslambda.models.LambdaFunction
.invoke``, so what is recorded is the JSON Step Functions sees, whatever the handler returned)::

    PYTHONPATH=lambdas .venv/bin/python benchmarks/state_payloads.py --record benchmarks/state_payloads/after.jsonl

It builds the generated sample database (``SAMPLE_MB``) as ``DATABASE`` on the tests' PostgreSQL server
(``CUTOVER_PREP_TEST_PG``, a conninfo; default 127.0.0.1:5432 as postgres, as tests/conftest.py), dropping
and recreating it, and runs ``CLI_ARGS`` on it with the run id ``RUN_ID`` (warm-up of 1 MiB units at two
readers, the benchmark with one-second points and the write test, preflight warn): about 40 s. One JSON line per
Lambda invocation: ``step`` (the Lambda's name), ``event``, ``result``, ``error`` (the invocation failed).

Compare (exit 1 if any difference)::

    .venv/bin/python benchmarks/state_payloads.py --compare benchmarks/state_payloads/before.jsonl after.jsonl

Per step, the multiset of its invocations (the Map's calls come in any order) after masking what differs
from one run of the same code to the next, and nothing else: ``STRING_MASKS`` (times, uuids, the recording's
run id, temporary paths, ports of local servers, PostgreSQL's oid-named TOAST tables) inside any string, and
``VALUE_MASKS``, the values at a few named paths (each with its reason: timings, measured rates, what the
scheduler decided). A masked value is replaced, never its key: a field added, removed or renamed, a value
whose type or content changed, a step called more or fewer times are differences. Keys are compared in
sorted order (Step Functions' JSONPath does not see their order). Each difference is printed as the paths
that differ between the recording's invocation and the nearest one of the other.

The workflow tests can be recorded too (the same hook as a pytest plugin; each line also names its test)::

    STATE_PAYLOADS=/tmp/new.jsonl .venv/bin/python -m pytest -p no:cacheprovider -p benchmarks.state_payloads \\
        tests/integration/test_workflow.py
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import json
import os
import re
import sys
import tempfile
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from unittest import mock

DATABASE = "cutover_prep_payloads"
RUN_ID = "payloads"
SAMPLE_MB = 10
DEFAULT_ADMIN = "host=127.0.0.1 port=5432 dbname=postgres user=postgres"  # tests/conftest.py's pg_admin default
CLI_ARGS = ["--no-progress", "--unit-mb", "1", "--max-concurrency", "2", "--point-seconds", "1", "--write-test",
            "--preflight", "warn"]

# (name, pattern, replacement): applied to every string of an event or a result (and to the key's value only)
STRING_MASKS: list[tuple[str, re.Pattern[str], str]] = [
    ("time", re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?"), "<TIME>"),
    ("uuid", re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<UUID>"),
    ("temporary path", re.compile(re.escape(tempfile.gettempdir().rstrip("/")) + r"/[^\s\"'(),;]+"), "<TMP>"),
    ("local server port", re.compile(r"(127\.0\.0\.1|localhost):\d+"), r"\1:<PORT>"),
    ("TOAST table named by its table's oid", re.compile(r"pg_toast_\d+"), "pg_toast_<OID>"),
]
# (step glob, path glob, reason): the scalar value there (a number, string, boolean or null) is replaced by
# "<masked>". A path is the keys from the record's ``event`` or ``result`` down, joined by dots, a list's element
# as ``[]``.
VALUE_MASKS: list[tuple[str, str, str]] = [
    ("*", "*.oid", "a relation's oid: the database is created anew for each recording"),
    ("*", "*rate.mib_per_s", "the warm-up's measured read rate"),
    ("*-preflight", "result.seconds", "how long the checks took"),
    ("*-probe", "result.iops", "measured"), ("*-probe", "result.p50_us", "measured"),
    ("*-run-point", "result.iops", "measured"), ("*-run-point", "result.throughput_kbps", "measured"),
    ("*-warm-slot", "result.holders", "which unit asked first (the Map's two readers race)"),
    ("*-warm-slot", "result.released", "which unit asked first"),
    ("*-warm-unit", "event.slot.holders", "which unit asked first"),
    ("*-end-census", "result.objects", "the server's other databases count, which other tests make and drop"),
    ("*", "result.stackTrace", "a failed invocation's line numbers"),
]
MASKED = "<masked>"


# -- recording --------------------------------------------------------------------------------------------
@contextlib.contextmanager
def recording(path: Path, extra: Callable[[], dict[str, Any]] = dict) -> Iterator[None]:
    """Every Lambda invocation moto answers while inside, appended to ``path`` as one JSON line (``extra()``'s
    fields first: the pytest plugin's test id)."""
    from moto.awslambda.models import LambdaFunction

    original, lock = LambdaFunction.invoke, threading.Lock()

    def invoke(self: Any, body: str, request_headers: Any, response_headers: Any) -> Any:
        answer = original(self, body, request_headers, response_headers)
        line = {**extra(), "step": self.function_name, "event": json.loads(body) if body else None,
                "result": json.loads(answer), "error": "x-amz-function-error" in response_headers}
        with lock, path.open("a") as f:
            f.write(json.dumps(line) + "\n")
        return answer

    with mock.patch.object(LambdaFunction, "invoke", invoke):
        yield


def record(path: Path, admin: str) -> int:
    """A local run on a fresh ``DATABASE`` with every invocation recorded in ``path``; the CLI's exit code."""
    import psycopg
    from psycopg import sql

    from cutover_prep.cli.main import main
    from cutover_prep.engines.postgres.sample_db import create_sample

    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(DATABASE)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE)))
    dsn = psycopg.conninfo.make_conninfo(admin, dbname=DATABASE)
    create_sample(dsn, size_mb=SAMPLE_MB)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")
    with tempfile.TemporaryDirectory(prefix="state-payloads-") as out, recording(path):
        return main(["local", "--dsn", dsn, "--out", out, "--run-id", RUN_ID, *CLI_ARGS])


# -- the pytest plugin (-p benchmarks.state_payloads, STATE_PAYLOADS=FILE) -----------------------------------
_current: dict[str, Any] = {"test": None}


def pytest_runtest_setup(item: Any) -> None:
    _current["test"] = item.nodeid


def pytest_configure(config: Any) -> None:
    if not os.environ.get("STATE_PAYLOADS"):
        return
    import handlers.on_restore as on_restore

    path = Path(os.environ["STATE_PAYLOADS"])
    recording(path, lambda: {"test": _current["test"]}).__enter__()  # for the session
    direct = on_restore.handler  # OnRestore: the tests call it themselves (EventBridge's target)

    def on_restore_recording(event: Any, context: Any) -> Any:
        result = direct(event, context)
        with path.open("a") as f:
            f.write(json.dumps({"test": _current["test"], "step": "on-restore (called by the test)", "event": event,
                                "result": result, "error": False}) + "\n")
        return result

    on_restore.handler = on_restore_recording


# -- masking and comparing ------------------------------------------------------------------------------------
def _run_ids(records: list[dict[str, Any]]) -> set[str]:
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                if key == "run_id" and isinstance(inner, str) and inner:
                    found.add(inner)
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    for r in records:
        walk(r.get("event"))
    return found


def _string_masks(run_ids: set[str]) -> list[tuple[re.Pattern[str], str]]:
    masks = [(rx, rep) for _, rx, rep in STRING_MASKS]
    for run_id in sorted(run_ids, key=len, reverse=True):  # the recording's own run id, as a whole word
        masks.append((re.compile(r"(?<![\w.-])" + re.escape(run_id) + r"(?![\w-])"), "<RUN_ID>"))
    return masks


def mask(step: str, value: Any, strings: list[tuple[re.Pattern[str], str]], path: str = "") -> Any:
    """``value`` (an event or a result, ``path`` "event" or "result") with ``VALUE_MASKS`` and the string masks
    applied; keys, lists and types elsewhere untouched."""
    if isinstance(value, dict):
        return {k: mask(step, v, strings, f"{path}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [mask(step, v, strings, f"{path}[]") for v in value]
    if any(fnmatch.fnmatchcase(step, s) and fnmatch.fnmatchcase(path, p) for s, p, _ in VALUE_MASKS):
        return MASKED  # a scalar only: a dict or a list where a number was is a change of structure
    if isinstance(value, str):
        for rx, rep in strings:
            value = rx.sub(rep, value)
    return value


def load(path: Path) -> list[dict[str, Any]]:
    with path.open() as f:
        return [json.loads(line) for line in f if line.strip()]


def masked_calls(records: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Per step (and test, when recorded by the plugin), each invocation masked, as canonical JSON."""
    strings = _string_masks(_run_ids(records))
    out: dict[str, list[str]] = defaultdict(list)
    for r in records:
        step = r["step"]
        doc = {"event": mask(step, r["event"], strings, "event"), "result": mask(step, r["result"], strings, "result"),
               "error": r["error"]}
        out[f"{r['test']} {step}" if r.get("test") else step].append(json.dumps(doc, sort_keys=True))
    return out


def leaves(value: Any, path: str = "") -> dict[str, Any]:
    """Every leaf of a JSON value by its path (``a.b[2].c``); an empty dict or list is a leaf of its own."""
    if isinstance(value, dict) and value:
        return {p: v for k, inner in value.items() for p, v in leaves(inner, f"{path}.{k}" if path else k).items()}
    if isinstance(value, list) and value:
        return {p: v for i, inner in enumerate(value) for p, v in leaves(inner, f"{path}[{i}]").items()}
    return {path: value}


_ABSENT = "<absent>"


def differences(before: str, after: str) -> list[str]:
    a, b = leaves(json.loads(before)), leaves(json.loads(after))
    return [f"{p}: {json.dumps(a.get(p, _ABSENT))[:200]} -> {json.dumps(b.get(p, _ABSENT))[:200]}"
            for p in sorted(set(a) | set(b)) if a.get(p, _ABSENT) != b.get(p, _ABSENT)]


def compare(before: list[dict[str, Any]], after: list[dict[str, Any]], *, show: int = 5,
            echo: Callable[[str], None] = print) -> int:
    """Print, per step, how many invocations are the same after masking, and the differences of those that are
    not (each against the nearest unmatched invocation of the other recording); return how many differ."""
    old, new = masked_calls(before), masked_calls(after)
    differ = 0
    for step in sorted(set(old) | set(new)):
        a, b = Counter(old.get(step, [])), Counter(new.get(step, []))
        only_a, only_b = sorted((a - b).elements()), sorted((b - a).elements())
        n = max(len(only_a), len(only_b))
        differ += n
        echo(f"{step}: {sum(a.values())} calls before, {sum(b.values())} after; "
             f"{sum((a & b).values())} the same after masking" + (f", {n} differ" if n else ""))
        for k, (x, y) in enumerate(_pairs(only_a, only_b)):
            if k >= show:
                echo(f"  ... and {n - show} more")
                break
            if x is None or y is None:
                echo(f"  {'only before' if y is None else 'only after'}: {(x or y)[:300]}")
                continue
            lines = differences(x, y)
            echo(f"  call {k + 1}: {len(lines)} paths differ")
            for line in lines[:12]:
                echo(f"    {line}")
            if len(lines) > 12:
                echo(f"    ... and {len(lines) - 12} more paths")
    echo(f"{'no differences' if not differ else f'{differ} invocations differ'} after masking "
         f"({len(STRING_MASKS)} string masks, {len(VALUE_MASKS)} value masks)")
    return differ


def _pairs(only_a: list[str], only_b: list[str]) -> Iterator[tuple[str | None, str | None]]:
    """Each unmatched invocation before with the one after that differs from it in the fewest paths."""
    rest = list(only_b)
    for x in only_a:
        if not rest:
            yield x, None
            continue
        best = min(range(len(rest)), key=lambda i: len(differences(x, rest[i])))
        yield x, rest.pop(best)
    for y in rest:
        yield None, y


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--record", type=Path, metavar="FILE", help="record a local run's invocations in FILE")
    group.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"),
                       help="compare two recordings after masking; exit 1 if any invocation differs")
    parser.add_argument("--admin", default=os.environ.get("CUTOVER_PREP_TEST_PG", DEFAULT_ADMIN),
                        help="conninfo of a superuser on the PostgreSQL server to record on")
    parser.add_argument("--show", type=int, default=5, help="differences printed per step")
    args = parser.parse_args(argv)
    if args.record:
        code = record(args.record, args.admin)
        print(f"{len(load(args.record))} invocations recorded in {args.record} (the run's exit code {code})")
        return code
    return 1 if compare(load(args.compare[0]), load(args.compare[1]), show=args.show) else 0


if __name__ == "__main__":
    sys.exit(main())
