"""``findings.storage_emulation`` and the instance facts of a local run (pure).

Only ``cutover-prep local`` writes the emulation evidence (``dal.store.EMULATION_EVIDENCE``):
the emulated restored volume's profile, ceiling, first-touch latency, hydration and counters,
or why the run had none. A run in AWS has no such object and its findings no such section.
On a local run the stand-in RDS instance is moto's: its facts are the emulated configuration
(labelled as emulated) or, without emulation, not the database's at all and left out.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple

from pydantic import BaseModel

MIB = 2**20
STAND_IN_KEEPS = ("engine", "engine_family", "engine_version", "db_name")


class EmulationEvidence(BaseModel):
    """What the findings read of the emulation evidence (``dal.store.EMULATION_EVIDENCE``, written by ``local``):
    whether the volume was emulated (else why not), its ceiling and the daemon's counters (``served_seconds``: the
    per-second record, ``local.volume.served``)."""

    emulated: bool | None = None
    reason: str | None = None
    ceiling_mib_per_s: float | None = None
    counters: dict[str, Any] | None = None


class WarmupServed(NamedTuple):
    """``storage_emulation.warmup_served``: what the volume served during the warm-up (``warmup_served``)."""

    bytes: int
    busy_seconds: float
    window_seconds: float
    busy_share: float
    mib_per_s: float
    to_ceiling: float | None
    reads_in_hand: float | None


def storage_emulation(evidence: dict[str, Any] | None, read_rate_mib_s: float | None,
                      window: tuple[str | None, str | None] = (None, None)) -> dict[str, Any] | None:
    """The evidence (kept as written), with the warm-up's end-to-end rate set against the emulated ceiling, and what
    the volume served while it had the warm-up's reads in hand (``warmup_served``; ``window``: the warm-up's first
    start and last finish, ISO, as ``timings`` has them)."""
    if evidence is None:
        return None
    read = EmulationEvidence.model_validate(evidence)
    section = dict(evidence)
    counters = read.counters
    seconds = counters["served_seconds"] if counters and "served_seconds" in counters else None
    if counters is not None:  # summed here; the per-second list stays out of the findings
        section["counters"] = {k: v for k, v in counters.items() if k != "served_seconds"}
    ceiling = read.ceiling_mib_per_s
    if read.emulated and read_rate_mib_s is not None and ceiling:
        section["warmup_mib_per_s"] = read_rate_mib_s
        section["warmup_to_ceiling"] = round(read_rate_mib_s / float(ceiling), 3)
    if read.emulated and seconds:
        served = warmup_served(seconds, *window, ceiling_mib_s=ceiling)
        if served is not None:
            section["warmup_served"] = served._asdict()
    return section


def warmup_served(seconds: list[list[float]], start: str | None, end: str | None, *,
                  ceiling_mib_s: float | None) -> WarmupServed | None:
    """The volume during the warm-up, from the daemon's per-second record (``local.volume.served``): the bytes
    its reads served and the seconds it had at least one read in hand, summed over the seconds of the window
    (whole seconds: the window's first and last are counted whole); ``mib_per_s`` is bytes ÷ busy seconds, the
    volume's own rate while it was asked (wall clock), ``busy_share`` the part of the window it was asked at
    all, ``reads_in_hand`` how many reads it had at once on average while busy (one cold reader alone is bound by
    latency, not by the ceiling). None without a window or without a busy second in it."""
    if not start or not end:
        return None
    first, last = datetime.fromisoformat(start).timestamp(), datetime.fromisoformat(end).timestamp()
    nbytes, busy, in_hand = 0, 0.0, 0.0
    for second, served, held, *reads in seconds:  # the fourth column: a daemon of this version on
        if int(first) <= second <= int(last):
            nbytes, busy = nbytes + int(served), busy + float(held)
            in_hand += float(reads[0]) if reads else 0.0
    if busy <= 0:
        return None
    rate = nbytes / busy / MIB
    window = max(last - first, busy)
    return WarmupServed(bytes=nbytes, busy_seconds=round(busy, 3), window_seconds=round(last - first, 3),
                        busy_share=round(busy / window, 3), mib_per_s=round(rate, 3),
                        to_ceiling=round(rate / float(ceiling_mib_s), 3) if ceiling_mib_s else None,
                        reads_in_hand=round(in_hand / busy, 2) if in_hand else None)


def instance_facts(instance: dict[str, Any] | None, emulation: dict[str, Any] | None) -> dict[str, Any] | None:
    """What the findings say about the instance: RDS's facts, the emulated ones, or only the engine."""
    if emulation is None or instance is None:
        return instance
    read = EmulationEvidence.model_validate(emulation)
    if read.emulated:
        return {**instance, "emulated": True}
    kept = {k: v for k, v in instance.items() if k in STAND_IN_KEEPS}
    return {**kept, "stand_in": f"a local run: instance class and storage are not known ({read.reason})"}
