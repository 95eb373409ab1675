"""Tests leave nothing behind (issue 24 §4): a pytest plugin, registered by tests/conftest.py.

At configure time (before any test module is imported) the run gets a private temporary directory,
``$TMPDIR/cptests-XXXXXXXX`` (a short name: a unix socket made in it must stay under 108 bytes), as
``TMPDIR`` and ``tempfile.tempdir``: everything the tests, the product code and their subprocesses
(private database servers, the CDK's node process, checkov) put in "the temporary directory" lands
there, apart from anything another run on this machine makes. When the session ends it must be empty
again; otherwise the run fails, naming each leftover (a file or folder, a FUSE mount, a child process
still running) and the test after which it first appeared, then removes it. The private directory itself
is removed at interpreter exit, after the CDK's node process has stopped.

pytest's own ``tmp_path`` folders stay where they were (``PYTEST_DEBUG_TEMPROOT``, pytest's documented
variable, is set to the original temporary directory) and are removed by pytest itself:
``tmp_path_retention_policy = "failed"`` in pyproject.toml keeps only those of failed tests.

A few entries belong to long-lived helpers that remove them at exit, or are meant to stay for the
run's length; each is named in ``EXPECTED`` with its reason.

Under pytest-xdist (``make test`` runs two workers) the controller makes the run's private directory as
above, and each worker, which inherits it as its ``TMPDIR``, makes its own folder inside it named after
the worker (``cptests-XXXXXXXX/gw0``): each worker checks its own folder when its session ends, as a
single run does, and removes it at exit. The controller runs no test; when the workers have stopped it
checks that its directory is empty too (a worker that crashed leaves its folder there) and fails the run
otherwise.
"""

from __future__ import annotations

import atexit
import contextlib
import fnmatch
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

# CDK ``App()`` objects made without an outdir (tests that only read the context, e.g. Config.from_node)
# each create a ``cdk.outXXXX`` folder in node's temporary directory, removed only by node's exit
# handler; jsii gives node 5 s to exit and then terminates it, so on a busy machine they can stay in /tmp.
# CDK_OUTDIR (aws-cdk-lib's cxapi.OUTDIR_ENV) gives them one folder of this guard's, removed with it.
CDK_OUTDIR_NAME = "cdk.out-unsynthesized-apps"


# How long a child process or a mount may take to go once the last fixture stopped it.
SETTLE_SECONDS = 15.0
# How long the controller waits for the workers' own folders to go: a worker removes its folder at interpreter
# exit, after jsii's node process stopped (jsii gives it 5 s), which can come after the controller's
# sessionfinish; on a loaded machine (load 12-26 on 2 cores) that took longer than SETTLE_SECONDS and failed
# runs in which no test failed. A crashed worker's folder stays, and is named after this wait.
WORKER_EXIT_SECONDS = 90.0


def _jsii_loaded() -> bool:
    return "jsii" in sys.modules


# name pattern -> (is this entry the expected one, why it may be there when the session ends)
EXPECTED: dict[str, tuple[Callable[[Path], bool], str]] = {
    CDK_OUTDIR_NAME: (lambda _: True, "this guard's CDK_OUTDIR for App()s that never synthesize"),
    "jsii-kernel-*": (lambda _: _jsii_loaded(),
                      "the jsii node process (aws_cdk) is alive until interpreter exit; it removes it then"),
    "tmp*": (lambda p: _jsii_loaded() and (p / "bin" / "jsii-runtime.js").is_file(),
             "jsii's Python side unpacks its runtime here for the node process; removed at interpreter exit"),
    f"runtime-{os.getuid()}": (lambda _: True,
                               "platformdirs' user runtime folder when XDG_RUNTIME_DIR is unset: pgserver keeps "
                               "its lock file there for every server of the user (meant to stay)"),
}

class _Guard:
    dir: Path | None = None
    saved_env: str | None = None
    saved_tempdir: str | None = None
    first_seen: dict[str, str] = {}  # entry name -> the test after which it first appeared


def private_dir() -> Path | None:
    return _Guard.dir


def _traversable(path: Path) -> bool:
    """Every folder from / down to ``path`` may be entered by other users."""
    path = path.resolve()
    return all(os.stat(p).st_mode & 0o001 for p in (path, *path.parents))


def _mounts_under(root: Path) -> list[str]:
    try:
        lines = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return []
    prefix = str(root) + os.sep
    # /proc/mounts escapes blanks in paths as octal (\040); the folder names here have none
    return [fields[1] for fields in (line.split() for line in lines) if len(fields) > 1
            and fields[1].startswith(prefix)]


def _children() -> list[str]:
    """Processes this one started that still run (zombies and the jsii node process left out)."""
    me, found = os.getpid(), []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            state, ppid = text.rsplit(")", 1)[1].split()[:2]
            cmdline = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, IndexError, ValueError):
            continue
        if int(ppid) == me and state != "Z" and "jsii-runtime" not in cmdline:
            found.append(f"pid {stat.parent.name}: {cmdline[:200]}")
    return sorted(found)


def _expected(entry: Path) -> bool:
    return any(fnmatch.fnmatch(entry.name, pattern) and when(entry)
               for pattern, (when, _) in EXPECTED.items())


def leftovers(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if not _expected(p))


def _unmount(mount: str) -> None:
    for cmd in (["fusermount3", "-u", "-z", mount], ["fusermount", "-u", "-z", mount], ["umount", "-l", mount]):
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            if subprocess.run(cmd, capture_output=True, timeout=30, check=False).returncode == 0:  # noqa: S603
                return


def _remove(root: Path) -> None:
    for mount in sorted(_mounts_under(root), reverse=True):  # never delete through a live mount
        _unmount(mount)
    if not _mounts_under(root):
        shutil.rmtree(root, ignore_errors=True)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if private_dir() is not None:
        return
    original = tempfile.gettempdir()
    os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", original)  # pytest's basetemp stays where it was
    worker = getattr(config, "workerinput", {}).get("workerid")  # pytest-xdist's worker: gw0, gw1, ...
    if worker is not None:
        # the controller's private directory is this worker's TMPDIR: a short folder of its own in it
        root = Path(original, worker)
        try:
            root.mkdir()
        except FileExistsError:  # a worker restarted after a crash: the old folder is the controller's to name
            root = Path(tempfile.mkdtemp(prefix=f"{worker}-", dir=original))
        root = root.resolve()
    else:
        # a database server running as its own OS user must reach the folders and mounts made in it: under
        # a TMPDIR that others cannot traverse (e.g. `mktemp -d`, mode 0700), the private folder goes to /tmp
        parent = original if _traversable(Path(original)) else "/tmp"
        root = Path(tempfile.mkdtemp(prefix="cptests-", dir=parent)).resolve()
    root.chmod(0o755)  # servers running as another OS user (postgres) must reach what the tests make in it
    _Guard.dir, _Guard.saved_env, _Guard.saved_tempdir = root, os.environ.get("TMPDIR"), tempfile.tempdir
    _Guard.first_seen = {}
    os.environ["TMPDIR"] = tempfile.tempdir = str(root)
    if worker is not None and os.environ.get("CDK_OUTDIR") == str(Path(original, CDK_OUTDIR_NAME)):
        os.environ.pop("CDK_OUTDIR")  # the controller's: each worker's apps get a folder of its own
    os.environ.setdefault("CDK_OUTDIR", str(root / CDK_OUTDIR_NAME))
    # registered before aws_cdk starts jsii's node process: atexit runs this after jsii's own stop()
    atexit.register(_remove, root)


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """Remember after which test each entry first appeared, so a leftover names its test."""
    root = private_dir()
    if root is None:
        return
    with contextlib.suppress(OSError):
        for entry in os.listdir(root):
            _Guard.first_seen.setdefault(entry, item.nodeid)


def check(root: Path) -> str | None:
    """What the session left in ``root``, one line each, or None; what was found is then removed."""
    # a server or FUSE daemon stopped by the last teardown may still be on its way out: give it time
    deadline = time.monotonic() + SETTLE_SECONDS
    while (_children() or _mounts_under(root)) and time.monotonic() < deadline:
        time.sleep(0.2)
    mounts = _mounts_under(root)
    lines = [f"  {p.name}{'/' if p.is_dir() else ''}  (first seen after {_Guard.first_seen.get(p.name, '?')})"
             for p in leftovers(root)]
    lines += [f"  mounted: {m}" for m in mounts]
    lines += [f"  still running: {c}" for c in _children()]
    if not lines:
        return None
    for mount in sorted(mounts, reverse=True):
        _unmount(mount)
    for p in leftovers(root):
        if p.is_dir() and not p.is_symlink():
            if not _mounts_under(p):
                shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
    return f"the tests left these in the temporary directory {root} (see tests/tmp_guard.py):\n" + "\n".join(lines)


@pytest.fixture(scope="session", autouse=True)
def _tests_leave_nothing_in_the_temporary_directory():
    """Set up before every other session fixture, so torn down after them: their servers, mounts and
    folders are gone by then."""
    yield
    root = private_dir()
    if root is not None and (problem := check(root)):
        pytest.fail(problem, pytrace=False)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """pytest-xdist's controller, after its workers have stopped (its own sessionfinish stops them): each
    worker checked and removed its folder, so the run's directory must be empty."""
    root = private_dir()
    if root is None or not session.config.pluginmanager.has_plugin("dsession"):
        return
    deadline = time.monotonic() + WORKER_EXIT_SECONDS
    while any(p.name.startswith("gw") for p in root.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.5)
    if problem := check(root):
        session.config.get_terminal_writer().line(problem, red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_unconfigure(config: pytest.Config) -> None:
    if private_dir() is None:
        return
    if _Guard.saved_env is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = _Guard.saved_env
    tempfile.tempdir = _Guard.saved_tempdir
