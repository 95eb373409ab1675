"""benchmarks/house_figures.py (issue 34) on a tiny fake checkout whose every figure is known by construction."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

ARCHITECTURE = """# Architecture

## Floors

| floor | paths | what |
| --- | --- | --- |
| 3 entry points | `lambdas/handlers/`, `cli/` | x |
| 2 logic | `lambdas/cutover_prep/` | the rest |
| 1 ground | `dal/`, `settings.py` | y |

## Next
"""

FILES = {
    "lambdas/cutover_prep/__init__.py": "",
    "lambdas/cutover_prep/settings.py": "import os\nTABLE = os.environ.get('TABLE_NAME')\n",
    "lambdas/cutover_prep/dal/__init__.py": "",
    "lambdas/cutover_prep/dal/store.py": (  # dal/ may call DynamoDB and S3, and may reach up (to be found)
        "from typing import Any\n"
        "def get(ddb, s3) -> dict[str, Any]:\n"
        "    ddb.get_item(TableName='t', Key={})\n"
        "    s3.put_object(Bucket='b', Key='k', Body=b'')\n"
        "    from cutover_prep.warmup import plan\n"
        "    return {}\n"),
    "lambdas/cutover_prep/warmup/__init__.py": "",
    "lambdas/cutover_prep/warmup/plan.py": (
        "import os\nfrom typing import Any\nfrom cutover_prep.findings.census import C\n"
        "def plan(doc: dict[str, Any], rows: list[dict[str, Any]] | None) -> dict[str, Any]:\n"
        '    a, b = doc.get("units"), doc.get("bytes", 0)\n'
        '    more: dict[str, Any] = {"x": doc.get("x")}\n'
        "    flag = os.getenv('FLAG')\n"
        '    return {"n": doc["n"], "key": doc.get(KEY), "d": {}.get("Contents")}\n'),
    "lambdas/cutover_prep/warmup/steps.py": "from cutover_prep.findings import census\n",
    "lambdas/cutover_prep/findings/__init__.py": "",
    "lambdas/cutover_prep/findings/census.py": "class C: ...\n",
    "lambdas/cutover_prep/findings/finalize.py": (
        "def f(store, driver):\n"
        "    from cutover_prep.warmup.plan import plan\n"
        "    store.ddb.update_item(TableName=store.table, Key={})\n"
        "    driver.scan(1, 2)\n"  # not DynamoDB: no TableName=
        "    driver.query('SELECT 1')\n"
        "    store.s3.get_paginator('list_objects_v2')\n"),
    "lambdas/cutover_prep/report/__init__.py": "import boto3\nCLIENT = boto3.client('s3')\n"
                                                "from cutover_prep.report import page\n",
    "lambdas/cutover_prep/report/page.py": "from cutover_prep.report import CLIENT\n",  # a cycle with its package
    "lambdas/cutover_prep/big.py": "x = 1\n" * 501,
    "lambdas/cutover_prep/fits.py": "x = 1\n" * 500,
    "lambdas/cutover_prep/cli/__init__.py": "",
    "lambdas/cutover_prep/cli/main.py": 'from typing import Any\nX: dict[str, Any] = {}\nY = X.get("a")\n',
    "lambdas/cutover_prep/local/__init__.py": "",
    "lambdas/cutover_prep/local/volume/__init__.py": 'from typing import Any\nZ: dict[str, Any] = {}.get("z")\n',
    "lambdas/cutover_prep/local/state.py": "def save(s3):\n    s3.get_object(Bucket='b', Key='k')\n",
    "lambdas/handlers/__init__.py": "",
    "lambdas/handlers/one.py": "from typing import Any\ndef handler(event, context) -> dict[str, Any]:\n"
                               "    return {}\n",
    "lambdas/handlers/two.py": "from cutover_prep.findings.census import C\ndef handler(event, context) -> C:\n"
                               "    return C()\n",
    "docs/architecture.md": ARCHITECTURE,
}


@pytest.fixture(scope="module")
def house():
    spec = importlib.util.spec_from_file_location("house_figures", ROOT / "benchmarks" / "house_figures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def fake(tmp_path_factory) -> Path:
    repo = tmp_path_factory.mktemp("house")
    for rel, text in FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    return repo


def test_the_dict_and_get_figures_in_the_issues_scope_and_in_the_whole_package(house, fake) -> None:
    f = house.figures(fake)
    # lines: store.py 1, plan.py 2 (its def line holds three); cli/main.py and local/volume/ only in the package
    assert f["dict_str_any"]["lines"] == {"scope": 3, "package": 5}
    # annotations: store.py's return 1; plan.py's doc, rows (nested), return and ``more`` 4
    assert f["dict_str_any"]["annotations_ast"] == {"scope": 5, "package": 7}
    # .get(" lines: plan.py's three; ``doc.get(KEY)`` is not a string key; ``doc["n"]`` is no .get
    assert f["get_string_key"]["lines"] == {"scope": 3, "package": 5}
    # calls: plan.py's four and settings.py's os.environ.get('TABLE_NAME') (single quotes: no grep line)
    assert f["get_string_key"]["calls_ast"] == {"scope": 5, "package": 7}
    assert f["get_string_key"]["calls_ast_pascal_key_boto3"] == {"scope": 1, "package": 1}


def test_long_modules_store_calls_environ_and_handlers(house, fake) -> None:
    f = house.figures(fake)
    assert f["modules_over_500_lines"] == {"cutover_prep/big.py": 501}
    store = f["store_calls_outside_dal"]
    assert store["where"]["product"] == ["cutover_prep/findings/finalize.py:3 update_item",
                                         "cutover_prep/findings/finalize.py:6 get_paginator('list_objects_v2')",
                                         "cutover_prep/report/__init__.py:2 boto3.client"]
    assert store["where"]["local"] == ["cutover_prep/local/state.py:2 get_object"]
    assert (store["product"], store["local"]) == (3, 1)
    assert f["os_environ_outside_settings"] == {"modules": 1, "where": ["cutover_prep/warmup/plan.py"]}
    assert f["handlers"]["count"] == 2 and f["handlers"]["returning_dict_str_any"] == 1
    assert f["handlers"]["returns"] == {"one": "dict[str, Any]", "two": "C"}


def test_floors_cycles_and_phases_from_the_imports(house, fake) -> None:
    f = house.figures(fake)
    assert f["table"]["floors"] == 3
    assert f["table"]["upward_imports"] == [
        "cutover_prep.dal.store (floor 1 ground) imports cutover_prep.warmup (floor 2 logic)",
        "cutover_prep.dal.store (floor 1 ground) imports cutover_prep.warmup.plan (floor 2 logic)"]
    assert f["import_cycles"] == ["cutover_prep.report -> cutover_prep.report.page -> cutover_prep.report"]
    assert f["phase_pairs_importing_each_other"] == ["findings <-> warmup"]
    assert f["phase_imports_of_phases"] == ["findings -> warmup (1 modules)", "warmup -> findings (2 modules)"]
    code = f["code"]
    # findings imports warmup from one module, warmup findings from two: that one import runs back up
    assert code["pairs_importing_each_other"] == ["findings <-> warmup"]
    assert code["imports_back_up"] == ["cutover_prep.findings.finalize -> warmup"]
    # floors: findings 1, warmup 2 (imports findings), dal 3 (imports warmup), handlers 2 (imports findings); the
    # folders and root modules that import none of the others on the ground floor
    assert code["by_floor"] == {1: ["big", "cli", "findings", "fits", "local", "report", "settings"],
                                2: ["handlers", "warmup"], 3: ["dal"]}
    assert code["units"] == 10
    assert code["floors"] == 3


def test_the_least_weight_runs_back_up_in_a_circle_of_three(house) -> None:
    weight = {("a", "b"): 3, ("b", "c"): 2, ("c", "a"): 1}
    assert house.back_up(["a", "b", "c"], weight) == {("c", "a")}
    weight[("c", "a")] = 5  # now the cheapest ladder lets b -> c run back up
    assert house.back_up(["a", "b", "c"], weight) == {("b", "c")}
    weight[("a", "c")] = 1  # ... which would put a below c: 2 + 1, as dear as a -> b; a tie: the first order by name
    assert house.back_up(["a", "b", "c"], weight) == {("a", "c"), ("b", "c")}


def test_the_command_line_prints_text_and_json(house, fake, capsys) -> None:
    assert house.main(["--repo", str(fake)]) == 0
    text = capsys.readouterr().out
    assert "dict[str, Any] (outside local/volume/, cli/): 3 lines (grep), 5 in annotations (AST)" in text
    assert "handlers returning dict[str, Any]: 1 of 2" in text
    assert house.main(["--repo", str(fake), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["code"]["floors"] == 3
