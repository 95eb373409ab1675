"""``cutover-prep analyze``: analyse a points CSV offline, optionally against the expected limits.

Exit codes follow ``cutover_prep.cli.main``: 0 done, 2 a usage or input error (one line on stderr,
``cutover-prep: ...``, never a traceback).
"""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path
from typing import Any

import click

from cutover_prep.analysis.io import analyze as analyze_points
from cutover_prep.analysis.limits import DEFAULT_ENGINE, ENGINES, STORAGE_TYPES, LimitsError, expected_limits
from cutover_prep.cli.options import FiniteFloatRange
from cutover_prep.engines.registry import UnknownEngine, analysis_engine
from cutover_prep.escape import for_terminal

EXIT_USAGE = 2
REQUIRED_COLUMNS = ("io_size_kb", "iops", "throughput_kbps")
OPTIONAL_COLUMNS = ("point_id", "kind", "sessions", "latency_p50_us", "latency_p99_us", "burst_balance", "seconds")
POSITIVE = ("io_size_kb", "iops", "throughput_kbps", "sessions", "seconds")
KINDS = ("sequential", "random")
PROVISIONED_IOPS = ("gp3", "io1", "io2")  # RDS's Iops applies to these storage types only
PROVISIONED_THROUGHPUT = ("gp3",)  # and StorageThroughput to gp3 only
DELIMITERS = ",;\t"
DECIMAL_COMMA = re.compile(r"[+-]?\d+,\d+")


class PointsError(Exception):
    """A points CSV that cannot be analysed; the message is the one line shown to the user."""


def _fail(code: int, message: str) -> None:
    click.echo(f"cutover-prep: {for_terminal(message)}", err=True)  # it may quote the file
    raise click.exceptions.Exit(code)


def _number(path: Path, line: int, column: str, raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        if DECIMAL_COMMA.fullmatch(raw):
            raise PointsError(f"{path}: line {line}, column {column}: {raw!r} has a decimal comma; write "
                              f"{raw.replace(',', '.')} (a decimal point)") from None
        raise PointsError(f"{path}: line {line}, column {column}: {raw!r} is not a number; "
                          "write plain numbers such as 1024 or 12.5") from None
    if math.isnan(value) or math.isinf(value):
        raise PointsError(f"{path}: line {line}, column {column}: {raw!r} is not a finite number")
    if value < 0 or (column in POSITIVE and value == 0):
        bound = "greater than 0" if column in POSITIVE else "0 or more"
        raise PointsError(f"{path}: line {line}, column {column}: {raw} must be {bound}")
    if column == "burst_balance" and value > 100:
        raise PointsError(f"{path}: line {line}, column burst_balance: {raw} is a percentage, 0 to 100")
    if column == "sessions" and not value.is_integer():
        raise PointsError(f"{path}: line {line}, column sessions: {raw} must be a whole number")
    return value


def _check_header(path: Path, header: list[str] | None) -> list[str]:
    if not header or not any(h.strip() for h in header):
        raise PointsError(f"{path}: the file is empty; the first line must name the columns, at least "
                          f"{','.join(REQUIRED_COLUMNS)}")
    names = [h.strip() for h in header]
    missing = [c for c in REQUIRED_COLUMNS if c not in names]
    if missing:
        raise PointsError(f"{path}: missing column(s) {', '.join(missing)} in the header line; required: "
                          f"{','.join(REQUIRED_COLUMNS)}")
    unknown = [n for n in names if n not in REQUIRED_COLUMNS + OPTIONAL_COLUMNS]
    if unknown:
        raise PointsError(f"{path}: unknown column(s) {', '.join(unknown)}; allowed: "
                          f"{','.join(REQUIRED_COLUMNS + OPTIONAL_COLUMNS)}")
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise PointsError(f"{path}: column(s) {', '.join(duplicated)} appear more than once in the header line")
    return names


def _point(path: Path, line: int, names: list[str], cells: list[str]) -> dict[str, Any]:
    if len(cells) != len(names):
        raise PointsError(f"{path}: line {line} has {len(cells)} value(s) for {len(names)} column(s); "
                          "give one value per column (empty for an unknown optional value)")
    point: dict[str, Any] = {}
    for name, raw in zip(names, (c.strip() for c in cells), strict=True):
        if raw == "":
            if name in REQUIRED_COLUMNS:
                raise PointsError(f"{path}: line {line}, column {name}: the value is empty; it is required")
            continue
        if name == "point_id":
            point[name] = raw
        elif name == "kind":
            if raw not in KINDS:
                raise PointsError(f"{path}: line {line}, column kind: {raw!r} is not one of {', '.join(KINDS)}")
            point[name] = raw
        else:
            value = _number(path, line, name, raw)
            point[name] = int(value) if name == "sessions" else value
    return point


def delimiter_of(header_line: str) -> str:
    """The header line's delimiter: ',' or, as spreadsheets in many locales save a CSV, ';' or a tab
    (csv.Sniffer on the header alone; ',' when it cannot tell)."""
    try:
        return csv.Sniffer().sniff(header_line, delimiters=DELIMITERS).delimiter
    except csv.Error:
        return ","


def read_points(path: Path) -> list[dict[str, Any]]:
    """Read and check a points CSV (comma-, semicolon- or tab-delimited); raise ``PointsError`` with
    one line naming file, line and column."""
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            delimiter = delimiter_of(handle.readline())
            handle.seek(0)
            reader = csv.reader(handle, delimiter=delimiter)
            names = _check_header(path, next(reader, None))
            points = [_point(path, reader.line_num, names, cells) for cells in reader if any(c.strip() for c in cells)]
    except OSError as exc:
        raise PointsError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise PointsError(f"{path}: is not UTF-8 text; save it as a UTF-8 CSV file") from None
    except csv.Error as exc:
        raise PointsError(f"{path}: is not a valid CSV file: {exc}") from None
    if not points:
        raise PointsError(f"{path}: has a header line but no data rows; add one row per benchmark point")
    return points


def _limits(instance_class: str | None, storage: str | None, allocated_gb: int | None, iops: int | None,
            throughput: float | None, engine: str) -> dict[str, Any] | None:
    given = {"--instance-class": instance_class, "--storage": storage, "--allocated-gb": allocated_gb}
    if not any(v is not None for v in given.values()):
        if iops is not None or throughput is not None:
            _fail(EXIT_USAGE, "--iops and --throughput need --instance-class, --storage and --allocated-gb")
        return None
    missing = [k for k, v in given.items() if v is None]
    if missing:
        _fail(EXIT_USAGE, f"{', '.join(missing)} missing: give --instance-class, --storage and --allocated-gb "
                          "together to compare with the limits, or none of them")
    kind = (storage or "").lower()
    if iops is not None and kind not in PROVISIONED_IOPS:
        _fail(EXIT_USAGE, f"--iops: {kind} storage has no provisioned IOPS (RDS provisions IOPS on "
                          f"{', '.join(PROVISIONED_IOPS)} only; gp2's follow from its size); drop --iops")
    if throughput is not None and kind not in PROVISIONED_THROUGHPUT:
        _fail(EXIT_USAGE, f"--throughput: {kind} storage has no provisioned throughput (RDS sets "
                          f"StorageThroughput on {', '.join(PROVISIONED_THROUGHPUT)} only); drop --throughput")
    try:
        return expected_limits(instance_class or "", storage or "", allocated_gb or 0, iops=iops,
                               throughput_mbps=throughput, engine=engine)
    except LimitsError as exc:
        _fail(EXIT_USAGE, str(exc))
    return None


def _cell(value: Any, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def render_text(result: dict[str, Any]) -> str:
    """A readable table of the points, the limits compared against and the conclusions."""
    ids = [for_terminal(p["point_id"]) for p in result["points"]]  # a file's text: its controls shown
    width = max([len("point")] + [len(i) for i in ids])  # ids whole, never cut
    header = (f"{'point':<{width}} {'kind':<10} {'req KiB':>7} {'KiB/IO':>7} {'IO/s':>10} {'MiB/s':>9} "
              f"{'bound':<11} {'%IOPS':>6} {'%MiB/s':>6}")
    lines = [header, "-" * len(header)]
    for shown, p in zip(ids, result["points"], strict=True):
        mb = p["throughput_kbps"] / 1024 if p["throughput_kbps"] is not None else None
        bound = f"{p['bound'] or '-'}{'*' if p['bound_basis'] == 'shape' else ''}"
        lines.append(f"{shown:<{width}} {for_terminal(p['kind'] or '-'):<10} {_cell(p['io_size_kb'], ',.0f'):>7} "
                     f"{_cell(p['effective_io_kb'], ',.1f'):>7} {_cell(p['iops'], ',.0f'):>10} {_cell(mb, ',.1f'):>9} "
                     f"{bound:<11} {_cell(p['pct_iops_limit'], '.0f'):>6} {_cell(p['pct_throughput_limit'], '.0f'):>6}")
    lines.append("(* bound judged from the shape of the series; % of the limit at the point's level)")
    limits = result.get("limits")
    if limits:
        peak, sus = limits["effective"]["peak"], limits["effective"]["sustained"]
        lines.append(f"limits: {limits['instance_class']}, {limits['storage_type']} {limits['allocated_gb']:g} GiB "
                     f"({limits['engine']}): {_cell(peak['iops'], ',.0f')} IOPS ({peak['iops_bound_by']}), "
                     f"{_cell(peak['throughput_mb_s'], ',.1f')} MiB/s ({peak['throughput_bound_by']})")
        if limits["effective"]["has_burst"]:
            lines.append(f"  sustained: {_cell(sus['iops'], ',.0f')} IOPS ({sus['iops_bound_by']}), "
                         f"{_cell(sus['throughput_mb_s'], ',.1f')} MiB/s ({sus['throughput_bound_by']})")
    lines.append(f"crossover: {_cell(result['crossover_kb'], 'g')} KiB measured, "
                 f"{_cell(result['crossover_theoretical_kb'], 'g')} KiB from the limits")
    lines.append("conclusions:")
    lines += [f"  - {for_terminal(s)}" for s in result["conclusions"]]  # they name points
    return "\n".join(lines)


def _engine(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    try:
        return analysis_engine(value)
    except UnknownEngine as exc:
        raise click.BadParameter(str(exc)) from None


@click.command("analyze")
@click.option("--points", "points_file", required=True, type=click.Path(path_type=Path, dir_okay=False),
              metavar="FILE.csv", help="Benchmark points: io_size_kb,iops,throughput_kbps[,point_id,kind,sessions,"
              "latency_p50_us,latency_p99_us,burst_balance,seconds].")
@click.option("--instance-class", metavar="CLASS", help="DB instance class, e.g. db.m5.xlarge.")
@click.option("--storage", type=click.Choice(STORAGE_TYPES + ("magnetic",), case_sensitive=False), metavar="TYPE",
              help=f"Storage type: {', '.join(STORAGE_TYPES)}.")
@click.option("--allocated-gb", type=click.IntRange(min=1), metavar="N", help="Allocated storage in GiB.")
@click.option("--iops", type=click.IntRange(min=1), metavar="N", help="Provisioned IOPS (io1, io2, gp3).")
@click.option("--throughput", type=FiniteFloatRange(min=0, min_open=True), metavar="MBPS",
              help="Provisioned storage throughput in MiB/s (gp3, as RDS StorageThroughput).")
@click.option("--engine", default=DEFAULT_ENGINE, show_default=True, callback=_engine, metavar="ENGINE",
              help=f"Engine, as a family ({', '.join(ENGINES)}) or as DescribeDBInstances names it (oracle-ee, "
              "oracle-se2-cdb, ...): decides when RDS stripes the storage over 4 volumes.")
@click.option("--json", "as_json", is_flag=True, help="Print the analysis as one JSON object.")
def analyze(points_file: Path, instance_class: str | None, storage: str | None, allocated_gb: int | None,
            iops: int | None, throughput: float | None, engine: str, as_json: bool) -> None:
    """Analyse benchmark points offline: IOPS- or throughput-bound, crossover, limits, conclusions."""
    try:
        points = read_points(points_file)
    except PointsError as exc:
        _fail(EXIT_USAGE, str(exc))
    limits = _limits(instance_class, storage, allocated_gb, iops, throughput, engine.lower())
    result = analyze_points(points, limits=limits)
    if as_json:
        click.echo(json.dumps(result, indent=2, sort_keys=False))
    else:
        click.echo(render_text(result))
