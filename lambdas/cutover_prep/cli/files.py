"""The files a command reads (a run input, a hot-set profile): read and checked here, a problem is one line
and exit 2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cutover_prep.cli import remote
from cutover_prep.cli.output import EXIT_USAGE, fail, input_guard


def read_input(path: str) -> dict[str, Any]:
    """A run input file (``-``: stdin), parsed by the command line's JSON rules; a problem is one line, exit 2."""
    return input_guard(f"--input {path}", lambda: remote.read_input_file(path))


def hotset_profile(path: Path | str | None) -> Any:
    """The hot-set profile ``--hotset`` names (``cutover-prep hotset --out FILE``), or exit 2 in one line."""
    from cutover_prep.engines.hotset import HotsetProblem
    from cutover_prep.hotset import load

    if path is None:
        return None
    try:
        profile = load(path)
        profile.to_input()
    except HotsetProblem as exc:
        fail(EXIT_USAGE, str(exc))
    return profile
