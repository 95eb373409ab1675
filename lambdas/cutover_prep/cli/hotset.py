"""``cutover-prep hotset``: the source database's hot set, ranked by its own statistics, as a profile file.

Read-only: statistics views only (``engines/<engine>/hotset.py``), in a read-only session. ``--dsn`` takes
the DSNs of ``cutover-prep local --dsn``; ``--target``/``--secret-arn`` the connection path of a run, as
``cutover-prep preflight``. The file (``--out``) is what ``local --hotset``, ``start --hotset`` and
``profile put --hotset`` put in the run input's ``warmup.hot_set``.

Exit codes: 0 a profile was taken; 1 the statistics count no access (nothing to rank) or the database
could not be read; 2 a usage or input error (one line); 5 AWS could not be reached. Never a traceback,
never a secret.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from cutover_prep.cli import remote
from cutover_prep.cli.options import FiniteFloatRange
from cutover_prep.cli.preflight import target_spec
from cutover_prep.cli.selection import all_databases_option, dsn_choice
from cutover_prep.engines.registry import engine_names
from cutover_prep.escape import for_terminal

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, remote.EXIT_USAGE


def _fail(code: int, message: str) -> None:
    click.echo(f"cutover-prep: {for_terminal(message)}", err=True)
    raise click.exceptions.Exit(code)


@click.command("hotset")
@click.option("--dsn", help="The source database this machine reaches, as `cutover-prep local --dsn` takes it.")
@click.option("--target", help="DB instance identifier (AWS): connects as a run would.")
@click.option("--secret-arn", help="Secrets Manager ARN of its credentials, tagged cutover-prep:access=read (AWS).")
@click.option("--engine", type=click.Choice(engine_names()), help="AWS: default from the RDS instance.")
@click.option("--database", multiple=True, help="Database (PostgreSQL), schema (MySQL, MariaDB) or owner "
              "(Oracle) to rank (glob; repeat). Default: the one the DSN names (--target: all user ones).")
@all_databases_option
@click.option("--top", type=click.IntRange(1, 500), default=None,
              help="Keep the N hottest relations (per source). Default: 20 unless --share is given.")
@click.option("--share", "share_pct", type=FiniteFloatRange(0, 100, min_open=True),
              help="Keep the fewest hottest relations that make this percentage of all counted accesses.")
@click.option("--awr", is_flag=True, help="Oracle: also rank by AWR history (DBA_HIST_SEG_STAT). Needs "
              "--diagnostics-pack-licensed.")
@click.option("--diagnostics-pack-licensed", is_flag=True, help="States that this database is licensed for the "
              "Oracle Diagnostics Pack, which AWR is part of (the tool cannot check it).")
@click.option("--awr-days", type=click.IntRange(1, 400), default=7, show_default=True,
              help="Oracle --awr: the days of AWR snapshots summed.")
@click.option("--buffer-pool", is_flag=True, help="MySQL, MariaDB without performance_schema or userstat: rank "
              "by the pages each table holds in the InnoDB buffer pool (INFORMATION_SCHEMA.INNODB_BUFFER_PAGE; "
              "read-only, PROCESS; a scan of the pool, heavy on a large one).")
@click.option("--buffer-pool-file", type=click.Path(path_type=Path, dir_okay=False), help="MySQL, MariaDB: rank by "
              "an ib_buffer_pool dump of the source (space,page lines; written at shutdown, or on SET GLOBAL "
              "innodb_buffer_pool_dump_now = ON), its tablespace ids named by the server's data dictionary.")
@click.option("--buffer-pool-dump-now", is_flag=True, help="MySQL, MariaDB: ask the server to write its "
              "ib_buffer_pool dump now (SET GLOBAL innodb_buffer_pool_dump_now = ON, SUPER; RDS: "
              "mysql.rds_innodb_buffer_pool_dump_now) and rank by it where this machine can read the file. A server "
              "action: taken only with this flag.")
@click.option("--timeout", type=FiniteFloatRange(1, 3600), default=60, show_default=True,
              help="Seconds each statement may take.")
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), help="Write the profile file here.")
@click.option("--region", envvar="AWS_REGION", help="AWS region; default: your AWS configuration.")
@click.option("--json", "as_json", is_flag=True, help="Print the profile as one JSON object on stdout.")
def hotset(dsn: str | None, target: str | None, secret_arn: str | None, engine: str | None,
           database: tuple[str, ...], top: int | None, share_pct: float | None, awr: bool,
           diagnostics_pack_licensed: bool, awr_days: int, timeout: float, out: Path | None, region: str | None,
           as_json: bool, buffer_pool: bool = False, buffer_pool_file: Path | None = None,
           buffer_pool_dump_now: bool = False, all_databases: bool = False) -> None:
    """Rank the source database's relations by its own access statistics (read-only) and write the hot-set
    profile a run reads first (--out FILE; then local/start/profile put --hotset FILE)."""
    from cutover_prep.engines.base import EngineError
    from cutover_prep.engines.hotset import HotsetOptions, HotsetProblem
    from cutover_prep.engines.registry import family
    from cutover_prep.hotset import DEFAULT_TOP, lines, take

    if top is None and share_pct is None:
        top = DEFAULT_TOP
    try:
        if awr and not diagnostics_pack_licensed:
            raise remote.CliProblem("--awr reads AWR (DBA_HIST_SEG_STAT), part of the Oracle Diagnostics Pack, a "
                                    "separately licensed option: add --diagnostics-pack-licensed to state that this "
                                    "database is licensed for it, or drop --awr")
        spec = target_spec(dsn, target, secret_arn, engine, region, verb="reads")
        fam = family(spec.engine)
        if awr and not fam.hotset_awr:
            raise remote.CliProblem(f"--awr reads Oracle's AWR history; {fam.label} has none: drop it")
        pools = [f for f, on in (("--buffer-pool", buffer_pool), ("--buffer-pool-file", buffer_pool_file),
                                 ("--buffer-pool-dump-now", buffer_pool_dump_now)) if on]
        if pools and not fam.hotset_buffer_pool:
            raise remote.CliProblem(f"{pools[0]} reads InnoDB's buffer pool (MySQL, MariaDB); {fam.label} has none: "
                                    "drop it")
        if len(pools) > 1:
            raise remote.CliProblem(f"{' and '.join(pools)} are sources of one figure: give one")
        # the database the DSN names, unless --database or --all-databases says otherwise (issue 33 §1)
        choice = dsn_choice(spec, database, all_databases, from_dsn=bool(dsn))
    except remote.CliProblem as exc:
        _fail(exc.code, str(exc))
    options = HotsetOptions(databases=choice.patterns, awr=awr, awr_days=awr_days, call_timeout_seconds=timeout,
                            buffer_pool=buffer_pool, buffer_pool_file=str(buffer_pool_file) if buffer_pool_file
                            else None, buffer_pool_dump_now=buffer_pool_dump_now)
    try:
        profile = take(spec, options, top=top, share_pct=share_pct)
        profile.to_input()  # the file is one a run input can hold: refused now, not on the cutover night
    except HotsetProblem as exc:
        _fail(exc.code, str(exc))
    except EngineError as exc:
        _fail(EXIT_FAILED, " ".join(str(exc).split()))
    except Exception as exc:  # noqa: BLE001 - a driver's error: one line, never a traceback
        _fail(EXIT_FAILED, f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
    document = json.dumps(profile.to_json(), indent=1)
    if out is not None:
        try:
            out.write_text(document + "\n", encoding="utf-8")
        except OSError as exc:
            _fail(EXIT_USAGE, f"--out {out}: {exc.strerror or exc}")
    if as_json:
        click.echo(document)
    else:
        click.echo("\n".join(for_terminal(line) for line in lines(profile)))
        if out is not None:
            where = for_terminal(str(out))
            click.echo(f"written to {where}; a run reads it first with --hotset {where}", err=True)
    raise click.exceptions.Exit(EXIT_OK)
