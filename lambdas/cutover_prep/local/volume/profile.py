"""What the emulated volume is: storage type and size, the instance, the first-touch latency, and
one time scale.

The caps come from the analyser's table (``analysis.limits.expected_limits``): the storage's IOPS
and throughput (gp2 from its size, with the burst bucket; gp3 baseline or provisioned; io1/io2
provisioned) and the instance class's EBS ceiling, the lower of both. ``time_scale`` is the one
factor between the emulated volume and the wall clock: every rate is divided by it and every
latency multiplied by it, so a Python daemon keeps up and all ratios (cold/warm, rate/ceiling)
hold; the daemon charges the latencies on its own clock of served work (``clock``), so time it
loses to a busy machine is absorbed rather than added. Properties named ``emulated_*`` are the
volume's own figures; the others are wall-clock.

The default profile reproduces seed 002 (a volume restored from a snapshot): single-block random
reads at 433 IOPS warm vs 128 IOPS cold (3.4x), i.e. 2.3 ms per warm read and ~8 ms per cold
one (5.85 ms mean, 5.4 ms median first-touch fetch + the 2.3 ms read: 123 IOPS cold, 3.5x; the
median was 5.1 ms until the demo's cold/warm medians came out at 3.05x, the Python daemon's and
PostgreSQL's own ~1 ms per read narrowing the ratio).
"""

from __future__ import annotations

import dataclasses
import math
import random
from dataclasses import dataclass
from functools import cached_property
from typing import Any

IO_KIB = 256  # the largest IO an EBS SSD volume counts as one
EMULATED_STORAGE_TYPES = ("gp2", "gp3", "io1", "io2")
MIN_GB = {"gp2": 20, "gp3": 20, "io1": 100, "io2": 100}
MAX_GB = 65_536


class InvalidProfile(ValueError):
    """A profile option the emulator cannot use; the message names the CLI flag and the fix."""


@dataclass(frozen=True)
class VolumeProfile:
    storage_type: str = "gp3"
    allocated_gb: float = 100
    iops: int | None = None
    storage_throughput: float | None = None  # MiB/s, as RDS StorageThroughput
    instance_class: str = "db.t3.medium"
    engine: str = "postgres"  # RDS striping rules; the demo database's engine (engines.registry.POSTGRES.name)
    chunk_kib: int = 512  # the snapshot block: the unit of lazy loading
    first_touch_p50_ms: float = 5.4  # lognormal median of one chunk's fetch (mean 5.85 ms with sigma 0.4)
    first_touch_sigma: float = 0.4
    io_latency_ms: float = 2.3  # warm service time of one request
    max_fetches: int = 32  # snapshot fetches in flight at once
    time_scale: float = 8.0
    limits: bool = True  # False: no caps, no latencies (the daemon's own overhead)

    def __post_init__(self) -> None:
        _validate(self)
        if self.limits and _eager_caps and "caps" not in self.__dict__:
            self.caps  # noqa: B018 (fail now, with the flag named, not at first use)

    # --- the analyser's caps -------------------------------------------------------------
    @cached_property
    def caps(self) -> dict[str, Any]:
        # imported here: the analyser's table pulls in the engine registry (~0.4 s), which the daemon, given the
        # caps by its parent (``from_dict``), does not need
        from cutover_prep.analysis.limits import InvalidStorage, UnknownInstanceClass, expected_limits

        try:
            return expected_limits(self.instance_class, self.storage_type, self.allocated_gb, iops=self.iops,
                                   throughput_mbps=self.storage_throughput, engine=self.engine)
        except UnknownInstanceClass as exc:
            raise InvalidProfile(f"--instance-class: {exc}") from None
        except InvalidStorage as exc:
            raise InvalidProfile(f"storage options: {exc}") from None

    @property
    def emulated_iops(self) -> float | None:
        """Peak IOPS (gp2 burst, the instance's maximum)."""
        return float(self.caps["effective"]["peak"]["iops"]) if self.limits else None

    @property
    def emulated_sustained_iops(self) -> float | None:
        """IOPS once the gp2 credits are spent (the refill rate of the burst bucket)."""
        return float(self.caps["effective"]["sustained"]["iops"]) if self.limits else None

    @property
    def emulated_throughput_mib_s(self) -> float | None:
        if not self.limits:
            return None
        kbps = self.caps["effective"]["peak"]["throughput_kbps"]
        return None if kbps is None else kbps / 1024

    @property
    def emulated_ceiling_mib_s(self) -> float | None:
        """min(storage throughput, instance EBS throughput, IOPS x 256 KiB), unscaled."""
        if not self.limits:
            return None
        by_iops = self.emulated_iops * IO_KIB / 1024
        tp = self.emulated_throughput_mib_s
        return by_iops if tp is None else min(tp, by_iops)

    @property
    def burst_credits(self) -> float | None:
        """gp2's I/O credit bucket (an amount, not a rate: not scaled), None without a burst."""
        if not self.limits or self.caps["storage"]["burst_credits"] is None:
            return None
        return float(self.caps["storage"]["burst_credits"])

    # --- wall-clock figures (scaled) -----------------------------------------------------
    @property
    def ceiling_mib_per_s(self) -> float | None:
        return None if not self.limits else self.emulated_ceiling_mib_s / self.time_scale

    @property
    def ceiling_iops(self) -> float | None:
        return None if not self.limits else self.emulated_iops / self.time_scale

    @property
    def sustained_iops(self) -> float | None:
        return None if not self.limits else self.emulated_sustained_iops / self.time_scale

    @property
    def throughput_bytes_per_s(self) -> float | None:
        tp = self.emulated_throughput_mib_s
        return None if tp is None else tp * 1024 * 1024 / self.time_scale

    @property
    def chunk_bytes(self) -> int:
        return self.chunk_kib * 1024

    @property
    def io_latency_s(self) -> float:
        return self.io_latency_ms * self.time_scale / 1000 if self.limits else 0.0

    @property
    def first_touch_mean_ms(self) -> float:
        """Mean of the lognormal first-touch latency (emulated ms)."""
        return self.first_touch_p50_ms * math.exp(self.first_touch_sigma ** 2 / 2)

    def draw_first_touch_s(self, rng: random.Random) -> float:
        """One chunk's fetch latency, wall-clock seconds."""
        if not self.limits or self.first_touch_p50_ms == 0:
            return 0.0
        ms = rng.lognormvariate(math.log(self.first_touch_p50_ms), self.first_touch_sigma)
        return ms * self.time_scale / 1000

    # --- serialisation -------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any], caps: dict[str, Any] | None = None) -> VolumeProfile:
        """``caps``: what ``caps`` gave for the same profile in the process that made ``data`` (the daemon's parent),
        taken as they are, not computed again: the daemon then starts without importing the analyser and the
        engine registry."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise InvalidProfile(f"unknown profile option(s) {', '.join(unknown)}: expected {', '.join(sorted(names))}")
        if caps is None:
            return cls(**data)
        profile = cls.__new__(cls)
        profile.__dict__["caps"] = caps  # the cached_property's own slot: __post_init__ finds it
        profile.__init__(**data)  # type: ignore[misc]
        return profile

    def describe(self) -> dict[str, Any]:
        """The profile and its derived caps, for counters and findings."""
        out = self.to_dict()
        out.update(ceiling_mib_per_s=_r(self.ceiling_mib_per_s), ceiling_iops=_r(self.ceiling_iops),
                   emulated_ceiling_mib_s=_r(self.emulated_ceiling_mib_s), emulated_iops=_r(self.emulated_iops),
                   emulated_sustained_iops=_r(self.emulated_sustained_iops),
                   burst_credits=self.burst_credits, first_touch_mean_ms=_r(self.first_touch_mean_ms),
                   bound_by=self.caps["effective"]["peak"]["throughput_bound_by"] if self.limits else None)
        return out

    @classmethod
    def unlimited(cls) -> VolumeProfile:
        """No caps, no latencies: what the daemon itself costs."""
        return cls(limits=False, first_touch_p50_ms=0, io_latency_ms=0, time_scale=1.0)


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _positive(flag: str, value: Any, *, allow_zero: bool = False) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    ok = ok and (value >= 0 if allow_zero else value > 0)
    if not ok:
        bound = "zero or more" if allow_zero else "a positive number"
        raise InvalidProfile(f"{flag} must be {bound}, not {value!r}")


def _validate(p: VolumeProfile) -> None:
    kind = p.storage_type
    if kind not in EMULATED_STORAGE_TYPES:
        raise InvalidProfile(f"--storage-type {kind!r} cannot be emulated: use one of "
                             f"{', '.join(EMULATED_STORAGE_TYPES)}")
    _positive("--allocated-gb", p.allocated_gb)
    if not MIN_GB[kind] <= p.allocated_gb <= MAX_GB:
        raise InvalidProfile(f"--allocated-gb {p.allocated_gb:g} is outside what RDS allows for {kind}: "
                             f"use {MIN_GB[kind]} to {MAX_GB}")
    if p.iops is not None:
        _positive("--iops", p.iops)
        if kind == "gp2":
            raise InvalidProfile("--iops cannot be set for gp2 (its IOPS come from its size, 3 per GiB): "
                                 "drop --iops, or use --storage-type gp3")
    elif kind in ("io1", "io2"):
        raise InvalidProfile(f"--iops is required for {kind} (provisioned IOPS), e.g. --iops 3000")
    if p.storage_throughput is not None:
        _positive("--storage-throughput", p.storage_throughput)
        if kind != "gp3":
            raise InvalidProfile(f"--storage-throughput can only be set for gp3, not {kind}: drop it")
    if not isinstance(p.instance_class, str) or not p.instance_class.strip():
        raise InvalidProfile("--instance-class is required, e.g. --instance-class db.t3.medium")
    if not isinstance(p.chunk_kib, int) or p.chunk_kib < 4 or p.chunk_kib & (p.chunk_kib - 1):
        raise InvalidProfile(f"chunk_kib must be a power of two of at least 4, not {p.chunk_kib!r}")
    _positive("time_scale", p.time_scale)
    _positive("first_touch_p50_ms", p.first_touch_p50_ms, allow_zero=True)
    _positive("first_touch_sigma", p.first_touch_sigma, allow_zero=True)
    _positive("io_latency_ms", p.io_latency_ms, allow_zero=True)
    if not isinstance(p.max_fetches, int) or p.max_fetches < 1:
        raise InvalidProfile(f"max_fetches must be a whole number of at least 1, not {p.max_fetches!r}")


# the default's caps are computed at first use, not at import: the daemon imports this module and is given its
# caps by its parent (``from_dict``); every other profile, the user's, is checked when made
_eager_caps = False
DEFAULT_PROFILE = VolumeProfile()
_eager_caps = True
