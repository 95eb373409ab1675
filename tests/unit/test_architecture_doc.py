"""docs/architecture.md matches the code: every path it names exists, and the handlers it says make more
than one logic call are the ones that do."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PKG = REPO / "lambdas" / "cutover_prep"


def test_every_path_named_in_the_architecture_page_exists():
    text = (REPO / "docs" / "architecture.md").read_text()
    named = set(re.findall(r"`([\w./<>-]+(?:/|\.py|\.json|\.md))(?:#[\w-]+)?`", text))
    assert len(named) > 30
    missing = []
    for path in named:
        if "<" in path:  # a pattern (engines/<name>/): its folder must exist
            path = path.split("<")[0]
        if "/" in path.rstrip("/") or (REPO / path).exists():  # a path from the repository root or the package
            found = any(c.exists() for c in (REPO / path, PKG / path, REPO / "lambdas" / path))
        else:  # a name in the folder its table row names
            found = any(REPO.glob(f"lambdas/**/{path.rstrip('/')}")) or any(REPO.glob(f"cdk/**/{path}"))
        if not found:
            missing.append(path)
    assert missing == []


# -- "one logic call per handler" ---------------------------------------------------------------------------

HANDLERS = REPO / "lambdas" / "handlers"
# What a handler may call besides its logic: its clients, Powertools, the settings and the models.
NOT_LOGIC = ("cutover_prep.deps", "cutover_prep.observability", "cutover_prep.settings", "cutover_prep.models")
# The handlers that do more than one logic call, each named with what it does in docs/architecture.md.
MORE_THAN_ONE_CALL: set[str] = set()  # issue 34: what seven handlers did besides moved into their steps


def logic_calls(source: str) -> list[str]:
    """The calls ``handler`` makes to names imported from ``cutover_prep`` (not its clients, Powertools, the
    settings or the models). A call in another's arguments (what the logic call is given) or in a lambda (a
    dependency handed over, called later) does not count."""
    tree = ast.parse(source)
    imported = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("cutover_prep"):
            for alias in node.names:
                imported[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    [handler] = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "handler"]

    def callee(call: ast.Call) -> str | None:
        func = call.func
        name = func.id if isinstance(func, ast.Name) else \
            func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else None
        where = imported.get(name or "")
        if where is None or where.startswith(NOT_LOGIC):
            return None
        return ast.unparse(func)

    found: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Lambda):
            return
        if isinstance(node, ast.Call) and (name := callee(node)):
            found.append(name)
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    for statement in handler.body:
        visit(statement)
    return found


def test_each_handler_makes_one_logic_call_but_those_the_page_names():
    calls = {p.stem: logic_calls(p.read_text()) for p in sorted(HANDLERS.glob("*.py")) if p.stem != "__init__"}
    assert len(calls) > 20 and all(calls.values()), calls
    assert {name for name, found in calls.items() if len(found) > 1} == MORE_THAN_ONE_CALL, calls
    text = (REPO / "docs" / "architecture.md").read_text()
    flow = text[text.index("## Data flow"):text.index("## Floors") if "## Floors" in text else None]
    assert "one logic call" in flow
    assert not [name for name in MORE_THAN_ONE_CALL if f"`{name}.py`" not in flow]


def test_the_logic_call_counter_can_fail():
    source = ("from cutover_prep import deps\nfrom cutover_prep.steps import live_emit as live\n"
              "from cutover_prep.settings import get_settings\nfrom cutover_prep.warmup.unit import Budget, warm\n"
              "def handler(event, context):\n    s = get_settings()\n"
              "    r = warm(event, store=deps.store(), budget=Budget(s), later=lambda: warm(event))\n"
              "    live.unit_done(r)\n    return r\n")
    assert logic_calls(source) == ["warm", "live.unit_done"]


# -- the page's key claims, from the code (issue 34 §5) --------------------------------------------------------

def _house_figures():
    """benchmarks/house_figures.py, the script that measures the house (loaded from its file: benchmarks/ is no
    package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("house_figures", REPO / "benchmarks" / "house_figures.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_only_dal_calls_dynamodb_or_s3_for_run_data():
    """"Only `dal/` calls DynamoDB or S3 for run data (the local run's moto stands in for AWS in `local/`;
    `cli/remote.py` reads a deployed run's report with the user's own credentials, through `dal/store.py`'s
    `read_object`)"."""
    text = (REPO / "docs" / "architecture.md").read_text()
    assert "Only\n`dal/` calls DynamoDB or S3 for run data" in text
    calls = _house_figures().code_figures(REPO)["store_calls_outside_dal"]["where"]["product"]
    allowed = ("cutover_prep/deps.py:",)  # deps: the clients made, not called
    assert calls and [c for c in calls if not c.startswith(allowed)] == []


def test_no_module_is_over_500_lines_and_the_records_are_versioned():
    """"no module over 500 lines" (issue 34 §4) and "each a `Record` with a `schema_version`"."""
    from cutover_prep.dal.records import findings, plan, run, units
    from cutover_prep.dal.records.base import Record

    assert _house_figures().code_figures(REPO)["modules_over_500_lines"] == {}
    named = {"RunItem": run, "UnitProgress": units, "Plan": plan, "Findings": findings}
    for name, module in named.items():
        cls = getattr(module, name)
        assert issubclass(cls, Record) and "schema_version" in cls.model_fields, name
        assert f"`{name}`" in (REPO / "docs" / "architecture.md").read_text(), name


def test_the_steps_take_what_the_page_says():
    """The steps' events: RunState before the plan, RunContext after it, Finalize a run id alone."""
    from cutover_prep.models import steps

    assert set(steps.FinalizeEvent.model_fields) == {"run_id"}
    assert "run" in steps.EndCensusEvent.model_fields and "plan" in steps.EndCensusEvent.model_fields
    assert steps.EndCensusEvent.model_fields["plan"].annotation is not None
    assert "RunContext" in str(steps.EndCensusEvent.model_fields["run"].annotation)
