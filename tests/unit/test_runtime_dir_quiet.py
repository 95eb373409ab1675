"""`cutover-prep local --compare` printed ``RuntimeDirWarning: XDG_RUNTIME_DIR is not set, falling back to
/tmp/runtime-0`` on a machine without a login session (a container, CI, ssh without pam_systemd): pgserver
asks platformdirs for its lock directory when it is imported, and platformdirs warns when the variable is
unset (https://specifications.freedesktop.org/basedir-spec/latest/: XDG_RUNTIME_DIR is set by the login
manager; a fallback is the documented answer when it is not). The fallback is fine for a throwaway server;
the warning is noise to the user. Each test runs a fresh interpreter: platformdirs warns once per process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

LAMBDAS = Path(__file__).resolve().parents[2] / "lambdas"
pytest.importorskip("pgserver")


def _stderr_of(code: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    env["PYTHONPATH"] = str(LAMBDAS)
    env["PYTHONWARNINGS"] = "default"  # every warning shown once, as a plain run shows a UserWarning
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_the_compare_runs_temporary_directory_imports_pgserver_quietly():
    err = _stderr_of("from cutover_prep.local.compare import _own_temporary_directory\n"
                     "with _own_temporary_directory(): pass")
    assert "XDG_RUNTIME_DIR" not in err, err


def test_the_sample_database_imports_pgserver_quietly():
    err = _stderr_of("from cutover_prep.engines.postgres.sample_db import pgserver_module\n"
                     "assert pgserver_module().get_server")
    assert "XDG_RUNTIME_DIR" not in err, err


def test_other_warnings_still_show():
    """Only platformdirs' runtime-directory warning is silenced, and only around the import."""
    err = _stderr_of("import warnings\nfrom cutover_prep.engines.postgres.sample_db import pgserver_module\n"
                     "pgserver_module()\nwarnings.warn('still shown')")
    assert "still shown" in err
