"""``cutover-prep local --compare FILE``: the comparison on this machine.

Each configuration is the generated sample database "restored" onto an emulated volume with that
configuration's limits (``local/volume``: storage type, size, IOPS, throughput, instance class),
by the local run itself (``local.runner.run_local``, once per configuration, one at a time: runs
side by side would share the CPU and measure each other). Then each configuration is judged and
priced (``comparison/result.py``, ``pricing/book.py``: the shipped price file, the local run does not call AWS),
and ``comparison.json`` and ``comparison.html`` are written to the output directory.

The same input as ``cutover-prep compare``; what only AWS uses may be left out and is ignored
here: ``snapshot_identifier``, ``target``, ``restore``, ``max_parallel``, ``ttl_hours``.

Exit codes: 0 a recommendation, 1 none meets the targets, 2 bad input (or no emulated volume here).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from cutover_prep.comparison.model import (
    ComparisonInput,
    ComparisonResult,
    ComparisonTarget,
    SharedRestore,
    SnapshotText,
    child_run_id,
)
from cutover_prep.comparison.page import write_page
from cutover_prep.comparison.result import comparison_document
from cutover_prep.dal.records.findings import Findings
from cutover_prep.escape import for_terminal
from cutover_prep.local.emulated import EmulationEvidence, Storage
from cutover_prep.local.input_file import Sections
from cutover_prep.local.outcome import LocalRun
from cutover_prep.models import json_text
from cutover_prep.models.run_input import check_depth, error_lines

IGNORED_LOCALLY = ("snapshot_identifier", "target", "restore", "max_parallel", "ttl_hours")
VOLUME_PREFIX = "cutover-prep-volume-"  # local/emulated.py's temporary directory of a volume


class CompareProblem(Exception):
    """Bad input or an environment the comparison cannot run in; one line, exit 2."""


class LocalComparisonInput(ComparisonInput):
    """The comparison input with what only AWS needs made optional."""

    snapshot_identifier: SnapshotText | None = None  # type: ignore[assignment]
    target: ComparisonTarget | None = None  # type: ignore[assignment]
    restore: SharedRestore = Field(default_factory=SharedRestore)


def load(path: Path) -> LocalComparisonInput:
    try:
        raw = json_text.loads(path.read_text())  # a key given twice, Infinity, a 5,000-digit number: named
    except json_text.JsonProblem as exc:
        raise CompareProblem(f"--compare: {exc}") from None
    except FileNotFoundError:
        raise CompareProblem(f"--compare: {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CompareProblem(f"--compare: cannot read {path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise CompareProblem(f"--compare: {path} is not JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise CompareProblem("--compare: the file must hold a JSON object with comparison_id, configurations "
                             "and targets (docs/compare.md)")
    try:
        check_depth(raw)
        return LocalComparisonInput.model_validate(raw, strict=True)
    except ValidationError as exc:
        raise CompareProblem("--compare: " + "; ".join(error_lines(exc))) from None
    except Exception as exc:  # check_depth's InvalidInput
        raise CompareProblem(f"--compare: {exc}") from None


def profiles(comparison: LocalComparisonInput) -> dict[str, Storage]:
    """Each configuration's emulated-volume options (the local run's --storage-type ... flags),
    checked now: a configuration the emulator cannot build is bad input before anything runs."""
    from cutover_prep.local.volume import DEFAULT_PROFILE, InvalidProfile

    out = {}
    for c in comparison.configurations:
        storage = Storage(storage_type=c.storage_type, allocated_gb=c.allocated_gb, iops=c.iops,
                          storage_throughput=c.storage_throughput, instance_class=c.db_instance_class)
        try:
            dataclasses.replace(DEFAULT_PROFILE, **storage.given())
        except InvalidProfile as exc:
            raise CompareProblem(f"configurations.{c.name}: {exc}") from None
        out[c.name] = storage
    return out


def _volumes_left(work: Path) -> set[str]:
    """Emulated volumes still under ``work``: their temporary directories and FUSE mounts."""
    left = {str(p) for p in work.glob(f"{VOLUME_PREFIX}*")}
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        mounts = []
    left |= {line.split()[1] for line in mounts if len(line.split()) > 1 and line.split()[1].startswith(str(work))}
    return left


@contextlib.contextmanager
def _own_temporary_directory() -> Iterator[Path]:
    """A temporary directory for one configuration's run: its emulated volume is made in it
    (``local/emulated.py`` uses ``tempfile``), so what is left afterwards is this run's, not that of
    another run on the same machine. Removed when nothing is mounted in it."""
    with contextlib.suppress(ImportError):  # pgserver fixes its runtime (lock) directory from the temporary
        from cutover_prep.engines.postgres.sample_db import pgserver_module  # directory when it is imported:
        pgserver_module()  # let it take the ordinary one, shared (and without platformdirs' XDG warning)
    work = Path(tempfile.mkdtemp(prefix="cutover-prep-compare-"))
    work.chmod(0o755)  # the database server runs as its own OS user and must reach the mount inside
    saved = tempfile.tempdir
    tempfile.tempdir = str(work)
    try:
        yield work
    finally:
        tempfile.tempdir = saved
        if not _volumes_left(work):
            shutil.rmtree(work, ignore_errors=True)


def run(path: Path, *, out: Path | None = None, size_mb: int = 40, progress: bool = False,
        runner: Any = None) -> tuple[int, ComparisonResult, Path]:
    """Run the comparison; (exit code, comparison.json, output directory)."""
    from cutover_prep.local.emulated import unavailable
    from cutover_prep.local.runner import LocalOptions, UsageProblem, run_local

    comparison = load(path)
    storages = profiles(comparison)
    reason = unavailable()
    if reason is not None:
        raise CompareProblem(f"--compare needs the emulated restored volume, which cannot be had here: {reason}")
    runner = runner or run_local
    out_dir = out if out is not None else Path("out") / comparison.comparison_id
    out_dir.mkdir(parents=True, exist_ok=True)
    unit_mb = comparison.warmup.unit_mb if comparison.warmup.unit_mb is not None else max(1, size_mb // 25)
    sections = Sections(  # the demo's unit size when the input sets none: a few dozen units
        warmup=dict(comparison.warmup.model_dump(mode="json"), unit_mb=unit_mb),
        benchmark=dict(comparison.benchmark.model_dump(mode="json"), metrics_wait_minutes=0, compare_limits=False))
    ignored = [k for k in IGNORED_LOCALLY if k in comparison.model_fields_set]
    if ignored:
        _say(f"ignored locally: {', '.join(ignored)} (only the AWS comparison restores a snapshot)")
    findings: dict[str, Findings] = {}
    failures: dict[str, str] = {}
    deleted: list[str] = []
    left: list[str] = []
    for c in comparison.configurations:
        run_id = child_run_id(comparison.comparison_id, c.name)
        label = f"{c.name}: {c.db_instance_class}, {c.storage_type} {c.allocated_gb} GiB" + (
            f", {c.iops:,} IOPS" if c.iops else "")
        _say(f"configuration {label}: sample database on its emulated volume ...")
        started = time.monotonic()
        with _own_temporary_directory() as work:
            try:
                result = runner(LocalOptions(out=out_dir / run_id, size_mb=size_mb, sections=sections,
                                             run_id=run_id, progress=progress, storage=storages[c.name]))
            except UsageProblem as exc:
                raise CompareProblem(f"configurations.{c.name}: {exc}") from None
            except Exception as exc:  # noqa: BLE001 - one configuration failing is its result, not the comparison's
                result = LocalRun(run_id=run_id, status="FAILED", error=type(exc).__name__, cause=str(exc)[:300],
                                  out=str(out_dir / run_id))
            after = _volumes_left(work)
        findings_file = Path(result.out or out_dir / run_id) / "findings.json"
        doc = Findings.read(json.loads(findings_file.read_text())) if findings_file.exists() else None
        emulated = doc is not None and emulated_volume(doc)
        if result.status == "SUCCEEDED" and doc is not None and emulated:
            findings[c.name] = doc
        elif result.status == "SUCCEEDED" and doc is not None:
            failures[c.name] = "its run had no emulated volume, so it measured nothing of this configuration"
        else:
            failures[c.name] = f"its run {run_id} {result.status.lower()}: {result.error}: {result.cause}"[:500]
        volume = f"emulated volume of {c.name} ({c.storage_type} {c.allocated_gb} GiB)"
        if after:
            left.extend(f"{volume}: {p}" for p in sorted(after))
        elif emulated:
            deleted.append(f"{volume}: unmounted and removed")
        _say(f"configuration {c.name}: {result.status} in {time.monotonic() - started:.0f} s")
    cleanup = {"deleted": deleted, "left": left,
               "details": [{"kind": "emulated_volume", "removed": d} for d in deleted]
               + [{"kind": "emulated_volume", "left": x} for x in left]}
    document = comparison_document(comparison, findings, failures,
                                   local=True, cleanup=cleanup)
    (out_dir / "comparison.json").write_text(json.dumps(document, indent=2) + "\n")
    write_page(document, out_dir / "comparison.html")
    result = ComparisonResult.model_validate(document)
    return (0 if result.recommendation.name else 1), result, out_dir


def emulated_volume(findings: Findings) -> bool:
    """Whether the run measured an emulated volume (its findings' ``storage_emulation``, the emulator's evidence)."""
    return EmulationEvidence.model_validate(findings.storage_emulation or {}).emulated


def summary(document: ComparisonResult, out_dir: Path) -> str:
    lines = [f"comparison {document.comparison_id}:"]
    for c in document.configurations:
        price = "price unknown" if c.price_per_hour_usd is None else f"${c.price_per_hour_usd:,.4f}/h"
        iops = "-" if c.read_iops is None else f"{c.read_iops:,.0f}"
        lines.append(f"  {c.name}: {c.status}, read IOPS {iops}, {price}; {c.why}")
    rec = document.recommendation
    lines.append(f"  recommendation: {rec.name or 'none'} ({rec.why})")
    lines.append(f"  cleanup: {len(document.cleanup.deleted)} emulated volume(s) removed, "
                 f"{len(document.cleanup.left)} left")
    lines.append(f"  evidence: {out_dir / 'comparison.json'}, {out_dir / 'comparison.html'}")
    return "\n".join(for_terminal(line) for line in lines)  # a run's failure may quote the database


def _say(line: str) -> None:
    print(f"cutover-prep: {for_terminal(line)}", file=sys.stderr, flush=True)


def main(path: Path, *, out: Path | None, size_mb: int, progress: bool, dsn: str | None) -> int:
    """The CLI's ``local --compare`` branch: prints the summary, returns the exit code (no traceback
    for a user mistake: one line, exit 2)."""
    try:
        if dsn:
            raise CompareProblem("--compare runs on the generated sample database, each configuration on its own "
                                 "emulated volume; drop --dsn")
        code, document, out_dir = run(path, out=out, size_mb=size_mb, progress=progress)
    except CompareProblem as exc:
        print(f"cutover-prep: {for_terminal(exc)}", file=sys.stderr)
        return 2
    print(summary(document, out_dir))
    return code
