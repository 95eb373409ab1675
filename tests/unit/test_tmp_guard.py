"""The guard of tests/tmp_guard.py can fail: a run that leaves a file in the temporary directory fails."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from tests import tmp_guard

REPO = Path(__file__).resolve().parents[2]

LEAKY = '''
import tempfile

def test_leaves_a_file():
    fd, _ = tempfile.mkstemp(prefix="left-behind-")

def test_cleans_up(tmp_path):
    (tmp_path / "f").write_text("x")  # pytest's own tmp_path: not the guard's business
    with tempfile.TemporaryDirectory():
        pass
'''


def _run(tmp_path: Path, source: str, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_inner.py").write_text(textwrap.dedent(source))
    # the inner run's own tmp_path folders go under this test's, removed whatever the inner outcome
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTEST_DEBUG_TEMPROOT": str(tmp_path)}
    env.pop("PYTEST_XDIST_WORKER", None)  # this run may itself be an xdist worker's; the inner one is not
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.tmp_guard", "-q", "-p", "no:cacheprovider",
                           "--rootdir", str(tmp_path), "-c", os.devnull, "-o", "tmp_path_retention_policy=none",
                           *args, str(tmp_path)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env, check=False)


def test_a_run_that_leaves_a_file_fails_and_names_the_test(tmp_path: Path) -> None:
    done = _run(tmp_path, LEAKY)
    assert done.returncode != 0, done.stdout
    assert "left-behind-" in done.stdout and "test_inner.py::test_leaves_a_file" in done.stdout, done.stdout
    assert "2 passed, 1 error" in done.stdout, done.stdout


def test_a_clean_run_passes(tmp_path: Path) -> None:
    done = _run(tmp_path, LEAKY.replace('fd, _ = tempfile.mkstemp(prefix="left-behind-")', "pass"))
    assert done.returncode == 0, done.stdout + done.stderr


# Two workers (pytest-xdist, as `make test` runs): the test that leaves a file fails by name in its worker,
# the run fails, and the run's directory is gone afterwards.
XDIST = ("-n", "2")


def _private_dirs() -> set[str]:
    """The private directories of inner runs: they are made in this run's temporary directory."""
    return {p.name for p in Path(tempfile.gettempdir()).glob("cptests-*")}


def test_under_two_workers_a_run_that_leaves_a_file_fails_and_names_the_test(tmp_path: Path) -> None:
    before = _private_dirs()
    done = _run(tmp_path, LEAKY, *XDIST)
    assert done.returncode != 0, done.stdout
    assert "left-behind-" in done.stdout and "test_inner.py::test_leaves_a_file" in done.stdout, done.stdout
    assert "2 passed, 1 error" in done.stdout, done.stdout
    assert _private_dirs() == before  # the inner run's directory and its workers' folders are gone


def test_under_two_workers_a_clean_run_passes(tmp_path: Path) -> None:
    done = _run(tmp_path, LEAKY.replace('fd, _ = tempfile.mkstemp(prefix="left-behind-")', "pass"), *XDIST)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout, done.stdout


def test_the_controller_fails_a_run_whose_directory_is_not_empty(tmp_path: Path) -> None:
    """What a crashed worker leaves in the run's directory (a folder no worker checks) fails the run."""
    source = '''
    import os
    from pathlib import Path

    def test_leaves_a_folder_in_the_controllers_directory():
        (Path(os.environ["TMPDIR"]).parent / "orphan-of-a-crashed-worker").mkdir()
    '''
    done = _run(tmp_path, source, *XDIST)
    assert done.returncode != 0, done.stdout
    assert "1 passed" in done.stdout and "orphan-of-a-crashed-worker/" in done.stdout, done.stdout


def test_this_run_has_a_private_temporary_directory() -> None:
    root = tmp_guard.private_dir()
    assert root is not None and tempfile.gettempdir() == os.environ["TMPDIR"] == str(root)
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:  # a worker's folder in the controller's private directory
        assert root.name == worker or root.name.startswith(f"{worker}-")
        root = root.parent
    assert root.name.startswith("cptests-") and os.stat(root).st_mode & 0o755 == 0o755


def test_check_names_leftovers_and_removes_them_but_not_the_expected(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tmp_guard._Guard, "first_seen", {"stray": "tests/x.py::test_y"})
    assert tmp_guard.check(tmp_path) is None
    (tmp_path / "stray").mkdir()
    (tmp_path / "stray" / "f").write_text("x")
    (tmp_path / ".hidden").write_text("x")
    (tmp_path / f"runtime-{os.getuid()}").mkdir()  # pgserver's lock folder: expected
    (tmp_path / tmp_guard.CDK_OUTDIR_NAME).mkdir()
    problem = tmp_guard.check(tmp_path)
    assert problem is not None and "stray/  (first seen after tests/x.py::test_y)" in problem and ".hidden" in problem
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([f"runtime-{os.getuid()}", tmp_guard.CDK_OUTDIR_NAME])
    assert tmp_guard.check(tmp_path) is None

