"""``cutover-prep local``: the whole workflow on this machine (moto plays AWS, ``local/runner.py``), its flags
turned into the run input's sections (typed flags over ``--input``), and the run's summary on stdout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from cutover_prep.cli import remote
from cutover_prep.cli.files import hotset_profile
from cutover_prep.cli.options import FiniteFloatRange
from cutover_prep.cli.output import EXIT_FAILED, EXIT_INCOMPLETE, EXIT_INTERRUPTED, EXIT_USAGE, echo, fail, guard
from cutover_prep.dal.records.run import RunItem
from cutover_prep.engines.registry import families
from cutover_prep.local.outcome import LocalRun, UnitCount
from cutover_prep.models.benchmark import Benchmark

# `local --preflight`: the run input's preflight section (fail: its defaults)
PREFLIGHT_MODES: dict[str, dict[str, Any]] = {"fail": {}, "warn": {"on_failure": "warn"}, "off": {"enabled": False}}

DSN_FORMS = " or ".join(f"{f.dsn_schemes[0]}://USER:PW@HOST:PORT/{f.database_term}" for f in families())


@click.command()
@click.option("--dsn", help=f"{DSN_FORMS}; PostgreSQL also as libpq's keyword form 'host=HOST port=5432 "
              "dbname=DB user=USER password=PW' (the other engines: the URL only). TLS as the engine's own "
              "parameters say (?sslmode=verify-full&sslrootcert=CA.pem; ?ssl-mode=VERIFY_IDENTITY&ssl-ca=CA.pem; "
              "?protocol=tcps), else TLS when the server offers it. Default: an embedded "
              "PostgreSQL with a generated sample database.")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False),
              help="Where to write the evidence; default ./out/<run id>/.")
@click.option("--size-mb", type=click.IntRange(10, 100_000), default=300, show_default=True,
              help="Size of the generated sample database.")
@click.option("--max-concurrency", type=click.IntRange(1, 1000),
              help="Units read at the same time; default 4 with --dsn, 16 for the demo database (its emulated "
              "volume rewards reads in flight).")
@click.option("--unit-mb", type=click.IntRange(1, 100_000),
              help="Work unit size; default: from the assumed cold rate and the Lambda time limit.")
@click.option("--chunk-mb", type=click.IntRange(1, 4096), default=64, show_default=True,
              help="Bytes read per database call.")
@click.option("--database", multiple=True, help="Database (PostgreSQL) or schema (MySQL, MariaDB) to warm "
              "(glob; repeat). Default: the one the DSN names.")
@click.option("--all-databases", is_flag=True, help="Warm every database on the server (MySQL, MariaDB: every "
              "schema but the system ones), not only the one the DSN names.")
@click.option("--include-schema", multiple=True, help="Only these schemas (glob; repeat).")
@click.option("--exclude-schema", multiple=True, help="Skip these schemas (glob; repeat).")
@click.option("--priority", multiple=True, help="Read these first: SCHEMA.NAME globs, in order (repeat).")
@click.option("--hotset", "hotset_file", type=click.Path(path_type=Path, dir_okay=False),
              help="A hot-set profile (`cutover-prep hotset --out FILE`): its relations are read right after the "
              "--priority ones, before the rest (warmup.hot_set).")
@click.option("--create-extension", is_flag=True, help="Allow CREATE EXTENSION pg_prewarm (a write).")
@click.option("--benchmark/--no-benchmark", default=True, show_default=True,
              help="Probe cold/warm blocks and run the benchmark sweep after the warm-up.")
@click.option("--point-seconds", type=FiniteFloatRange(1, 600), default=5, show_default=True,
              help="Duration of each benchmark point.")
@click.option("--probe-blocks", type=click.IntRange(0, 100_000),
              help="Blocks each of the cold and warm probes reads at most (0: no probes); default: the run input's "
              f"benchmark.probe_blocks, {Benchmark.model_fields['probe_blocks'].default}. A probe reads at most a "
              "quarter of the database's readable 512 KiB snapshot blocks, so the warm probe's fresh blocks lie in "
              "snapshot blocks the cold probe did not read (it says so when it reads fewer).")
@click.option("--write-test", is_flag=True, help="Add the opt-in write points (scratch schema, dropped after).")
@click.option("--run-id", help="Run id (default local-<time>). The same command again, with the same run id and "
              "--out, resumes the run: what it read is not read again; another target or other options on it are "
              "refused (RunIdReused), as is a second run on it while one runs (RunIdInUse).")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Show a progress bar.")
@click.option("--storage-emulation/--no-storage-emulation", default=True, show_default=True,
              help="Put the sample database on an emulated restored volume (FUSE; root) so the first-touch "
              "penalty is real. Without --dsn only.")
@click.option("--storage-type", type=click.Choice(["gp2", "gp3", "io1", "io2"]),
              help="Emulated storage type; default: the calibrated profile's.")
@click.option("--allocated-gb", type=click.IntRange(20, 65_536), help="Emulated allocated storage (GiB).")
@click.option("--iops", type=click.IntRange(100, 256_000), help="Emulated provisioned IOPS (gp3, io1, io2).")
@click.option("--storage-throughput", type=click.IntRange(125, 4_000),
              help="Emulated provisioned throughput in MiB/s (gp3).")
@click.option("--instance-class", help="Emulated instance class, whose EBS ceiling applies (e.g. db.r6i.large).")
@click.option("--preflight", "preflight_mode", type=click.Choice(["fail", "warn", "off"]), default="fail",
              show_default=True, help="The preflight after Discover (input preflight): fail ends the run at a "
              "failed check, naming it; warn records it and the run goes on (a user without a grant on purpose); "
              "off skips it.")
@click.option("--input", "input_file", type=click.Path(path_type=Path, dir_okay=False),
              help="A run input (JSON, the deployed run's: schema/run-input.schema.json): its warmup, benchmark, "
              "verdict, preflight and run_id sections, with the flags typed here over them. Its target is not used "
              "(the database is --dsn's, or the demo's); restore and comparison are refused.")
@click.option("--compare", type=click.Path(path_type=Path, dir_okay=False),
              help="A comparison input (docs/compare.md): measure each configuration on its own emulated volume, "
              "write comparison.json and comparison.html (exit 0: a recommendation, 1: none meets the targets).")
def local(dsn: str | None, out: Path | None, size_mb: int, max_concurrency: int | None, unit_mb: int | None,
          chunk_mb: int, database: tuple[str, ...], include_schema: tuple[str, ...],
          exclude_schema: tuple[str, ...], priority: tuple[str, ...], create_extension: bool,
          benchmark: bool, point_seconds: float, write_test: bool, run_id: str | None, progress: bool,
          storage_emulation: bool, storage_type: str | None, allocated_gb: int | None, iops: int | None,
          storage_throughput: int | None, instance_class: str | None, compare: Path | None = None,
          preflight_mode: str = "fail", hotset_file: Path | None = None, probe_blocks: int | None = None,
          input_file: Path | None = None, all_databases: bool = False) -> None:
    """Run the whole workflow on this machine (moto plays AWS) and write the evidence."""
    from cutover_prep.cli.selection import databases_flags

    databases = guard(lambda: databases_flags(database, all_databases))
    if compare is not None:  # each configuration on its own emulated volume (local/compare.py)
        from cutover_prep.local.compare import main as compare_main

        raise click.exceptions.Exit(compare_main(compare, out=out, size_mb=size_mb, progress=progress, dsn=dsn))
    from cutover_prep.local.emulated import Storage
    from cutover_prep.local.input_file import InputFileProblem, Sections, local_sections
    from cutover_prep.local.runner import Interrupted, LocalOptions, TargetUnreachable, UsageProblem, run_local

    typed = typed_flags()
    # each run input key from its flag: (section, key, flag's parameter, value; None: not set)
    flags = [("warmup", "max_concurrency", "max_concurrency", max_concurrency or (4 if dsn else 16)),
             ("warmup", "chunk_mb", "chunk_mb", chunk_mb), ("warmup", "create_extension", "create_extension",
                                                            create_extension),
             ("warmup", "databases", "database", list(database)),
             ("warmup", "include_schemas", "include_schema", list(include_schema)),
             ("warmup", "exclude_schemas", "exclude_schema", list(exclude_schema)),
             ("warmup", "priority", "priority", list(priority)),
             ("warmup", "unit_mb", "unit_mb",  # the demo: a few dozen units, so it shows the Map at work
              unit_mb if unit_mb is not None else (None if dsn else max(1, size_mb // 25))),
             ("benchmark", "enabled", "benchmark", benchmark), ("benchmark", "seconds_per_point", "point_seconds",
                                                                point_seconds),
             ("benchmark", "write_test", "write_test", write_test), ("benchmark", "probe_blocks", "probe_blocks",
                                                                     probe_blocks)]
    defaults = Sections(preflight=dict(PREFLIGHT_MODES[preflight_mode]))
    given = Sections(preflight=dict(PREFLIGHT_MODES[preflight_mode]) if "preflight_mode" in typed else {})
    for section, key, param, value in flags:
        if value is not None:
            getattr(given if param in typed else defaults, section)[key] = value
    try:
        if (hot := hotset_profile(hotset_file)) is not None:
            given.warmup["hot_set"] = hot.to_input()
        data = remote.read_input_file(str(input_file)) if input_file is not None else None
        local_input = local_sections(data, str(input_file), defaults=defaults, given=given, run_id=run_id)
        for note in local_input.notes:
            echo(f"cutover-prep: {note}", err=True)
        storage = Storage(storage_type=storage_type, allocated_gb=allocated_gb, iops=iops,
                          storage_throughput=storage_throughput, instance_class=instance_class)
        result = run_local(LocalOptions(dsn=dsn, out=out, size_mb=size_mb, sections=local_input.sections,
                                        run_id=local_input.run_id, progress=progress, storage=storage,
                                        emulate=storage_emulation, databases=databases))
    except (InputFileProblem, remote.CliProblem) as exc:
        fail(EXIT_USAGE, str(exc))
    except UsageProblem as exc:
        fail(EXIT_USAGE, str(exc))
    except TargetUnreachable as exc:
        fail(EXIT_FAILED, str(exc))
    except Interrupted as exc:  # ends the line the runner began when it started stopping the run, or one of its own
        echo(str(exc) if exc.continues else f"cutover-prep: interrupted: {exc}", err=True)
        raise click.exceptions.Exit(EXIT_INTERRUPTED) from None
    except KeyboardInterrupt:  # before the run started (building the sample, connecting): the runner says so else
        fail(EXIT_INTERRUPTED, "interrupted before the run started; nothing was read")
    echo(summary_lines(result))
    if result.status != "SUCCEEDED":
        code = EXIT_USAGE if result.error == "InvalidInput" else EXIT_FAILED
        fail(code, f"run failed: {result.error}: {result.cause}")
    if result.outcome().verdict != "READY":
        raise click.exceptions.Exit(EXIT_INCOMPLETE)


def typed_flags() -> set[str]:
    """The parameters of the running command typed on its command line (not defaults): they win over --input."""
    ctx = click.get_current_context()
    return {name for name in ctx.params if ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE}


def units_text(units: UnitCount | None, run: RunItem) -> str:
    """The findings' units; without findings (the run failed before Finalize made them), the counts its
    record kept, never a 0/0 that contradicts the bytes it read."""
    if units is None and run.units_total is not None:
        units = UnitCount(done=run.units_done or 0, total=run.units_total, failed=run.units_failed or 0)
    if units is None:
        return "no units planned"
    return f"units {units.done}/{units.total} done, {units.failed} failed"


def summary_lines(result: LocalRun) -> list[str]:
    """The local run's summary for stdout: status, engine and method, units, bytes, coverage, the findings' lines."""
    run = result.run or RunItem(run_id=result.run_id)
    out = result.outcome()
    methods = sorted(set(((run.plan.read_methods if run.plan else None) or {}).values()))
    lines = [
        f"run {result.run_id}: {result.status} in {result.seconds} s",
        f"  engine {run.engine or '?'}, read method(s) {', '.join(methods) or '?'}",
        f"  {units_text(out.units, run)}; "
        f"{(run.bytes_read or 0) / 2**20:,.1f} MiB read of {(run.bytes_planned or 0) / 2**20:,.1f} MiB planned; "
        + (f"coverage {out.coverage_pct} %" if "coverage_pct" in out.model_fields_set
           else "coverage not computed (the run ended before its findings were made)"),
    ]
    findings_file = Path(result.out) / "findings.json"
    if findings_file.exists():
        from cutover_prep.report.terminal import terminal_lines

        lines += terminal_lines(json.loads(findings_file.read_text()))
    lines.append(f"  evidence: {result.out}")
    if (Path(result.out) / "report.html").exists():
        lines.append(f"  report:   {Path(result.out) / 'report.html'}")
    return lines
