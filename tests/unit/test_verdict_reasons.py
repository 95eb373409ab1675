"""``cutover_prep.models.verdict_reasons``: one entry, meaning and fix, for every code the verdict can give and every
named error a run can end with; the code that gives them is read, not a list copied here, so a new reason or
error without its fix fails this test."""

from __future__ import annotations

import ast
import inspect
import re

from cutover_prep import verdict
from cutover_prep.analysis import probes
from cutover_prep.dal.records.findings_benchmark import BenchmarkSection
from cutover_prep.findings import failures
from cutover_prep.models.thresholds import Thresholds
from cutover_prep.models.verdict_reasons import REASONS, RUN_ERRORS, markdown_table, what_to_do
from tests.unit.verdict_of_documents import decide

PHONE_LINES = 220  # characters: about four lines of a phone's 420 px at the report's 14 px


def _codes_in_verdict() -> set[str]:
    """Every code ``verdict.py`` (and the probes' rule it uses, ``analysis/probes.py``) passes to ``_reason``: as a
    literal, or as the loop variable ``code`` of a ``for code, ... in ((\"CODE\", ...), ...)``."""
    tree = ast.Module(body=[*ast.parse(inspect.getsource(verdict)).body, *ast.parse(inspect.getsource(probes)).body],
                      type_ignores=[])
    codes = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "_reason" and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant):
                codes.add(first.value)
        if (isinstance(node, ast.For) and isinstance(node.target, ast.Tuple)
                and getattr(node.target.elts[0], "id", None) == "code" and isinstance(node.iter, ast.Tuple)):
            codes |= {t.elts[0].value for t in node.iter.elts if isinstance(t, ast.Tuple)}
    return codes


def test_every_reason_the_verdict_gives_has_its_meaning_and_fix() -> None:
    codes = _codes_in_verdict()
    assert {"UNREAD_OBJECTS", "BASELINE_IOPS", "WARM_VS_COLD"} <= codes  # the scan finds both forms
    assert codes - set(REASONS) == set()
    # ENGINE_INTERNAL comes with the MariaDB work of issue 33 (branch mysql, merged apart); every other guide must
    # be for a code the verdict gives today
    assert set(REASONS) - codes <= {"ENGINE_INTERNAL"}, "a guide for a code the verdict no longer gives"


def test_every_named_run_error_has_its_meaning_and_fix() -> None:
    # record_failure maps any other error to StepTimedOut (States.Timeout) or CutoverPrepFailed
    source = inspect.getsource(failures.record_failure)
    fallbacks = set(re.findall(r'"(StepTimedOut|CutoverPrepFailed)"', source))
    assert fallbacks == {"StepTimedOut", "CutoverPrepFailed"}
    assert set(RUN_ERRORS) == failures.KNOWN_ERRORS | fallbacks


def test_the_reasons_that_never_fail_are_marked_so_by_the_verdict_itself() -> None:
    """PROBES_OFF, PROBES_COLD, WARM_TAIL and SERVER_RESTARTED are only ever ok (hand-made findings that give each
    of them)."""
    probes_off = decide({"units": {"total": 1, "done": 1}, "bytes": {"planned": 1}, "coverage_pct": 100,
                                 "benchmark": {"status": "DONE"}}, probes_requested=False)
    warmup_off = decide({"units": {"total": 1}}, warmup_requested=False)
    cold = {"status": "DONE", "latency_us": {"p50": 5000, "max": 6000}}
    warm = {"status": "DONE", "latency_us": {"p50": 300, "max": 60000}}
    bench = BenchmarkSection.model_validate({"probes": {"cold": cold, "warm": warm}})
    tail = verdict._tail_reasons(bench, Thresholds())
    restarted = decide({"units": {"total": 1, "done": 1}, "bytes": {"planned": 1}, "coverage_pct": 100,
                        "server": {"restarted": True, "note": "the database server restarted"}})
    said = {r["code"]: r for d in (probes_off, warmup_off, restarted) for r in d["reasons"]} \
        | {r.code: r.stored() for r in tail}
    for code, guide in REASONS.items():
        if not guide.can_fail:
            assert said[code]["ok"] is True, code
    assert said["WARMUP_OFF"]["ok"] is False and REASONS["WARMUP_OFF"].can_fail


def test_each_fix_is_short_enough_for_a_phone_and_a_table_cell() -> None:
    for name, guide in {**REASONS, **RUN_ERRORS}.items():
        assert guide.to_do and guide.means, name
        assert len(guide.to_do) <= PHONE_LINES, (name, len(guide.to_do))
        assert "|" not in guide.to_do + guide.means and "\n" not in guide.to_do + guide.means, name


def test_what_to_do_names_the_fix_or_where_to_look() -> None:
    assert what_to_do("SCRATCH_LEFT") == REASONS["SCRATCH_LEFT"].to_do
    assert what_to_do("NO_SUCH_CODE") == "no guidance recorded for NO_SUCH_CODE: read its message and docs/cli.md"


def test_the_markdown_table_has_one_row_per_reason_and_error() -> None:
    lines = markdown_table().splitlines()
    assert lines[0] == "| code | what it means | what to do |"
    assert len(lines) == 2 + len(REASONS) + len(RUN_ERRORS)
    assert all(line.count("|") == 4 for line in lines)
    assert "| `ConnectionLost` (run error) |" in markdown_table()
