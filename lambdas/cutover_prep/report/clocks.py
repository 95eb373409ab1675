"""An emulated local run's two clocks: the wall clock it ran on, and the emulated volume's own.

The emulated restored volume runs slowed down by its time scale (docs/local.md, "time scale"):
one emulated second takes ``time_scale`` wall seconds, so a wall rate × the scale is the rate of
the volume it emulates, and a wall duration or latency ÷ the scale is its emulated time. The
figures a run measures are wall-clock; where they are shown for an emulated run, the emulated
ones stand beside them, labelled, so they can be set against the README's and the seeds' figures.
A run in AWS, or a local run without emulation, has one clock: ``time_scale`` is None.
"""

from __future__ import annotations

from typing import Any

from cutover_prep.report.charts import fmt_duration, fmt_number, num
from cutover_prep.report.parts import EmulationProfile, WarmupServed
from cutover_prep.report.reading import Readable, findings_of


def time_scale(findings: Readable) -> float | None:
    """The emulated volume's time scale, when the run's reads were served by one that ran slowed down."""
    section = findings_of(findings).storage_emulation
    if section is None or not section.emulated:
        return None
    profile = section.profile or EmulationProfile()
    scale = num(profile.time_scale)
    return scale if scale and scale != 1.0 and profile.limits else None


def rate(wall: Any, scale: float | None, digits: int = 3) -> str | None:
    """A wall-clock rate (per second) on the emulated clock; None when there is no second clock."""
    value = num(wall)
    return None if scale is None or value is None else fmt_number(round(value * scale, digits))


def ms(wall_ms: Any, scale: float | None) -> str | None:
    """A wall-clock latency in ms on the emulated clock."""
    value = num(wall_ms)
    return None if scale is None or value is None else f"{fmt_number(round(value / scale, 2))} ms"


def duration(wall_s: Any, scale: float | None) -> str | None:
    """A wall-clock duration on the emulated clock."""
    value = num(wall_s)
    return None if scale is None or value is None else fmt_duration(value / scale)


def warmup_text(wall_s: Any, mib_per_s: Any, scale: float | None) -> str:
    """``" (emulated clock: 5.28 s at 63.7 MiB/s)"``: a warm-up's time and rate on the emulated volume's clock;
    empty for a run with one clock."""
    took, speed = duration(wall_s, scale), rate(mib_per_s, scale, 1)
    if took is None or speed is None:
        return ""
    return f" (emulated clock, ×{fmt_number(scale)} slowed: {took} at {speed} MiB/s)"


def served_text(served: WarmupServed | None, ceiling_mib_s: Any, scale: float | None) -> str:
    """``findings.storage_emulation.warmup_served`` in words (empty without it): the volume's own rate while it
    had the warm-up's reads in hand, against the ceiling, and how much of the warm-up it was asked at all; the
    rest of the warm-up's time was its readers' (the workflow's orchestration, a busy machine), not the volume's."""
    if served is None or served.mib_per_s is None or num(served.mib_per_s) is None:
        return ""
    text = (f"; the volume, while it had the warm-up's reads in hand ({fmt_duration(num(served.busy_seconds))}"
            f" of {fmt_duration(num(served.window_seconds))}), served "
            f"{fmt_number(round(float(served.mib_per_s), 3))} MiB/s")
    share = num(served.to_ceiling)
    if share is not None and num(ceiling_mib_s):
        text += f" = {share:.2f}× the ceiling"
    emulated = rate(served.mib_per_s, scale, 1)
    text += f" (emulated clock: {emulated} MiB/s)" if emulated is not None else ""
    readers = num(served.reads_in_hand)
    return text + (f" with {fmt_number(readers)} reads in hand on average" if readers is not None else "")
