"""``cutover-prep ARGS`` through ``main()`` in the test's own process (no Python start of 1-2 s per call): what the
tests that do not prove the process boundary share (remote/remote_cli.py, test_gate_replication.py,
test_validate_refuses.py)."""

from __future__ import annotations

import contextlib
import io
import os
from unittest import mock


def run_main(argv: list[str], environ: dict[str, str] | None = None) -> tuple[int, str, str]:
    """The exit code, stdout and stderr of ``main(argv)``, as a process would end. ``environ``: the whole
    environment it runs in (None: this process's); either way the test's own environment is back afterwards."""
    from cutover_prep.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    patched = mock.patch.dict(os.environ, environ, clear=True) if environ is not None else mock.patch.dict(os.environ)
    with patched, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # as the process would end
            code = 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue()
