"""The database selection of the commands that take ``--dsn`` (issue 33 §1, ``cutover_prep.access.selection``):
``--all-databases``, ``--database`` globs, else the database the DSN names."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from cutover_prep.access.selection import ALL, Choice, SelectionProblem, choose
from cutover_prep.cli import remote

CLI_WORDS = {"all": "--all-databases", "named": "--all-databases", "globs": "--database",
             "connected": "the database the DSN names", "none": "no database named: every one"}

all_databases_option = click.option(
    "--all-databases", is_flag=True, help="Every database on the server (MySQL, MariaDB: every schema but the "
    "system ones), not only the one the DSN names.")


def databases_flags(database: Sequence[str], all_databases: bool) -> str | None:
    """``target.databases`` of ``--all-databases`` (``"all"``), or None; both flags at once is a usage error."""
    if all_databases and database:
        raise remote.CliProblem("--all-databases reads every database and --database chooses some: give one")
    return ALL if all_databases else None


def dsn_choice(spec: Any, database: Sequence[str], all_databases: bool, include_schemas: Sequence[str] = (),
               *, from_dsn: bool = True) -> Choice:
    """What a command reads on ``spec``: ``--all-databases``, ``--database``, else the database its DSN names
    (``from_dsn``; a ``--target`` path names none: every database, as the deployed run's default)."""
    named = databases_flags(database, all_databases)
    try:
        return choose(spec.engine, named=named, globs=tuple(database),
                      connected=spec.database if from_dsn else None, include_schemas=tuple(include_schemas),
                      words=CLI_WORDS)
    except SelectionProblem as exc:
        raise remote.CliProblem(str(exc)) from None
