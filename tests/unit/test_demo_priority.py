"""The emulated demo's own processes run at a higher priority than the machine's other jobs (issue 24 §5,
decision 56), and go back afterwards. Judged from the kernel's own figure (os.getpriority, /proc), with
setpriority faked where the test is not root."""

from __future__ import annotations

import os

import pytest

from cutover_prep.local import emulated


def test_the_block_runs_at_the_demos_nice_and_the_thread_goes_back_after(monkeypatch):
    nice = {"now": 0}
    monkeypatch.setattr(os, "getpriority", lambda which, who: nice["now"])

    def setpriority(which, who, value):
        assert (which, who) == (os.PRIO_PROCESS, 0)  # the calling thread: threads and processes it starts inherit
        nice["now"] = value

    monkeypatch.setattr(os, "setpriority", setpriority)
    with emulated.demo_priority() as got:
        assert got == nice["now"] == emulated.DEMO_NICE < 0
    assert nice["now"] == 0
    with pytest.raises(RuntimeError), emulated.demo_priority():
        raise RuntimeError("a run that fails still gives the priority back")
    assert nice["now"] == 0


def test_refused_it_changes_nothing(monkeypatch):
    def refuse(*_):
        raise PermissionError("not root")

    monkeypatch.setattr(os, "setpriority", refuse)
    before = os.getpriority(os.PRIO_PROCESS, 0)
    with emulated.demo_priority() as got:
        assert got is None
    assert os.getpriority(os.PRIO_PROCESS, 0) == before


@pytest.mark.skipif(os.geteuid() != 0, reason="raising a priority needs root")
def test_a_process_started_in_the_block_inherits_it():
    import subprocess
    import sys

    with emulated.demo_priority() as got:
        child = subprocess.run([sys.executable, "-c", "import os; print(os.getpriority(os.PRIO_PROCESS, 0))"],
                               capture_output=True, text=True, check=True)
    assert got == emulated.DEMO_NICE and int(child.stdout) == emulated.DEMO_NICE


def test_it_says_so_before_it_changes_the_priority(monkeypatch):
    """Issue 33 §6: `make demo` said it runs at nice -5 only once it did; the line now comes first."""
    happened: list[str] = []
    monkeypatch.setattr(os, "getpriority", lambda which, who: 0)
    monkeypatch.setattr(os, "setpriority", lambda which, who, value: happened.append(f"set {value}"))
    with emulated.demo_priority(announce=lambda nice: happened.append(f"said {nice}")):
        pass
    assert happened == [f"said {emulated.DEMO_NICE}", f"set {emulated.DEMO_NICE}", "set 0"]
