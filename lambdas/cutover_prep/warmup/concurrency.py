"""Adaptive warm-up concurrency: the controller (pure) and the rate the chunks are sized from.

The controller starts at a low level and, once per window, looks at the aggregate rate the
database delivered during that window (bytes the units committed, all units together). A
window ends once the units have committed ``window_chunks`` chunks per slot of the level
(enough commits that their lumpiness averages out: a short local run decides in seconds, a
run of 10-second chunks in about a minute and a half), or after ``window_seconds`` (a slow
volume), never before ``MIN_WINDOW_SECONDS``:

- the first judged window sets the best rate, and the level is doubled;
- a window whose rate beats the best by more than ``margin`` becomes the best, and the level
  is doubled again (never above ``maximum``: ``warmup.max_concurrency``);
- a window that does not beat it is given one more window at the same level (one noisy
  window does not stop the climb); a second one in a row settles the level back at the best
  level: more readers did not read faster, so they only add load;
- a window in which fewer units held slots than the level allowed (no units left waiting)
  is recorded but not judged: it says nothing about the level;
- at ``maximum`` with the rate still growing, the level settles there (capped).

Every window is kept as a sample ``[t_s, level, mib_per_s, wanted]`` (wanted: units holding or
asking for a slot at its end) for the findings.
With ``adaptive`` off the level is ``maximum`` from the start and never moves (samples are
still recorded).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import TypeVar

from pydantic import BaseModel, ConfigDict

from cutover_prep.dal.records.run import PointItem
from cutover_prep.models.warmup import Warmup
from cutover_prep.warmup.planning import MIB

MIN_WINDOW_SECONDS = 1.0
MAX_SAMPLES = 500  # [t, level, MiB/s, holders] ~40 bytes each: far below DynamoDB's 400 KB item limit
Number = int | float  # a number read back as the control item holds it (DynamoDB gives back an int for 100.0)
_State = TypeVar("_State", bound=BaseModel)


def replace(state: _State, **changes: object) -> _State:
    """The frozen ``state`` with ``changes`` (what ``dataclasses.replace`` is to a dataclass)."""
    return state.model_copy(update=changes)


@dataclass(frozen=True)
class Settings:
    maximum: int
    adaptive: bool = True  # the controller itself; a run input without "adaptive" is not adaptive (from_warmup)
    start: int = 2
    margin: float = 0.10  # fraction the rate must grow by to count as growing
    window_seconds: float = 120.0  # the longest window
    window_chunks: int = 8  # chunks per slot that end a window sooner (0: by time only)

    @classmethod
    def of(cls, warmup: Warmup) -> Settings:
        """From the run context's ``warmup`` options (the model's defaults for a context written before them)."""
        return cls(maximum=warmup.max_concurrency, adaptive=warmup.adaptive, start=warmup.adaptive_start,
                   margin=warmup.adaptive_margin_pct / 100, window_seconds=float(warmup.adaptive_window_seconds),
                   window_chunks=warmup.adaptive_window_chunks)


class Control(BaseModel):
    """What the controller remembers between windows (the control item's ``control``: ``model_dump``)."""

    model_config = ConfigDict(frozen=True)

    level: int
    best_level: int | None = None
    best_mib_per_s: Number | None = None
    strikes: int = 0
    settled: str | None = None  # None while climbing; "no_growth", "capped" or "fixed" once it holds
    samples: tuple[tuple[float, int, float, int], ...] = ()


def initial(settings: Settings) -> Control:
    if not settings.adaptive:
        return Control(level=settings.maximum, settled="fixed")
    return Control(level=max(1, min(settings.start, settings.maximum)))


def capped(control: Control, settings: Settings) -> Control:
    """A restart may lower ``max_concurrency``: the level follows it (and may climb again up to a higher one)."""
    if not settings.adaptive:
        return control if control.level == settings.maximum else replace(control, level=settings.maximum)
    if control.level > settings.maximum:
        return replace(control, level=settings.maximum)
    if control.settled == "capped" and control.level < settings.maximum:
        return replace(control, settled=None)
    return control


def observe(control: Control, settings: Settings, *, t_s: float, mib_per_s: float, holders: int) -> Control:
    """One window's aggregate rate, measured while ``control.level`` was in force; the next control."""
    sample = (round(t_s, 3), control.level, round(mib_per_s, 3), holders)
    samples = (control.samples + (sample,))[-MAX_SAMPLES:]
    control = replace(control, samples=samples)
    if control.settled or holders < control.level:
        return control
    if control.best_mib_per_s is None or mib_per_s > control.best_mib_per_s * (1 + settings.margin):
        grown = replace(control, best_level=control.level, best_mib_per_s=round(mib_per_s, 3), strikes=0)
        if control.level >= settings.maximum:
            return replace(grown, level=settings.maximum, settled="capped")
        return replace(grown, level=min(settings.maximum, control.level * 2))
    if control.strikes == 0:
        return replace(control, strikes=1)
    return replace(control, level=control.best_level or control.level, settled="no_growth", strikes=0)


def window_closed(settings: Settings, control: Control, *, seconds: float, chunks: int) -> bool:
    """Whether a window of ``seconds`` in which the units committed ``chunks`` chunks is over."""
    if seconds < MIN_WINDOW_SECONDS:
        return False
    by_chunks = settings.window_chunks > 0 and chunks >= settings.window_chunks * control.level
    return by_chunks or seconds >= settings.window_seconds


def window_rate(bytes_before: int, bytes_now: int, seconds: float) -> float:
    """MiB/s committed by all units during a window."""
    return max(0, bytes_now - bytes_before) / MIB / seconds if seconds > 0 else 0.0


class SizingRate(BaseModel):
    """The rate the first chunks are sized from (the control item's ``rate``, AcquireSlot's ``rate``)."""

    mib_per_s: Number
    source: str


def sizing_rate(cold_probe: PointItem | None, assumed_mib_per_s: float) -> SizingRate:
    """The rate the first chunks are sized from: the cold probe's, when it ran, else the assumed one.

    The cold probe times random single-block reads of cold blocks by one session: every block
    pays a first touch. A reader going through blocks in order pays at most that per block, so
    the probe's rate is a floor of one warm-up reader's cold rate: chunks sized from it never
    outlast an invocation. After its first chunks a unit sizes from its own measured rate."""
    kbps = cold_probe.throughput_kbps if cold_probe else None
    if cold_probe is not None and cold_probe.status == "DONE" and kbps and float(kbps) > 0:
        return SizingRate(mib_per_s=round(float(kbps) / 1024, 3), source="cold_probe")
    return SizingRate(mib_per_s=float(assumed_mib_per_s), source="assumed")


# -- yielding to the application (issue 36 §1): AIMD on the application's read latency -----------------------
#
# The warm-up is a background job: while the database's other sessions (the application) read little, it
# reads at the level above; while they read, a second cap follows their read latency, one decision per
# ``window_seconds`` (the same slots: ``slots.effective_level`` takes the lower of the two):
#
# - ``idle``: the application read fewer than ``min_reads_per_s`` blocks a second: nobody to yield to, the cap
#   is ``maximum`` (the whole volume for the warm-up);
# - ``noticed``: the first window the application reads after an idle one: nothing changes (one window alone
#   may be a stray reader: autovacuum, a report);
# - ``probe``: the second one in a row: the cap drops to 1 for one window, so that the application's latency
#   with the warm-up at its least is seen (the base);
# - ``increase``: its latency per read is within ``latency_factor`` x the base: the median of its latencies in
#   the windows of the last ``BASE_WINDOWS`` (this one included) that ran at the lowest cap among them (a
#   median, not the least: one fast window set a bound the application's ordinary reads never met again, and
#   the warm-up stayed at 1 for a minute and more in benchmarks/yielding.py); the cap grows by one;
# - ``decrease``: above it: the cap is multiplied by ``decrease`` (at least 1);
# - ``no_read_timing``: the server does not time reads (PostgreSQL ``track_io_timing`` off, MySQL/MariaDB
#   ``performance_schema`` off): a slowed application cannot be told from a quiet one; the cap is ``maximum``;
# - ``no_signal``: the counters could not be read (the error is kept); the cap stays where it was.
#
# Each window is a sample ``[t_s, cap, app_reads_per_s, app_ms_per_read, decision]`` for the findings.

BASE_WINDOWS = 30


@dataclass(frozen=True)
class YieldSettings:
    maximum: int
    enabled: bool = True
    window_seconds: float = 2.0
    latency_factor: float = 1.5
    min_reads_per_s: float = 10.0
    decrease: float = 0.5

    @classmethod
    def of(cls, warmup: Warmup) -> YieldSettings:
        y = warmup.yielding
        return cls(maximum=warmup.max_concurrency, enabled=y.enabled, window_seconds=float(y.window_seconds),
                   latency_factor=y.latency_factor, min_reads_per_s=y.min_reads_per_second, decrease=y.decrease)


class Yielding(BaseModel):
    """The yield controller's cap, its base latency, its last decision and its samples (the control item's
    ``yielding.state``: ``model_dump``)."""

    model_config = ConfigDict(frozen=True)

    level: int
    base_ms: Number | None = None
    decision: str | None = None
    samples: tuple[tuple[float, int, float, float | None, str], ...] = ()


class Counters(BaseModel):
    """The engine's cumulative read counters (``engines.activity.Activity``)."""

    reads: int
    read_ms: float | None = None
    block_size: int
    own_included: bool = False
    source: str | None = None


class Reading(Counters):
    """One reading of the counters: when it was taken (``at``, s) and the warm-up's own bytes by then."""

    at: float
    own_bytes: int = 0


def yield_start(settings: YieldSettings) -> Yielding:
    return Yielding(level=settings.maximum)


def yield_observe(state: Yielding, settings: YieldSettings, *, t_s: float, reads_per_s: float | None,
                  ms_per_read: float | None, error: str | None = None) -> Yielding:
    """One window of the application's reads (``reads_per_s`` blocks a second, ``ms_per_read`` each; None
    when the server does not time them); the next cap. ``reads_per_s`` None: the counters were not read."""
    level, top = state.level, settings.maximum
    reading = reads_per_s is not None and reads_per_s >= settings.min_reads_per_s
    base = base_latency(state, settings, reading=reading, ms_per_read=ms_per_read)
    if reads_per_s is None:
        decision = "no_signal"
    elif not reading:
        level, decision = top, "idle"
    elif ms_per_read is None:
        level, decision = top, "no_read_timing"
    elif state.decision in (None, "idle", "no_read_timing", "no_signal"):
        decision = "noticed"  # one window alone may be a stray (autovacuum, a report): the next one decides
    elif state.decision == "noticed":
        level, decision = 1, "probe"
    elif base is not None and ms_per_read > base * settings.latency_factor:
        level, decision = int(level * settings.decrease), "decrease"
    else:
        level, decision = level + 1, "increase"
    level = max(1, min(level, top))
    said = f"{decision}: {error}"[:200] if error else decision
    sample = (round(t_s, 3), level, round(reads_per_s or 0.0, 3),
              None if ms_per_read is None else round(ms_per_read, 4), said)
    return replace(state, level=level, decision=decision, base_ms=round(base, 4) if base is not None else state.base_ms,
                   samples=(state.samples + (sample,))[-MAX_SAMPLES:])


def base_latency(state: Yielding, settings: YieldSettings, *, reading: bool, ms_per_read: float | None) -> float | None:
    """The median ms per read of the recent windows the application read in, at the lowest cap among them
    (a sample's cap is the one decided at its end: the window after it ran at it)."""
    in_force = [settings.maximum] + [lv for _, lv, _, _, _ in state.samples]
    windows = [(in_force[i], ms) for i, (_, _, r, ms, _) in enumerate(state.samples)
               if ms is not None and r >= settings.min_reads_per_s][-(BASE_WINDOWS - 1):]
    if reading and ms_per_read is not None:
        windows.append((state.level, ms_per_read))
    if not windows:
        return None
    lowest = min(lv for lv, _ in windows)
    return float(statistics.median(ms for lv, ms in windows if lv == lowest))


def application_window(before: Reading, now: Reading) -> tuple[float, float | None]:
    """(the application's blocks read a second, its ms per read) between two readings of the engine's counters
    (``engines.activity.Activity.to_json`` plus ``at`` (s) and ``own_bytes``: the warm-up's bytes by then).
    Counters that include the warm-up's own reads (``own_included``) lose the warm-up's blocks."""
    seconds = max(1e-6, now.at - before.at)
    reads = now.reads - before.reads
    if now.own_included:
        reads -= (now.own_bytes - before.own_bytes) // now.block_size
    reads = max(0, reads)
    ms = None
    if now.read_ms is not None and before.read_ms is not None:
        ms = max(0.0, now.read_ms - before.read_ms) / reads if reads else 0.0
    return reads / seconds, ms
