"""``cutover-prep analyze``: the IO analysis on a CSV of measured points, offline."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Annotated, Any

import click
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cutover_prep.ioanalysis import analyze as analyze_points
from cutover_prep.iolimits import STORAGE_TYPES, InvalidStorage, UnknownInstanceClass, expected_limits

REQUIRED_COLUMNS = ("io_size_kb", "iops", "throughput_kbps")
NonNegative = Annotated[float, Field(ge=0)]


class PointRow(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    io_size_kb: Annotated[float, Field(gt=0)]
    iops: NonNegative
    throughput_kbps: NonNegative
    point_id: str | None = None
    kind: str | None = None
    sessions: Annotated[int, Field(ge=1)] | None = None
    latency_p50_us: NonNegative | None = None
    latency_p99_us: NonNegative | None = None
    burst_balance: Annotated[float, Field(ge=0, le=100)] | None = None
    seconds: NonNegative | None = None


class BadPoints(ValueError):
    pass


def read_points(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise BadPoints(f"cannot read {path}: {exc.strerror}") from None
    reader = csv.DictReader(text.splitlines())
    header = [h.strip() for h in reader.fieldnames or []]
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise BadPoints(f"{path}: missing column(s) {', '.join(missing)}; the header needs at least "
                        f"{','.join(REQUIRED_COLUMNS)}")
    rows = []
    for n, raw in enumerate(reader, start=2):
        clean = {(k or "").strip(): v for k, v in raw.items() if v not in (None, "")}
        try:
            rows.append(PointRow.model_validate(clean).model_dump(exclude_none=True))
        except ValidationError as exc:
            err = exc.errors()[0]
            column = ".".join(str(p) for p in err["loc"])
            raise BadPoints(f"{path} line {n}, column {column}: {err['msg'].lower()} "
                            f"(got {clean.get(column)!r})") from None
    if not rows:
        raise BadPoints(f"{path}: no data rows under the header")
    return rows


def _table(result: dict[str, Any]) -> str:
    lines = [f"{'point':<16}{'IO KB':>8}{'eff KB':>9}{'IOPS':>11}{'MB/s':>10}  bound"]
    for p in result["points"]:
        lines.append(f"{(p.get('point_id') or '-'):<16}{p['io_size_kb'] or 0:>8g}{p['effective_io_kb'] or 0:>9.1f}"
                     f"{p['iops']:>11,.0f}{p['throughput_kbps'] / 1024:>10,.1f}  {p['bound']}")
    lines.append(f"crossover: {result['crossover_kb']:g} KB" if result["crossover_kb"] else "crossover: none measured")
    lines += [f"- {c}" for c in result["conclusions"]]
    return "\n".join(lines)


@click.command()
@click.option("--points", "points_file", required=True, type=click.Path(path_type=Path, dir_okay=False),
              help="CSV with io_size_kb,iops,throughput_kbps (see the README).")
@click.option("--instance-class", help="DB instance class, e.g. db.m5.xlarge.")
@click.option("--storage", type=click.Choice(STORAGE_TYPES, case_sensitive=False), help="Storage type.")
@click.option("--allocated-gb", type=click.IntRange(1, 65536), help="Allocated storage (GiB).")
@click.option("--iops", type=click.IntRange(100, 256000), help="Provisioned IOPS (io1, io2, gp3).")
@click.option("--throughput", type=click.FloatRange(1, 4000), help="Provisioned throughput MB/s (gp3).")
@click.option("--engine", type=click.Choice(("postgres", "oracle", "mysql", "mariadb")), default="postgres",
              show_default=True, help="Engine (gp3 striping threshold: 200 GiB Oracle, 400 GiB others).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def analyze(points_file: Path, instance_class: str | None, storage: str | None, allocated_gb: int | None,
            iops: int | None, throughput: float | None, engine: str, as_json: bool) -> None:
    """Analyse measured IO points: effective IO size, IOPS- or throughput-bound, crossover, limits."""
    if storage and not allocated_gb:
        raise click.UsageError("--storage needs --allocated-gb")
    try:
        points = read_points(points_file)
        limits = expected_limits(instance_class, storage.lower() if storage else None, allocated_gb, iops=iops,
                                 throughput_mbps=throughput, engine=engine) \
            if instance_class or storage else None
    except (BadPoints, UnknownInstanceClass, InvalidStorage) as exc:
        click.echo(f"cutover-prep: {exc}", err=True)
        raise click.exceptions.Exit(2) from None
    result = analyze_points(points, limits=limits)
    click.echo(json.dumps(result, indent=1) if as_json else _table(result))
