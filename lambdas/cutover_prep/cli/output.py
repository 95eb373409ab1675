"""How the command line speaks: its exit codes, every line escaped for a terminal (``escape.for_terminal``:
a name or a database's message shows its control characters, never sends them), a user's mistake as one line
on stderr and an exit code, never a traceback."""

from __future__ import annotations

from typing import Any

import click

from cutover_prep.cli import remote
from cutover_prep.escape import for_terminal

EXIT_OK, EXIT_INCOMPLETE, EXIT_USAGE, EXIT_FAILED, EXIT_TIMEOUT = 0, 1, 2, 3, 4
EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports it


def echo(lines: str | list[str], *, err: bool = False) -> None:
    """Lines for a terminal, each escaped on its own: a line feed inside one is shown, not obeyed."""
    click.echo("\n".join(for_terminal(line) for line in ([lines] if isinstance(lines, str) else lines)), err=err)


def fail(code: int, message: str) -> None:
    """One line on stderr, then exit ``code``."""
    echo(f"cutover-prep: {message}", err=True)
    raise click.exceptions.Exit(code)


def guard(call: Any) -> Any:
    """``call()``; a ``remote.CliProblem`` it raises is one line and its exit code."""
    try:
        return call()
    except remote.CliProblem as exc:
        fail(exc.code, str(exc))


def input_guard(what: str, call: Any) -> Any:
    """Reading and building the input: JSON nested thousands deep is one line, not a RecursionError."""
    try:
        return guard(call)
    except RecursionError:
        fail(EXIT_USAGE, f"{what}: nested too deeply (a run input is a few levels deep; "
                         "see schema/run-input.schema.json)")
