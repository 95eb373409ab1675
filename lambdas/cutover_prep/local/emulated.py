"""The demo database on an emulated restored volume: built, "restored" cold, then served.

``cutover-prep local`` without ``--dsn`` puts the sample database's files on a FUSE volume
that behaves like an EBS volume created from a snapshot (``local.volume``): PostgreSQL
keeps its WAL and catalogue cluster on the ordinary disk and the demo database in a
tablespace on the volume. After the sample is built the server is stopped, the volume's
hydration state is reset (the "restore"), and the server starts again with empty shared
buffers, so the run meets every block cold, as on a freshly restored RDS instance.

Where FUSE cannot be had (not root, no ``/dev/fuse``, no libfuse3) the demo runs on the
ordinary disk and ``Emulation.reason`` says why in one line; with ``--dsn`` there is no
emulation and the findings say so.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from cutover_prep.engines import ConnectionSpec

DSN_REASON = "--dsn: the database runs elsewhere, on storage this run cannot emulate; no emulated volume"
# The emulated demo's own processes (this one: moto playing AWS, the handlers; the embedded PostgreSQL it starts)
# run at this nice, below the volume daemon's -10 (volume.daemon): in AWS, Step Functions, Lambda and the RDS
# instance do not share a CPU with the laptop's other jobs, and on a busy machine this interpreter, shared by
# moto and the handlers, otherwise waits for a CPU between every state of the workflow (issue 24 §5).
DEMO_NICE = -5


@dataclass(frozen=True)
class Storage:
    """The emulated volume's options a run sets (``local``'s --storage-type ... flags, a comparison's
    configuration); None: the calibrated profile's (``local.volume.DEFAULT_PROFILE``)."""

    storage_type: str | None = None
    allocated_gb: int | None = None
    iops: int | None = None
    storage_throughput: int | None = None
    instance_class: str | None = None

    def given(self) -> dict[str, str | int]:
        """The options set, by their names (the profile's fields), in the flags' order."""
        return {f.name: value for f in fields(self) if (value := getattr(self, f.name)) is not None}


class EmulationEvidence(BaseModel):
    """What a run's emulation evidence (``Emulation.evidence``; the findings' ``storage_emulation``) is read for:
    whether the run's volume was emulated."""

    emulated: bool = False


@dataclass
class Emulation:
    """What the run's storage is: an emulated restored volume, or why not."""

    volume: Any = None  # local.volume.EmulatedVolume while mounted
    profile: Any = None  # local.volume.VolumeProfile
    reason: str | None = None  # why there is no emulation
    database_dir: str | None = None  # the database's directory, relative to the volume's root

    @property
    def active(self) -> bool:
        return self.volume is not None

    def instance(self) -> dict[str, str | int | float | None]:
        """The stand-in RDS instance's configuration: the emulated one, never an invented class."""
        if not self.active:
            return {}
        p = self.profile
        return {"instance_class": p.instance_class, "storage_type": p.storage_type,
                "allocated_storage": int(p.allocated_gb), "iops": p.iops, "storage_throughput": p.storage_throughput}

    def evidence(self) -> dict[str, Any]:
        """``findings.storage_emulation``: the profile, the ceiling, first-touch latency, hydration, counters."""
        if not self.active:
            return {"emulated": False, "reason": self.reason}
        counters = self.volume.counters()
        ceiling = self.profile.ceiling_mib_per_s
        return {
            "emulated": True,
            "profile": self.profile.describe(),
            "ceiling_mib_per_s": round(ceiling, 3),
            "first_touch_ms": counters.get("first_touch_ms_p50"),
            "hydrated_pct": self.volume.hydrated_pct(self.database_dir),
            "counters": counters,
        }


def snapshot_writer(emulation: Emulation, put: Any) -> Any:
    """A callable that stores the emulator's evidence (``put(evidence)``); the run's Finalize step
    reads the last one into ``findings.storage_emulation``."""
    def write() -> None:
        put(emulation.evidence())
    return write


@contextlib.contextmanager
def demo_priority(nice: int = DEMO_NICE, *, announce: Callable[[int], None] | None = None) -> Iterator[int | None]:
    """Run the block at ``nice`` (a thread's nice on Linux: threads and processes started in the block inherit
    it), then go back; yields the nice it got, None when it was refused (not root) and nothing changed.
    ``announce(nice)`` is called before the priority is touched (the user hears it first)."""
    before = os.getpriority(os.PRIO_PROCESS, 0)
    if announce is not None:
        announce(nice)
    try:
        os.setpriority(os.PRIO_PROCESS, 0, nice)
    except OSError:
        yield None
        return
    try:
        yield os.getpriority(os.PRIO_PROCESS, 0)
    finally:
        os.setpriority(os.PRIO_PROCESS, 0, before)


def unavailable() -> str | None:
    """None when the emulated volume can be mounted here, else one line saying why not."""
    try:
        from cutover_prep.local.volume import fuse_unavailable
    except ImportError as exc:  # the [local] extra without mfusepy
        return f"no restored-volume emulation: {exc}; run `make install`"
    return fuse_unavailable()


@contextlib.contextmanager
def demo_database(size_mb: int, profile: Any) -> Iterator[tuple[ConnectionSpec, Emulation]]:
    """The generated sample database, on an emulated restored volume when ``profile`` is given and
    FUSE can be had here; otherwise on the ordinary disk, with the reason printed in one line."""
    from cutover_prep.engines.postgres.sample_db import embedded_postgres  # the demo database: psycopg, pgserver

    reason = "--no-storage-emulation: the sample is on the ordinary disk" if profile is None else unavailable()
    if reason is not None:
        if profile is not None:
            print(f"cutover-prep: {reason}; the demo runs without a first-touch penalty", file=sys.stderr)
        with embedded_postgres(size_mb) as (spec, _):
            yield spec, Emulation(reason=reason)
        return
    from cutover_prep.local.volume import EmulatedVolume, VolumeProfile

    with tempfile.TemporaryDirectory(prefix="cutover-prep-volume-") as work:
        Path(work).chmod(0o755)  # the server runs as its own OS user and must reach the mount
        # built at the daemon's own speed (writing 300 MB under gp3's caps scaled down takes minutes),
        # then served with the profile, restored cold
        builder, volume = EmulatedVolume(Path(work), VolumeProfile.unlimited()), EmulatedVolume(Path(work), profile)
        builder.mount()
        try:
            with embedded_postgres(size_mb, builder, volume) as (spec, database_dir):
                yield spec, Emulation(volume=volume, profile=profile, database_dir=database_dir)
        finally:
            builder.unmount()
            volume.unmount()
