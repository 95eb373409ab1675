"""local/state.py's hold on an evidence folder: one local run at a time, no stale lock after a crash, and no folder
left behind by a run that wrote nothing (issue 32, finding 7)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cutover_prep.local.state import LOCK_FILE, RunIdInUse, exclusive


def test_a_second_hold_on_one_folder_is_refused_by_name_and_the_first_release_frees_it(tmp_path):
    out = tmp_path / "out"
    with exclusive(out, "r1"):
        (out / "findings.json").write_text("{}")  # the run wrote: the folder stays
        with pytest.raises(RunIdInUse, match=r"RunIdInUse: run r1 is running now .*--out"):
            with exclusive(out, "r1"):
                pass
    with exclusive(out, "r1"):
        pass
    assert sorted(p.name for p in out.iterdir()) == [LOCK_FILE, "findings.json"]


def test_the_lock_of_a_killed_run_is_no_stale_lock(tmp_path):
    """flock(2): the lock goes with the last descriptor of the open file description, so with the process, however
    it ends; SIGKILL leaves no chance to clean up."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "plan.json").write_text("{}")
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from cutover_prep.local.state import exclusive
        with exclusive(Path({str(out)!r}), "r1"):
            print("held", flush=True)
            time.sleep(600)
        """)], stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "lambdas")})
    try:
        assert child.stdout.readline().strip() == "held"
        with pytest.raises(RunIdInUse):
            with exclusive(out, "r1"):
                pass
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    with exclusive(out, "r1"):  # taken at once
        pass


def test_a_folder_the_run_made_and_left_empty_is_removed(tmp_path):
    out = tmp_path / "out" / "local-1"
    with exclusive(out, "local-1"):
        assert out.is_dir()
    assert not (tmp_path / "out").exists()
    kept = tmp_path / "mine"
    kept.mkdir()
    with exclusive(kept, "r2"):
        pass
    assert kept.is_dir()  # the user's folder stays (with the lock file)
