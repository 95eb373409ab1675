"""The ``cutover-prep`` command line.

``local`` runs the whole workflow on this machine; ``start``, ``status`` and ``report``
drive the deployed one (see ``remote``); ``validate`` checks a run input offline;
``analyze`` reads a points CSV.

Exit codes: 0 READY (every planned unit read, the evidence complete); 1 NOT_READY (the
reasons are printed); 2 a usage or input error; 3 the run failed (unreachable database,
restore ...); 4 ``--timeout`` reached or the run is still going.
User mistakes are one line on stderr, never a traceback. Every line goes out through
``escape.for_terminal`` (``output.echo``): a name or a database's message shows its control characters,
never sends them.

This module is the group and its entry point only; each command lives in its own module: ``local_command``,
``deployed`` (start, status, report), ``validate``, ``profile``, ``compare``, ``estimate``, ``preflight``,
``hotset``, ``gate``, and ``cli/analyze.py`` (analyze).
"""

from __future__ import annotations

import sys

import click

from cutover_prep.cli.analyze import analyze
from cutover_prep.cli.compare import compare
from cutover_prep.cli.deployed import report, start, status
from cutover_prep.cli.estimate import estimate
from cutover_prep.cli.gate import gate
from cutover_prep.cli.hotset import hotset
from cutover_prep.cli.local_command import local
from cutover_prep.cli.output import EXIT_OK, EXIT_USAGE, echo
from cutover_prep.cli.preflight import preflight
from cutover_prep.cli.profile import profile
from cutover_prep.cli.validate import validate


@click.group(help="Get a restored RDS database ready for a cutover, and prove it.")
@click.version_option(package_name="cutover-prep", prog_name="cutover-prep", message="%(prog)s %(version)s")
def app() -> None:
    pass


# click lists them by name in --help
for command in (local, analyze, compare, estimate, preflight, hotset, gate, start, validate, status, report, profile):
    app.add_command(command)


def main(argv: list[str] | None = None) -> int:
    """Entry point: usage errors become one line and exit code 2."""
    try:
        code = app.main(args=argv, prog_name="cutover-prep", standalone_mode=False)
    except click.UsageError as exc:
        echo(f"cutover-prep: {exc.format_message()} (see --help)", err=True)
        return EXIT_USAGE
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.Abort:
        click.echo("cutover-prep: interrupted", err=True)
        return 130
    return code if isinstance(code, int) else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
