"""The suite's module order under pytest-xdist (tests/conftest.py): the slowest modules first, each module whole."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tests.conftest import SLOWEST_FIRST, pytest_collection_modifyitems

ROOT = Path(__file__).resolve().parents[2]


def test_every_module_named_is_a_test_module_named_once():
    assert len(set(SLOWEST_FIRST)) == len(SLOWEST_FIRST)
    assert [m for m in SLOWEST_FIRST if not (ROOT / m).is_file() or not Path(m).name.startswith("test_")] == []


def test_under_xdist_the_slowest_come_first_and_every_module_keeps_its_tests_in_order(monkeypatch):
    ids = ["tests/unit/test_a.py::t1", "tests/unit/test_a.py::t2", f"{SLOWEST_FIRST[1]}::x",
           f"{SLOWEST_FIRST[0]}::y1", f"{SLOWEST_FIRST[0]}::y2", "tests/unit/test_b.py::t"]
    items = [SimpleNamespace(nodeid=i) for i in ids]
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    pytest_collection_modifyitems(None, items)  # type: ignore[arg-type]
    assert [i.nodeid for i in items] == [ids[3], ids[4], ids[2], ids[0], ids[1], ids[5]]


def test_without_xdist_the_collection_order_stays(monkeypatch):
    ids = ["tests/unit/test_a.py::t1", f"{SLOWEST_FIRST[0]}::y"]
    items = [SimpleNamespace(nodeid=i) for i in ids]
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    pytest_collection_modifyitems(None, items)  # type: ignore[arg-type]
    assert [i.nodeid for i in items] == ids
