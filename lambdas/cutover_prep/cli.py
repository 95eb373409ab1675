"""The ``cutover-prep`` command line.

Exit codes: 0 READY (every planned unit read, the evidence complete); 1 NOT_READY (the
reasons are printed); 2 a usage or input error; 3 the run failed (unreachable database,
restore ...).
User mistakes are one line on stderr, never a traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from cutover_prep.analysis.cli import analyze

EXIT_OK, EXIT_INCOMPLETE, EXIT_USAGE, EXIT_FAILED = 0, 1, 2, 3


def _fail(code: int, message: str) -> None:
    click.echo(f"cutover-prep: {message}", err=True)
    raise click.exceptions.Exit(code)


@click.group(help="Get a restored RDS database ready for a cutover, and prove it.")
def app() -> None:
    pass


@app.command()
@click.option("--dsn", help="postgresql://USER:PW@HOST:PORT/DB or oracle://USER:PW@HOST:PORT/SERVICE; "
              "default: an embedded PostgreSQL with a generated sample database.")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False),
              help="Where to write the evidence; default ./out/<run id>/.")
@click.option("--size-mb", type=click.IntRange(10, 100_000), default=300, show_default=True,
              help="Size of the generated sample database.")
@click.option("--max-concurrency", type=click.IntRange(1, 1000), default=4, show_default=True,
              help="Units read at the same time.")
@click.option("--unit-mb", type=click.IntRange(1, 100_000),
              help="Work unit size; default: from the assumed cold rate and the Lambda time limit.")
@click.option("--chunk-mb", type=click.IntRange(1, 4096), default=64, show_default=True,
              help="Bytes read per database call.")
@click.option("--database", multiple=True, help="PostgreSQL database to warm (glob; repeat). Default: all.")
@click.option("--include-schema", multiple=True, help="Only these schemas (glob; repeat).")
@click.option("--exclude-schema", multiple=True, help="Skip these schemas (glob; repeat).")
@click.option("--priority", multiple=True, help="Read these first: SCHEMA.NAME globs, in order (repeat).")
@click.option("--create-extension", is_flag=True, help="Allow CREATE EXTENSION pg_prewarm (a write).")
@click.option("--benchmark/--no-benchmark", default=True, show_default=True,
              help="Probe cold/warm blocks and run the benchmark sweep after the warm-up.")
@click.option("--point-seconds", type=click.FloatRange(1, 600), default=5, show_default=True,
              help="Duration of each benchmark point.")
@click.option("--write-test", is_flag=True, help="Add the opt-in write points (scratch schema, dropped after).")
@click.option("--run-id", help="Run id; reuse one to resume a run.")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Show a progress bar.")
def local(dsn: str | None, out: Path | None, size_mb: int, max_concurrency: int, unit_mb: int | None,
          chunk_mb: int, database: tuple[str, ...], include_schema: tuple[str, ...],
          exclude_schema: tuple[str, ...], priority: tuple[str, ...], create_extension: bool,
          benchmark: bool, point_seconds: float, write_test: bool, run_id: str | None, progress: bool) -> None:
    """Run the whole workflow on this machine (moto plays AWS) and write the evidence."""
    from cutover_prep.local.runner import LocalOptions, TargetUnreachable, UsageProblem, run_local

    warmup: dict = {"max_concurrency": max_concurrency, "chunk_mb": chunk_mb, "create_extension": create_extension,
                    "databases": list(database), "include_schemas": list(include_schema),
                    "exclude_schemas": list(exclude_schema), "priority": list(priority)}
    if unit_mb is not None:
        warmup["unit_mb"] = unit_mb
    elif not dsn:
        warmup["unit_mb"] = max(1, size_mb // 25)  # a few dozen units so the demo shows the Map at work
    try:
        bench = {"enabled": benchmark, "seconds_per_point": point_seconds, "write_test": write_test,
                 "metrics_wait_minutes": 0,  # moto has no CloudWatch datapoints: recorded missing at once
                 "compare_limits": False}  # the local stand-in instance's class is not the database's
        result = run_local(LocalOptions(dsn=dsn, out=out, size_mb=size_mb, warmup=warmup, benchmark=bench,
                                        run_id=run_id, progress=progress))
    except UsageProblem as exc:
        _fail(EXIT_USAGE, str(exc))
    except TargetUnreachable as exc:
        _fail(EXIT_FAILED, str(exc))
    click.echo(_summary(result))
    if result["status"] != "SUCCEEDED":
        code = EXIT_USAGE if result.get("error") == "InvalidInput" else EXIT_FAILED
        _fail(code, f"run failed: {result.get('error')}: {result.get('cause')}")
    if (result.get("output") or {}).get("verdict") != "READY":
        raise click.exceptions.Exit(EXIT_INCOMPLETE)


def _summary(result: dict) -> str:
    run = result.get("run") or {}
    out = result.get("output") or {}
    units = out.get("units") or {}
    plan = run.get("plan") or {}
    lines = [
        f"run {result['run_id']}: {result['status']} in {result['seconds']} s",
        f"  engine {run.get('engine', '?')}, read method(s) {', '.join(sorted(set((plan.get('read_methods') or {}).values()))) or '?'}",  # noqa: E501
        f"  units {units.get('done', 0)}/{units.get('total', 0)} done, {units.get('failed', 0)} failed; "
        f"{run.get('bytes_read', 0) / 2**20:,.1f} MiB read of {run.get('bytes_planned', 0) / 2**20:,.1f} MiB planned; "
        f"coverage {out.get('coverage_pct', 0)} %",
    ]
    findings_file = Path(result["out"]) / "findings.json"
    if findings_file.exists():
        findings = json.loads(findings_file.read_text())
        lines += _benchmark_lines(findings.get("benchmark") or {})
        verdict = findings.get("verdict") or {}
        lines.append(f"  verdict: {verdict.get('verdict', '?')}")
        lines += [f"    - {r['message']}" for r in verdict.get("reasons", []) if not r["ok"]]
    lines.append(f"  evidence: {result['out']}")
    return "\n".join(lines)


def _benchmark_lines(bench: dict) -> list[str]:
    lines = [f"  benchmark: {bench.get('status', 'NOT_RUN')}"]
    probes = bench.get("probes") or {}
    for phase in ("cold", "warm"):
        p = probes.get(phase) or {}
        if p.get("status") == "DONE":
            lat = p.get("latency_us") or {}
            lines.append(f"    {phase} probe: {p['blocks_read']} blocks, {p['iops']:,.0f} reads/s, "
                         f"p50 {lat.get('p50', 0):,.0f} us, p99 {lat.get('p99', 0):,.0f} us")
    for point in bench.get("points") or []:
        if point.get("status") != "DONE":
            lines.append(f"    {point['point_id']:<22} {point.get('status')}: {point.get('cause', '')}")
            continue
        lat = point.get("latency_us") or {}
        p99 = f", p99 {lat['p99']:,.0f} us" if lat.get("p99") is not None else ""
        lines.append(f"    {point['point_id']:<22} {point.get('iops', 0):>12,.0f} IO/s {point.get('throughput_kbps', 0) / 1024:>10,.1f} MiB/s"  # noqa: E501
                     f"  {point.get('effective_io_kb') or 0:>7,.1f} KiB/IO  {point.get('bound') or '':<10}{p99}")
    for sentence in bench.get("conclusions") or []:
        lines.append(f"    - {sentence}")
    return lines


app.add_command(analyze)


def main(argv: list[str] | None = None) -> int:
    """Entry point: usage errors become one line and exit code 2."""
    try:
        code = app.main(args=argv, prog_name="cutover-prep", standalone_mode=False)
    except click.UsageError as exc:
        click.echo(f"cutover-prep: {exc.format_message()} (see --help)", err=True)
        return EXIT_USAGE
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.Abort:
        click.echo("cutover-prep: interrupted", err=True)
        return 130
    return code if isinstance(code, int) else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
