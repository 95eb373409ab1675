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

from dataclasses import dataclass, field, replace
from typing import Any

from cutover_prep.models.warmup import Warmup
from cutover_prep.warmup.planning import MIB

MIN_WINDOW_SECONDS = 1.0
MAX_SAMPLES = 500  # [t, level, MiB/s, holders] ~40 bytes each: far below DynamoDB's 400 KB item limit


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


@dataclass(frozen=True)
class Control:
    """What the controller remembers between windows."""

    level: int
    best_level: int | None = None
    best_mib_per_s: float | None = None
    strikes: int = 0
    settled: str | None = None  # None while climbing; "no_growth", "capped" or "fixed" once it holds
    samples: tuple[tuple[float, int, float, int], ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        return {"level": self.level, "best_level": self.best_level, "best_mib_per_s": self.best_mib_per_s,
                "strikes": self.strikes, "settled": self.settled, "samples": [list(s) for s in self.samples]}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Control:
        return cls(level=int(doc["level"]), best_level=doc.get("best_level"),
                   best_mib_per_s=doc.get("best_mib_per_s"), strikes=int(doc.get("strikes") or 0),
                   settled=doc.get("settled"),
                   samples=tuple((float(t), int(lv), float(r), int(h)) for t, lv, r, h in doc.get("samples") or []))


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


def sizing_rate(cold_probe: dict[str, Any] | None, assumed_mib_per_s: float) -> dict[str, Any]:
    """The rate the first chunks are sized from: the cold probe's, when it ran, else the assumed one.

    The cold probe times random single-block reads of cold blocks by one session: every block
    pays a first touch. A reader going through blocks in order pays at most that per block, so
    the probe's rate is a floor of one warm-up reader's cold rate: chunks sized from it never
    outlast an invocation. After its first chunks a unit sizes from its own measured rate."""
    kbps = (cold_probe or {}).get("throughput_kbps")
    if (cold_probe or {}).get("status") == "DONE" and kbps and float(kbps) > 0:
        return {"mib_per_s": round(float(kbps) / 1024, 3), "source": "cold_probe"}
    return {"mib_per_s": float(assumed_mib_per_s), "source": "assumed"}
